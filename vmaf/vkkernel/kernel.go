package vkkernel

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

var (
	//go:embed shaders/motion_blur.spv
	motionBlurSPV []byte
	//go:embed shaders/motion_sad.spv
	motionSADSPV []byte
)

// maxWorkers bounds the goroutines one Kernel serves: descriptor pools are
// sized for it.
const maxWorkers = 64

// workerBytesPerPixel is what one worker allocates on the device per luma
// pixel, all features together, at most (docs/worker.md: 12 host-visible
// and 77 device-local for motion, VIF and ADM; up to 17 more for SpEED
// chroma at 4:4:4 and 31 for CAMBI), rounded up.
const workerBytesPerPixel = 140

// Workers returns how many workers (scoring goroutines) of w x h frames
// the device holds: at most want (GOMAXPROCS when want <= 0), at most half
// the device's memory, at most maxWorkers, at least one.
func (k *Kernel) Workers(want, w, h int) int {
	if want <= 0 {
		want = runtime.GOMAXPROCS(0)
	}
	fit := int(k.dev.Info.Memory / 2 / uint64(max(w*h*workerBytesPerPixel, 1)))
	return max(min(want, fit, maxWorkers), 1)
}

// Kernel offloads features to one Vulkan device. It is safe for concurrent
// use; each scoring goroutine takes its own worker (NewWorker).
type Kernel struct {
	dev *vulkan.Device

	mu        sync.Mutex
	blur, sad *vulkan.Pipeline
	vif       *vifPipelines   // nil without shaderFloat64
	adm       *admPipelines   // nil without shaderFloat64
	speed     *speedPipelines // nil without shaderFloat64
	cambi     *vulkan.Pipeline
	workers   int
	closed    bool
}

var (
	_ vmaf.Offload        = (*Kernel)(nil)
	_ vmaf.SpeedOffloader = (*worker)(nil)
	_ vmaf.CAMBIOffloader = (*worker)(nil)
)

// Open opens the device cfg names (the first usable one by default) and
// builds the pipelines. Errors wrap vulkan.ErrUnavailable when the machine
// has no usable device.
func Open(cfg vulkan.Config) (*Kernel, error) {
	dev, err := vulkan.Open(cfg)
	if err != nil {
		return nil, err
	}
	k := &Kernel{dev: dev}
	if k.blur, err = dev.NewPipeline(motionBlurSPV, 3, 12, maxWorkers); err == nil {
		k.sad, err = dev.NewPipeline(motionSADSPV, 2, 8, maxWorkers)
	}
	if err == nil && dev.Info.Float64 {
		k.vif, err = newVIFPipelines(dev)
	}
	if err == nil && dev.Info.Float64 {
		k.adm, err = newADMPipelines(dev)
	}
	if err == nil && dev.Info.Float64 {
		k.speed, err = newSpeedPipelines(dev)
	}
	if err == nil {
		k.cambi, err = dev.NewPipeline(cambiSPV, cambiBindings, 4*cambiPushWords, maxWorkers)
	}
	if err != nil {
		k.Close()
		return nil, fmt.Errorf("vulkan kernel pipelines on %s: %w", dev.Info.Name, err)
	}
	return k, nil
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
	if k.speed != nil {
		device = append(device, "speed_chroma")
	} else {
		host = append(host, "speed_chroma")
	}
	return append(device, "cambi"), host
}

// Info describes the device.
func (k *Kernel) Info() vulkan.Info { return k.dev.Info }

// Close frees the pipelines and the device; workers must be closed first.
func (k *Kernel) Close() {
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
	k.dev.Close()
}

// NewWorker allocates one goroutine's buffers for cfg's frames.
func (k *Kernel) NewWorker(cfg vmaf.OffloadConfig) (vmaf.OffloadWorker, error) {
	k.mu.Lock()
	if k.workers >= maxWorkers {
		k.mu.Unlock()
		return nil, fmt.Errorf("vulkan kernel: more than %d workers", maxWorkers)
	}
	k.workers++
	k.mu.Unlock()
	wk, err := newWorker(k, cfg) // on failure its Close gives the count back
	if err != nil {
		return nil, err
	}
	return wk, nil
}

// worker is one goroutine's device state.
type worker struct {
	k         *Kernel
	w, h, bpc int
	plane     int64 // bytes of one luma plane (16-bit samples)

	stream  *vulkan.Stream
	staging *vulkan.Buffer // prev | cur planes, host-visible
	prev    *vulkan.Buffer // device-local planes
	cur     *vulkan.Buffer
	blurred *vulkan.Buffer // int32 per pixel
	rowSAD  *vulkan.Buffer // uint32 per row, device-local
	back    *vulkan.Buffer // rowSAD readback, host-visible
	mem     allocs

	blurSet, sadSet *vulkan.DescriptorSet
	blurPush        []byte
	sadPush         []byte

	vif *vifWorker // nil when VIF stays on the CPU
	adm *admWorker // nil when ADM stays on the CPU
	// speed is nil when SpEED chroma stays on the CPU: the model has none
	// (OffloadConfig.Speed), or the device lacks shaderFloat64.
	speed *speedWorker
	cambi *cambiWorker // nil when the model has no CAMBI (OffloadConfig.CAMBI)
}

func newWorker(k *Kernel, cfg vmaf.OffloadConfig) (*worker, error) {
	w, h, bpc := cfg.Width, cfg.Height, cfg.BitDepth
	wk := &worker{k: k, w: w, h: h, bpc: bpc, plane: int64(w * h * 2), mem: allocs{dev: k.dev}}
	a := &wk.mem
	wk.staging = a.buffer(2*wk.plane, vulkan.Host)
	wk.prev = a.buffer(wk.plane, vulkan.DeviceLocal)
	wk.cur = a.buffer(wk.plane, vulkan.DeviceLocal)
	wk.blurred = a.buffer(int64(w*h*4), vulkan.DeviceLocal)
	wk.rowSAD = a.buffer(int64(h*4), vulkan.DeviceLocal)
	wk.back = a.buffer(int64(h*4), vulkan.Host)
	wk.blurSet = a.bind(k.blur, wk.prev, wk.cur, wk.blurred)
	wk.sadSet = a.bind(k.sad, wk.blurred, wk.rowSAD)
	err := a.err
	if err == nil {
		wk.stream, err = k.dev.NewStream()
	}
	if err == nil && k.vif != nil {
		wk.vif, err = newVIFWorker(k, cfg)
	}
	if err == nil && k.adm != nil {
		wk.adm, err = newADMWorker(k, cfg)
	}
	if err == nil && k.speed != nil && cfg.Speed != nil {
		wk.speed, err = newSpeedWorker(k, cfg.Speed, bpc)
	}
	if err == nil && cfg.CAMBI != nil {
		wk.cambi, err = newCAMBIWorker(k, cfg.CAMBI)
	}
	if err != nil {
		wk.Close()
		return nil, fmt.Errorf("vulkan kernel worker (%dx%d): %w", w, h, err)
	}
	wk.blurPush = push(int32(w), int32(h), int32(bpc))
	wk.sadPush = push(int32(w), int32(h))
	return wk, nil
}

func push(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// samples returns the bytes of a plane of 16-bit samples (little-endian
// hosts, as every platform the worker ships for).
func samples(p []uint16) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), 2*len(p))
}

// beginPair checks that a and b hold n samples, writes them into staging
// (two planes of plane bytes) and begins a submission that copies them to
// dstA and dstB.
func beginPair(s *vulkan.Stream, staging, dstA, dstB *vulkan.Buffer, plane int64, a, b []uint16, n int) error {
	if len(a) < n || len(b) < n {
		return fmt.Errorf("planes of %d and %d samples, want %d", len(a), len(b), n)
	}
	st := staging.Bytes()
	copy(st, samples(a[:n]))
	copy(st[plane:], samples(b[:n]))
	if err := s.Begin(); err != nil {
		return err
	}
	s.Copy(dstA, 0, staging, 0, plane)
	s.Copy(dstB, 0, staging, plane, plane)
	s.Barrier()
	return nil
}

// submitWait submits what s recorded, after a final barrier, and waits.
func submitWait(s *vulkan.Stream) error {
	s.Barrier()
	if err := s.Submit(); err != nil {
		return err
	}
	return s.Wait()
}

// MotionSAD uploads the two planes and runs the motion kernels.
func (wk *worker) MotionSAD(prev, cur []uint16) (uint64, error) {
	s := wk.stream
	if err := beginPair(s, wk.staging, wk.prev, wk.cur, wk.plane, prev, cur, wk.w*wk.h); err != nil {
		return 0, fmt.Errorf("vulkan motion: %w", err)
	}
	s.Dispatch(wk.k.blur, wk.blurSet, wk.blurPush, (wk.w+63)/64, (wk.h+3)/4, 1)
	s.Barrier()
	s.Dispatch(wk.k.sad, wk.sadSet, wk.sadPush, wk.h, 1, 1)
	s.Barrier()
	s.Copy(wk.back, 0, wk.rowSAD, 0, int64(wk.h*4))
	if err := submitWait(s); err != nil {
		return 0, fmt.Errorf("vulkan motion: %w", err)
	}
	var sad uint64
	for _, r := range wk.back.Uint32s()[:wk.h] {
		sad += uint64(r)
	}
	return sad, nil
}

// VIF computes the four scales' sums on the device; ok is false when the
// device leaves VIF to the CPU (no shaderFloat64).
func (wk *worker) VIF(ref, dis []uint16) (sums [4]vmaf.VIFSums, ok bool, err error) {
	if wk.vif == nil {
		return sums, false, nil
	}
	sums, err = wk.vif.run(ref, dis)
	return sums, err == nil, err
}

// ADM computes the rows of the ADM sums on the device; ok is false when
// the device leaves ADM to the CPU (no shaderFloat64).
func (wk *worker) ADM(ref, dis []uint16) (rows *vmaf.ADMRows, ok bool, err error) {
	if wk.adm == nil {
		return nil, false, nil
	}
	rows, err = wk.adm.run(ref, dis)
	return rows, err == nil, err
}

// Speed computes SpEED chroma's per-pixel stages of a frame pair on the
// device (vmaf.SpeedOffloader); ok is false when SpEED stays on the CPU.
func (wk *worker) Speed(ref, dis *vmaf.Frame) (p *vmaf.SpeedPictures, ok bool, err error) {
	if wk.speed == nil {
		return nil, false, nil
	}
	return wk.speed.run(ref, dis)
}

// CAMBICValues computes every scale's CAMBI c-values of a distorted luma
// plane on the device (vmaf.CAMBIOffloader); ok is false when CAMBI stays
// on the CPU.
func (wk *worker) CAMBICValues(y []uint16, out *[5][]float32) (bool, error) {
	if wk.cambi == nil {
		return false, nil
	}
	return wk.cambi.run(y, out)
}

// Close frees the worker's device state.
func (wk *worker) Close() {
	if wk.vif != nil {
		wk.vif.close()
		wk.vif = nil
	}
	if wk.adm != nil {
		wk.adm.close()
		wk.adm = nil
	}
	if wk.speed != nil {
		wk.speed.close()
		wk.speed = nil
	}
	if wk.cambi != nil {
		wk.cambi.close()
		wk.cambi = nil
	}
	if wk.stream != nil {
		wk.stream.Close()
		wk.stream = nil
	}
	wk.mem.close()
	wk.k.mu.Lock()
	wk.k.workers--
	wk.k.mu.Unlock()
}
