package vmaf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"
)

// minADMSize is the smallest width and height libvmaf's ADM accepts
// (integer_adm.c, init: width/height must be greater than 32).
const minADMSize = 33

// Options controls Score.
type Options struct {
	// Model is a built-in model name (see BuiltinModels) or a model file
	// path; empty means DefaultModel. Ignored when LoadedModel is set.
	Model string
	// LoadedModel, if not nil, is used instead of loading Model.
	LoadedModel *Model
	// Threads is the number of frames scored in parallel; zero or less
	// means runtime.GOMAXPROCS(0).
	Threads int
	// Start is the number of leading frames of both inputs to skip. The first
	// scored frame has motion 0, as libvmaf's first frame does.
	Start int
	// FirstIndex is the index of the sources' first frame, for frames the
	// caller skipped itself (a chunk whose decoder seeked): FrameScore.Index
	// counts from it.
	FirstIndex int
	// Count limits the number of frames scored after Start; zero or less
	// means all. With a limit, frames past it are neither read nor compared
	// for a count mismatch.
	Count int
	// Subsample scores every Subsample-th frame (motion still looks at
	// every frame); zero or one scores every frame.
	Subsample int
	// Features selects extra metrics computed beside VMAF in the same pass
	// (see Feature and ParseFeature); order and repeats do not matter. They
	// never change the VMAF scores.
	Features []Feature
	// Offload, if not nil, computes the features it offers on another
	// device (see Offload); the rest run on the CPU.
	Offload Offload
	// OffloadThreads, when above 0 and below Threads, is how many of the
	// threads score with the Offload (or the Opening's, once open); the
	// others score on the CPU beside them all the run long. 0 (or Threads
	// or more): every thread that the Offload takes.
	OffloadThreads int
	// Opening, if not nil, is an Offload still opening when Score starts (a
	// GPU's device and its self-test: a fraction of a second, more in a new
	// Pod, whose driver compiles the shaders). Score scores on the CPU on
	// Threads threads meanwhile, and some of them go on with the Offload
	// from their next frame once it is open (OffloadOpening). Offload must
	// be nil then.
	Opening *OffloadOpening
	// CPU forces a kernel path; CPUAuto (the zero value) reads VMAFX_CPU
	// and else picks the fastest the processor supports. Every path gives
	// the same scores.
	CPU CPU

	// Encode describes the distorted video's encode, for CAMBI (the model's and the
	// extra feature): see Encode. The zero value judges banding on the input as it is.
	Encode Encode

	// passesApart runs VIF, ADM and motion of a frame one after another, as
	// before rowWalk: the tests and benchmarks compare the two.
	passesApart bool

	// motion holds the integer motion options of the model's
	// feature_opts_dicts (see parseMotionOptions); nil means libvmaf's
	// defaults. The five-frame window (motion_five_frame_window) makes
	// each frame's motion compare it with the frame two back.
	motion *motionOptions
	// cambi holds CAMBI's options of the model's feature_opts_dicts (see
	// parseCAMBIOptions); nil means libvmaf's defaults.
	cambi *cambiOptions
}

// cambiOpts returns the options of the extra CAMBI feature: libvmaf's defaults (or a
// test's Options.cambi) with the encode's parameters.
func (o *Options) cambiOpts() cambiOptions {
	c := defaultCAMBIOptions()
	if o.cambi != nil {
		c = *o.cambi
	}
	return c.withEncode(o.Encode)
}

// motionOpts returns the motion options Score uses: the model's, unless a test set
// Options.motion.
func (o *Options) motionOpts(m *Model) motionOptions {
	if o.motion != nil {
		return *o.motion
	}
	return m.motion
}

// slot carries one frame pair through the pipeline. Slots are recycled: a
// slot is free again once the collector has consumed the frame whose motion
// reads this slot's reference: the next frame, or the one after it with the
// five-frame window.
type slot struct {
	idx       int
	ref, dist Frame
	// prev is the slot whose reference motion compares with this one's
	// (the frame before, or two before with the five-frame window); nil for
	// the first frames, whose SAD libvmaf leaves at 0.
	prev  *slot
	full  bool // compute VIF and ADM (subsampling)
	score FrameScore
	sad   uint64
	err   error // an Offload failure
	// waits is the number of frames yet to finish that read the slot: its
	// own and the one whose prev it is. The collector alone counts it down.
	waits int
	// sums are the slot's motion, VIF and ADM integers from a
	// FrameOffloader; nil when the worker computes them one by one.
	sums *OffloadSums
	// offloaded says a thread with an Offload worker scored the frame.
	offloaded bool
	// then is the next frame of the slot's run (pipeline.runLen), nil at its
	// end: a job is a run of consecutive frames.
	then *slot
}

// worker holds one goroutine's scratch buffers, reused for every frame.
type worker struct {
	k     *kernels
	vif   *vifState // nil when the model has no VIF feature
	adm   *admState
	row   []int64
	mot   motionRows
	extra *extraState   // nil without extra features
	cambi *cambiState   // the model's CAMBI; nil when it has none
	speed *speedState   // the model's SpEED chroma; nil when it has none
	off   OffloadWorker // nil without Offload
	// noMotion skips the SAD: motion_force_zero reports 0 without it
	// (integer_motion.c, extract).
	noMotion bool
	// lumaBuf holds the luma of Packed frames widened for the CPU (luma);
	// widened says which of them hold the frame process scores now.
	lumaBuf [lumaScratch][]uint16
	widened [lumaScratch]bool
	// walk runs ADM and motion beside VIF on the frames whose features the
	// CPU computes (walkFrame); nil until the first. apart turns it off
	// (Options.passesApart).
	walk  *workerWalk
	apart bool
}

// Score computes VMAF between a reference and a distorted source, frame by
// frame, on a bounded pool of goroutines. It reads the two sources at the
// same time, each from one goroutine at a time: two sources that share state
// must guard it, and one source may not be given as both. Both sources must
// have the same size and bit depth (else ErrSizeMismatch) and the same number
// of frames (else ErrFrameCountMismatch); an empty range is ErrNoFrames.
// Reader errors are returned wrapped, prefixed with the input they came from.
func Score(ctx context.Context, ref, dist FrameSource, opts Options) (*Result, error) {
	model := opts.LoadedModel
	if model == nil {
		var err error
		if model, err = LoadModel(opts.Model); err != nil {
			return nil, err
		}
	}
	ri, di := ref.Info(), dist.Info()
	if ri.Width != di.Width || ri.Height != di.Height || ri.Format.BitDepth() != di.Format.BitDepth() {
		return nil, fmt.Errorf("%w: reference %dx%d %d-bit, distorted %dx%d %d-bit", ErrSizeMismatch,
			ri.Width, ri.Height, ri.Format.BitDepth(), di.Width, di.Height, di.Format.BitDepth())
	}
	if ri.Width < minADMSize || ri.Height < minADMSize {
		return nil, fmt.Errorf("%w: %dx%d, need at least %dx%d", ErrTooSmall, ri.Width, ri.Height, minADMSize, minADMSize)
	}
	if model.cambi != nil && opts.Encode != (Encode{}) {
		// The model's CAMBI judges the encode too: a copy of the model carries it, and
		// the metric's name says so, as libvmaf's does with the options set.
		m := *model
		c := model.cambi.withEncode(opts.Encode)
		m.cambi, model = &c, &m
	}
	if err := model.checkInput(ri); err != nil {
		return nil, err
	}
	features := opts.Features
	if model.cambi != nil && model.cambi.suffix() == "" {
		// The model's CAMBI has libvmaf's default options: it is the extra feature
		// "cambi" itself, reported once under the model.
		features = slices.DeleteFunc(slices.Clone(features), func(f Feature) bool { return f == FeatureCAMBI })
	}
	extra, err := newExtraConfig(features, ri, di, opts.cambiOpts())
	if err != nil {
		return nil, err
	}
	cpu, err := resolveCPU(opts.CPU)
	if err != nil {
		return nil, err
	}
	if opts.Offload != nil && opts.Opening != nil {
		return nil, errors.New("vmaf: Options.Offload and Options.Opening are both set")
	}
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	sub := max(opts.Subsample, 1)
	start := time.Now()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &pipeline{
		ctx: ctx, cancel: cancel, ref: ref, dist: dist, model: model, opts: opts, sub: sub,
		w: ri.Width, h: ri.Height, bpc: ri.Format.BitDepth(), extra: extra, k: kernelsFor(cpu), cpu: cpu, format: ri.Format,
		mo: opts.motionOpts(model),
	}
	frames, sads, err := p.run(threads)
	if err != nil {
		return nil, err
	}
	if len(sads) == 0 {
		return nil, ErrNoFrames
	}

	res := &Result{
		Model: model.Name, Width: ri.Width, Height: ri.Height, BitDepth: p.bpc, Frames: frames,
		Offloaded: p.offloaded, layout: model.layout(),
	}
	if extra != nil {
		res.Features, res.chroma = extra.features, extra.chroma
	}
	m2, m3 := motionTemporal(sads, p.mo)
	x := make([]float64, len(model.features))
	for i := range res.Frames {
		f := &res.Frames[i]
		k := f.Index - max(opts.Start, 0) - opts.FirstIndex
		f.MotionSAD, f.Motion2, f.Motion3 = sads[k], m2[k], m3[k]
		f.VMAF = model.predict(f, x)
	}
	res.pool()
	if d := time.Since(start).Seconds(); d > 0 {
		res.FPS = float64(len(sads)) / d
	}
	return res, nil
}

type pipeline struct {
	ctx       context.Context
	cancel    context.CancelFunc // stops reading after an Offload failure
	ref, dist FrameSource
	model     *Model
	opts      Options
	sub       int
	w, h, bpc int
	extra     *extraConfig // nil without extra features
	k         *kernels
	cpu       CPU
	format    PixelFormat
	mo        motionOptions
	readErr   error
	// offloaded counts the scored frames (Result.Frames) that threads with
	// an Offload worker scored.
	offloaded int
	// distReq and distDone hand the distorted side's frames to the goroutine
	// that reads them (readDistorted) and its errors back.
	distReq  chan *Frame
	distDone chan error
	// runLen is how many consecutive frames a job carries (frameRun).
	runLen int
	// planes holds the slots' luma planes where a device may score the
	// frames (OffloadConfig.Planes); nil on the CPU alone.
	planes []byte
}

// frameRun is how many consecutive frames a job carries when more than one thread
// takes frames to a FrameOffload's device. A device worker keeps the reference of the
// frame it queued last, which the next frame's motion reads; dealt one frame a job,
// each of several threads got every other or every fourth frame, and nearly every
// frame staged and uploaded its previous frame's plane as well as its own two: at
// 1080p 8-bit 2 MB more to copy on the host and to send over the bus, 95% of the
// frames on 2 and 4 threads (BenchmarkHostSide). In runs of 4 only a run's first
// frame does. Runs are short so that the threads share the last frames of a video
// evenly; the CPU's threads alone take one frame a job, as before.
const frameRun = 4

// run streams the frame pairs through threads workers and returns the
// scored frames and every frame's motion score, in order.
func (p *pipeline) run(threads int) ([]FrameScore, []float64, error) {
	// Up to lag finished slots wait for the frame whose motion reads them;
	// the rest keep threads busy as before.
	lag := p.mo.minIndex()
	// A FrameOffload's workers keep frames in flight: the slots they hold
	// come on top.
	inFlight := 1
	if fo, ok := p.opts.Offload.(FrameOffload); ok {
		inFlight = min(max(fo.FramesInFlight(p.w, p.h), 1), maxFramesInFlight)
	}
	if op := p.opts.Opening; op != nil {
		inFlight = min(max(op.FramesInFlight, 1), maxFramesInFlight)
	}
	nSlots := threads + 2 + lag + inFlight - 1
	// The threads that may take frames to a device (thread says which; an
	// Opening's own count is known only once it is open, and runs cost a single
	// worker nothing).
	devices := 0
	if _, ok := p.opts.Offload.(FrameOffload); ok || p.opts.Opening != nil {
		devices = threads
		if p.opts.OffloadThreads > 0 && p.opts.OffloadThreads < threads {
			devices = p.opts.OffloadThreads
		}
	}
	p.runLen = 1
	if devices > 1 {
		// The producer holds a run's slots until it is whole: leave the
		// threads and the motion lag theirs.
		p.runLen = max(min(frameRun, nSlots-lag-1), 1)
	}
	free := make(chan *slot, nSlots)
	// PSNR's chroma and the model's SpEED read the chroma planes.
	chroma := (p.extra != nil && p.extra.chroma) || p.model.speed != nil
	packed := p.packed()
	// Where a device may score the frames, their luma planes are one block it
	// can take them from as they were read (OffloadConfig.Planes).
	var block planeBlock
	if devices > 0 {
		block = newPlaneBlock(2*nSlots, p.w*p.h, p.bpc)
		p.planes = block.mem
	}
	for i := range nSlots {
		s := &slot{ref: Frame{Chroma: chroma, Packed: packed}, dist: Frame{Chroma: chroma, Packed: packed}}
		if block.mem != nil {
			block.give(&s.ref, 2*i, p.bpc)
			block.give(&s.dist, 2*i+1, p.bpc)
		}
		free <- s
	}
	jobs := make(chan *slot, nSlots)
	results := make(chan *slot, nSlots)

	go p.produce(free, jobs)

	var wg sync.WaitGroup
	for id := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.thread(id, threads, inFlight, jobs, results)
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	// A slot is read by its own frame and, for motion, by the frame lag after
	// it (the producer counts them in waits): it goes back to the producer as
	// soon as both are done, whatever the frames between. Handing slots back in
	// frame order held every slot behind the slowest frame in flight, and on a
	// node's threads one slow frame left others without work. The results are
	// put in order apart from the slots.
	release := func(s *slot) {
		if s.waits--; s.waits == 0 {
			free <- s
		}
	}
	// waiting holds the finished frames from next on, frame i at i modulo its
	// length: a ring of the slots' size, grown only when one frame is held
	// while more than that many after it finish. It allocates nothing a frame.
	type done struct {
		sad   uint64
		score FrameScore
		full  bool
		ok    bool
	}
	waiting := make([]done, nSlots)
	next := 0
	var frames []FrameScore
	var sads []float64
	var offErr error
	for s := range results {
		if s.err != nil && offErr == nil {
			offErr = s.err
			p.cancel()
		}
		if s.idx-next >= len(waiting) {
			grown := make([]done, max(2*len(waiting), s.idx-next+1))
			for i := next; i < next+len(waiting); i++ {
				grown[i%len(grown)] = waiting[i%len(waiting)]
			}
			waiting = grown
		}
		waiting[s.idx%len(waiting)] = done{sad: s.sad, score: s.score, full: s.full, ok: true}
		if s.offloaded && s.full {
			p.offloaded++
		}
		// Once released a slot may be refilled at once: read it first.
		prev := s.prev
		release(s)
		if prev != nil {
			release(prev)
		}
		for d := &waiting[next%len(waiting)]; d.ok; d = &waiting[next%len(waiting)] {
			sads = append(sads, motionScore(d.sad, p.w, p.h, p.mo))
			if d.full {
				frames = append(frames, d.score)
			}
			*d = done{}
			next++
		}
	}
	if offErr != nil {
		return nil, nil, offErr
	}
	if p.readErr != nil {
		return nil, nil, p.readErr
	}
	if err := p.ctx.Err(); err != nil {
		return nil, nil, err
	}
	return frames, sads, nil
}

// packed says the run reads 8-bit luma as bytes (Frame.Packed): when a
// FrameOffload scores its frames, or may (an Opening), since a device takes
// 8-bit planes as bytes. The CPU widens a frame's bytes only where it reads
// its samples (worker.luma): the frames scored on the CPU while the device
// opens or beside it, and what the device leaves to the CPU. Runs on the
// CPU alone widen as they read, on the readers' goroutines.
func (p *pipeline) packed() bool {
	if p.bpc != 8 {
		return false
	}
	_, frames := p.opts.Offload.(FrameOffload)
	return frames || p.opts.Opening != nil
}

// thread is one of Score's threads: it scores jobs with its own scratch,
// on the CPU or with an Offload worker, until jobs is closed. With an
// Options.Opening it scores on the CPU until the Offload is open, then goes
// on with it (the first Opening.Threads threads) or stops.
func (p *pipeline) thread(id, threads, inFlight int, jobs <-chan *slot, results chan<- *slot) {
	wk := &worker{
		k:        p.k,
		adm:      newADMState(p.w, p.h, p.model.adm).with(p.k),
		row:      make([]int64, p.w),
		extra:    p.extra.newState(p.w, p.h, p.bpc, p.k),
		noMotion: p.mo.forceZero,
		apart:    p.opts.passesApart,
	}
	defer wk.closeWalk()
	if c := p.model.cambi; c != nil {
		wk.cambi = newCAMBIState(p.w, p.h, p.bpc, *c).with(p.k)
	}
	var offErr error
	if sp := p.model.speed; sp != nil {
		wk.speed, offErr = newSpeedState(p.w, p.h, p.format, *sp, p.cpu)
	}
	if p.model.vif {
		wk.vif = newVIFState(p.w, p.h, p.model.vifEGL).with(p.k)
	}
	// workers are the threads with an Offload worker; beside says the others
	// score on the CPU beside them (OffloadThreads).
	off, workers := p.opts.Offload, threads
	beside := p.opts.OffloadThreads > 0 && p.opts.OffloadThreads < threads
	if beside {
		workers = p.opts.OffloadThreads
	}
	if op := p.opts.Opening; op != nil && offErr == nil {
		if !wk.untilOpen(op, jobs, results, p.w, p.h, p.bpc) {
			return // jobs closed before the Offload opened
		}
		workers = min(workers, max(op.Threads, 1))
		switch {
		case op.Err != nil:
			offErr = op.Err
		case op.Offload == nil:
			// None opened: every thread goes on on the CPU.
		case id < workers:
			off = op.Offload
		case !beside || id < p.opts.OffloadThreads:
			return // the device holds no worker for it
		}
	} else if off != nil && id >= workers {
		off = nil // beside the Offload's threads
	}
	if offErr == nil && off != nil {
		cfg := p.model.OffloadConfig(p.w, p.h, p.bpc)
		cfg.Speed = p.model.SpeedConfig(p.w, p.h, p.format)
		cfg.Workers = workers
		cfg.Planes = p.planes
		if wk.cambi != nil {
			cfg.CAMBI = wk.cambi.offloadConfig()
		}
		if wk.off, offErr = off.NewWorker(cfg); offErr == nil {
			defer wk.off.Close()
			if co, ok := wk.off.(CAMBIOffloader); ok && wk.cambi != nil {
				wk.cambi.off = co
			}
		}
	}
	if fo, ok := wk.off.(FrameOffloader); ok && offErr == nil {
		// One goroutine may wait for jobs while it holds frames: it
		// alone takes every slot the producer frees. Several must
		// finish theirs first, or each could wait for slots that
		// the collector holds for another's frame. (Threads that
		// scored on the CPU while an Offload opened hold none; those
		// that score on the CPU beside it take slots all along.)
		depth := inFlight
		if d, ok := fo.(interface{ FramesInFlight() int }); ok {
			// The worker holds fewer for this run (a v1 model's frames
			// take more room): more would wait in it as copies.
			depth = min(max(d.FramesInFlight(), 1), depth)
		}
		wk.inFlight(fo, jobs, results, depth, workers == 1 && !beside, p.w, p.h, p.bpc)
		return
	}
	score := func(s *slot) {
		s.err, s.offloaded = offErr, wk.off != nil
		if offErr == nil {
			s.err = wk.process(s, p.w, p.h, p.bpc)
		}
		results <- s
	}
	for run := range jobs {
		eachOf(run, score)
	}
}

// eachOf calls f on each frame of run (slot.then) in order. It reads a frame's
// next before f, which may hand the frame to the collector and so back to the
// producer, which links it into a run of its own.
func eachOf(run *slot, f func(*slot)) {
	for s := run; s != nil; {
		next := s.then
		f(s)
		s = next
	}
}

// untilOpen scores jobs on the CPU until op is open, and reports whether it
// is (false: jobs was closed first).
func (wk *worker) untilOpen(op *OffloadOpening, jobs <-chan *slot, results chan<- *slot, w, h, bpc int) bool {
	for {
		select {
		case <-op.Ready:
			return true // before another job, when both are there
		default:
		}
		select {
		case <-op.Ready:
			return true
		case run, ok := <-jobs:
			if !ok {
				return false
			}
			eachOf(run, func(s *slot) {
				s.err, s.offloaded = wk.process(s, w, h, bpc), false
				results <- s
			})
		}
	}
}

// produce reads frame pairs into free slots and queues them; it records the
// first error in p.readErr and closes jobs when done.
func (p *pipeline) produce(free <-chan *slot, jobs chan<- *slot) {
	defer close(jobs)
	stop := p.readDistorted()
	defer stop()
	// The frames before Start are read and dropped: an 8-bit one's luma is not widened.
	skipR, skipD := Frame{Packed: true}, Frame{Packed: true}
	for i := 0; i < p.opts.Start; i++ {
		if err := p.readPair(&skipR, &skipD); err != nil {
			if errors.Is(err, io.EOF) {
				err = ErrNoFrames
			}
			p.readErr = err
			return
		}
	}
	// recent are the last lag slots queued, oldest first: a frame's motion
	// compares it with recent[0].
	lag := p.mo.minIndex()
	recent := make([]*slot, 0, lag)
	// run is the run of frames being gathered (pipeline.runLen), last its last
	// frame; a run goes out whole, or shorter at the end of the frames.
	var run, last *slot
	n := 0
	send := func() {
		if run != nil {
			jobs <- run
			run, last, n = nil, nil, 0
		}
	}
	defer send() // the last run, perhaps shorter; a cancelled run is dropped (run = nil)
	for idx := 0; p.opts.Count <= 0 || idx < p.opts.Count; idx++ {
		var s *slot
		select {
		case s = <-free:
		case <-p.ctx.Done():
			run = nil
			return
		}
		if err := p.readPair(&s.ref, &s.dist); err != nil {
			if !errors.Is(err, io.EOF) {
				p.readErr = err
			}
			return
		}
		// The slot's own frame reads it, and the frame lag after it, if one comes.
		s.idx, s.prev, s.waits = idx, nil, 1
		if lag > 0 {
			s.waits++
		}
		if len(recent) == lag {
			s.prev = recent[0]
			recent = append(recent[:0], recent[1:]...)
		}
		recent = append(recent, s)
		s.full = idx%p.sub == 0
		s.score = FrameScore{Index: idx + max(p.opts.Start, 0) + p.opts.FirstIndex}
		s.then = nil
		if last != nil {
			last.then = s
		} else {
			run = s
		}
		last = s
		if n++; n >= p.runLen {
			send()
		}
	}
}

// readDistorted starts the goroutine that reads the distorted input while
// the producer reads the reference, and returns what ends it. Reading and
// converting a frame pair is the one serial step of a run: one goroutine
// reading both sides in turn capped a 4K run below what 16 threads score.
// With two, the step takes as long as the slower side.
func (p *pipeline) readDistorted() (stop func()) {
	p.distReq, p.distDone = make(chan *Frame), make(chan error)
	go func() {
		for f := range p.distReq {
			p.distDone <- p.dist.ReadFrame(f)
		}
	}()
	return func() { close(p.distReq) }
}

// readPair reads one frame from each input, the two at once (readDistorted).
// It returns io.EOF when both end together and ErrFrameCountMismatch when
// only one does.
func (p *pipeline) readPair(r, d *Frame) error {
	p.distReq <- d
	errR := p.ref.ReadFrame(r)
	// Always wait for the distorted side: d is the slot's, and the next read
	// must not start before this one ends.
	errD := <-p.distDone
	if errR != nil && !errors.Is(errR, io.EOF) {
		return fmt.Errorf("reference: %w", errR)
	}
	if errD != nil && !errors.Is(errD, io.EOF) {
		return fmt.Errorf("distorted: %w", errD)
	}
	switch {
	case errR == nil && errD == nil:
		if p.extra == nil {
			return nil
		}
		if err := p.extra.checkChroma(r, "reference"); err != nil {
			return err
		}
		return p.extra.checkChroma(d, "distorted")
	case errR != nil && errD != nil:
		return io.EOF
	case errR != nil:
		return fmt.Errorf("%w: reference ended before distorted", ErrFrameCountMismatch)
	default:
		return fmt.Errorf("%w: distorted ended before reference", ErrFrameCountMismatch)
	}
}

// maxFramesInFlight bounds the frames a FrameOffload's worker holds, and so
// the memory Score takes for them.
const maxFramesInFlight = 32

// inFlight is a worker's loop with a FrameOffloader: it queues up to depth
// frames before it takes the oldest's sums and finishes it on the CPU, so
// that the device computes while the host prepares and finishes others.
// Without hold it finishes what it holds whenever no job is waiting.
func (wk *worker) inFlight(fo FrameOffloader, jobs <-chan *slot, results chan<- *slot, depth int, hold bool, w, h, bpc int) {
	var pending []*slot
	var failed error
	finish := func() {
		s := pending[0]
		pending = pending[1:]
		sums, err := fo.Next()
		if err == nil && failed == nil {
			s.sums = sums
			err = wk.process(s, w, h, bpc)
			s.sums = nil
		}
		s.offloaded = true
		if failed == nil {
			failed = err
		}
		s.err = failed
		results <- s
	}
	queue := func(s *slot) {
		if failed == nil {
			failed = fo.Queue(wk.offloadFrame(s))
		}
		if failed != nil {
			// The frames queued before a failure come back failed in order,
			// the failing one after them.
			for len(pending) > 0 {
				finish()
			}
			s.err, s.offloaded = failed, false
			results <- s
			return
		}
		pending = append(pending, s)
		if len(pending) >= depth {
			finish()
		}
	}
	for {
		var run *slot
		var ok bool
		if len(pending) > 0 && !hold {
			select {
			case run, ok = <-jobs:
			default:
				finish()
				continue
			}
		} else {
			run, ok = <-jobs
		}
		if !ok {
			break
		}
		eachOf(run, queue)
	}
	for len(pending) > 0 {
		finish()
	}
}

// offloadFrame is the work a FrameOffloader does for s: motion unless the
// first frames or motion_force_zero; on the full frames VIF and ADM when
// the model has them and the ADM weights suit the device, and the model's
// SpEED chroma and CAMBI, in the same piece of device work.
func (wk *worker) offloadFrame(s *slot) *OffloadFrame {
	f := &OffloadFrame{Index: s.idx, PrevIndex: -1}
	f.Ref, f.Ref8 = plane(&s.ref)
	if s.prev != nil && !wk.noMotion {
		f.Prev, f.Prev8 = plane(&s.prev.ref)
		f.PrevIndex = s.prev.idx
	}
	if s.full {
		f.VIF, f.ADM, f.CAMBI = wk.vif != nil, wk.adm.offloadable(), wk.cambi != nil
		if f.VIF || f.ADM || f.CAMBI {
			f.Dis, f.Dis8 = plane(&s.dist)
		}
		if wk.speed != nil {
			f.SpeedRef, f.SpeedDis = &s.ref, &s.dist
		}
	}
	return f
}

// The planes a thread widens from a Packed frame's bytes, each into a scratch
// buffer of its own (worker.lumaBuf).
const (
	lumaRef = iota
	lumaDist
	lumaPrev // the reference of the slot's prev, for motion
	lumaScratch
)

// luma returns f's luma as 16-bit samples: f.Y, or, for a frame read Packed,
// its bytes widened into the thread's scratch buffer i, once per frame
// (process clears widened). Widening into the thread's own buffer leaves the
// slots as the producer filled them: the thread that scores the next frame
// reads this frame's reference as its prev, so the frames are read-only while
// they are scored. Only the frames the CPU scores (while the device opens,
// beside it, or features the device leaves) are widened.
func (wk *worker) luma(f *Frame, i int) []uint16 {
	b := f.Packed8()
	if b == nil {
		return f.Y
	}
	if !wk.widened[i] {
		wk.lumaBuf[i] = toSamples(wk.lumaBuf[i], b, len(b), 8)
		wk.widened[i] = true
	}
	return wk.lumaBuf[i]
}

// plane returns f's luma in the form it was read in: a Packed frame's bytes
// (y8), else its samples (y).
func plane(f *Frame) (y []uint16, y8 []byte) {
	if b := f.Packed8(); b != nil {
		return nil, b
	}
	return f.Y, nil
}

// computeVIF computes VIF on the Offload when it offers it, else on the CPU.
func (wk *worker) computeVIF(ref, dis []uint16, bpc int) ([4]vifScaleScore, error) {
	if wk.off != nil {
		sums, ok, err := wk.off.VIF(ref, dis)
		if err != nil {
			return [4]vifScaleScore{}, err
		}
		if ok {
			return vifScores(sums), nil
		}
	}
	return wk.vif.compute(ref, dis, bpc), nil
}

// vifScores are the scales' numerators and denominators from an Offload's
// sums.
func vifScores(sums [4]VIFSums) [4]vifScaleScore {
	var v [4]vifScaleScore
	for i, a := range sums {
		v[i] = vifAcc{numLog: a.NumLog, denLog: a.DenLog, numNonLog: a.NumNonLog, denNonLog: a.DenNonLog}.score()
	}
	return v
}

// computeADM computes ADM on the Offload when it offers it, else on the CPU.
// The Offload weighs with the CSF weights of the model's options, which
// its OffloadConfig carries; options whose weights its kernels cannot take
// (admState.offloadable) leave ADM to the CPU.
func (wk *worker) computeADM(ref, dis []uint16, bpc int) (admScore, error) {
	if wk.off != nil && wk.adm.offloadable() {
		rows, ok, err := wk.off.ADM(ref, dis)
		if err != nil {
			return admScore{}, err
		}
		if ok {
			return wk.adm.fromRows(rows), nil
		}
	}
	return wk.adm.compute(ref, dis, bpc), nil
}

// process computes one slot's features; it fails only when the Offload does.
// A frame whose features the CPU computes all of reads its luma in one walk
// (walkFrame); the others take their passes one after another (passes).
func (wk *worker) process(s *slot, w, h, bpc int) error {
	wk.widened = [lumaScratch]bool{}
	var err error
	if s.full && s.sums == nil && wk.off == nil && !wk.apart {
		err = wk.walkFrame(s, w, h, bpc)
	} else {
		err = wk.passes(s, w, h, bpc)
	}
	if err != nil || !s.full {
		return err
	}
	if wk.extra != nil {
		ref, dist := s.ref, s.dist
		ref.Y, dist.Y = wk.luma(&s.ref, lumaRef), wk.luma(&s.dist, lumaDist)
		wk.extra.compute(&ref, &dist, &s.score)
	}
	if wk.speed != nil {
		sp, err := wk.computeSpeed(s)
		if err != nil {
			return err
		}
		s.score.SpeedU, s.score.SpeedV, s.score.SpeedUV = sp.U, sp.V, sp.UV
	}
	return nil
}

// passes is what walkFrame computes, each pass after the other and each on the
// Offload where it offers it: VIF, ADM and the model's CAMBI of a scored
// frame, and motion.
func (wk *worker) passes(s *slot, w, h, bpc int) error {
	if s.full {
		if wk.vif != nil {
			var v [4]vifScaleScore
			var err error
			switch {
			case s.sums == nil:
				v, err = wk.computeVIF(wk.luma(&s.ref, lumaRef), wk.luma(&s.dist, lumaDist), bpc)
			case s.sums.VIFOK:
				v = vifScores(s.sums.VIF)
			default:
				v = wk.vif.compute(wk.luma(&s.ref, lumaRef), wk.luma(&s.dist, lumaDist), bpc)
			}
			if err != nil {
				return err
			}
			s.score.setVIF(v)
		}
		var a admScore
		var err error
		switch {
		case s.sums == nil:
			a, err = wk.computeADM(wk.luma(&s.ref, lumaRef), wk.luma(&s.dist, lumaDist), bpc)
		case s.sums.ADMOK:
			a = wk.adm.fromSums(&s.sums.ADM)
		default:
			a = wk.adm.compute(wk.luma(&s.ref, lumaRef), wk.luma(&s.dist, lumaDist), bpc)
		}
		if err != nil {
			return err
		}
		s.score.setADM(a)
		if wk.cambi != nil {
			// CAMBI is no-reference: libvmaf scores the distorted picture.
			if s.score.ModelCAMBI, err = wk.computeCAMBI(s); err != nil {
				return err
			}
		}
	}
	s.sad = 0
	switch {
	case s.prev == nil || wk.noMotion:
	case s.sums != nil:
		s.sad = s.sums.SAD
	case wk.off != nil:
		var err error
		if s.sad, err = wk.off.MotionSAD(wk.luma(&s.prev.ref, lumaPrev), wk.luma(&s.ref, lumaRef)); err != nil {
			return err
		}
	default:
		s.sad = wk.k.motionSAD(wk.luma(&s.prev.ref, lumaPrev), wk.luma(&s.ref, lumaRef), w, h, bpc, wk.row, &wk.mot)
	}
	return nil
}
