package vmaf

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// patternSource yields n synthetic frames of info, with chroma when asked.
type patternSource struct {
	info VideoInfo
	n, i int
	y    []uint16 // the samples of a frame read Packed, reused
}

func (s *patternSource) Info() VideoInfo { return s.info }

func (s *patternSource) ReadFrame(f *Frame) error {
	if s.i >= s.n {
		return io.EOF
	}
	s.i++
	w, h := s.info.Width, s.info.Height
	f.Width, f.Height, f.BitDepth = w, h, s.info.Format.BitDepth()
	if f.Packed && f.BitDepth == 8 {
		// As vmaf's readers do: the luma as bytes, Y empty.
		s.y = fill(s.y, w*h, s.i)
		if cap(f.Y8) < w*h {
			f.Y8 = make([]byte, w*h)
		}
		f.Y8, f.Y = f.Y8[:w*h], f.Y[:0]
		Narrow8(f.Y8, s.y)
	} else {
		f.Y = fill(f.Y, w*h, s.i)
	}
	f.ChromaWidth, f.ChromaHeight = 0, 0
	if f.Chroma {
		cw, ch := s.info.Format.chromaSize(w, h)
		f.ChromaWidth, f.ChromaHeight = cw, ch
		f.U, f.V = fill(f.U, cw*ch, s.i+1), fill(f.V, cw*ch, s.i+2)
	}
	return nil
}

func fill(buf []uint16, n, seed int) []uint16 {
	if cap(buf) < n {
		buf = make([]uint16, n)
	}
	buf = buf[:n]
	for k := range buf {
		buf[k] = uint16((k*7 + seed*13) & 255)
	}
	return buf
}

// TestMemoryEstimateBoundsScore runs Score and checks that MemoryEstimate is above what
// the run allocated in all (the kernel allocates at setup only, so the total bounds its
// heap) and not more than twice that, so a memory limit is neither overrun nor wasted.
func TestMemoryEstimateBoundsScore(t *testing.T) {
	if testing.Short() {
		t.Skip("scores 1280x720 frames")
	}
	cases := []struct {
		w, h, threads int
		features      []Feature
	}{
		{640, 360, 1, nil}, {640, 360, 4, nil}, {1280, 720, 2, nil},
		{1280, 720, 1, AllFeatures}, {1280, 720, 3, AllFeatures}, {960, 540, 2, []Feature{FeatureSSIM}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dx%d/%d-threads/%d-features", tc.w, tc.h, tc.threads, len(tc.features)), func(t *testing.T) {
			info := VideoInfo{Width: tc.w, Height: tc.h, Format: YUV420P}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Score(context.Background(), &patternSource{info: info, n: 5}, &patternSource{info: info, n: 5},
				Options{Threads: tc.threads, Features: tc.features})
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			// The readers' byte buffers are the callers'; count them as the estimate does.
			used := int64(after.TotalAlloc-before.TotalAlloc) + 2*int64(info.Format.FrameBytes(tc.w, tc.h))
			est := MemoryEstimate(info, tc.threads, tc.features) - runtimeOverheadBytes
			t.Logf("allocated %.1f MB, estimated %.1f MB", float64(used)/1e6, float64(est)/1e6)
			if est < used || est > 2*used {
				t.Errorf("estimate %d bytes for %d allocated: want between 1x and 2x", est, used)
			}
		})
	}
}

// TestMemoryEstimateForBoundsScore is TestMemoryEstimateBoundsScore for what
// MemoryEstimateFor adds: VMAF v1 models (SpEED chroma's frames with their chroma, in
// 4:2:0 and 4:4:4 at 10 bits, CAMBI, the HFR model's five-frame motion window) and a
// device's frames in flight (a FrameOffload that keeps 16, as the Vulkan kernel's
// workers do at 1080p; a fake that computes motion on the CPU).
func TestMemoryEstimateForBoundsScore(t *testing.T) {
	if testing.Short() {
		t.Skip("scores 1280x720 frames")
	}
	const v1, hfr = "vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_hfr_3d0h"
	cases := []struct {
		model   string
		pf      PixelFormat
		threads int
		flight  int
	}{
		{v1, YUV420P, 1, 0}, {v1, YUV420P, 3, 0}, {v1, YUV444P10LE, 1, 0}, {v1, YUV444P10LE, 3, 0},
		{hfr, YUV420P, 2, 0}, {DefaultModel, YUV420P, 1, 16}, {DefaultModel, YUV420P, 2, 16},
		{DefaultModel, YUV420P, 4, 2}, {DefaultModel, YUV420P10LE, 2, 16},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%v/%d-threads/%d-in-flight", tc.model, tc.pf, tc.threads, tc.flight), func(t *testing.T) {
			m, err := LoadModel(tc.model)
			if err != nil {
				t.Fatal(err)
			}
			const w, h = 1280, 720
			info := VideoInfo{Width: w, Height: h, Format: tc.pf}
			opts := Options{Threads: tc.threads, LoadedModel: m}
			if tc.flight > 0 {
				opts.Offload = &cpuFrameOffload{m: m, pf: tc.pf, flight: tc.flight}
			}
			// Enough frames to fill every slot the pipeline may hold.
			n := tc.threads + 4 + tc.flight
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if _, err := Score(context.Background(), &patternSource{info: info, n: n}, &patternSource{info: info, n: n}, opts); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			used := int64(after.TotalAlloc-before.TotalAlloc) + 2*int64(info.Format.FrameBytes(w, h))
			est := MemoryEstimateFor(info, tc.threads, nil, m, tc.flight) - runtimeOverheadBytes
			t.Logf("allocated %.1f MB, estimated %.1f MB (MemoryEstimate: %.1f MB)", float64(used)/1e6, float64(est)/1e6,
				float64(MemoryEstimate(info, tc.threads, nil)-runtimeOverheadBytes)/1e6)
			if est < used || est > 2*used {
				t.Errorf("estimate %d bytes for %d allocated: want between 1x and 2x", est, used)
			}
		})
	}
}

func TestThreadsWithin(t *testing.T) {
	info := VideoInfo{Width: 1920, Height: 1080, Format: YUV420P}
	one, two := MemoryEstimate(info, 1, nil), MemoryEstimate(info, 2, nil)
	for _, tc := range []struct {
		budget int64
		max    int
		want   int
	}{
		{two, 8, 2}, {two - 1, 8, 1}, {one, 8, 1}, {one - 1, 8, 0}, {1 << 40, 4, 4}, {two, 0, 1},
	} {
		if got := ThreadsWithin(info, tc.max, nil, tc.budget); got != tc.want {
			t.Errorf("ThreadsWithin(budget %d, max %d) = %d, want %d", tc.budget, tc.max, got, tc.want)
		}
	}
	// 8K at 12 bits, the geometry a 32-byte Y4M header can claim, needs gigabytes.
	huge := VideoInfo{Width: 7680, Height: 4320, Format: YUV444P12LE}
	if got := ThreadsWithin(huge, 2, nil, 1<<30); got != 0 {
		t.Errorf("8K 4:4:4 12-bit fits a 1 GiB limit with %d threads; want none", got)
	}
}
