package vmaf

import (
	"testing"

	"github.com/vmafx/vmafx/internal/testutil"
)

// BenchmarkKernels times each feature kernel on one synthetic 1280x720 pair:
// VMAF's own (VIF, ADM, Motion) and the extra features. Besides ns/op it
// reports cpu-ns/op, the process's CPU time per frame, steadier than wall
// time on a loaded machine.
func BenchmarkKernels(b *testing.B) {
	const w, h = 1280, 720
	ref, dist := synthPair(w, h, 2)
	// kernel runs setup outside the timing, then times the frame function
	// it returns.
	kernel := func(name string, setup func() func()) {
		b.Run(name, func(b *testing.B) {
			frame := setup()
			cpu0 := testutil.ProcessCPU()
			for b.Loop() {
				frame()
			}
			b.ReportMetric(float64((testutil.ProcessCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
	kernel("VIF", func() func() {
		s := newVIFState(w, h, defaultEnhnGainLimit)
		return func() { s.compute(ref[0], dist[0], 8) }
	})
	// VIF on each CPU path.
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		if !c.Supported() {
			continue
		}
		kernel("VIF/"+c.String(), func() func() {
			s := newVIFState(w, h, defaultEnhnGainLimit).with(kernelsFor(c))
			return func() { s.compute(ref[0], dist[0], 8) }
		})
	}
	kernel("ADM", func() func() {
		s := newADMState(w, h, defaultADMOptions())
		return func() { s.compute(ref[0], dist[0], 8) }
	})
	// ADM on each CPU path, with v0.6.1's options and with v1's (adm3,
	// aim: the contrast measure twice a scale).
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		if !c.Supported() {
			continue
		}
		for _, o := range []struct {
			name string
			opt  admOptions
		}{{"v0.6.1", defaultADMOptions()}, {"v1", admV1Options(3, 1080)}} {
			kernel("ADM/"+o.name+"/"+c.String(), func() func() {
				s := newADMState(w, h, o.opt).with(kernelsFor(c))
				return func() { s.compute(ref[0], dist[0], 8) }
			})
		}
	}
	kernel("Motion", func() func() {
		row := make([]int64, w)
		return func() { motionSAD(ref[0], ref[1], w, h, 8, row) }
	})
	// Motion on each CPU path.
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		if !c.Supported() {
			continue
		}
		kernel("Motion/"+c.String(), func() func() {
			k := kernelsFor(c)
			row := make([]int64, w)
			var m motionRows
			return func() { k.motionSAD(ref[0], ref[1], w, h, 8, row, &m) }
		})
	}
	// PSNR of the three planes of a 4:2:0 frame: luma plus two quarter
	// planes, which cost as much as half a luma plane.
	kernel("PSNR", func() func() {
		return func() {
			psnrPlane(ref[0], dist[0], w, h, w, 8)
			psnrPlane(ref[0], dist[0], w/2, h/2, w/2, 8)
			psnrPlane(ref[0], dist[0], w/2, h/2, w/2, 8)
		}
	})
	// SSIM and MS-SSIM include the conversion of both planes to float,
	// which they share when both are asked for.
	floats := func() ([]float32, []float32) { return make([]float32, w*h), make([]float32, w*h) }
	kernel("SSIM", func() func() {
		s := newSSIMState(w, h)
		rf, df := floats()
		return func() {
			toFloatPlane(rf, ref[0], 8)
			toFloatPlane(df, dist[0], 8)
			s.compute(rf, df)
		}
	})
	kernel("MSSSIM", func() func() {
		s := newMSSSIMState(w, h)
		rf, df := floats()
		return func() {
			toFloatPlane(rf, ref[0], 8)
			toFloatPlane(df, dist[0], 8)
			s.compute(rf, df)
		}
	})
	// CAMBI's cost grows with the share of flat pixels (the spatial mask):
	// the noisy synthetic pair has few, the banded ramp of synthClip
	// (half the picture) many.
	kernel("CAMBI", func() func() {
		s := newCAMBIState(w, h, 8, defaultCAMBIOptions())
		return func() { s.compute(dist[0]) }
	})
	kernel("CAMBI/banded", func() func() {
		_, raw := synthClip(w, h, YUV420P, 1)
		plane := make([]uint16, w*h)
		for i := range plane {
			plane[i] = uint16(raw[i])
		}
		s := newCAMBIState(w, h, 8, defaultCAMBIOptions())
		return func() { s.compute(plane) }
	})
	// vmaf_v1.0.16_3d0h's CAMBI options (a visibility threshold, no
	// speed-up at 720p) on both pictures, on each CPU path.
	v1, err := LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil || v1.cambi == nil {
		b.Fatal("no v1 CAMBI options:", err)
	}
	_, raw := synthClip(w, h, YUV420P, 1)
	banded := make([]uint16, w*h)
	for i := range banded {
		banded[i] = uint16(raw[i])
	}
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		if !c.Supported() {
			continue
		}
		for _, in := range []struct {
			name  string
			plane []uint16
		}{{"noisy", dist[0]}, {"banded", banded}} {
			kernel("CAMBI/v1/"+in.name+"/"+c.String(), func() func() {
				s := newCAMBIState(w, h, 8, *v1.cambi).with(kernelsFor(c))
				return func() { s.compute(in.plane) }
			})
		}
	}
}
