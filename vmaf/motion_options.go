package vmaf

// motionOptions are the integer motion extractor's options (integer_motion.c,
// MotionState and its options table). defaultMotionOptions gives libvmaf's
// defaults, under which motion is what VMAF v0.6.1 uses.
type motionOptions struct {
	// maxVal clips the SAD score and motion3 (motion_max_val, mmxv).
	maxVal float64
	// blendFactor and blendOffset blend motion3 towards min(offset, score)
	// (motion_blend_factor, mbf; motion_blend_offset, mbo).
	blendFactor, blendOffset float64
	// fpsWeight multiplies the SAD score (motion_fps_weight, mfw).
	fpsWeight float64
	// fiveFrame compares frame i with frame i-2 instead of i-1 and takes
	// motion2 from the SADs of frames i-1 and i+1
	// (motion_five_frame_window, mffw).
	fiveFrame bool
	// movingAverage averages each motion3 with the previous frame's
	// (motion_moving_average, mma).
	movingAverage bool
	// forceZero reports every score as 0 (motion_force_zero, force_0).
	forceZero bool
}

// motionOptionTable is integer_motion.c's options table (debug, which names
// nothing and only adds a debug metric, left out).
var motionOptionTable = []fexOption{
	{name: "motion_force_zero", alias: "force_0", kind: fexBool, def: false, param: true},
	{name: "motion_blend_factor", alias: "mbf", kind: fexDouble, min: 0, max: 1, def: 1.0, param: true},
	{name: "motion_blend_offset", alias: "mbo", kind: fexDouble, min: 0, max: 1000, def: 40.0, param: true},
	{name: "motion_fps_weight", alias: "mfw", kind: fexDouble, min: 0, max: 5, def: 1.0, param: true},
	{name: "motion_max_val", alias: "mmxv", kind: fexDouble, min: 0, max: 10000, def: motionMaxVal, param: true},
	{name: "motion_five_frame_window", alias: "mffw", kind: fexBool, def: false, param: true},
	{name: "motion_moving_average", alias: "mma", kind: fexBool, def: false, param: true},
}

func defaultMotionOptions() motionOptions {
	o, _ := parseMotionOptions(nil)
	return o
}

// parseMotionOptions reads a model's feature_opts_dicts entry for
// VMAF_integer_feature_motion*: nil or empty gives the defaults.
func parseMotionOptions(opts map[string]any) (motionOptions, error) {
	v, err := parseFexOptions("motion", motionOptionTable, opts)
	if err != nil {
		return motionOptions{}, err
	}
	return motionOptions{
		maxVal:        v["motion_max_val"].(float64),
		blendFactor:   v["motion_blend_factor"].(float64),
		blendOffset:   v["motion_blend_offset"].(float64),
		fpsWeight:     v["motion_fps_weight"].(float64),
		fiveFrame:     v["motion_five_frame_window"].(bool),
		movingAverage: v["motion_moving_average"].(bool),
		forceZero:     v["motion_force_zero"].(bool),
	}, nil
}

// values are o by option name, for fexSuffix.
func (o motionOptions) values() map[string]any {
	return map[string]any{
		"motion_force_zero":        o.forceZero,
		"motion_blend_factor":      o.blendFactor,
		"motion_blend_offset":      o.blendOffset,
		"motion_fps_weight":        o.fpsWeight,
		"motion_max_val":           o.maxVal,
		"motion_five_frame_window": o.fiveFrame,
		"motion_moving_average":    o.movingAverage,
	}
}

// suffix is what libvmaf appends to the motion metrics' names under o
// ("_mmxv_18", "_mffw_mmxv_18_mma"); empty for the defaults. The names are
// VMAF_integer_feature_motion_sad_score, integer_motion2 and integer_motion3
// followed by it.
func (o motionOptions) suffix() string { return fexSuffix(motionOptionTable, o.values()) }

// minIndex is the first frame with a SAD: the first with a frame to compare
// with (integer_motion.c, extract and flush: min_idx).
func (o motionOptions) minIndex() int {
	if o.fiveFrame {
		return 2
	}
	return 1
}

// chunkContext is how many frames of context a chunk of a split scoring
// must score before and after its count frames from start, of total, so
// that its frames' motion is exactly one run's (with Score's Start and
// Count set to the window, then Result.Trim(lead, trail)).
//
// Per integer_motion.c (extract, flush), with m = minIndex (1, or 2 with the
// five-frame window) and a window whose first frame is local index 0:
//   - sad[i] compares frame i with frame i-m, and is 0 for local i < m;
//   - motion2[i] is min(sad[i-m+1], sad[i+1]), or sad[i+1] alone while
//     i-m+1 < m, or sad[i] for the window's last frame;
//   - motion3[i] is motion2[i] blended and clipped, averaged with motion3's
//     processed value of frame i-1 under the moving average; frames below m
//     take the stamp, frame m's SAD blended, which needs frame m.
//
// So frame start needs frames back to start-(2m-1), and start-2m with the
// moving average (frame start-1's motion2 then counts): one frame by
// default, three with the five-frame window and four with the moving
// average too. Every frame needs the frame after it (motion2's sad[i+1]),
// and a chunk holding frames below m needs frame m (the stamp). At the
// clip's ends nothing is added, as one run has nothing there either.
func (o motionOptions) chunkContext(start, count, total int) (lead, trail int) {
	m := o.minIndex()
	back := 2*m - 1
	if o.movingAverage {
		back = 2 * m
	}
	if o.forceZero {
		back = 0
	}
	lead = min(start, back)
	end := start + count
	if end < total && !o.forceZero {
		trail = min(max(1, m+1-end), total-end)
	}
	return lead, trail
}
