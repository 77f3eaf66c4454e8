package vkkernel

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

var (
	//go:embed shaders/motion_blur.spv
	motionBlurSPV []byte
	//go:embed shaders/motion_sad.spv
	motionSADSPV []byte
	//go:embed shaders/unpack8.spv
	unpack8SPV []byte
	//go:embed shaders/unpack8_planes.spv
	unpack8PlanesSPV []byte
)

// maxWorkers bounds the goroutines one Kernel serves: descriptor pools are
// sized for it.
const maxWorkers = 64

// workerBytesPerPixel is what one worker allocates on the device per luma
// pixel, all features together, at most (docs/worker.md: about 75
// device-local for motion, VIF and ADM, 6 more for two frames' landing
// planes at 8 bits and 12 above; up to 17 more for SpEED chroma at 4:4:4 and
// 31 for CAMBI), rounded up. The batches' host-visible staging
// (HostBytesPerWorker, at most about stagingBudget) is host memory on a
// discrete GPU.
const workerBytesPerPixel = 140

// besideWorkers are the workers a run leaves to a Score beside it: the worker's
// self-test scores its two cases at once, a worker each, beside the run's first
// frames on the device (worker/internal/backend).
const besideWorkers = 2

// Workers returns how many workers (scoring goroutines) of w x h frames
// the device holds: at most want (GOMAXPROCS when want <= 0), at most half
// the device's memory, at most maxWorkers less besideWorkers, at least one.
func (k *Kernel) Workers(want, w, h int) int {
	if want <= 0 {
		want = runtime.GOMAXPROCS(0)
	}
	fit := int(k.dev.Info.Memory / 2 / uint64(max(w*h*workerBytesPerPixel, 1)))
	return max(min(want, fit, maxWorkers-besideWorkers), 1)
}

// Kernel offloads features to one Vulkan device. It is safe for concurrent
// use; each scoring goroutine takes its own worker (NewWorker).
type Kernel struct {
	dev *vulkan.Device

	mu        sync.Mutex
	blur, sad *vulkan.Pipeline
	unpack8   *vulkan.Pipeline // widens 8-bit planes staged as bytes
	// unpack8Planes widens SpEED's 8-bit chroma planes staged as bytes.
	unpack8Planes *vulkan.Pipeline
	reduce        *vulkan.Pipeline
	vif           *vifPipelines   // nil without shaderFloat64
	adm           *admPipelines   // nil without shaderFloat64
	speed         *speedPipelines // nil without shaderFloat64
	cambi         *vulkan.Pipeline
	names         map[*vulkan.Pipeline]string // each pipeline's shader (phaseProfile)
	workers       int                         // made and not freed, idle ones too
	closed        bool
	// idle are closed workers of the last configuration asked for, kept
	// for the next Score: a worker's buffers and descriptor sets are made
	// once, not per call.
	idle    []*worker
	idleKey workerKey
	// pipelinesTime and releaseTime are the kernel's steps of the open and the
	// close (Steps).
	pipelinesTime, releaseTime time.Duration
	// later are the pipelines only a v1 model's features use (SpEED chroma's,
	// the chroma planes' widening and CAMBI's): Open returns before they are
	// built, a third of the pipelines' build time on lavapipe, so that a run of
	// the other models takes the device sooner. Ready waits for them; a worker
	// for a v1 model's frames waits for them before it is made.
	later struct {
		done  chan struct{}
		err   error
		names map[*vulkan.Pipeline]string
	}
	made int // workers made, for tests of the reuse
	// copies counts what the workers did with their frames' planes
	// (HostCopies).
	copies struct {
		staged, imported atomic.Uint64
		refused          error // the first refusal, under mu
	}
	// imports are the Scores' blocks of frame planes imported, by the block's
	// start, each shared by the Score's workers (importPlanes): importing the
	// same memory once a worker would pin it once a worker, and a driver may
	// refuse memory imported already.
	imports map[*byte]*sharedPlanes
}

// sharedPlanes is one imported block of frame planes (at, its start, keys
// Kernel.imports) and how many workers hold it.
type sharedPlanes struct {
	buf  *vulkan.Buffer
	at   *byte
	size int
	refs int
}

// HostCopies says how the workers' frames reached the device since it opened:
// the bytes of planes copied on the host into the staging (staged), the
// Scores whose frame planes the device took where the readers put them
// (imported, vmaf.OffloadConfig.Planes: one import a Score, which its workers
// share), and why the device refused them where it did (refused, the first
// reason; nil when none was refused).
func (k *Kernel) HostCopies() (staged, imported uint64, refused error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.copies.staged.Load(), k.copies.imported.Load(), k.copies.refused
}

// importPlanes is whether workers import a Score's frame planes: tests turn
// it off to take the staging's way, which planes from other memory take.
var importPlanes = true

// maxIdleWorkers bounds the workers kept for reuse.
const maxIdleWorkers = 16

// workerKey is what a worker's buffers and push constants depend on: extra
// is what SpEED chroma and CAMBI add to a frame of a batch
// (extraFrameBytes), and batch how many frames a batch holds (batchOf).
type workerKey struct {
	w, h, bpc      int
	vifEGL, admEGL float64
	weights        vmaf.ADMWeights
	extra          int64
	batch          int
}

func (k *Kernel) keyOf(cfg vmaf.OffloadConfig) workerKey {
	extra := k.extraFrameBytes(cfg)
	return workerKey{cfg.Width, cfg.Height, cfg.BitDepth, cfg.VIFEnhnGainLimit, cfg.ADMEnhnGainLimit, cfg.ADMWeights,
		extra, batchOf(cfg.Width, cfg.Height, extra, cfg.Workers)}
}

// extraFrameBytes is what a v1 model's SpEED chroma and CAMBI add to a
// frame's host-visible bytes in a batch: SpEED's four chroma planes staged
// and its images and sums read back (when the device computes SpEED), and
// CAMBI's c-values read back. CAMBI reads the distorted plane the batch
// uploads anyway.
func (k *Kernel) extraFrameBytes(cfg vmaf.OffloadConfig) int64 {
	return extraBytes(cfg, k.dev.Info.Float64)
}

// extraBytes is extraFrameBytes on a device that computes SpEED chroma or not.
func extraBytes(cfg vmaf.OffloadConfig, speed bool) int64 {
	var n int64
	if speed && cfg.Speed != nil {
		n += speedStageBytes(cfg.Speed, cfg.BitDepth) + speedBackBytes(cfg.Speed)
	}
	if cfg.CAMBI != nil {
		n += int64(4 * cambiOutN(cfg.CAMBI))
	}
	return n
}

var (
	_ vmaf.Offload        = (*Kernel)(nil)
	_ vmaf.FrameOffload   = (*Kernel)(nil)
	_ vmaf.FrameOffloader = (*worker)(nil)
	_ vmaf.SpeedOffloader = (*worker)(nil)
	_ vmaf.CAMBIOffloader = (*worker)(nil)
)

// Open opens the device cfg names (the first usable one by default) and
// builds the pipelines: those of motion, VIF and ADM before it returns, a
// v1 model's on goroutines after it (Ready). Errors wrap vulkan.ErrUnavailable
// when the machine has no usable device.
func Open(cfg vulkan.Config) (*Kernel, error) {
	dev, err := vulkan.Open(cfg)
	if err != nil {
		return nil, err
	}
	k := &Kernel{dev: dev}
	start := time.Now()
	b := &pipelines{dev: dev} // every pipeline at once (pipelines says why)
	b.build(&k.blur, "motion_blur", motionBlurSPV, 3, 12, histSlots)
	b.build(&k.sad, "motion_sad", motionSADSPV, 2, 8, 1)
	b.build(&k.unpack8, "unpack8", unpack8SPV, 3+histSlots, 16, 1)
	b.build(&k.reduce, "reduce", reduceSPV, 2, reducePushSize, reduceSetsPerWorker)
	if dev.Info.Float64 {
		k.vif, k.adm = buildVIFPipelines(b), buildADMPipelines(b)
	}
	err = b.wait()
	k.names = b.names
	if err == nil && k.vif != nil {
		err = k.vif.uploadLog2(dev)
	}
	if err != nil {
		k.Close()
		return nil, pipelinesError(dev, err)
	}
	k.pipelinesTime = time.Since(start)
	k.later.done = make(chan struct{})
	go k.buildLater()
	return k, nil
}

// buildLater builds the pipelines only a v1 model's features use (Kernel.later).
func (k *Kernel) buildLater() {
	defer close(k.later.done)
	if holdLater != nil {
		if err := holdLater(); err != nil {
			k.later.err = pipelinesError(k.dev, err)
			return
		}
	}
	b := &pipelines{dev: k.dev}
	b.build(&k.unpack8Planes, "unpack8_planes", unpack8PlanesSPV, 2, 12, 1)
	b.build(&k.cambi, "cambi", cambiSPV, cambiBindings, 4*cambiPushWords, 1)
	if k.dev.Info.Float64 {
		k.speed = buildSpeedPipelines(b)
	}
	if err := b.wait(); err != nil {
		k.later.err = pipelinesError(k.dev, err)
	}
	k.later.names = b.names
}

// holdLater, when not nil, is called before the later pipelines are built: tests
// hold them, or fail them with its error, as a device that cannot build one would.
var holdLater func() error

// pipelinesError is the error of a pipeline the device could not build.
func pipelinesError(dev *vulkan.Device, err error) error {
	return fmt.Errorf("vulkan kernel pipelines on %s: %w", dev.Info.Name, err)
}

// Ready waits for the pipelines that Open left building (a v1 model's SpEED
// chroma and CAMBI) and returns the error of one the device could not build.
func (k *Kernel) Ready() error {
	<-k.later.done
	return k.later.err
}

// Features says which VMAF features run on the device and which stay on
// the CPU. VIF, ADM and SpEED chroma need shaderFloat64 (see
// shaders/vif_stat_h.comp, shaders/adm_decouple.comp and
// shaders/speed_common.glsl); CAMBI, integer but for one correctly rounded
// product, runs on every device.
func (k *Kernel) Features() (device, host []string) {
	device = []string{"motion"}
	if k.vif != nil {
		device = append(device, "vif")
	} else {
		host = append(host, "vif")
	}
	if k.adm != nil {
		device = append(device, "adm")
	} else {
		host = append(host, "adm")
	}
	if k.dev.Info.Float64 { // built once Ready returns
		device = append(device, "speed_chroma")
	} else {
		host = append(host, "speed_chroma")
	}
	return append(device, "cambi"), host
}

// Info describes the device.
func (k *Kernel) Info() vulkan.Info { return k.dev.Info }

// pipelineNames names every pipeline by its shader (a phase profile's), once the
// later ones are built.
func (k *Kernel) pipelineNames() map[*vulkan.Pipeline]string {
	<-k.later.done
	names := make(map[*vulkan.Pipeline]string, len(k.names)+len(k.later.names))
	maps.Copy(names, k.names)
	maps.Copy(names, k.later.names)
	return names
}

// Steps is how long the device's open and close steps took, the kernel's own among them
// (vulkan.Steps): the close's once Close has returned.
func (k *Kernel) Steps() vulkan.Steps {
	s := k.dev.Steps()
	s.Pipelines, s.Release = k.pipelinesTime, k.releaseTime
	return s
}

// Close frees the pipelines and the device; workers must be closed first.
func (k *Kernel) Close() {
	start := time.Now()
	if k.later.done != nil {
		<-k.later.done // still building a v1 model's pipelines
	}
	k.mu.Lock()
	idle := k.idle
	k.idle = nil
	k.mu.Unlock()
	for _, wk := range idle {
		wk.free()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	k.closed = true
	if k.blur != nil {
		k.blur.Close()
	}
	if k.sad != nil {
		k.sad.Close()
	}
	if k.unpack8 != nil {
		k.unpack8.Close()
	}
	if k.unpack8Planes != nil {
		k.unpack8Planes.Close()
	}
	if k.reduce != nil {
		k.reduce.Close()
	}
	if k.vif != nil {
		k.vif.close()
	}
	if k.adm != nil {
		k.adm.close()
	}
	if k.speed != nil {
		k.speed.close()
	}
	if k.cambi != nil {
		k.cambi.Close()
	}
	k.releaseTime = time.Since(start)
	k.dev.Close()
}

// NewWorker allocates one goroutine's buffers for cfg's frames.
// A closed worker of the same configuration is taken again when there is
// one.
func (k *Kernel) NewWorker(cfg vmaf.OffloadConfig) (vmaf.OffloadWorker, error) {
	if cfg.Speed != nil || cfg.CAMBI != nil {
		// A v1 model's features: their pipelines are built after Open.
		if err := k.Ready(); err != nil {
			return nil, fmt.Errorf("vulkan kernel worker (%dx%d): %w", cfg.Width, cfg.Height, err)
		}
	}
	key := k.keyOf(cfg)
	k.mu.Lock()
	var stale []*worker
	if k.idleKey != key {
		stale, k.idle, k.idleKey = k.idle, nil, key
	}
	var wk *worker
	if n := len(k.idle); n > 0 {
		wk, k.idle = k.idle[n-1], k.idle[:n-1]
	}
	k.mu.Unlock()
	for _, s := range stale {
		s.free()
	}
	if wk != nil {
		if err := wk.attach(cfg); err != nil {
			wk.free()
			return nil, fmt.Errorf("vulkan kernel worker (%dx%d): %w", cfg.Width, cfg.Height, err)
		}
		return wk, nil
	}
	k.mu.Lock()
	if k.workers >= maxWorkers {
		k.mu.Unlock()
		return nil, fmt.Errorf("vulkan kernel: more than %d workers", maxWorkers)
	}
	k.workers++
	k.made++
	k.mu.Unlock()
	wk, err := newWorker(k, cfg) // on failure it gives the count back
	if err != nil {
		return nil, err
	}
	return wk, nil
}

// The frames in flight (docs/worker.md): each worker records frames into
// the command buffer of one of ringSlots batches, up to batchFor(w, h,
// extra) frames a batch, submits the batch when it is full (or when its
// results are asked) and records the next batch into the next slot while
// the device runs it. A slot's fence is waited for only when its frames'
// numbers are wanted, or when the ring comes round to it again. A v1
// model's SpEED chroma and CAMBI of a frame are in its batch too.
const (
	// ringSlots are the batches a worker has: one the device runs while
	// the host records the other.
	ringSlots = 2
	// maxBatch bounds the frames of one submission.
	maxBatch = 8
	// stagingBudget bounds a worker's host-visible staging, all slots
	// together: 1080p takes 8 frames a batch, 4K 2.
	stagingBudget = 128 << 20
	// histSlots are the device planes that keep recent reference frames
	// for motion: the frame two back (the five-frame window's), the one
	// before, and the one being replaced.
	histSlots = 3
	// resultWords are one frame's numbers in the results: the motion
	// SAD, then VIF's and ADM's sums.
	resultWords = 1 + vifResultWords + admResultWords
)

// batchFrames is how many w x h frames one submission holds: what fits
// in the staging budget, two planes a frame, at most maxBatch, at least 1.
func batchFrames(w, h int) int {
	return max(min(stagingBudget/(ringSlots*2*2*max(w*h, 1)), maxBatch), 1)
}

// batchFor is how many w x h frames one submission holds when each adds
// extra host-visible bytes (a v1 model's SpEED chroma and CAMBI,
// extraFrameBytes): as many as fit in what the batches of frames without
// them map (HostBytesPerWorker), so that a v1 model's worker maps no more
// than vmaf_v0.6.1's (5 frames a batch at 1080p 4:2:0 8-bit, 4 above), at
// least 1.
func batchFor(w, h int, extra int64) int {
	if extra <= 0 {
		return batchFrames(w, h)
	}
	per := 2*int64(w)*int64(h)*2 + resultWords*8 + extra
	return max(min(int(HostBytesPerWorker(w, h)/(ringSlots*per)), maxBatch), 1)
}

// batchOf is how many frames a batch holds for one of workers workers
// (vmaf.OffloadConfig.Workers): batchFor's, shared among them, at least 1.
// Score keeps one worker's ring of frames in flight (FramesInFlight) for
// all its workers together, so with many threads a worker never fills
// batchFor's batches: at 16 threads on an H200 they held one or two frames
// (0.55 to 1 submissions a frame), each worker having mapped 133 MB of
// staging at 1080p for sixteen. A worker of 16 now maps about 25 MB, 12 at
// 8 bits.
func batchOf(w, h int, extra int64, workers int) int {
	workers = max(workers, 1)
	return max((batchFor(w, h, extra)+workers-1)/workers, 1)
}

// HostBytesPerWorker is the host-visible memory one worker of w x h frames
// maps for its frames in flight: each ring slot's staging (the reference and
// distorted planes of a batch) and readback, at most: 16 bits a sample, where
// 8-bit frames stage a byte a sample and map about half
// (HostBytesPerWorkerFor). On a discrete GPU it is host memory, mapped into
// the process and counted against its memory limit like the heap: at most
// about 133 MB a worker at 1080p.
// A v1 model's worker stages SpEED chroma's planes and reads back its
// pictures and CAMBI's c-values in the same bound, with fewer frames a batch
// (batchFor); only where one such frame alone takes more than half of it
// does it map more, one frame a batch: v1 frames at 4K, about 155 MB a
// worker in 4:2:0 and 255 MB in 4:4:4 against 133 MB.
func HostBytesPerWorker(w, h int) int64 {
	return hostBytes(w, h, 16, batchFrames(w, h), 0)
}

// HostBytesPerWorkerFor is what a worker scoring under cfg maps for its frames
// in flight: HostBytesPerWorker, or more for a v1 model whose one frame takes
// more than the bound (4K), and less for one of several workers
// (cfg.Workers, batchOf). cfg is as Score makes it for a model
// (Model.OffloadConfig, SpeedConfig, CAMBIConfigCPU).
func (k *Kernel) HostBytesPerWorkerFor(cfg vmaf.OffloadConfig) int64 {
	key := k.keyOf(cfg)
	return hostBytes(cfg.Width, cfg.Height, cfg.BitDepth, key.batch, key.extra)
}

// HostBytesPerWorkerBound is HostBytesPerWorkerFor before a device opens:
// the most a worker scoring under cfg maps on any device, whether it
// computes SpEED chroma (shaderFloat64) or not. cfg.Workers is not counted:
// a worker of several maps no more than a worker alone.
func HostBytesPerWorkerBound(cfg vmaf.OffloadConfig) int64 {
	var most int64
	for _, speed := range []bool{false, true} {
		extra := extraBytes(cfg, speed)
		most = max(most, hostBytes(cfg.Width, cfg.Height, cfg.BitDepth, batchFor(cfg.Width, cfg.Height, extra), extra))
	}
	return most
}

// hostBytes is what a worker of w x h frames of bpc bits maps for its ring of
// batches of batch frames, each with extra bytes of SpEED chroma and CAMBI: the
// staging of the planes (stagedPlane), the readback of the sums, and the
// extras.
func hostBytes(w, h, bpc, batch int, extra int64) int64 {
	return ringSlots * (int64(stagedPlanes(batch))*stagedPlane(w, h, bpc) + int64(batch)*(resultWords*8+extra))
}

// stagedPlane is the bytes a w x h plane of bpc bits takes in a batch's
// staging: a byte a sample at 8 bits, rounded up to whole 32-bit words
// (unpack8 widens them on the device), else two.
func stagedPlane(w, h, bpc int) int64 {
	n := int64(w) * int64(h)
	if bpc == 8 {
		return (n + 3) &^ 3
	}
	return 2 * n
}

// stagedPlanes is how many planes a batch of batch frames stages: two a
// frame, and at least the three one frame may need (its reference, its
// distorted plane and the previous reference, which another thread's
// worker holds).
func stagedPlanes(batch int) int { return max(2*batch, 3) }

// FramesInFlight is how many w x h frames a worker keeps queued
// (vmaf.FrameOffload): its batches, full, without SpEED chroma and CAMBI
// (with them a worker's batches hold fewer, which its own FramesInFlight
// says).
func (k *Kernel) FramesInFlight(w, h int) int { return FramesInFlight(w, h) }

// FramesInFlight is Kernel.FramesInFlight, known before a device opens: it
// depends on the frames' size alone.
func FramesInFlight(w, h int) int { return ringSlots * batchFrames(w, h) }

// FramesInFlight is how many frames the worker keeps queued for its run
// (vmaf.FrameOffload): its batches, full; with a v1 model's SpEED chroma
// and CAMBI fewer than Kernel.FramesInFlight says.
func (wk *worker) FramesInFlight() int { return ringSlots * wk.batch }

// worker is one goroutine's device state.
type worker struct {
	k         *Kernel
	key       workerKey
	w, h, bpc int
	plane     int64 // bytes of one luma plane on the device (16-bit samples)
	staged    int64 // bytes of one luma plane in the staging (stagedPlane)
	batch     int   // frames a submission holds
	// landing hold a frame's planes as staged (the reference, the
	// distorted plane, the previous reference, staged bytes apart), one
	// frame's in each in turn (flip the next frame's), so that a frame's
	// planes cross the bus while the frame before is computed: at 8 bits a
	// byte a sample, which unpack8 (unpackSet) widens into ref0, dis0 and
	// hist; above, 16-bit samples, which are copied there on the device.
	landing   [2]*vulkan.Buffer
	unpackSet [2]*vulkan.DescriptorSet // nil above 8 bits
	flip      int
	// phases records a frame's features side by side (phases.go); pending
	// says they hold a frame of the batch being recorded whose commands are
	// not yet in its command buffer: the next frame's uploads go into its
	// first phase.
	phases  phases
	pending bool
	prof    *phaseProfile // nil but in BenchmarkPhases

	// ref0 and dis0 are the frame's planes, which motion, VIF and ADM
	// read; hist keeps recent reference planes (histIdx their frame
	// numbers, -1 none) so that motion uploads no frame twice.
	ref0, dis0 *vulkan.Buffer
	hist       [histSlots]*vulkan.Buffer
	histIdx    [histSlots]int
	blurred    *vulkan.Buffer // int32 per pixel
	rowSAD     *vulkan.Buffer // uint32 per row
	results    *vulkan.Buffer // resultWords uint64 per frame of a batch
	mem        allocs

	blurSets        [histSlots]*vulkan.DescriptorSet // hist[i] against ref0
	sadSet, sadSums *vulkan.DescriptorSet
	blurPush        []byte
	sadPush         []byte

	// planes is the Score's frame planes (vmaf.OffloadConfig.Planes) imported
	// as a buffer: a plane inside goes to the device from where it was read,
	// with no copy on the host. Nil where the device imports no host memory or
	// refused this memory, and between Scores.
	planes *sharedPlanes

	ring [ringSlots]batch
	rec  int         // the slot being recorded
	done []frameSums // collected frames not yet taken by Next, oldest first
	cur  vmaf.OffloadSums
	lent frameSums // the frame Next returned last, whose buffers cur holds
	err  error     // the first failure: the worker's device state is lost

	vif *vifWorker // nil when VIF stays on the CPU
	adm *admWorker // nil when ADM stays on the CPU
	// speed is nil when SpEED chroma stays on the CPU: the model has none
	// (OffloadConfig.Speed), or the device lacks shaderFloat64.
	speed *speedWorker
	cambi *cambiWorker // nil when the model has no CAMBI (OffloadConfig.CAMBI)
}

// batch is one ring slot: a command buffer with its fence, the staging
// its frames' planes are written into, and the readback of their numbers.
type batch struct {
	idx     int // the slot's place in the ring
	stream  *vulkan.Stream
	staging *vulkan.Buffer
	back    *vulkan.Buffer
	state   batchState
	used    int64        // staging bytes written
	frames  []frameWants // what each recorded frame asked, in order
	seq     int          // submission order, to collect the oldest first
}

type batchState int

const (
	idle batchState = iota
	recording
	submitted
)

// frameWants is what a recorded frame computes on the device.
type frameWants struct{ motion, vif, adm, speed, cambi bool }

// frameSums are a collected frame's numbers, and its SpEED pictures and
// CAMBI c-values in buffers of the worker's SpEED and CAMBI state.
type frameSums struct {
	want  frameWants
	words [resultWords]uint64
	speed *vmaf.SpeedPictures
	cambi *[5][]float32
}

func newWorker(k *Kernel, cfg vmaf.OffloadConfig) (*worker, error) {
	w, h, bpc := cfg.Width, cfg.Height, cfg.BitDepth
	key := k.keyOf(cfg)
	wk := &worker{k: k, key: key, w: w, h: h, bpc: bpc, plane: int64(w * h * 2), staged: stagedPlane(w, h, bpc),
		batch: key.batch, mem: allocs{dev: k.dev}}
	a := &wk.mem
	wk.ref0 = a.buffer(wk.plane, vulkan.DeviceLocal)
	wk.dis0 = a.buffer(wk.plane, vulkan.DeviceLocal)
	for i := range wk.hist {
		wk.hist[i] = a.buffer(wk.plane, vulkan.DeviceLocal)
		wk.histIdx[i] = -1
	}
	wk.blurred = a.buffer(int64(w*h*4), vulkan.DeviceLocal)
	wk.rowSAD = a.buffer(int64(h*4), vulkan.DeviceLocal)
	wk.results = a.buffer(int64(wk.batch*resultWords*8), vulkan.DeviceLocal)
	// A worker whose device will take the planes from where they were read
	// (importPlanes) maps its staging only when a plane from elsewhere needs it
	// (queue): on a discrete GPU that is host memory the driver pins, 67 MB at
	// 1080p 8-bit for a worker alone.
	lazy := len(cfg.Planes) > 0 && importPlanes && k.dev.CanImportHost()
	for i := range wk.ring {
		b := &wk.ring[i]
		b.idx = i
		if !lazy {
			b.staging = a.buffer(wk.stagingSize(), vulkan.Host)
		}
		b.back = a.buffer(int64(wk.batch*resultWords*8), vulkan.Host)
	}
	for i := range wk.blurSets {
		wk.blurSets[i] = a.bind(k.blur, wk.hist[i], wk.ref0, wk.blurred)
	}
	wk.sadSet = a.bind(k.sad, wk.blurred, wk.rowSAD)
	for i := range wk.landing {
		wk.landing[i] = a.buffer(3*wk.staged, vulkan.DeviceLocal)
		if bpc == 8 {
			wk.unpackSet[i] = a.bind(k.unpack8, wk.landing[i], wk.ref0, wk.dis0, wk.hist[0], wk.hist[1], wk.hist[2])
		}
	}
	wk.sadSums = a.bind(k.reduce, wk.rowSAD, wk.results)
	err := a.err
	for i := range wk.ring {
		if err == nil {
			wk.ring[i].stream, err = k.dev.NewStream()
		}
	}
	if err == nil && k.vif != nil {
		wk.vif, err = newVIFWorker(k, cfg, wk.ref0, wk.dis0, wk.results)
	}
	if err == nil && k.adm != nil {
		wk.adm, err = newADMWorker(k, cfg, wk.ref0, wk.dis0, wk.results)
	}
	if err == nil {
		err = wk.attach(cfg)
	}
	if err != nil {
		wk.free()
		return nil, fmt.Errorf("vulkan kernel worker (%dx%d): %w", w, h, err)
	}
	wk.blurPush = push(int32(w), int32(h), int32(bpc))
	wk.sadPush = push(int32(w), int32(h))
	return wk, nil
}

// attach readies a new or idle worker for a Score: no frame kept, and the
// run's SpEED and CAMBI state, which depend on more than the key: an idle
// worker's are kept when the run's configurations are the same (the
// tables the first batch uploaded included).
func (wk *worker) attach(cfg vmaf.OffloadConfig) error {
	for i := range wk.histIdx {
		wk.histIdx[i] = -1
	}
	wk.drop()
	wk.err = nil
	if wk.speed != nil && (cfg.Speed == nil || !reflect.DeepEqual(*wk.speed.cfg, *cfg.Speed)) {
		wk.speed.close()
		wk.speed = nil
	}
	if wk.cambi != nil && (cfg.CAMBI == nil || !reflect.DeepEqual(*wk.cambi.cfg, *cfg.CAMBI)) {
		wk.cambi.close()
		wk.cambi = nil
	}
	var err error
	// cfg.Speed first: only then has NewWorker waited for the pipelines built after Open.
	if cfg.Speed != nil && wk.speed == nil && wk.k.speed != nil {
		wk.speed, err = newSpeedWorker(wk.k, cfg.Speed, wk.bpc, wk.batch)
	}
	if err == nil && wk.cambi == nil && cfg.CAMBI != nil {
		wk.cambi, err = newCAMBIWorker(wk.k, cfg.CAMBI, wk.dis0, wk.w, wk.h, wk.bpc, wk.batch)
	}
	if err == nil {
		wk.importPlanes(cfg.Planes)
	}
	return err
}

// importPlanes has the device take the Score's frame planes (mem,
// vmaf.OffloadConfig.Planes) where the readers put them, until the worker
// is closed: the Score's first worker imports them, the others share its
// import. A device that cannot, or refuses this memory, takes the planes
// through the staging, as it does those from elsewhere.
func (wk *worker) importPlanes(mem []byte) {
	k := wk.k
	if len(mem) == 0 || !importPlanes || !k.dev.CanImportHost() {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if sp := k.imports[&mem[0]]; sp != nil && sp.size == len(mem) {
		sp.refs++
		wk.planes = sp
		return
	}
	b, err := k.dev.ImportHost(mem)
	if err != nil {
		if k.copies.refused == nil {
			k.copies.refused = err
		}
		return
	}
	if k.imports == nil {
		k.imports = map[*byte]*sharedPlanes{}
	}
	wk.planes = &sharedPlanes{buf: b, at: &mem[0], size: len(mem), refs: 1}
	k.imports[&mem[0]] = wk.planes
	k.copies.imported.Add(1)
}

// releasePlanes gives the Score's frame planes back, once no submitted batch
// of the worker reads them: the last of the Score's workers to close frees
// the import.
func (wk *worker) releasePlanes() {
	if wk.planes == nil {
		return
	}
	k := wk.k
	k.mu.Lock()
	defer k.mu.Unlock()
	sp := wk.planes
	if sp.refs--; sp.refs == 0 {
		sp.buf.Close()
		delete(k.imports, sp.at)
	}
	wk.planes = nil
}

// stagingSize is the bytes of a batch's staging: every plane its frames may stage.
func (wk *worker) stagingSize() int64 { return int64(stagedPlanes(wk.batch)) * wk.staged }

// inPlanes is where p lies in the imported frame planes, when it does: a
// plane of bytes, or of 16-bit samples above 8 bits (8-bit samples are
// narrowed on the host), with its staged bytes inside them.
func (wk *worker) inPlanes(p plane) (int64, bool) {
	if wk.planes == nil {
		return 0, false
	}
	var at uintptr
	switch {
	case p.y8 != nil:
		at = uintptr(unsafe.Pointer(unsafe.SliceData(p.y8)))
	case wk.bpc > 8 && p.y != nil:
		at = uintptr(unsafe.Pointer(unsafe.SliceData(p.y)))
	default:
		return 0, false
	}
	mem := wk.planes.buf.Bytes()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	if at < base || at-base+uintptr(wk.staged) > uintptr(len(mem)) {
		return 0, false
	}
	return int64(at - base), true
}

// drop forgets the collected frames not taken, and gives their buffers
// and those of the frame Next returned last back.
func (wk *worker) drop() {
	for i := range wk.done {
		wk.release(&wk.done[i])
	}
	wk.done = wk.done[:0]
	wk.release(&wk.lent)
}

// release gives a frame's SpEED pictures and CAMBI c-values back to the
// states they came from.
func (wk *worker) release(fs *frameSums) {
	if fs.speed != nil && wk.speed != nil {
		wk.speed.release(fs.speed)
	}
	if fs.cambi != nil && wk.cambi != nil {
		wk.cambi.release(fs.cambi)
	}
	fs.speed, fs.cambi = nil, nil
}

func push(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// plane is a luma plane as Queue takes it: 16-bit samples (y), or an 8-bit
// frame's bytes (y8), which go to the staging as they are.
type plane struct {
	y  []uint16
	y8 []byte
}

func (p plane) missing() bool { return p.y == nil && p.y8 == nil }

// check says whether p holds a plane of n samples of a bpc-bit run.
func (p plane) check(n, bpc int) error {
	switch {
	case p.y8 != nil && bpc != 8:
		return fmt.Errorf("a plane of bytes in a %d-bit run", bpc)
	case p.y8 != nil && len(p.y8) < n:
		return fmt.Errorf("a plane of %d bytes, want %d", len(p.y8), n)
	case p.y8 == nil && len(p.y) < n:
		return fmt.Errorf("a plane of %d samples, want %d", len(p.y), n)
	}
	return nil
}

// samples returns the bytes of a plane of 16-bit samples (little-endian
// hosts, as every platform the worker ships for).
func samples(p []uint16) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), 2*len(p))
}

// submitWait submits what s recorded, after a final barrier, and waits.
func submitWait(s *vulkan.Stream) error {
	s.Barrier()
	if err := s.Submit(); err != nil {
		return err
	}
	return s.Wait()
}

// Queue records a frame's motion, VIF, ADM, SpEED chroma and CAMBI (those
// asked and on the device) into the batch being recorded
// (vmaf.FrameOffloader), after submitting that batch when the frame's
// planes do not fit in its staging, and collecting the slot's previous
// batch when the ring comes round to a slot still in flight; a batch is
// submitted as soon as it is full.
func (wk *worker) Queue(f *vmaf.OffloadFrame) error {
	if wk.err != nil {
		return wk.err
	}
	if err := wk.queue(f); err != nil {
		wk.err = fmt.Errorf("vulkan kernel: %w", err)
		return wk.err
	}
	return nil
}

func (wk *worker) queue(f *vmaf.OffloadFrame) error {
	n := wk.w * wk.h
	want := frameWants{motion: f.Motion(), vif: f.VIF && wk.vif != nil, adm: f.ADM && wk.adm != nil,
		cambi: f.CAMBI && wk.cambi != nil,
		// Frames whose chroma planes are not the run's are the CPU's.
		speed: f.SpeedRef != nil && f.SpeedDis != nil && wk.speed != nil && wk.speed.fits(f.SpeedRef, f.SpeedDis)}
	// The reference for motion, VIF and ADM, and to keep for later frames'
	// motion; the distorted plane for VIF, ADM and CAMBI.
	needRef := want.motion || want.vif || want.adm || f.Index >= 0
	needDis := want.vif || want.adm || want.cambi
	var planes [3]plane
	if needRef {
		planes[0] = plane{f.Ref, f.Ref8}
	}
	if needDis {
		planes[1] = plane{f.Dis, f.Dis8}
	}
	prevAt := -1
	if want.motion {
		prevAt = wk.resident(f.PrevIndex)
		if prevAt < 0 {
			planes[2] = plane{f.Prev, f.Prev8}
		}
	}
	var need int64
	for i, p := range planes {
		if p.missing() && (i == 0 && needRef || i == 1 && needDis) {
			return fmt.Errorf("frame %d: a plane is missing", f.Index)
		}
		if !p.missing() {
			if err := p.check(n, wk.bpc); err != nil {
				return fmt.Errorf("frame %d: %w", f.Index, err)
			}
			if _, ok := wk.inPlanes(p); !ok {
				need += wk.staged
			}
		}
	}
	b := &wk.ring[wk.rec]
	if size := wk.stagingSize(); need > size {
		return fmt.Errorf("frame %d: %d bytes of planes, the staging holds %d", f.Index, need, size)
	}
	if b.state == recording && (len(b.frames) == wk.batch || b.used+need > wk.stagingSize()) {
		if err := wk.submit(b); err != nil {
			return err
		}
		wk.rec = (wk.rec + 1) % ringSlots
		b = &wk.ring[wk.rec]
	}
	if b.state == submitted {
		// The ring came round: this slot's frames must be back before
		// its staging and readback take new ones.
		if err := wk.collectOldest(); err != nil {
			return err
		}
	}
	if need > 0 && b.staging == nil {
		// Planes from outside the imported block, or a device that refused it.
		if b.staging = wk.mem.buffer(wk.stagingSize(), vulkan.Host); b.staging == nil {
			return wk.mem.err
		}
	}
	s := b.stream
	if b.state == idle {
		if err := s.Begin(); err != nil {
			return err
		}
		// A new SpEED or CAMBI state's tables go with its first batch.
		if wk.speed != nil {
			wk.speed.upload(s)
		}
		if wk.cambi != nil {
			wk.cambi.upload(s)
		}
		// The batch may follow another on the queue, which used the same
		// device buffers.
		s.Barrier()
		if wk.prof != nil {
			wk.prof.begin(s, b.idx)
		}
		b.state, b.used, b.frames = recording, 0, b.frames[:0]
	}
	pos := len(b.frames) // the frame's place in the batch
	dst := pos * resultWords
	// The frame's planes go to landing[flip] (8-bit ones as bytes), and
	// from there into the planes they are for once the frame before is
	// done: widened by unpack8 at 8 bits, copied on the device above. The
	// copies over the bus go into the first phase of the batch's frame
	// before, when its commands are still pending: the bus carries them
	// while the device computes that frame, where they were a link of the
	// chain between two frames.
	narrow := wk.bpc == 8
	var up recorder = s
	if wk.pending {
		wk.phases.begin()
		up = &wk.phases
	}
	var mask int32
	var dsts [3]*vulkan.Buffer
	stage := func(i int, dev *vulkan.Buffer, p plane) {
		mask |= 1 << i
		dsts[i] = dev
		if at, ok := wk.inPlanes(p); ok {
			// Where the reader put it: the device copies it from there.
			up.Copy(wk.landing[wk.flip], int64(i)*wk.staged, wk.planes.buf, at, wk.staged)
			return
		}
		switch {
		case p.y8 != nil:
			vmaf.CopyPlane8(b.staging.Bytes()[b.used:], p.y8[:n])
		case narrow:
			vmaf.Narrow8(b.staging.Bytes()[b.used:], p.y[:n])
		default:
			copy(b.staging.Bytes()[b.used:], samples(p.y[:n]))
		}
		up.Copy(wk.landing[wk.flip], int64(i)*wk.staged, b.staging, b.used, wk.staged)
		b.used += wk.staged
		wk.k.copies.staged.Add(uint64(wk.staged))
	}
	if !planes[0].missing() {
		stage(0, wk.ref0, planes[0])
	}
	if !planes[1].missing() {
		stage(1, wk.dis0, planes[1])
	}
	if want.motion && prevAt < 0 {
		prevAt = wk.evict(-1)
		stage(2, wk.hist[prevAt], planes[2])
		wk.histIdx[prevAt] = max(f.PrevIndex, -1)
	}
	if wk.pending {
		wk.flush(s) // the frame before, its last phase with this frame's copies
	} else {
		s.Barrier()
		wk.stamp(s, "uploads")
	}
	if want.adm {
		wk.adm.clear(s) // after the frame before, which used its rows
	}
	if mask != 0 && narrow {
		s.Dispatch(wk.k.unpack8, wk.unpackSet[wk.flip], push(int32(n), int32(wk.staged), mask, int32(max(prevAt, 0))),
			(n/2+1+63)/64, 3, 1)
	}
	if mask != 0 && !narrow {
		for i, dev := range dsts {
			if dev != nil {
				s.Copy(dev, 0, wk.landing[wk.flip], int64(i)*wk.staged, wk.plane)
			}
		}
	}
	if mask != 0 {
		wk.flip ^= 1
	}
	if mask != 0 || want.adm {
		s.Barrier()
		if narrow {
			wk.stamp(s, "unpack8")
		} else {
			wk.stamp(s, "planes copied")
		}
	}
	// The features side by side (phases says why), each from the first
	// phase; the phases end with a barrier, before the next frame's
	// uploads replace the planes.
	ph := &wk.phases
	if want.motion {
		ph.begin()
		ph.Dispatch(wk.k.blur, wk.blurSets[prevAt], wk.blurPush, (wk.w+63)/64, (wk.h+3)/4, 1)
		ph.Barrier()
		ph.Dispatch(wk.k.sad, wk.sadSet, wk.sadPush, wk.h, 1, 1)
		ph.Barrier()
		reduceOp{n: wk.h, stride: 1, lanes: 1}.record(ph, wk.k.reduce, wk.sadSums, dst)
	}
	if want.vif {
		ph.begin()
		wk.vif.record(ph, dst+1)
	}
	if want.adm {
		ph.begin()
		wk.adm.record(ph, dst+1+vifResultWords)
	}
	// SpEED and CAMBI copy their frame's results to the slot's readback,
	// at the frame's place, before the next frame reuses their buffers.
	if want.speed {
		ph.begin()
		wk.speed.record(ph, b.idx, pos, f.SpeedRef, f.SpeedDis)
	}
	if want.cambi {
		ph.begin()
		wk.cambi.record(ph, b.idx, pos)
	}
	if f.Index >= 0 {
		// Later frames compare with this one's reference: keep it, in a
		// plane other than the one this frame's motion reads.
		at := wk.evict(prevAt)
		ph.begin()
		ph.Copy(wk.hist[at], 0, wk.ref0, 0, wk.plane)
		wk.histIdx[at] = f.Index
	}
	wk.pending = true // flushed with the next frame's uploads, or by submit
	b.frames = append(b.frames, want)
	if len(b.frames) == wk.batch {
		// Full: the device can start on it while the next is recorded.
		if err := wk.submit(b); err != nil {
			return err
		}
		wk.rec = (wk.rec + 1) % ringSlots
	}
	return nil
}

// resident returns the hist slot that holds frame idx's reference, or -1.
func (wk *worker) resident(idx int) int {
	if idx < 0 {
		return -1
	}
	for i, x := range wk.histIdx {
		if x == idx {
			return i
		}
	}
	return -1
}

// evict returns the hist slot holding the oldest frame (or none), other
// than keep.
func (wk *worker) evict(keep int) int {
	at := -1
	for i, x := range wk.histIdx {
		if i != keep && (at < 0 || x < wk.histIdx[at]) {
			at = i
		}
	}
	return at
}

// submit ends b's recording with the copy of its frames' numbers to the
// host and submits it.
func (wk *worker) submit(b *batch) error {
	s := b.stream
	wk.flush(s)
	s.Copy(b.back, 0, wk.results, 0, int64(len(b.frames)*resultWords*8))
	s.Barrier()
	wk.stamp(s, "readback")
	if err := s.Submit(); err != nil {
		b.state = idle
		return err
	}
	b.state = submitted
	b.seq = wk.seq()
	return nil
}

// flush records the pending frame's phases into s, the stream of the batch
// being recorded.
func (wk *worker) flush(s *vulkan.Stream) {
	if wk.pending {
		var after func(int, []command)
		if p := wk.prof; p != nil {
			slot := wk.ring[wk.rec].idx
			after = func(k int, cmds []command) { p.phase(s, slot, k, cmds) }
		}
		wk.phases.flush(s, after)
		wk.pending = false
	}
}

// stamp has the profile, when there is one, stamp the end of what label says
// in the batch being recorded.
func (wk *worker) stamp(s *vulkan.Stream, label string) {
	if wk.prof != nil {
		wk.prof.stamp(s, wk.ring[wk.rec].idx, label)
	}
}

// seq numbers submissions: one more than the newest slot's.
func (wk *worker) seq() int {
	n := 0
	for i := range wk.ring {
		n = max(n, wk.ring[i].seq)
	}
	return n + 1
}

// collectOldest waits for the oldest submitted batch and moves its frames'
// numbers to done.
func (wk *worker) collectOldest() error {
	var b *batch
	for i := range wk.ring {
		if c := &wk.ring[i]; c.state == submitted && (b == nil || c.seq < b.seq) {
			b = c
		}
	}
	if b == nil {
		return fmt.Errorf("no batch in flight")
	}
	if err := b.stream.Wait(); err != nil {
		return err
	}
	if wk.prof != nil {
		if err := wk.prof.collect(b.idx); err != nil {
			return err
		}
	}
	words := unsafe.Slice((*uint64)(unsafe.Pointer(&b.back.Bytes()[0])), len(b.frames)*resultWords)
	for i, want := range b.frames {
		fs := frameSums{want: want}
		copy(fs.words[:], words[i*resultWords:])
		// The slot takes new frames after this: their pictures and
		// c-values leave its readback now.
		if want.speed {
			fs.speed = wk.speed.read(b.idx, i)
		}
		if want.cambi {
			fs.cambi = wk.cambi.read(b.idx, i)
		}
		wk.done = append(wk.done, fs)
	}
	b.state = idle
	return nil
}

// Next returns the oldest queued frame's numbers (vmaf.FrameOffloader),
// submitting the batch being recorded and waiting for the device when
// they are not back yet.
func (wk *worker) Next() (*vmaf.OffloadSums, error) {
	if wk.err != nil {
		return nil, wk.err
	}
	if len(wk.done) == 0 {
		if err := wk.fill(); err != nil {
			wk.err = fmt.Errorf("vulkan kernel: %w", err)
			return nil, wk.err
		}
	}
	// The frame returned last is the caller's no more.
	wk.release(&wk.lent)
	fs := wk.done[0]
	wk.done = append(wk.done[:0], wk.done[1:]...)
	wk.lent = fs
	wk.cur = vmaf.OffloadSums{VIFOK: fs.want.vif, ADMOK: fs.want.adm, SpeedOK: fs.want.speed, CAMBIOK: fs.want.cambi,
		Speed: fs.speed}
	if fs.want.cambi {
		wk.cur.CAMBI = *fs.cambi
	}
	if fs.want.motion {
		wk.cur.SAD = fs.words[0]
	}
	if fs.want.vif {
		wk.cur.VIF = vifSums(fs.words[1:])
	}
	if fs.want.adm {
		wk.cur.ADM = admSums(fs.words[1+vifResultWords:])
	}
	return &wk.cur, nil
}

// fill collects the oldest batch in flight, or submits the one being
// recorded and collects it.
func (wk *worker) fill() error {
	for i := range wk.ring {
		if wk.ring[i].state == submitted {
			return wk.collectOldest()
		}
	}
	b := &wk.ring[wk.rec]
	if b.state != recording || len(b.frames) == 0 {
		return fmt.Errorf("Next with no frame queued")
	}
	if err := wk.submit(b); err != nil {
		return err
	}
	wk.rec = (wk.rec + 1) % ringSlots
	return wk.collectOldest()
}

// one computes one frame on its own, for the one-feature methods: with
// frames in flight Next would return another's.
func (wk *worker) one(f *vmaf.OffloadFrame) (*vmaf.OffloadSums, error) {
	if wk.queued() {
		return nil, fmt.Errorf("vulkan kernel: a one-frame call with frames queued")
	}
	if err := wk.Queue(f); err != nil {
		return nil, err
	}
	return wk.Next()
}

// queued reports whether frames are queued and not yet taken by Next.
func (wk *worker) queued() bool {
	if len(wk.done) > 0 {
		return true
	}
	for i := range wk.ring {
		if wk.ring[i].state != idle {
			return true
		}
	}
	return false
}

// MotionSAD computes the motion integer of two planes on the device.
func (wk *worker) MotionSAD(prev, cur []uint16) (uint64, error) {
	r, err := wk.one(&vmaf.OffloadFrame{Index: -1, Ref: cur, Prev: prev, PrevIndex: -1})
	if err != nil {
		return 0, err
	}
	return r.SAD, nil
}

// VIF computes the four scales' sums on the device; ok is false when the
// device leaves VIF to the CPU (no shaderFloat64).
func (wk *worker) VIF(ref, dis []uint16) (sums [4]vmaf.VIFSums, ok bool, err error) {
	if wk.vif == nil {
		return sums, false, nil
	}
	r, err := wk.one(&vmaf.OffloadFrame{Index: -1, Ref: ref, Dis: dis, PrevIndex: -1, VIF: true})
	if err != nil {
		return sums, false, err
	}
	return r.VIF, true, nil
}

// ADM computes the rows of the ADM sums on the device, for checking them
// row by row (Score takes the sums, which the device adds); ok is false
// when the device leaves ADM to the CPU (no shaderFloat64). The rows come
// back in a second submission.
func (wk *worker) ADM(ref, dis []uint16) (rows *vmaf.ADMRows, ok bool, err error) {
	if wk.adm == nil {
		return nil, false, nil
	}
	if _, err := wk.one(&vmaf.OffloadFrame{Index: -1, Ref: ref, Dis: dis, PrevIndex: -1, ADM: true}); err != nil {
		return nil, false, err
	}
	b := &wk.ring[wk.rec]
	if b.state != idle {
		return nil, false, fmt.Errorf("vulkan adm: rows asked with frames queued")
	}
	s := b.stream
	if err := s.Begin(); err != nil {
		return nil, false, err
	}
	s.Barrier()
	if err := wk.adm.recordRows(s); err != nil {
		return nil, false, err
	}
	if err := submitWait(s); err != nil {
		return nil, false, fmt.Errorf("vulkan adm: %w", err)
	}
	return wk.adm.readRows(), true, nil
}

// Speed computes SpEED chroma's per-pixel stages of a frame pair on the
// device (vmaf.SpeedOffloader), a frame on its own; ok is false when SpEED
// stays on the CPU, or the frames' chroma planes are not the run's. The
// pictures are the worker's until its next call.
func (wk *worker) Speed(ref, dis *vmaf.Frame) (p *vmaf.SpeedPictures, ok bool, err error) {
	if wk.speed == nil || !wk.speed.fits(ref, dis) {
		return nil, false, nil
	}
	r, err := wk.one(&vmaf.OffloadFrame{Index: -1, PrevIndex: -1, SpeedRef: ref, SpeedDis: dis})
	if err != nil {
		return nil, false, err
	}
	return r.Speed, r.SpeedOK, nil
}

// CAMBICValues computes every scale's CAMBI c-values of a distorted luma
// plane on the device (vmaf.CAMBIOffloader), a frame on its own, into out;
// ok is false when CAMBI stays on the CPU, or the plane is too short.
func (wk *worker) CAMBICValues(y []uint16, out *[5][]float32) (bool, error) {
	if wk.cambi == nil || len(y) < wk.w*wk.h {
		return false, nil
	}
	r, err := wk.one(&vmaf.OffloadFrame{Index: -1, PrevIndex: -1, Dis: y, CAMBI: true})
	if err != nil {
		return false, err
	}
	for scale := range out {
		out[scale] = append(out[scale][:0], r.CAMBI[scale]...)
	}
	return r.CAMBIOK, nil
}

// Close ends the worker's Score: it keeps the worker for the next one
// when it is sound and of the configuration last asked for, else frees it.
func (wk *worker) Close() {
	for i := range wk.ring {
		b := &wk.ring[i]
		if b.state == submitted && b.stream.Wait() != nil && wk.err == nil {
			wk.err = fmt.Errorf("vulkan kernel: lost")
		}
		if b.state == recording {
			// Never submitted: the tables it would have uploaded go with
			// the next batch, and its pending frame is dropped.
			wk.reupload()
			wk.phases.reset()
			wk.pending = false
		}
		b.state = idle
	}
	// No batch reads the Score's planes any more: they are its caller's.
	wk.releasePlanes()
	wk.drop()
	if wk.prof != nil {
		// A profile is one run's: the next user of the worker has none.
		wk.prof.close()
		wk.prof = nil
	}
	k := wk.k
	k.mu.Lock()
	keep := wk.err == nil && !k.closed && wk.key == k.idleKey && len(k.idle) < maxIdleWorkers
	if keep {
		k.idle = append(k.idle, wk)
	}
	k.mu.Unlock()
	if !keep {
		wk.free()
	}
}

// reupload has the next batch upload SpEED's and CAMBI's tables again.
func (wk *worker) reupload() {
	if wk.speed != nil {
		wk.speed.tabPending = true
	}
	if wk.cambi != nil {
		wk.cambi.tabPending = true
	}
}

// detach frees the SpEED and CAMBI state and the imported planes (attach's).
func (wk *worker) detach() {
	wk.releasePlanes()
	if wk.speed != nil {
		wk.speed.close()
		wk.speed = nil
	}
	if wk.cambi != nil {
		wk.cambi.close()
		wk.cambi = nil
	}
}

// free frees the worker's device state.
func (wk *worker) free() {
	wk.detach()
	if wk.vif != nil {
		wk.vif.close()
		wk.vif = nil
	}
	if wk.adm != nil {
		wk.adm.close()
		wk.adm = nil
	}
	for i := range wk.ring {
		if b := &wk.ring[i]; b.stream != nil {
			b.stream.Close()
			b.stream = nil
		}
	}
	wk.mem.close()
	wk.k.mu.Lock()
	wk.k.workers--
	wk.k.mu.Unlock()
}
