package vmaf

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmafx/vmafx/internal/testutil"
)

// memSource yields n frames cycling through pre-made luma planes, so that
// benchmarks measure scoring rather than I/O. When a frame asks for chroma
// and the format has some, U and V are the luma plane's samples at the
// chroma positions (nearest, not filtered): enough for PSNR's cost and for a
// distortion that shows in chroma too. A memSource with noChroma ignores
// Frame.Chroma, as a FrameSource written before chroma existed would.
type memSource struct {
	info     VideoInfo
	planes   [][]uint16
	n, pos   int
	noChroma bool
	// u and v, when set, are each plane's chroma (chromaOf): made per frame,
	// they cost a benchmark's reader more than scoring costs a thread.
	u, v [][]uint16
}

// chromaOf returns the chroma planes memSource makes of each luma plane.
func chromaOf(info VideoInfo, planes [][]uint16) (u, v [][]uint16) {
	w, h := info.Width, info.Height
	cw, ch := info.Format.chromaSize(w, h)
	if cw == 0 {
		return nil, nil
	}
	sx, sy := (w+cw-1)/cw, (h+ch-1)/ch
	for _, p := range planes {
		pu, pv := make([]uint16, 0, cw*ch), make([]uint16, 0, cw*ch)
		for y := 0; y < ch; y++ {
			for x := 0; x < cw; x++ {
				s := p[y*sy*w+x*sx]
				pu, pv = append(pu, s), append(pv, s^1)
			}
		}
		u, v = append(u, pu), append(v, pv)
	}
	return u, v
}

func (m *memSource) Info() VideoInfo { return m.info }

func (m *memSource) ReadFrame(f *Frame) error {
	if m.pos >= m.n {
		return io.EOF
	}
	k := m.pos % len(m.planes)
	p := m.planes[k]
	m.pos++
	w, h := m.info.Width, m.info.Height
	f.Width, f.Height, f.BitDepth = w, h, m.info.Format.BitDepth()
	f.Y = append(f.Y[:0], p...)
	f.ChromaWidth, f.ChromaHeight, f.U, f.V = 0, 0, f.U[:0], f.V[:0]
	cw, ch := m.info.Format.chromaSize(w, h)
	if !f.Chroma || m.noChroma || cw == 0 {
		return nil
	}
	f.ChromaWidth, f.ChromaHeight = cw, ch
	if m.u == nil {
		m.u, m.v = chromaOf(m.info, m.planes)
	}
	f.U, f.V = append(f.U[:0], m.u[k]...), append(f.V[:0], m.v[k]...)
	return nil
}

// synthPair makes k deterministic reference planes (a seeded texture panning
// one pixel per frame) and their distortions (3x3 box blur plus noise).
func synthPair(w, h, k int) (ref, dist [][]uint16) {
	rng := rand.New(rand.NewPCG(1, 2))
	tw, th := w+k, h
	tex := make([]uint16, tw*th)
	for y := 0; y < th; y++ {
		for x := 0; x < tw; x++ {
			v := 64 + (x*3+y*2)%128 + rng.IntN(48)
			if (x/16+y/16)%2 == 0 {
				v += 40
			}
			tex[y*tw+x] = uint16(min(v, 255))
		}
	}
	for f := 0; f < k; f++ {
		r := make([]uint16, w*h)
		d := make([]uint16, w*h)
		for y := 0; y < h; y++ {
			copy(r[y*w:(y+1)*w], tex[y*tw+f:y*tw+f+w])
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				var s, n int
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						yy, xx := y+dy, x+dx
						if yy >= 0 && yy < h && xx >= 0 && xx < w {
							s += int(r[yy*w+xx])
							n++
						}
					}
				}
				d[y*w+x] = uint16(min(max(s/n+rng.IntN(7)-3, 0), 255))
			}
		}
		ref = append(ref, r)
		dist = append(dist, d)
	}
	return ref, dist
}

// BenchmarkScore times whole Score calls per frame size, kernel path and
// thread count: BenchmarkScore/<W>x<H>/cpu=<path>/threads=<N>. Frames are
// generated in memory; a path this processor lacks is skipped.
func BenchmarkScore(b *testing.B) {
	sizes := []struct{ w, h, frames int }{{176, 144, 32}, {1280, 720, 8}, {1920, 1080, 6}, {3840, 2160, 3}}
	for _, sz := range sizes {
		var refP, distP [][]uint16
		for _, cpu := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%dx%d/cpu=%v/threads=%d", sz.w, sz.h, cpu, threads), func(b *testing.B) {
					if !cpu.Supported() {
						b.Skipf("this processor has no %v", cpu)
					}
					if refP == nil {
						refP, distP = synthPair(sz.w, sz.h, 4)
					}
					benchScore(b, refP, distP, sz.w, sz.h, sz.frames, Options{Threads: threads, CPU: cpu})
				})
			}
		}
	}
}

// BenchmarkScoreModel times whole Score calls of 1280x720 under each model
// family whose features differ (v0.6.1: VIF, ADM, motion; v1: ADM with its
// CSF, motion3, CAMBI and SpEED chroma, no VIF) on the best path:
// BenchmarkScoreModel/<model>/threads=<N>.
func BenchmarkScoreModel(b *testing.B) {
	const w, h, frames = 1280, 720, 8
	refP, distP := synthPair(w, h, 4)
	for _, model := range []string{DefaultModel, "vmaf_v1.0.16_3d0h"} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", model, threads), func(b *testing.B) {
				benchScore(b, refP, distP, w, h, frames, Options{Threads: threads, Model: model})
			})
		}
	}
}

// BenchmarkScoreScaling times whole Score calls on one thread and on every CPU the
// process may use (GOMAXPROCS), on the best path, with the same frames a thread on both
// (16): BenchmarkScoreScaling/<model>/<W>x<H>/threads=<N>. Issue 28's threading target
// reads it on a 16-core machine: frames/s at 16 threads within 10% of 16 times the
// 1-thread figure, and B/op and peak-heap-MB per thread no higher than on one. On this
// project's 2-core machines it compares 1 and 2 threads. The ratio itself is
// BenchmarkScoreScaling/<model>/<W>x<H>/scaling (benchScaling): the two thread counts
// in alternating calls, each pair's ratio, the median of the pairs.
//
// Each thread makes its scratch when the call starts (for VMAF v1 at 1080p about 75 MB,
// first touched then), a cost a long video does not feel. With the same frames for both
// runs, as this benchmark had, the one thread spread its scratch over all of them and each
// of 16 threads over a sixteenth: the figure at 16 threads paid sixteen times the setup a
// frame, and VMAF v1 read 0.76 of twice one thread's speed on 2 threads where the
// scoring itself scales.
func BenchmarkScoreScaling(b *testing.B) {
	threads := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		threads = append(threads, n)
	}
	const framesPerThread = 16
	for _, sz := range []struct{ w, h int }{{1920, 1080}, {3840, 2160}} {
		var refP, distP [][]uint16
		for _, model := range []string{DefaultModel, "vmaf_v1.0.16_3d0h"} {
			for _, t := range threads {
				b.Run(fmt.Sprintf("%s/%dx%d/threads=%d", model, sz.w, sz.h, t), func(b *testing.B) {
					if refP == nil {
						refP, distP = synthPair(sz.w, sz.h, 4)
					}
					benchScore(b, refP, distP, sz.w, sz.h, framesPerThread*t, Options{Threads: t, Model: model})
				})
			}
			if len(threads) < 2 {
				continue
			}
			b.Run(fmt.Sprintf("%s/%dx%d/scaling", model, sz.w, sz.h), func(b *testing.B) {
				if refP == nil {
					refP, distP = synthPair(sz.w, sz.h, 4)
				}
				benchScaling(b, refP, distP, sz.w, sz.h, framesPerThread, threads[1], model)
			})
		}
	}
}

// benchScaling is BenchmarkScoreScaling's scaling figure: each iteration scores
// perThread frames on one thread and perThread*threads on threads threads, the
// two calls one after the other (which goes first alternates), and reports the
// median over the iterations of each pair's ratio, threads' frames/s over threads
// times one thread's, as "scaling", beside each side's median frames/s. Measured
// apart, as the threads=<N> figures are, the ratio moved by a quarter on the
// GPU machine's Xeon, whose one-core clock drifted between runs
// (docs/benchmarks.md); pairs a second apart see the same machine. Give it
// -benchtime 5x or more: one pair is not a figure.
func benchScaling(b *testing.B, refP, distP [][]uint16, w, h, perThread, threads int, model string) {
	fps := scoreTimer(b, model, VideoInfo{Width: w, Height: h, Format: YUV420P}, refP, distP)
	many, one, ratio := alternate(b, func() float64 { return fps(perThread*threads, Options{Threads: threads}) },
		func() float64 { return fps(perThread, Options{Threads: 1}) })
	b.ReportMetric(one, "threads=1-frames/s")
	b.ReportMetric(many, fmt.Sprintf("threads=%d-frames/s", threads))
	b.ReportMetric(ratio/float64(threads), "scaling")
}

// scoreTimer loads model and returns a function that scores n frames of info,
// cycling through the planes (and their chroma, where the model reads it),
// under opts and the model, and returns the frames/s of that call.
func scoreTimer(b *testing.B, model string, info VideoInfo, refP, distP [][]uint16) func(n int, opts Options) float64 {
	m, err := LoadModel(model)
	if err != nil {
		b.Fatal(err)
	}
	var ru, rv, du, dv [][]uint16
	if m.speed != nil {
		ru, rv = chromaOf(info, refP)
		du, dv = chromaOf(info, distP)
	}
	return func(n int, opts Options) float64 {
		ref := &memSource{info: info, planes: refP, n: n, u: ru, v: rv}
		dist := &memSource{info: info, planes: distP, n: n, u: du, v: dv}
		opts.LoadedModel = m
		start := time.Now()
		if _, err := Score(context.Background(), ref, dist, opts); err != nil {
			b.Fatal(err)
		}
		return float64(n) / time.Since(start).Seconds()
	}
}

// alternate runs x and y once an iteration, which goes first alternating, and
// returns the median of x's figures, of y's and of the pairs' ratios x/y.
func alternate(b *testing.B, x, y func() float64) (mx, my, ratio float64) {
	var xs, ys, rs []float64
	i := 0
	for b.Loop() {
		var fx, fy float64
		if i%2 == 0 {
			fy, fx = y(), x()
		} else {
			fx, fy = x(), y()
		}
		i++
		xs, ys, rs = append(xs, fx), append(ys, fy), append(rs, fx/fy)
	}
	return median(xs), median(ys), median(rs)
}

// median is the middle of xs (the mean of the middle two when even); it sorts xs.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// BenchmarkScoreFeatures measures what each extra feature adds to a
// 1280x720 VMAF pass on one thread: compare ns/frame with features=none.
func BenchmarkScoreFeatures(b *testing.B) {
	const w, h, frames = 1280, 720, 8
	refP, distP := synthPair(w, h, 4)
	cases := []struct {
		name     string
		features []Feature
	}{{"none", nil}}
	for _, f := range AllFeatures {
		cases = append(cases, struct {
			name     string
			features []Feature
		}{f.String(), []Feature{f}})
	}
	cases = append(cases, struct {
		name     string
		features []Feature
	}{"all", AllFeatures})
	for _, c := range cases {
		b.Run(fmt.Sprintf("%dx%d/threads=1/features=%s", w, h, c.name), func(b *testing.B) {
			benchScore(b, refP, distP, w, h, frames, Options{Threads: 1, Features: c.features})
		})
	}
}

// benchScore times Score of frames 8-bit 4:2:0 frames cycling through the
// given planes, and reports frames/s, ns/frame and the peak heap in use.
func benchScore(b *testing.B, refP, distP [][]uint16, w, h, frames int, opts Options) {
	info := VideoInfo{Width: w, Height: h, Format: YUV420P}
	name := opts.Model
	if name == "" {
		name = DefaultModel
	}
	model, err := LoadModel(name)
	if err != nil {
		b.Fatal(err)
	}
	opts.LoadedModel = model
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	// The sources' chroma, when the run reads it (VMAF v1's SpEED, the extra
	// features), is made once, outside what B/op and peak-heap-MB count.
	var ru, rv, du, dv [][]uint16
	if model.speed != nil || len(opts.Features) > 0 {
		ru, rv = chromaOf(info, refP)
		du, dv = chromaOf(info, distP)
	}
	b.ReportAllocs()
	cpu0 := testutil.ProcessCPU()
	b.ResetTimer()
	for b.Loop() {
		ref := &memSource{info: info, planes: refP, n: frames, u: ru, v: rv}
		dist := &memSource{info: info, planes: distP, n: frames, u: du, v: dv}
		if _, err := Score(context.Background(), ref, dist, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu := testutil.ProcessCPU() - cpu0
	close(stop)
	<-done
	n := float64(b.N * frames)
	b.ReportMetric(n/b.Elapsed().Seconds(), "frames/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/frame")
	// CPU time per frame, all threads together (the memory sampler's share
	// is negligible): on a loaded machine the steadier figure.
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/frame")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
}

// BenchmarkReadPair times the one serial step of a Score run, reading and
// converting each frame pair, alone: raw 8-bit 4:2:0 from memory, luma only
// as vmaf_v0.6.1 reads it. serial reads the two sides in turn on one
// goroutine, as Score did; pair is Score's readPair, the distorted side on a
// goroutine of its own; packed is pair with 8-bit luma kept as bytes
// (Frame.Packed), as Score reads it for a GPU backend. pairs/s is the most
// frames/s any thread count can score: BenchmarkScoreScaling's figure at a
// whole node's threads must stay below it.
func BenchmarkReadPair(b *testing.B) {
	const frames = 64
	for _, sz := range []struct {
		w, h int
		pf   PixelFormat
	}{{1920, 1080, YUV420P}, {1920, 1080, YUV420P10LE}, {3840, 2160, YUV420P}} {
		frameBytes := sz.pf.FrameBytes(sz.w, sz.h)
		var ref, dist []byte
		for _, mode := range []string{"serial", "pair", "packed"} {
			if mode == "packed" && sz.pf.BitDepth() != 8 {
				continue
			}
			b.Run(fmt.Sprintf("%dx%d/%v/%s", sz.w, sz.h, sz.pf, mode), func(b *testing.B) {
				if ref == nil {
					rp, dp := synthPair(sz.w, sz.h, 2)
					ref, dist = rawFrames(rp, sz.w, sz.h, sz.pf), rawFrames(dp, sz.w, sz.h, sz.pf)
				}
				b.SetBytes(int64(2 * frames * frameBytes))
				for b.Loop() {
					r, _ := OpenRaw(&testutil.LoopReader{Buf: ref, N: frames * frameBytes}, sz.w, sz.h, sz.pf)
					d, _ := OpenRaw(&testutil.LoopReader{Buf: dist, N: frames * frameBytes}, sz.w, sz.h, sz.pf)
					p := &pipeline{ref: r, dist: d}
					fr, fd := Frame{Packed: mode == "packed"}, Frame{Packed: mode == "packed"}
					n := 0
					if mode == "serial" {
						for r.ReadFrame(&fr) == nil && d.ReadFrame(&fd) == nil {
							n++
						}
					} else {
						stop := p.readDistorted()
						for p.readPair(&fr, &fd) == nil {
							n++
						}
						stop()
					}
					if n != frames {
						b.Fatalf("read %d pairs, want %d", n, frames)
					}
				}
				b.ReportMetric(float64(b.N*frames)/b.Elapsed().Seconds(), "pairs/s")
			})
		}
	}
}

// rawFrames lays 8-bit luma planes out as raw frames of pf (4:2:0, 8 or more
// bits, the samples scaled to the depth) with mid-grey chroma.
func rawFrames(planes [][]uint16, w, h int, pf PixelFormat) []byte {
	frameBytes, shift := pf.FrameBytes(w, h), pf.BitDepth()-8
	out := make([]byte, 0, len(planes)*frameBytes)
	for _, p := range planes {
		for _, v := range p {
			if shift == 0 {
				out = append(out, byte(v))
			} else {
				out = binary.LittleEndian.AppendUint16(out, v<<shift)
			}
		}
		for len(out)%frameBytes != 0 {
			out = append(out, 128)
			if shift > 0 {
				out = append(out, 0)
			}
		}
	}
	return out
}
