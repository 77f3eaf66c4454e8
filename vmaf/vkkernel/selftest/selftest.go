package selftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// ErrFailed marks a device that failed the self-test: its numbers differ
// from the CPU kernel's (MismatchError) or it could not score the pair.
var ErrFailed = errors.New("vulkan self-test failed")

// MismatchError is the first feature of the first frame where the device's
// result differs from the CPU's.
type MismatchError struct {
	Device        vulkan.Info
	Case          string // the built-in case, e.g. "vmaf_v0.6.1 128x72"
	Frame         int
	Feature       string // libvmaf's name, e.g. integer_vif_scale2
	CPU, OnDevice float64
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%v on %s: %s: frame %d %s is %v with the device, %v on the CPU",
		ErrFailed, describe(e.Device), e.Case, e.Frame, e.Feature, e.OnDevice, e.CPU)
}

// Unwrap makes errors.Is(err, ErrFailed) true.
func (e *MismatchError) Unwrap() error { return ErrFailed }

// describe names the device and its driver the way the failure is reported.
func describe(d vulkan.Info) string {
	return fmt.Sprintf("device %q (driver %s, Vulkan %s)", d.Name, d.Driver, d.APIVersion)
}

// Run checks k's device. It returns nil when every frame of every built-in
// case is identical to the CPU kernel's, a *MismatchError naming the first
// difference, or an error naming the device when scoring itself fails.
func Run(ctx context.Context, k *vkkernel.Kernel) error {
	return Check(ctx, k, k.Info())
}

// Check is Run with the offload given apart from the device it describes,
// so that tests can put a wrong result between the device and the
// comparison and see the mismatch reported.
func Check(ctx context.Context, off vmaf.Offload, dev vulkan.Info) error {
	// Every case on the device at once, beside the CPU's side (Prepare): the
	// self-test is a fixed cost of every worker's start, and its scorings are
	// independent. The verdict is the same as one after another's: the first
	// case's failure, in the cases' order.
	Prepare()
	var wg sync.WaitGroup
	gpus := make([]scored, len(cases))
	for i, c := range cases {
		wg.Go(func() { gpus[i].res, gpus[i].err = c.score(ctx, off) })
	}
	wg.Wait()
	cpus := cpuScores()
	for i, c := range cases {
		cpu, err := cpus[i].res, cpus[i].err
		if err != nil {
			return fmt.Errorf("vulkan self-test: %s on the CPU: %w", c.name(), err)
		}
		gpu, err := gpus[i].res, gpus[i].err
		if err != nil {
			return fmt.Errorf("%w on %s: %s: %w", ErrFailed, describe(dev), c.name(), err)
		}
		if len(cpu.Frames) != len(gpu.Frames) {
			return fmt.Errorf("%w on %s: %s: %d frames with the device, %d on the CPU", ErrFailed, describe(dev), c.name(), len(gpu.Frames), len(cpu.Frames))
		}
		for i := range cpu.Frames {
			if name, want, got, ok := firstDiff(&cpu.Frames[i], &gpu.Frames[i]); !ok {
				return &MismatchError{Device: dev, Case: c.name(), Frame: cpu.Frames[i].Index, Feature: name, CPU: want, OnDevice: got}
			}
		}
	}
	return nil
}

// scored is one scoring of a case: its result or its error.
type scored struct {
	res *vmaf.Result
	err error
}

// Prepare starts the CPU's side of the self-test, which needs no device, on goroutines
// of its own; Check waits for it. The worker calls it before it opens the device, so
// the CPU's scores are ready by the time the device is open and the self-test waits
// only for the device's. Its scores are made once a process: they are the CPU kernel's,
// the same for every device.
func Prepare() {
	prepare.Do(func() { go cpuScores() })
}

var prepare sync.Once

// cpuScores are the cases' scores on the CPU kernel, in the cases' order, each
// scored on a goroutine of its own.
var cpuScores = sync.OnceValue(func() []scored {
	cpuScorings.Add(1)
	var wg sync.WaitGroup
	cpus := make([]scored, len(cases))
	for i, c := range cases {
		wg.Go(func() { cpus[i].res, cpus[i].err = c.score(context.Background(), nil) })
	}
	wg.Wait()
	return cpus
})

// cpuScorings counts the CPU's sides scored (tests: once a process).
var cpuScorings atomic.Int32

// firstDiff compares the features a device can compute, and the score, bit
// for bit (NaN equal to NaN).
func firstDiff(cpu, gpu *vmaf.FrameScore) (name string, want, got float64, same bool) {
	type field struct {
		name     string
		cpu, gpu float64
	}
	fields := []field{
		{"integer_motion", cpu.MotionSAD, gpu.MotionSAD},
		{"integer_motion2", cpu.Motion2, gpu.Motion2},
		{"integer_motion3", cpu.Motion3, gpu.Motion3},
	}
	for s := range 4 {
		fields = append(fields, field{fmt.Sprintf("integer_vif_scale%d", s), cpu.VIF[s], gpu.VIF[s]})
	}
	fields = append(fields, field{"integer_adm2", cpu.ADM2, gpu.ADM2}, field{"integer_aim", cpu.AIM, gpu.AIM}, field{"integer_adm3", cpu.ADM3, gpu.ADM3})
	for s := range 4 {
		fields = append(fields, field{fmt.Sprintf("integer_adm_scale%d", s), cpu.ADMScale[s], gpu.ADMScale[s]})
	}
	fields = append(fields,
		field{"speed_chroma_u", cpu.SpeedU, gpu.SpeedU}, field{"speed_chroma_v", cpu.SpeedV, gpu.SpeedV},
		field{"speed_chroma_uv", cpu.SpeedUV, gpu.SpeedUV}, field{"cambi", cpu.ModelCAMBI, gpu.ModelCAMBI},
		field{"vmaf", cpu.VMAF, gpu.VMAF})
	for _, f := range fields {
		if math.Float64bits(f.cpu) != math.Float64bits(f.gpu) && !(math.IsNaN(f.cpu) && math.IsNaN(f.gpu)) {
			return f.name, f.cpu, f.gpu, false
		}
	}
	return "", 0, 0, true
}

// testCase is one built-in pair and the model it is scored with.
type testCase struct {
	model  string
	w, h   int
	pf     vmaf.PixelFormat // 8-bit 4:2:0 or 4:2:2
	frames int
}

// cases: vmaf_v0.6.1 (motion, VIF, ADM) at 128x72, whose fourth VIF scale
// is 16x9 and fourth ADM scale 8x5, over five frames so that motion2 and
// motion3 see frames on both sides and the frames-in-flight ring wraps; and
// a v1 model (SpEED chroma and CAMBI too) at 352x320 4:2:2, whose chroma
// decimated by 16 holds enough 5x5 blocks for SpEED's covariance to be
// regular (smaller, its scores are 0 and would hide a wrong device).
var cases = []testCase{
	{model: "vmaf_v0.6.1", w: 128, h: 72, pf: vmaf.YUV420P, frames: 5},
	{model: "vmaf_v1.0.16_3d0h", w: 352, h: 320, pf: vmaf.YUV422P, frames: 2},
}

func (c testCase) name() string { return fmt.Sprintf("%s %dx%d", c.model, c.w, c.h) }

// score scores the case's pair with off computing what it offloads (nil:
// the CPU alone), on one goroutine.
func (c testCase) score(ctx context.Context, off vmaf.Offload) (*vmaf.Result, error) {
	ref, dist := c.pair()
	r, err := vmaf.OpenRaw(bytes.NewReader(ref), c.w, c.h, c.pf)
	if err != nil {
		return nil, err
	}
	d, err := vmaf.OpenRaw(bytes.NewReader(dist), c.w, c.h, c.pf)
	if err != nil {
		return nil, err
	}
	return vmaf.Score(ctx, r, d, vmaf.Options{Model: c.model, Threads: 1, Offload: off})
}

// pair is the case's reference and distorted video. Each case's is synthesised once a
// process and only read: the CPU's and the device's scorings of a case run at once, on
// the same bytes.
func (c testCase) pair() (ref, dist []byte) { return pairs[c]() }

var pairs = func() map[testCase]func() ([]byte, []byte) {
	m := make(map[testCase]func() ([]byte, []byte), len(cases))
	for _, c := range cases {
		m[c] = sync.OnceValues(func() ([]byte, []byte) {
			cw, ch := (c.w+1)/2, (c.h+1)/2
			if c.pf == vmaf.YUV422P {
				ch = c.h
			}
			return synthesise(c.w, c.h, cw, ch, c.frames)
		})
	}
	return m
}()

// synthesise makes n frames of 8-bit video (cw x ch chroma), reference and distorted,
// from integer arithmetic alone so that every machine makes the same bytes.
// The reference's top half is a hashed texture panning two pixels a frame
// (motion, VIF, ADM) with a moving bright bar; its bottom half a smooth
// gradient, which the distorted frame quantises into bands (CAMBI). The
// distorted frame quantises the texture by a step that changes from frame
// to frame and adds hashed noise; its chroma loses half its contrast
// (SpEED chroma).
func synthesise(w, h, cw, ch, n int) (ref, dist []byte) {
	size := n * (w*h + 2*cw*ch)
	ref, dist = make([]byte, size), make([]byte, size)
	i := 0
	// What depends on the column alone, by column: the divisions by the plane's width
	// took most of the time when taken a pixel.
	texture, gradient, square := make([]int, w), make([]int, w), make([]int, w)
	for f := range n {
		for plane, sz := range [3][2]int{{w, h}, {cw, ch}, {cw, ch}} {
			pw, ph := sz[0], sz[1]
			for x := range pw {
				texture[x], gradient[x], square[x] = (x*100)/pw, (x*80)/pw, x/11
			}
			// The bright bar's columns: (x+3f) mod pw below pw/8.
			bar := func(x int) bool {
				x += 3 * f
				if x >= pw {
					x -= pw
				}
				return x < pw/8
			}
			for y := range ph {
				smooth := y >= ph/2
				base := 40 + (y*60)/ph
				if smooth {
					// CAMBI's bands: a gradient the distorted frame
					// quantises to every other code value.
					base = 50 + (y*20)/ph
				}
				for x := range pw {
					v := base + texture[x]
					if smooth {
						v = base + gradient[x]
					}
					if plane > 0 {
						// SpEED looks at chroma decimated by 16: coarse squares survive it.
						v += 50 * ((square[x] + y/13 + f) % 2)
					}
					if !smooth {
						v += int(hash(uint32(x+2*f), uint32(y), uint32(plane)) % 32)
						if plane == 0 && bar(x) {
							v += 30
						}
					}
					v = min(v, 235)
					ref[i] = byte(v)
					var q int
					switch {
					case smooth:
						q = v &^ 1
					case plane > 0:
						// Chroma loses contrast: SpEED's local entropies change.
						q = (v+128)/2 + int(hash(uint32(x), uint32(y), uint32(f+17+plane))%7) - 3
					default:
						q = v&^(1<<(2+f%3)-1) + int(hash(uint32(x), uint32(y), uint32(f+17+plane))%7) - 3
					}
					dist[i] = byte(min(max(q, 16), 235))
					i++
				}
			}
		}
	}
	return ref, dist
}

// hash is a small integer hash (a few rounds of xorshift-multiply).
func hash(x, y, z uint32) uint32 {
	h := x*0x9e3779b1 ^ y*0x85ebca77 ^ z*0xc2b2ae3d
	h ^= h >> 15
	h *= 0x2c1b3c6d
	h ^= h >> 12
	h *= 0x297a2d39
	h ^= h >> 15
	return h
}
