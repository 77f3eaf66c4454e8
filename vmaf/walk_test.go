package vmaf

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// TestWalkBeside: a frame's VIF, ADM and motion computed beside each other
// (rowWalk) are those of the passes one after another, every feature of every
// frame, on every path, at 8 to 12 bits, on sizes odd and even and a thread or
// two, for vmaf_v0.6.1 and a v1 model (motion's five-frame window, SpEED and
// CAMBI beside).
func TestWalkBeside(t *testing.T) {
	formats := map[int]PixelFormat{8: YUV420P, 10: YUV420P10LE, 12: YUV420P12LE}
	rng := rand.New(rand.NewPCG(11, 5))
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		if !c.Supported() {
			continue
		}
		for _, bpc := range []int{8, 10, 12} {
			for _, sz := range [][2]int{{65, 41}, {176, 144}, {40, 33}, {97, 70}, {232, 217}} {
				w, h := sz[0], sz[1]
				models := []string{DefaultModel, "vmaf_v0.6.1neg"}
				if w >= 216 && h >= 216 { // CAMBI's least
					models = []string{DefaultModel, "vmaf_v1.0.16_3d0h"}
				}
				const frames = 5
				refP, distP := randomPlanes(rng, w, h, bpc, frames)
				info := VideoInfo{Width: w, Height: h, Format: formats[bpc]}
				for _, model := range models {
					for _, threads := range []int{1, 2} {
						score := func(apart bool) *Result {
							res, err := Score(context.Background(), &memSource{info: info, planes: refP, n: frames},
								&memSource{info: info, planes: distP, n: frames},
								Options{CPU: c, Threads: threads, Model: model, passesApart: apart})
							if err != nil {
								t.Fatal(err)
							}
							return res
						}
						name := fmt.Sprintf("%v %dx%d %d-bit %s threads=%d", c, w, h, bpc, model, threads)
						beside, apart := score(false), score(true)
						if !reflect.DeepEqual(beside.Frames, apart.Frames) {
							for i := range apart.Frames {
								if !reflect.DeepEqual(beside.Frames[i], apart.Frames[i]) {
									t.Fatalf("%s frame %d:\n beside %+v\n  apart %+v", name, i, beside.Frames[i], apart.Frames[i])
								}
							}
							t.Fatalf("%s: %d frames beside, %d apart", name, len(beside.Frames), len(apart.Frames))
						}
					}
				}
			}
		}
	}
}

// TestWalkFollows: in walkFrame, the passes that follow read each input row
// after the leader has read it and before it has gone more than a batch past
// it, so that the row is still in the core's caches; and they take turns with
// the leader all the frame long, not at its end. VIF leads for vmaf_v0.6.1's
// features (ADM and motion follow); ADM leads where there is no VIF, as in the
// v1 models (motion and CAMBI follow).
func TestWalkFollows(t *testing.T) {
	const w, h = 232, 218 // CAMBI's least is 216
	refP, distP := randomPlanes(rand.New(rand.NewPCG(3, 4)), w, h, 8, 2)
	rowOf := map[*uint16]int{}
	for y := range h {
		rowOf[&refP[1][y*w]], rowOf[&distP[1][y*w]] = y, y
	}
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		if !c.Supported() {
			continue
		}
		for _, leader := range []string{"VIF", "ADM"} {
			k := kernelsFor(c)
			newWorker := func(k *kernels) *worker {
				wk := &worker{k: k, adm: newADMState(w, h, defaultADMOptions()).with(k), row: make([]int64, w)}
				if leader == "VIF" {
					wk.vif = newVIFState(w, h, defaultEnhnGainLimit).with(k)
				} else {
					wk.cambi = newCAMBIState(w, h, 8, defaultCAMBIOptions()).with(k)
				}
				return wk
			}
			// Each pass's reads beside what the leader had read then, seen in
			// the kernels by the rows they are given or wait for.
			type read struct{ row, released int }
			reads := map[string][]read{}
			var wk *worker
			kk := *k
			dwt0V := kk.admDWT0V
			kk.admDWT0V = func(r0, r1, r2, r3 []uint16, tlo, thi []int16, shiftVP uint, addVP int32) {
				last := max(rowOf[&r0[0]], rowOf[&r1[0]], rowOf[&r2[0]], rowOf[&r3[0]])
				reads["ADM"] = append(reads["ADM"], read{last, wk.walk.released})
				dwt0V(r0, r1, r2, r3, tlo, thi, shiftVP, addVP)
			}
			motion := kk.motionSAD
			kk.motionSAD = func(prev, cur []uint16, w, h, bpc int, row []int64, m *motionRows) uint64 {
				if wait := m.wait; wait != nil {
					m.wait = func(r int) {
						wait(r)
						reads["motion"] = append(reads["motion"], read{r, wk.walk.released})
					}
				}
				return motion(prev, cur, w, h, bpc, row, m)
			}
			conv := kk.cambiConv
			kk.cambiConv = func(src, dst []uint16, bpc int) {
				if r, ok := rowOf[&src[0]]; ok && wk.walk != nil && len(src) == w {
					reads["CAMBI"] = append(reads["CAMBI"], read{r, wk.walk.released})
				}
				conv(src, dst, bpc)
			}
			wk = newWorker(&kk)
			wk.newWalk()
			prev := &slot{ref: Frame{Width: w, Height: h, BitDepth: 8, Y: refP[0]}}
			s := &slot{full: true, prev: prev, ref: Frame{Width: w, Height: h, BitDepth: 8, Y: refP[1]},
				dist: Frame{Width: w, Height: h, BitDepth: 8, Y: distP[1]}}
			want := &slot{full: true, prev: prev, ref: s.ref, dist: s.dist}
			apart := newWorker(k)
			apart.apart = true
			if err := apart.process(want, w, h, 8); err != nil {
				t.Fatal(err)
			}
			if err := wk.process(s, w, h, 8); err != nil {
				t.Fatal(err)
			}
			wk.closeWalk()
			name := fmt.Sprintf("%v, %s leading", c, leader)
			if s.score != want.score || s.sad != want.sad {
				t.Fatalf("%s: beside %+v sad %d, apart %+v sad %d", name, s.score, s.sad, want.score, want.sad)
			}
			followers := []string{"ADM", "motion"}
			if leader == "ADM" {
				followers = []string{"motion", "CAMBI"}
			}
			for _, f := range followers {
				if len(reads[f]) < h/4 {
					t.Fatalf("%s: %s waited %d times for rows, want one for each row it reads first", name, f, len(reads[f]))
				}
				for _, r := range reads[f] {
					if r.row > r.released {
						t.Fatalf("%s: %s read row %d before the leader (at %d)", name, f, r.row, r.released)
					}
					// VIF reads 8 rows ahead of its own, and the followers catch
					// up every walkBatch rows; the last rows once it is done.
					if min(r.released, h-1)-r.row > walkBatch+8 {
						t.Fatalf("%s: %s read row %d when the leader was at %d: out of the caches by then", name, f, r.row, r.released)
					}
				}
			}
			if wk.adm.wait != nil || wk.mot.wait != nil || (wk.vif != nil && wk.vif.lead != nil) || (wk.cambi != nil && wk.cambi.wait != nil) {
				t.Fatalf("%s: hooks left set after the frame", name)
			}
		}
	}
}

// TestWalkStop: a walk closed in the middle of a frame (the leader panicked)
// ends its followers' coroutines where they are and leaves no goroutine
// behind; a follower's panic reaches the leader.
func TestWalkStop(t *testing.T) {
	before := runtime.NumGoroutine()
	w := newRowWalk()
	var ended [2]bool
	var fls []*follower
	for i := range ended {
		fls = append(fls, w.follower(func(wait func(int)) {
			defer func() { ended[i] = true }()
			for r := range 100 {
				wait(r)
			}
			t.Error("a follower ran to its end")
		}))
	}
	w.start()
	for _, fl := range fls {
		w.begin(fl)
	}
	w.read(20)
	w.close()
	if ended != [2]bool{true, true} {
		t.Fatalf("followers ended: %v", ended)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after the walk, %d before", n, before)
	}

	// Frame after frame on the same coroutine, and a panic in the third.
	w = newRowWalk()
	defer w.close()
	frames := 0
	fl := w.follower(func(wait func(int)) {
		frames++
		wait(3)
		if frames == 3 {
			panic("broken")
		}
	})
	for range 2 {
		w.start()
		w.begin(fl)
		w.finish()
		if !fl.done {
			t.Fatal("a follower's frame did not end at finish")
		}
	}
	defer func() {
		if p := recover(); p != "broken" {
			t.Fatalf("recovered %v, want the follower's panic", p)
		}
	}()
	w.start()
	w.begin(fl)
	w.read(walkBatch)
	t.Fatal("the follower's panic did not reach the leader")
}

// BenchmarkWalk compares a frame's passes over the full-size luma beside each
// other (rowWalk) with the passes one after another, for vmaf_v0.6.1 (VIF
// leads ADM and motion) and vmaf_v1.0.16_3d0h (ADM leads motion and CAMBI), at
// 1080p and 4K on one thread and on every CPU (GOMAXPROCS), 16 frames a thread:
// BenchmarkWalk/<model>/<W>x<H>/threads=<N>. Each iteration makes one call of
// each, which goes first alternating, and reports both sides' median frames/s
// and the median of the pairs' ratios ("beside/apart", above 1 where the walk
// is faster). The walk saves reading the planes from memory again; where a
// thread's frames stay in the caches, as on a 2-core machine's few threads, it
// has little to save. Give it -benchtime 5x or more.
func BenchmarkWalk(b *testing.B) {
	threads := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		threads = append(threads, n)
	}
	const perThread = 16
	for _, sz := range []struct{ w, h int }{{1920, 1080}, {3840, 2160}} {
		var refP, distP [][]uint16
		for _, model := range []string{DefaultModel, "vmaf_v1.0.16_3d0h"} {
			for _, t := range threads {
				b.Run(fmt.Sprintf("%s/%dx%d/threads=%d", model, sz.w, sz.h, t), func(b *testing.B) {
					if refP == nil {
						refP, distP = synthPair(sz.w, sz.h, 4)
					}
					fps := scoreTimer(b, model, VideoInfo{Width: sz.w, Height: sz.h, Format: YUV420P}, refP, distP)
					n := perThread * t
					beside, apart, ratio := alternate(b, func() float64 { return fps(n, Options{Threads: t}) },
						func() float64 { return fps(n, Options{Threads: t, passesApart: true}) })
					b.ReportMetric(beside, "beside-frames/s")
					b.ReportMetric(apart, "apart-frames/s")
					b.ReportMetric(ratio, "beside/apart")
				})
			}
		}
	}
}
