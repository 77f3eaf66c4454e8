package vkkernel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// planeSource yields n frames cycling through pre-made luma planes, so that
// the benchmark measures upload and scoring rather than I/O. A frame read
// Packed gets 8-bit planes as bytes, as vmaf's readers give them to a
// device's run.
type planeSource struct {
	w, h   int
	planes [][]uint16
	n, pos int
	format vmaf.PixelFormat // YUV420P when unset
	// shared hands out the planes themselves, where a reader writes each
	// frame's samples: the host's side of a run without a reader's copy.
	shared bool
	// bytes are the planes as bytes, made at the first read a frame asks
	// Packed (8-bit formats only), as vmaf's readers honour it.
	bytes [][]byte
}

func (s *planeSource) Info() vmaf.VideoInfo {
	return vmaf.VideoInfo{Width: s.w, Height: s.h, Format: cmp.Or(s.format, vmaf.YUV420P)}
}

func (s *planeSource) ReadFrame(f *vmaf.Frame) error {
	if s.pos >= s.n {
		return io.EOF
	}
	f.Width, f.Height, f.BitDepth = s.w, s.h, s.Info().Format.BitDepth()
	i := s.pos % len(s.planes)
	s.pos++
	if f.Packed && f.BitDepth == 8 {
		if s.bytes == nil {
			for _, p := range s.planes {
				b := make([]byte, len(p))
				vmaf.Narrow8(b, p)
				s.bytes = append(s.bytes, b)
			}
		}
		f.Y = f.Y[:0]
		if s.shared {
			f.Y8 = s.bytes[i]
		} else {
			f.Y8 = append(f.Y8[:0], s.bytes[i]...)
		}
		return nil
	}
	if s.shared {
		f.Y = s.planes[i]
	} else {
		f.Y = append(f.Y[:0], s.planes[i]...)
	}
	return nil
}

// benchPlanes makes k reference planes (a texture panning one pixel per
// frame) and distorted ones (the texture with a coarser grain).
func benchPlanes(w, h, k int) (ref, dist [][]uint16) {
	for f := range k {
		r, d := make([]uint16, w*h), make([]uint16, w*h)
		for y := range h {
			for x := range w {
				v := 64 + ((x+f)*3+y*2)%128 + ((x+f)*7919+y*104729)%48
				r[y*w+x] = uint16(v)
				d[y*w+x] = uint16(v &^ 7)
			}
		}
		ref, dist = append(ref, r), append(dist, d)
	}
	return ref, dist
}

// BenchmarkScore is vmaf's BenchmarkScore on the Vulkan backend:
// uploads and the device's features (Kernel.Features) with the rest on the
// CPU, per frame. On lavapipe its speed says nothing of a GPU's; it is here
// for the GPU runs (docs/benchmarks.md).
func BenchmarkScore(b *testing.B) {
	k := openOrSkip(b)
	device, host := k.Features()
	b.Logf("device %s (%s): %v on the device, %v on the CPU", k.Info().Name, k.Info().Driver, device, host)
	for _, sz := range []struct{ w, h, frames int }{{176, 144, 32}, {1280, 720, 8}, {1920, 1080, 6}} {
		refP, distP := benchPlanes(sz.w, sz.h, 4)
		for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%dx%d/threads=%d", sz.w, sz.h, threads), func(b *testing.B) {
				n := scoreCalls(b, k, &planeSource{w: sz.w, h: sz.h, planes: refP, n: sz.frames},
					&planeSource{w: sz.w, h: sz.h, planes: distP, n: sz.frames}, threads)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/frame")
			})
		}
	}
}

// BenchmarkThroughput is the vulkan backend's steady state, issue 27's kernel
// throughput: long calls (48 frames a thread at 1080p, 16 at 4K, so that a thread's
// setup and its first and last batches are a small part of a call, where
// BenchmarkScore's 6-frame calls are mostly that) on 1, 4 and GOMAXPROCS threads,
// frames held in host memory and uploaded, the CPU's final steps included. Throughput
// should rise with threads until the device is busy, never fall.
func BenchmarkThroughput(b *testing.B) {
	k := openOrSkip(b)
	b.Logf("device %s (%s)", k.Info().Name, k.Info().Driver)
	for _, sz := range []struct{ w, h, perThread int }{{1920, 1080, 48}, {3840, 2160, 16}} {
		refP, distP := benchPlanes(sz.w, sz.h, 4)
		threads := []int{1}
		for _, t := range []int{4, runtime.GOMAXPROCS(0)} {
			if t > threads[len(threads)-1] {
				threads = append(threads, t)
			}
		}
		for _, t := range threads {
			for _, shared := range []bool{false, true} {
				frames := sz.perThread * t
				name := fmt.Sprintf("%dx%d/threads=%d", sz.w, sz.h, t)
				if shared {
					// The planes themselves, not a copy a frame: what the
					// device and the rest of the host's side sustain.
					name += "/source=shared"
				}
				b.Run(name, func(b *testing.B) {
					scoreCalls(b, k, &planeSource{w: sz.w, h: sz.h, planes: refP, n: frames, shared: shared},
						&planeSource{w: sz.w, h: sz.h, planes: distP, n: frames, shared: shared}, t)
				})
			}
		}
	}
}

// scoreCalls scores ref against dist (each source's n frames, rewound before
// every call) on threads threads with k, b.N calls, and reports frames/s and
// the device work's structure; it returns the frames scored.
func scoreCalls(b *testing.B, k *Kernel, ref, dist *planeSource, threads int) float64 {
	before := take(k)
	for b.Loop() {
		ref.pos, dist.pos = 0, 0
		if _, err := vmaf.Score(context.Background(), ref, dist, vmaf.Options{Threads: threads, Offload: k}); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N * ref.n)
	b.ReportMetric(n/b.Elapsed().Seconds(), "frames/s")
	reportStructure(b, k, before, n)
	return n
}

// snapshot is what reportStructure counts from: the device's counters and the
// bytes of planes the workers copied into their staging on the host.
type snapshot struct {
	vulkan.Stats
	staged uint64
}

func take(k *Kernel) snapshot {
	staged, _, _ := k.HostCopies()
	return snapshot{k.dev.Stats(), staged}
}

// reportStructure reports the structure of the frames' device work since before,
// which lavapipe shows as well as a GPU: queue submissions, host waits, bytes read
// back and bytes uploaded, barriers (the length of the chain the device runs a
// frame's passes in) and dispatches per frame, over n frames, and the bytes of
// planes copied on the host into the staging (none where the device takes them
// from where the reader put them, vmaf.OffloadConfig.Planes).
func reportStructure(b *testing.B, k *Kernel, before snapshot, n float64) {
	after := take(k)
	b.ReportMetric(float64(after.staged-before.staged)/n, "staged-B/frame")
	b.ReportMetric(float64(after.Submits-before.Submits)/n, "submits/frame")
	b.ReportMetric(float64(after.Waits-before.Waits)/n, "waits/frame")
	b.ReportMetric(float64(after.ReadbackBytes-before.ReadbackBytes)/n, "readback-B/frame")
	b.ReportMetric(float64(after.UploadBytes-before.UploadBytes)/n, "upload-B/frame")
	b.ReportMetric(float64(after.Barriers-before.Barriers)/n, "barriers/frame")
	b.ReportMetric(float64(after.Dispatches-before.Dispatches)/n, "dispatches/frame")
}

// BenchmarkPasses splits the device's time a frame by what the frame asks,
// driving workers directly (no reader, no CPU steps): upload (the pair's
// planes staged and copied, the reference kept for the next frame's motion),
// then each of motion, VIF and ADM on top of the upload, then all three as
// vmaf_v0.6.1 asks them; 1080p and 4K, 1 thread and GOMAXPROCS, each thread a
// worker of its own queueing 48 frames (16 at 4K) and taking their numbers as
// Score does. The differences between rows say which passes the device's
// chain spends its time in (docs/benchmarks.md); on lavapipe they are the
// CPU's, not a GPU's.
func BenchmarkPasses(b *testing.B) {
	k := openOrSkip(b)
	b.Logf("device %s (%s)", k.Info().Name, k.Info().Driver)
	m, err := vmaf.LoadModel(vmaf.DefaultModel)
	if err != nil {
		b.Fatal(err)
	}
	type asks struct {
		name             string
		motion, vif, adm bool
	}
	for _, sz := range []struct{ w, h, perThread int }{{1920, 1080, 48}, {3840, 2160, 16}} {
		refP, distP := benchPlanes(sz.w, sz.h, 4)
		cfg := m.OffloadConfig(sz.w, sz.h, 8)
		for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
			for _, a := range []asks{{name: "upload"}, {name: "motion", motion: true}, {name: "vif", vif: true},
				{name: "adm", adm: true}, {name: "all", motion: true, vif: true, adm: true}} {
				b.Run(fmt.Sprintf("%dx%d/threads=%d/%s", sz.w, sz.h, threads, a.name), func(b *testing.B) {
					wks := make([]vmaf.FrameOffloader, threads)
					for i := range wks {
						wk, err := k.NewWorker(cfg)
						if err != nil {
							b.Fatal(err)
						}
						defer wk.Close()
						wks[i] = wk.(vmaf.FrameOffloader)
					}
					for b.Loop() {
						errs := make(chan error, threads)
						for _, fo := range wks {
							go func() { errs <- passesRun(fo, refP, distP, sz.perThread, a.motion, a.vif, a.adm) }()
						}
						for range threads {
							if err := <-errs; err != nil {
								b.Fatal(err)
							}
						}
					}
					n := float64(b.N * threads * sz.perThread)
					b.ReportMetric(n/b.Elapsed().Seconds(), "frames/s")
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/n, "µs/frame")
				})
			}
		}
	}
}

// passesRun queues n frames on fo, asking what motion, vif and adm say, and
// takes their numbers in order, at most the worker's frames in flight
// behind, as Score does.
func passesRun(fo vmaf.FrameOffloader, ref, dist [][]uint16, n int, motion, vif, adm bool) error {
	inFlight := 1
	if f, ok := fo.(interface{ FramesInFlight() int }); ok {
		inFlight = max(f.FramesInFlight(), 1)
	}
	queued := 0
	for i := range n {
		f := &vmaf.OffloadFrame{Index: i, Ref: ref[i%len(ref)], Dis: dist[i%len(dist)], PrevIndex: -1, VIF: vif, ADM: adm}
		if motion && i > 0 {
			f.Prev, f.PrevIndex = ref[(i-1)%len(ref)], i-1
		}
		if err := fo.Queue(f); err != nil {
			return err
		}
		if queued++; queued == inFlight {
			if _, err := fo.Next(); err != nil {
				return err
			}
			queued--
		}
	}
	for ; queued > 0; queued-- {
		if _, err := fo.Next(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkOpen times opening the device and building every pipeline, and
// closing it again: the fixed cost of a worker's first score in a Pod (the
// driver's shader compilation included, unless its own disk cache has them:
// run with the cache off, e.g. __GL_SHADER_DISK_CACHE=0 on NVIDIA, for a new
// Pod's figure).
func BenchmarkOpen(b *testing.B) {
	openOrSkip(b) // skips without a device; the loop's opens are timed
	for b.Loop() {
		k, err := Open(vulkan.Config{})
		if err != nil {
			b.Fatal(err)
		}
		k.Close()
	}
}

// BenchmarkPhases times one worker's frames stage by stage on the device
// (phaseProfile: the device's timestamps after a frame's uploads, its
// unpacking and each of its phases), vmaf_v0.6.1's features, 48 frames a call
// at 1080p and 16 at 4K, one thread, and logs the stages' mean time a frame
// with what each ran; device-µs/frame is their sum. On a GPU it says which
// passes bound the chain (docs/benchmarks.md); on lavapipe the times are the
// CPU's. Run with -test.v to see the table.
func BenchmarkPhases(b *testing.B) {
	k := openOrSkip(b)
	b.Logf("device %s (%s)", k.Info().Name, k.Info().Driver)
	m, err := vmaf.LoadModel(vmaf.DefaultModel)
	if err != nil {
		b.Fatal(err)
	}
	for _, sz := range []struct{ w, h, frames int }{{1920, 1080, 48}, {3840, 2160, 16}} {
		refP, distP := benchPlanes(sz.w, sz.h, 4)
		b.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(b *testing.B) {
			off, err := k.NewWorker(m.OffloadConfig(sz.w, sz.h, 8))
			if err != nil {
				b.Fatal(err)
			}
			defer off.Close()
			wk := off.(*worker)
			prof, err := wk.profile()
			if errors.Is(err, vulkan.ErrNoTimestamps) {
				b.Skip(err)
			}
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := passesRun(wk, refP, distP, sz.frames, true, true, true); err != nil {
					b.Fatal(err)
				}
			}
			lines, perFrame := prof.report(b.N * sz.frames)
			for _, l := range lines {
				b.Log(l)
			}
			b.ReportMetric(perFrame, "device-µs/frame")
			b.ReportMetric(float64(b.N*sz.frames)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
