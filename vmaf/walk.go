package vmaf

import "iter"

// walkBatch is how many input rows the leader reads between two turns of the
// passes that follow it: few enough that the rows are still in the core's
// caches (8 rows of both 1080p planes are 61 KiB, of 4K 123 KiB), many enough
// that the coroutines' switches cost nothing beside the rows' work.
const walkBatch = 8

// rowWalk runs the CPU's passes over a frame's full-size luma planes beside
// each other, so that each input row is read from memory once and by the
// other passes from the core's caches. One pass leads and says which rows it
// has read (read): VIF's first scale, which reads rows i-8 to i+8 for its row
// i, or where a model has no VIF (the v1 models) ADM's first transform. The
// others follow, each on a coroutine (iter.Pull) that pauses before it reads a
// row the leader has not read yet (the wait its work is given): ADM's
// transform and motion behind VIF, motion and CAMBI's conversion behind ADM.
// At 1080p a plane is 4.1 MB of 16-bit samples, which these passes each read
// in turn; with 16 threads' frames in flight they no longer fit the caches,
// and the machine's shared memory was what held 16 threads below 16 times one
// (docs/benchmarks.md, "The Xeon again").
//
// The pacing only orders work: every pass reads planes that are whole before
// the walk starts, each pass's arithmetic and order are its own, and no
// scratch is shared, so the scores are those of the passes one after another.
//
// A worker keeps its walk and the followers' coroutines from frame to frame:
// a frame allocates nothing (TestWorkerNoAllocs). close ends them.
type rowWalk struct {
	read      func(r int) // the leader's: it has read the input rows up to r
	released  int         // the last input row the leader has read
	turned    int         // released when the followers last ran
	followers []*follower
	active    []*follower // the frame's
}

// follower is a pass on its coroutine, one frame after another: need is the
// row it waits for, done says its frame's work has ended.
type follower struct {
	next func() (int, bool)
	stop func()
	need int
	done bool
}

// frameDone is what a follower's coroutine yields once its frame's work ends.
const frameDone = -1

// walkStopped unwinds a follower whose walk was stopped before it ended.
type walkStopped struct{}

func newRowWalk() *rowWalk {
	w := &rowWalk{}
	w.init()
	return w
}

// init makes read the leader's own: it is a field so that a frame passes it
// to the leader's hook without making a method value each time.
func (w *rowWalk) init() { w.read = w.lead }

// follower makes a follower that runs work for each frame it is started on
// (begin): work calls wait(r) before it reads input row r, which returns at
// once when the leader has read r, and else lets the leader go on first.
func (w *rowWalk) follower(work func(wait func(r int))) *follower {
	seq := func(yield func(int) bool) {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(walkStopped); !ok {
					panic(p)
				}
			}
		}()
		wait := func(r int) {
			for r > w.released {
				if !yield(r) {
					panic(walkStopped{})
				}
			}
		}
		for {
			work(wait)
			if !yield(frameDone) {
				return
			}
		}
	}
	fl := &follower{done: true}
	fl.next, fl.stop = iter.Pull(seq)
	w.followers = append(w.followers, fl)
	return fl
}

// start readies the walk for a frame: no row read, no follower begun.
func (w *rowWalk) start() {
	w.released, w.turned = -1, -1
	w.active = w.active[:0]
}

// begin starts fl's work on the frame, up to its first wait for a row the
// leader has not read.
func (w *rowWalk) begin(fl *follower) {
	w.active = append(w.active, fl)
	fl.resume()
}

// resume runs fl until it waits for a row the leader has not read, or its
// frame's work ends.
func (fl *follower) resume() {
	r, ok := fl.next()
	fl.need, fl.done = r, !ok || r == frameDone
}

// lead is read: every walkBatch rows the followers catch up.
func (w *rowWalk) lead(r int) {
	w.released = r
	if r-w.turned >= walkBatch {
		w.turn()
	}
}

// turn runs each follower as far as the rows read allow.
func (w *rowWalk) turn() {
	w.turned = w.released
	for _, fl := range w.active {
		for !fl.done && fl.need <= w.released {
			fl.resume()
		}
	}
}

// finish runs every follower's work to its end: the leader has read every
// row.
func (w *rowWalk) finish() {
	w.released = int(^uint(0) >> 1)
	w.turn()
}

// close ends the followers' coroutines wherever they are (between frames, or
// in one after a panic).
func (w *rowWalk) close() {
	for _, fl := range w.followers {
		fl.stop()
	}
	w.followers, w.active = nil, nil
}

// walkFrame computes VIF, ADM, motion and the model's CAMBI of s on the CPU
// beside each other (rowWalk): process's passes over the full-size luma for a
// frame whose features the CPU computes all of. VIF leads where the model has
// it; the v1 models have none, and ADM leads. It fails only as computeCAMBI
// does.
func (wk *worker) walkFrame(s *slot, w, h, bpc int) error {
	if wk.walk == nil {
		wk.newWalk()
	}
	ww := wk.walk
	ww.ref, ww.dist, ww.prev = wk.luma(&s.ref, lumaRef), wk.luma(&s.dist, lumaDist), nil
	if s.prev != nil && !wk.noMotion {
		ww.prev = wk.luma(&s.prev.ref, lumaPrev)
	}
	ww.w, ww.h, ww.bpc, ww.sad, ww.cambiScore = w, h, bpc, 0, 0
	ended := false
	defer func() {
		if wk.vif != nil {
			wk.vif.lead = nil
		}
		if !ended { // a panic: the followers are mid-frame
			wk.closeWalk()
		}
		wk.adm.wait = nil // as a leader
	}()
	ww.start()
	if wk.vif != nil {
		wk.vif.lead = ww.read
		ww.begin(ww.adm)
	}
	if ww.prev != nil {
		ww.begin(ww.motion)
	}
	if wk.cambi != nil {
		ww.begin(ww.cambi)
	}
	var v [4]vifScaleScore
	if wk.vif != nil {
		v = wk.vif.compute(ww.ref, ww.dist, bpc)
	} else {
		// ADM's transform says which rows it is about to read: the followers
		// read them first, and it reads them from the caches.
		wk.adm.wait = ww.read
		ww.admScore = wk.adm.compute(ww.ref, ww.dist, bpc)
	}
	ww.finish()
	ended = true
	if wk.vif != nil {
		s.score.setVIF(v)
	}
	s.score.setADM(ww.admScore)
	s.sad = ww.sad
	ww.ref, ww.dist, ww.prev = nil, nil, nil // the slots' planes go back to the producer
	if wk.cambi != nil {
		// CAMBI is no-reference: libvmaf scores the distorted picture.
		s.score.ModelCAMBI = ww.cambiScore
		return wk.cambi.offErr
	}
	return nil
}

// workerWalk is a worker's rowWalk with its followers and what they read
// and write for the frame: the followers' work reads the worker's fields,
// not a closure's, which would be made anew each frame.
type workerWalk struct {
	rowWalk
	adm, motion, cambi *follower
	ref, dist, prev    []uint16
	w, h, bpc          int
	admScore           admScore
	sad                uint64
	cambiScore         float64
}

// newWalk makes wk's walk and its followers.
func (wk *worker) newWalk() {
	ww := &workerWalk{}
	ww.init()
	ww.adm = ww.follower(func(wait func(int)) {
		wk.adm.wait = wait
		defer func() { wk.adm.wait = nil }()
		ww.admScore = wk.adm.compute(ww.ref, ww.dist, ww.bpc)
	})
	ww.motion = ww.follower(func(wait func(int)) {
		wk.mot.wait = wait
		defer func() { wk.mot.wait = nil }()
		ww.sad = wk.k.motionSAD(ww.prev, ww.ref, ww.w, ww.h, ww.bpc, wk.row, &wk.mot)
	})
	ww.cambi = ww.follower(func(wait func(int)) {
		wk.cambi.wait = wait
		defer func() { wk.cambi.wait = nil }()
		ww.cambiScore = wk.cambi.compute(ww.dist)
	})
	wk.walk = ww
}

// closeWalk ends wk's walk's coroutines; the next frame makes them again.
func (wk *worker) closeWalk() {
	if wk.walk != nil {
		wk.walk.close()
		wk.walk = nil
	}
}

// setVIF records the four VIF scales' scores.
func (f *FrameScore) setVIF(v [4]vifScaleScore) {
	for i := range v {
		f.VIF[i] = v[i].score()
	}
}

// setADM records ADM's features.
func (f *FrameScore) setADM(a admScore) {
	f.ADM2, f.AIM, f.ADM3 = a.adm2, a.aim, a.adm3
	for i := range 4 {
		f.ADMScale[i] = a.scale(i)
	}
}
