package vmaf

import "testing"

// BenchmarkKernels times each feature kernel on one synthetic 1280x720 pair.
func BenchmarkKernels(b *testing.B) {
	const w, h = 1280, 720
	ref, dist := synthPair(w, h, 2)
	b.Run("VIF", func(b *testing.B) {
		s := newVIFState(w, h, defaultEnhnGainLimit)
		for b.Loop() {
			s.compute(ref[0], dist[0], 8)
		}
	})
	b.Run("ADM", func(b *testing.B) {
		s := newADMState(w, h, defaultEnhnGainLimit)
		for b.Loop() {
			s.compute(ref[0], dist[0], 8)
		}
	})
	b.Run("Motion", func(b *testing.B) {
		row := make([]int64, w)
		for b.Loop() {
			motionSAD(ref[0], ref[1], w, h, 8, row)
		}
	})
	rf, df := make([]float32, w*h), make([]float32, w*h)
	toFloatPlane(rf, ref[0], 8)
	toFloatPlane(df, dist[0], 8)
	b.Run("SSIM", func(b *testing.B) {
		s := newSSIMState(w, h)
		for b.Loop() {
			s.compute(rf, df)
		}
	})
	b.Run("MSSSIM", func(b *testing.B) {
		s := newMSSSIMState(w, h)
		for b.Loop() {
			s.compute(rf, df)
		}
	})
	// CAMBI's cost grows with the share of flat pixels (the spatial mask):
	// the noisy synthetic pair has few, the banded ramp of synthClip
	// (half the picture) many.
	b.Run("CAMBI", func(b *testing.B) {
		s := newCAMBIState(w, h, 8)
		for b.Loop() {
			s.compute(dist[0])
		}
	})
	b.Run("CAMBI/banded", func(b *testing.B) {
		_, raw := synthClip(w, h, YUV420P, 1)
		plane := make([]uint16, w*h)
		for i := range plane {
			plane[i] = uint16(raw[i])
		}
		s := newCAMBIState(w, h, 8)
		for b.Loop() {
			s.compute(plane)
		}
	})
	// PSNR of the three planes of a 4:2:0 frame: luma plus two quarter
	// planes, which cost as much as half a luma plane.
	b.Run("PSNR", func(b *testing.B) {
		for b.Loop() {
			psnrPlane(ref[0], dist[0], w, h, w, 8)
			psnrPlane(ref[0], dist[0], w/2, h/2, w/2, 8)
			psnrPlane(ref[0], dist[0], w/2, h/2, w/2, 8)
		}
	})
}
