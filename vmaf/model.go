package vmaf

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

//go:embed models/*.json
var builtinModels embed.FS

// phoneSuffix turns a built-in model name into its phone variant: the same
// model with its score transform enabled (libvmaf's --model ...:enable_transform).
const phoneSuffix = "phone"

// DefaultModel is the model Score uses when Options.Model is empty: libvmaf's
// default, so that scores stay comparable with other tools.
const DefaultModel = "vmaf_v0.6.1"

// builtinNames are libvmaf 3.2.0's built-in models, in the order users meet them: the
// v0.6 generation (1080p TV at 3 picture heights; "neg" ignores enhancement gain; 4K
// at 1.5 heights; "b" is bootstrapped with a confidence interval), then VMAF v1
// (vmaf_v1.0.16: viewing distance in picture heights and display height in the name,
// "hfr" for high frame rates). Each is models/<name>.json, unchanged.
var builtinNames = []string{
	"vmaf_v0.6.1", "vmaf_v0.6.1neg", "vmaf_4k_v0.6.1", "vmaf_4k_v0.6.1neg", "vmaf_b_v0.6.3",
	"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160", "vmaf_v1.0.16_3d0h_2160",
	"vmaf_v1.0.16_hfr_3d0h", "vmaf_v1.0.16_hfr_5d0h", "vmaf_v1.0.16_hfr_1d5h_2160", "vmaf_v1.0.16_hfr_3d0h_2160",
}

// phoneModels have a phone variant, as libvmaf's documentation offers it: the v1 models
// carry their own transform, and the 4K and bootstrapped ones are not meant for phones.
var phoneModels = []string{"vmaf_v0.6.1", "vmaf_v0.6.1neg"}

// featureKind identifies a per-frame feature a model can be trained on.
type featureKind int

const (
	featVIF0 featureKind = iota
	featVIF1
	featVIF2
	featVIF3
	featADM2
	featMotion2
	featADM3
	featAIM
	featADMScale0
	featADMScale1
	featADMScale2
	featADMScale3
	featMotion3
	featCAMBI
	featSpeedU
	featSpeedV
	featSpeedUV
)

// extractor is the libvmaf feature extractor that computes a feature: a model's
// options apply per extractor.
type extractor int

const (
	extVIF extractor = iota
	extADM
	extMotion
	extCAMBI
	extSpeed
)

func (k featureKind) extractor() extractor {
	switch {
	case k <= featVIF3:
		return extVIF
	case k == featMotion2 || k == featMotion3:
		return extMotion
	case k == featCAMBI:
		return extCAMBI
	case k >= featSpeedU:
		return extSpeed
	}
	return extADM
}

// libvmafFeatures maps libvmaf's feature names, as they appear in model
// files, to the features computed here.
var libvmafFeatures = map[string]featureKind{
	"VMAF_integer_feature_vif_scale0_score":      featVIF0,
	"VMAF_integer_feature_vif_scale1_score":      featVIF1,
	"VMAF_integer_feature_vif_scale2_score":      featVIF2,
	"VMAF_integer_feature_vif_scale3_score":      featVIF3,
	"VMAF_integer_feature_adm2_score":            featADM2,
	"VMAF_integer_feature_adm3_score":            featADM3,
	"VMAF_integer_feature_aim_score":             featAIM,
	"VMAF_integer_feature_adm_scale0_score":      featADMScale0,
	"VMAF_integer_feature_adm_scale1_score":      featADMScale1,
	"VMAF_integer_feature_adm_scale2_score":      featADMScale2,
	"VMAF_integer_feature_adm_scale3_score":      featADMScale3,
	"VMAF_integer_feature_motion2_score":         featMotion2,
	"VMAF_integer_feature_motion3_score":         featMotion3,
	"Cambi_feature_cambi_score":                  featCAMBI,
	"Speed_chroma_feature_speed_chroma_u_score":  featSpeedU,
	"Speed_chroma_feature_speed_chroma_v_score":  featSpeedV,
	"Speed_chroma_feature_speed_chroma_uv_score": featSpeedUV,
}

type modelFeature struct {
	kind             featureKind
	name             string // libvmaf's name, as in the model file
	slope, intercept float64
}

// Model is a loaded libvmaf SVM model.
type Model struct {
	// Name is the model's name, used as the score's metric name "vmaf".
	Name string
	// Transform reports whether the score transform is applied: the model
	// file enables it (VMAF v1) or a "phone" variant was asked for.
	Transform bool
	// SHA256 is the hex SHA-256 of the JSON document the model was parsed
	// from, so a score can name the exact model file that produced it.
	SHA256 string

	features         []modelFeature
	linear           bool
	slope, intercept float64
	svm              *svmModel
	clip             bool
	clipMin, clipMax float64
	xform            scoreTransform

	// What the features need from the kernel, per extractor: VIF only when a
	// feature is a VIF scale (VMAF v1 has none), the others with the options
	// of the model file's feature_opts_dicts.
	vif              bool
	vifEGL, admEGL   float64
	adm              admOptions
	motion           motionOptions
	cambi            *cambiOptions // nil: no CAMBI feature
	speed            *speedOptions // nil: no SpEED feature
	chromaCorrection float64       // chroma_correction_parameter, 0 when off
	// chromaGuide and chromaGuided are the indices of the adm3 and speed_chroma
	// features the correction reads and replaces, found once when the model is read.
	chromaGuide, chromaGuided int
	// bootstrap holds a bootstrapped model's other models (vmaf_b_v0.6.3:
	// vmaf_0001 to vmaf_0020); the confidence interval is over their scores.
	bootstrap []*Model
}

// scoreTransform is the optional polynomial, piecewise-linear and
// rectification mapping of the score (predict.c, transform).
type scoreTransform struct {
	// enabled is the file's "enabled": libvmaf applies a transform only when it is
	// true or the caller enables it (read_json_model.c, parse_score_transform).
	enabled       bool
	p             [3]float64
	pSet          [3]bool
	knots         [][2]float64
	outGTE, outLT bool
}

// BuiltinModels lists the model names LoadModel resolves without a file.
func BuiltinModels() []string {
	names := slices.Clone(builtinNames)
	for _, m := range phoneModels {
		names = append(names, m+phoneSuffix)
	}
	return names
}

// LoadModel returns a built-in model by name (see BuiltinModels) or reads a
// libvmaf model JSON file from the path name. Errors wrap ErrUnknownModel
// when the name is neither, and ErrBadModel when the file is invalid.
func LoadModel(name string) (*Model, error) {
	if name == "" {
		name = DefaultModel
	}
	base, phone := strings.CutSuffix(name, phoneSuffix)
	if phone && !slices.Contains(phoneModels, base) {
		base, phone = name, false
	}
	if slices.Contains(builtinNames, base) {
		data, err := builtinModels.ReadFile("models/" + base + ".json")
		if err != nil {
			return nil, fmt.Errorf("%w: built-in %s: %w", ErrBadModel, base, err)
		}
		m, err := ParseModel(data, name)
		if err != nil {
			return nil, err
		}
		m.Transform = m.Transform || phone
		return m, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %q is not a built-in model or a file", ErrUnknownModel, name)
		}
		return nil, fmt.Errorf("%w: %w", ErrUnknownModel, err)
	}
	name = strings.TrimSuffix(name[strings.LastIndexAny(name, "/\\")+1:], ".json")
	return ParseModel(data, name)
}

// modelJSON is the libvmaf model file layout (model.c, vmaf_read_json_model).
type modelJSON struct {
	ModelDict *struct {
		Model                     string              `json:"model"`
		ModelType                 string              `json:"model_type"`
		FeatureNames              []string            `json:"feature_names"`
		FeatureOptsDicts          []map[string]any    `json:"feature_opts_dicts"`
		NormType                  string              `json:"norm_type"`
		Slopes                    []float64           `json:"slopes"`
		Intercepts                []float64           `json:"intercepts"`
		ScoreClip                 []float64           `json:"score_clip"`
		ScoreTransform            map[string]any      `json:"score_transform"`
		FeatureDict               map[string][]string `json:"feature_dict"`
		ChromaCorrectionParameter *float64            `json:"chroma_correction_parameter"`
	} `json:"model_dict"`
}

// maxBootstrapModels bounds a model collection, so that a hostile model file cannot
// make every frame cost thousands of SVM predictions (vmaf_b_v0.6.3 has 21 models).
const maxBootstrapModels = 100

// ParseModel parses a libvmaf model JSON document. name becomes Model.Name. It
// reads LIBSVMNUSVR models over the features libvmaf 3.2.0's built-in models use
// (integer VIF, ADM, motion, CAMBI and SpEED chroma, with their options) and model
// collections ("0", "1", ...: a bootstrapped model such as vmaf_b_v0.6.3, whose
// first model gives the score and the others the confidence interval); anything
// else is an error wrapping ErrBadModel. The score transform is on when the file
// enables it; set Model.Transform to force it.
func ParseModel(data []byte, name string) (*Model, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadModel, err)
	}
	sum := sha256.Sum256(data)
	if _, ok := top["model_dict"]; ok {
		m, err := parseOneModel(data, name)
		if err != nil {
			return nil, err
		}
		m.SHA256 = hex.EncodeToString(sum[:])
		return m, nil
	}
	// A model collection (read_json_model.c, model_collection_parse): keys "0", "1",
	// ... in order; model 0 is the score, the rest are named <name>_0001, ...
	var m *Model
	for i := 0; ; i++ {
		raw, ok := top[strconv.Itoa(i)]
		if !ok {
			break
		}
		if i > maxBootstrapModels {
			return nil, fmt.Errorf("%w: more than %d models in a collection", ErrBadModel, maxBootstrapModels)
		}
		part, err := parseOneModel(raw, name)
		if err != nil {
			return nil, fmt.Errorf("model %d: %w", i, err)
		}
		if i == 0 {
			m = part
			continue
		}
		if !slices.Equal(part.featureKinds(), m.featureKinds()) || part.vifEGL != m.vifEGL || part.admEGL != m.admEGL {
			return nil, fmt.Errorf("%w: model %d of the collection uses other features than model 0", ErrBadModel, i)
		}
		m.bootstrap = append(m.bootstrap, part)
	}
	if m == nil {
		return nil, fmt.Errorf("%w: neither model_dict nor a model collection", ErrBadModel)
	}
	if len(m.bootstrap) == 0 {
		return nil, fmt.Errorf("%w: a model collection needs at least two models", ErrBadModel)
	}
	m.SHA256 = hex.EncodeToString(sum[:])
	return m, nil
}

func (m *Model) featureKinds() []featureKind {
	kinds := make([]featureKind, len(m.features))
	for i, f := range m.features {
		kinds[i] = f.kind
	}
	return kinds
}

// parseOneModel parses one model_dict document.
func parseOneModel(data []byte, name string) (*Model, error) {
	var mj modelJSON
	if err := json.Unmarshal(data, &mj); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadModel, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadModel, fmt.Sprintf(format, args...))
	}
	d := mj.ModelDict
	if d == nil {
		return nil, bad("no model_dict")
	}
	if d.ModelType != "LIBSVMNUSVR" && d.ModelType != "BOOTSTRAP_LIBSVMNUSVR" {
		return nil, bad("unsupported model_type %q", d.ModelType)
	}
	n := len(d.FeatureNames)
	if n == 0 {
		return nil, bad("no feature_names")
	}
	m := &Model{Name: name, vifEGL: defaultEnhnGainLimit, admEGL: defaultEnhnGainLimit, slope: 1}
	switch d.NormType {
	case "linear_rescale":
		m.linear = true
		if len(d.Slopes) != n+1 || len(d.Intercepts) != n+1 {
			return nil, bad("need %d slopes and intercepts", n+1)
		}
		m.slope, m.intercept = d.Slopes[0], d.Intercepts[0]
		if m.slope == 0 {
			return nil, bad("zero output slope")
		}
	case "none", "":
	default:
		return nil, bad("unsupported norm_type %q", d.NormType)
	}
	if d.FeatureOptsDicts != nil && len(d.FeatureOptsDicts) != n {
		return nil, bad("feature_opts_dicts has %d entries for %d features", len(d.FeatureOptsDicts), n)
	}
	// libvmaf runs one extractor per distinct set of options; the features of one
	// extractor here share one set, so a model that mixes two is refused.
	opts := map[extractor]map[string]any{}
	for i, fname := range d.FeatureNames {
		kind, ok := libvmafFeatures[fname]
		if !ok {
			return nil, bad("unsupported feature %q", fname)
		}
		f := modelFeature{kind: kind, name: fname, slope: 1}
		if m.linear {
			f.slope, f.intercept = d.Slopes[i+1], d.Intercepts[i+1]
		}
		var o map[string]any
		if d.FeatureOptsDicts != nil {
			o = d.FeatureOptsDicts[i]
		}
		ext := kind.extractor()
		if prev, seen := opts[ext]; seen && !sameOptions(prev, o) {
			return nil, bad("features of one extractor with different options: %s", fname)
		}
		opts[ext] = o
		m.features = append(m.features, f)
	}
	for ext, o := range opts {
		var err error
		switch ext {
		case extVIF:
			m.vif = true
			m.vifEGL, err = parseVIFOptions(o)
		case extADM:
			m.adm, err = parseADMOptions(o)
		case extMotion:
			m.motion, err = parseMotionOptions(o)
		case extCAMBI:
			var c cambiOptions
			c, err = parseCAMBIOptions(o)
			m.cambi = &c
		case extSpeed:
			var s speedOptions
			s, err = parseSpeedOptions(o)
			m.speed = &s
		}
		if err != nil {
			return nil, fmt.Errorf("%w: feature_opts_dicts: %w", ErrBadModel, err)
		}
	}
	if _, ok := opts[extADM]; !ok {
		// libvmaf computes ADM for every VMAF model; its options then are the defaults.
		m.adm, _ = parseADMOptions(nil)
	}
	if _, ok := opts[extMotion]; !ok {
		m.motion, _ = parseMotionOptions(nil)
	}
	m.admEGL = m.adm.egl
	svm, err := parseSVM(d.Model, n)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadModel, err)
	}
	m.svm = svm
	if len(d.ScoreClip) != 0 {
		if len(d.ScoreClip) != 2 || d.ScoreClip[0] > d.ScoreClip[1] {
			return nil, bad("score_clip %v", d.ScoreClip)
		}
		m.clip, m.clipMin, m.clipMax = true, d.ScoreClip[0], d.ScoreClip[1]
	}
	if err := m.xform.parse(d.ScoreTransform); err != nil {
		return nil, fmt.Errorf("%w: score_transform: %w", ErrBadModel, err)
	}
	m.Transform = m.xform.enabled
	if c := d.ChromaCorrectionParameter; c != nil && *c != 0 {
		// predict.c, post_process_feature_from_another: a SpEED chroma score of
		// exactly 0 is replaced by one derived from ADM3.
		m.chromaGuide, m.chromaGuided = m.featureIndex("adm3"), m.featureIndex("speed_chroma")
		if m.chromaGuide < 0 || m.chromaGuided < 0 {
			return nil, bad("chroma_correction_parameter needs one adm3 and one speed_chroma feature")
		}
		m.chromaCorrection = *c
	}
	return m, nil
}

// ChunkContext is how many frames before and after its range a chunk of a split scoring
// must score and then drop (Result.Trim), so that every frame of the range has the
// motion it has in one run: one before and one after for libvmaf's default motion,
// four before under the high-frame-rate models' five-frame window and moving average.
// start and count are the chunk's range in a scoring of total frames.
func (m *Model) ChunkContext(start, count, total int) (lead, trail int) {
	return m.motion.chunkContext(start, count, total)
}

// OffloadSplit splits the feature extractors scoring with m runs (motion, vif, adm,
// cambi, speed_chroma) into those an Offload computes, of the offered ones it has
// kernels for, and those that stay on the CPU: ADM runs on the device under every option
// set whose CSF weights its kernels take (all the parser accepts, VMAF v1's included; see
// admOptions.offloadable), SpEED chroma under every option set (its per-pixel stages;
// see SpeedOffloader) and CAMBI up to its pooling (CAMBIOffloader).
func (m *Model) OffloadSplit(offered []string) (device, host []string) {
	used := []string{"motion"}
	if m.vif {
		used = append(used, "vif")
	}
	used = append(used, "adm")
	if m.cambi != nil {
		used = append(used, "cambi")
	}
	if m.speed != nil {
		used = append(used, "speed_chroma")
	}
	for _, f := range used {
		if slices.Contains(offered, f) && (f != "adm" || m.adm.offloadable()) {
			device = append(device, f)
		} else {
			host = append(host, f)
		}
	}
	return device, host
}

// checkInput refuses an input the model's features cannot score, before anything is
// decoded: CAMBI's and SpEED's smallest sizes (libvmaf 3.2.0 fails, or crashes, on
// smaller ones), and SpEED's need for chroma planes.
func (m *Model) checkInput(info VideoInfo) error {
	bpc := info.Format.BitDepth()
	if m.cambi != nil {
		if err := m.cambi.check(info.Width, info.Height, bpc); err != nil {
			return fmt.Errorf("model %s: CAMBI: %w", m.Name, err)
		}
	}
	if m.speed != nil {
		if err := checkSpeedSize(info.Width, info.Height, info.Format, *m.speed); err != nil {
			return fmt.Errorf("model %s: SpEED chroma: %w", m.Name, err)
		}
	}
	return nil
}

// featureIndex returns the index of the one feature whose libvmaf name contains sub,
// or -1 when none or several do (libvmaf matches the correction's features by substring).
func (m *Model) featureIndex(sub string) int {
	idx := -1
	for i, f := range m.features {
		if strings.Contains(f.name, sub) {
			if idx >= 0 {
				return -1
			}
			idx = i
		}
	}
	return idx
}

// sameOptions reports whether two features' option dictionaries are equal.
func sameOptions(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || fmt.Sprint(v) != fmt.Sprint(w) {
			return false
		}
	}
	return true
}

// vifOptionTable is the part of integer_vif.c's options a model sets: the enhancement
// gain limit (vmaf_v0.6.1neg's 1).
var vifOptionTable = []fexOption{
	{name: "vif_enhn_gain_limit", alias: "egl", kind: fexDouble, min: 1, max: defaultEnhnGainLimit, def: defaultEnhnGainLimit, param: true},
}

// parseVIFOptions reads integer_vif's options: the enhancement gain limit alone.
func parseVIFOptions(opts map[string]any) (float64, error) {
	v, err := parseFexOptions("vif", vifOptionTable, opts)
	if err != nil {
		return 0, err
	}
	return v["vif_enhn_gain_limit"].(float64), nil
}

func (t *scoreTransform) parse(st map[string]any) error {
	for k, v := range st {
		switch k {
		case "p0", "p1", "p2":
			x, ok := v.(float64)
			if !ok {
				return fmt.Errorf("%s is not a number", k)
			}
			i := int(k[1] - '0')
			t.p[i], t.pSet[i] = x, true
		case "out_gte_in", "out_lte_in":
			b, err := jsonBool(v)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if k == "out_gte_in" {
				t.outGTE = b
			} else {
				t.outLT = b
			}
		case "enabled":
			b, ok := v.(bool)
			if !ok {
				return fmt.Errorf("enabled is not a boolean")
			}
			t.enabled = b
		case "knots":
			list, ok := v.([]any)
			if !ok || len(list) < 2 {
				return fmt.Errorf("knots must list at least two points")
			}
			for _, p := range list {
				xy, ok := p.([]any)
				if !ok || len(xy) != 2 {
					return fmt.Errorf("bad knot %v", p)
				}
				x, ok1 := xy[0].(float64)
				y, ok2 := xy[1].(float64)
				if !ok1 || !ok2 {
					return fmt.Errorf("bad knot %v", p)
				}
				t.knots = append(t.knots, [2]float64{x, y})
			}
		default:
			return fmt.Errorf("unknown key %q", k)
		}
	}
	return nil
}

func jsonBool(v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		return strconv.ParseBool(b)
	}
	return false, fmt.Errorf("not a boolean: %v", v)
}

// apply maps a score through the transform (predict.c, transform). Like
// libvmaf, the rectification compares with the stage before the
// piecewise-linear mapping, i.e. the polynomial's output.
func (t *scoreTransform) apply(y float64) float64 {
	out := y
	if t.pSet[0] || t.pSet[1] || t.pSet[2] {
		out = 0
		if t.pSet[0] {
			out += t.p[0]
		}
		if t.pSet[1] {
			out += t.p[1] * y
		}
		if t.pSet[2] {
			out += t.p[2] * y * y
		}
	}
	stage := out
	if len(t.knots) > 1 {
		out = piecewiseLinear(stage, t.knots)
	}
	if t.outLT && out > stage {
		out = stage
	}
	if t.outGTE && out < stage {
		out = stage
	}
	return out
}

// piecewiseLinear interpolates through the knots, extrapolating the first
// and last segments (predict.c, piecewise_linear_mapping).
func piecewiseLinear(x float64, knots [][2]float64) float64 {
	y := 0.0
	last := len(knots) - 2
	for i := 0; i <= last; i++ {
		x0, y0, x1, y1 := knots[i][0], knots[i][1], knots[i+1][0], knots[i+1][1]
		in := x0 <= x && x <= x1
		below := i == 0 && x < x0
		above := i == last && x > x1
		if !(in || below || above) {
			continue
		}
		if y0 == y1 {
			y = y0
		} else {
			slope := (y1 - y0) / (x1 - x0)
			y = y0 + slope*(x-x0)
		}
	}
	return y
}

// predict returns the model's score for one frame's features, in model
// order (predict.c, vmaf_predict_score_at_index): normalise, SVM, then
// denormalise, transform and clip. For a bootstrapped model it fills
// f.Bootstrap too. x is scratch of at least len(m.features).
func (m *Model) predict(f *FrameScore, x []float64) float64 {
	m.input(f, x)
	score := m.output(m.svm.predict(x), m.Transform, true)
	if len(m.bootstrap) > 0 {
		f.Bootstrap = m.predictBootstrap(f, x)
	}
	return score
}

// input writes the SVM's input for one frame to x: each feature normalised, with
// the chroma correction applied.
func (m *Model) input(f *FrameScore, x []float64) {
	for i, mf := range m.features {
		v := f.feature(mf.kind)
		if m.linear {
			v = mf.slope*v + mf.intercept
		}
		x[i] = v
	}
	if m.chromaCorrection != 0 {
		m.correctChroma(x)
	}
}

// correctChroma replaces a SpEED chroma score of exactly 0 (chroma planes that carry
// nothing for SpEED to measure) by c*(1-adm3), as libvmaf does before the SVM
// (predict.c, post_process_feature_from_another): both features are denormalised
// from x and the result normalised again, with libvmaf's operations in its order.
func (m *Model) correctChroma(x []float64) {
	gi, si := m.chromaGuide, m.chromaGuided
	g, sp := x[gi], x[si]
	if m.linear {
		g = (g - m.features[gi].intercept) / m.features[gi].slope
		sp = (sp - m.features[si].intercept) / m.features[si].slope
	}
	if sp != 0 {
		return
	}
	c := m.chromaCorrection
	v := -c*g + c
	if m.linear {
		v = m.features[si].slope*v + m.features[si].intercept
	}
	x[si] = v
}

// output maps the SVM's output to a score: denormalise, then the transform and the
// clip where asked.
func (m *Model) output(p float64, transform, clip bool) float64 {
	if m.linear {
		p = (p - m.intercept) / m.slope
	}
	if transform {
		p = m.xform.apply(p)
	}
	if clip {
		p = m.clamp(p)
	}
	return p
}

func (m *Model) clamp(p float64) float64 {
	if m.clip {
		p = min(max(p, m.clipMin), m.clipMax)
	}
	return p
}

// predictBootstrap scores one frame with each bootstrap model (predict.c,
// vmaf_bootstrap_predict_score_at_index): every model's own score, and the mean,
// standard deviation and 95% interval of their untransformed, unclipped scores,
// mapped through the main model's transform and clip (the deviation scaled by
// the mapping's slope at the mean).
func (m *Model) predictBootstrap(f *FrameScore, x []float64) *BootstrapScore {
	n := len(m.bootstrap)
	b := &BootstrapScore{Models: make([]float64, n)}
	raw := make([]float64, n)
	for i, bm := range m.bootstrap {
		bm.input(f, x)
		y := bm.svm.predict(x)
		raw[i] = bm.output(y, false, false)
		b.Models[i] = bm.output(y, bm.Transform, true)
	}
	sum := 0.0
	for _, v := range raw {
		sum += v
	}
	mean := sum / float64(n)
	ssd := 0.0
	for _, v := range raw {
		// libvmaf's pow(v - mean, 2): a correctly rounded square, which d*d is.
		d := v - mean
		ssd += d * d
	}
	stddev := math.Sqrt(ssd / float64(n))
	slices.Sort(raw)
	lo, hi := percentile(raw, 2.5), percentile(raw, 97.5)
	const delta = 0.01
	mapped := func(v float64) float64 {
		if m.Transform {
			v = m.xform.apply(v)
		}
		return m.clamp(v)
	}
	plus, minus := mapped(mean+delta), mapped(mean-delta)
	b.Bagging, b.CILow, b.CIHigh = mapped(mean), mapped(lo), mapped(hi)
	b.StdDev = stddev * ((plus - minus) / (2.0 * delta))
	return b
}

// percentile interpolates linearly between the sorted scores around perc
// (predict.c, percentile).
func percentile(sorted []float64, perc float64) float64 {
	p := perc * float64(len(sorted)-1) / 100.
	l, r := int(math.Floor(p)), int(math.Ceil(p))
	if l == r {
		return sorted[l]
	}
	return sorted[l]*(float64(r)-p) + sorted[r]*(p-float64(l))
}
