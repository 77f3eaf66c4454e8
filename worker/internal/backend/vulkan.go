package backend

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel"
	"github.com/vmafx/vmafx/vmaf/vkkernel/selftest"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// Vulkan runs the kernel's features on a Vulkan device (those the device
// can run: VIF and ADM need shaderFloat64) and the rest on the CPU, in the
// same pass; Device says which ran where.
type Vulkan struct {
	k *vkkernel.Kernel
	// open is how long opening the device took (its pipelines built).
	open time.Duration
	// test is the device's self-test, which runs beside from the open on (verify
	// waits for it); ran says whether this open started it (a later open of the
	// same device in the process keeps the first one's verdict).
	test *verdict
	ran  bool
}

// openDevice opens the first usable Vulkan device and starts its self-test beside;
// gpuOnly refuses CPU implementations. device is the slot's (VMAFX_DEVICE, e.g.
// nvidia-0; empty outside a Pod): on a GPU slot the loader loads only its vendor's
// drivers (SlotDrivers). The error wraps vulkan.ErrUnavailable and names what is
// missing (the loader, a device, 64-bit shader integers).
func openDevice(gpuOnly bool, device string) (*Vulkan, error) {
	start := time.Now()
	k, err := vkkernel.Open(vulkan.Config{GPUOnly: gpuOnly, Drivers: SlotDrivers(device)})
	if err != nil {
		return nil, err
	}
	v := &Vulkan{k: k, open: time.Since(start)}
	v.test, v.ran = selfTests.start(k)
	return v, nil
}

// verify waits for the device's self-test and returns its verdict: an error wrapping
// selftest.ErrFailed when the device fails it, naming the device, its driver and the
// first feature and frame that differ from the CPU kernel's. Before it, the error of a
// pipeline the device could not build after the open (vkkernel's Ready): the open's
// failure, not a wrong score.
func (v *Vulkan) verify() error {
	<-v.test.done
	if err := v.k.Ready(); err != nil {
		return err
	}
	return v.test.err
}

// ready waits for the pipelines the open left building and returns their error.
func (v *Vulkan) ready() error { return v.k.Ready() }

// SlotDrivers are the Vulkan drivers (vulkan.Config.Drivers) for the device of a slot,
// VMAFX_DEVICE's value: its vendor's, where every device named (one, or several
// comma-separated) is of one GPU vendor; none, that is every driver, for cpu, an empty
// value or a mix. The device plugin names the slot's device; a container sees only
// that device's nodes, so other vendors' drivers find nothing and only cost their
// loading.
func SlotDrivers(device string) []string {
	vendor := ""
	for _, d := range strings.Split(device, ",") {
		v, _, _ := strings.Cut(strings.TrimSpace(d), "-")
		if vendor != "" && v != vendor {
			return nil
		}
		vendor = v
	}
	return vulkan.VendorDrivers(vendor)
}

// Startup is how long opening the device and its self-test took (zero for a
// self-test this open did not run), which the worker logs: on a GPU they are a
// fixed cost beside the frames' time. It waits for the self-test.
func (v *Vulkan) Startup() (open, selfTest time.Duration) {
	<-v.test.done
	if v.ran {
		selfTest = v.test.took
	}
	return v.open, selfTest
}

// Steps is how long each step of the device's open and close took (vulkan.Steps): the
// close's once Close has returned.
func (v *Vulkan) Steps() vulkan.Steps { return v.k.Steps() }

// OpenSteps are the steps of b's open for a log line, as key-value pairs in seconds
// ("loaderSeconds" and so on); nil for a backend that opens no device.
func OpenSteps(b Backend) []any {
	s, ok := steps(b)
	if !ok {
		return nil
	}
	drivers := s.Drivers
	if drivers == "" {
		drivers = "all"
	}
	return []any{"loaderSeconds", s.Loader.Seconds(), "instanceSeconds", s.Instance.Seconds(),
		"selectSeconds", s.Select.Seconds(), "deviceSeconds", s.Device.Seconds(), "pipelinesSeconds", s.Pipelines.Seconds(),
		"drivers", drivers}
}

// CloseSteps are the steps of b's close for a log line (OpenSteps), once it is closed.
func CloseSteps(b Backend) []any {
	s, ok := steps(b)
	if !ok {
		return nil
	}
	kv := []any{"releaseSeconds", s.Release.Seconds(), "idleSeconds", s.Idle.Seconds(),
		"destroyDeviceSeconds", s.DestroyDevice.Seconds(), "destroyInstanceSeconds", s.DestroyInstance.Seconds()}
	// How the frames reached the device: from where the readers put them, or
	// copied into the staging first (docs/worker.md).
	if v, ok := device(b); ok {
		staged, imported, refused := v.k.HostCopies()
		kv = append(kv, "planesImported", imported, "stagedBytes", staged)
		if refused != nil {
			kv = append(kv, "planesRefused", refused.Error())
		}
	}
	return kv
}

// steps are the steps of b's device, or of the one a Pending opened.
func steps(b Backend) (vulkan.Steps, bool) {
	if v, ok := device(b); ok {
		return v.Steps(), true
	}
	return vulkan.Steps{}, false
}

// device is b as a Vulkan backend, or the one a Pending opened.
func device(b Backend) (*Vulkan, bool) {
	if p, ok := b.(*Pending); ok {
		b, _, _ = p.Wait()
	}
	v, ok := b.(*Vulkan)
	return v, ok
}

// selfTests runs the self-test once per process and device: a worker that
// opens its device again (a rendition ladder, a retried chunk) does not pay
// for it twice, and a device that failed stays failed.
var selfTests = &selfTestCache{run: selftest.Run, done: map[vulkan.Info]*verdict{}}

type selfTestCache struct {
	mu   sync.Mutex
	run  func(context.Context, *vkkernel.Kernel) error // tests replace it
	done map[vulkan.Info]*verdict
}

// verdict is a device's self-test: err once done is closed, and how long it took.
type verdict struct {
	done chan struct{}
	err  error
	took time.Duration
}

// start starts k's device's self-test on a goroutine of its own, unless the process
// has one for the device already: it returns that one, and whether it started it.
// The self-test is not cancelled with the run: a self-test cut short would be
// recorded as the device's failure. It is short, and Close waits for it.
func (c *selfTestCache) start(k *vkkernel.Kernel) (*verdict, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info := k.Info()
	if v, ok := c.done[info]; ok {
		return v, false
	}
	v := &verdict{done: make(chan struct{})}
	c.done[info] = v
	run := c.run
	go func() {
		defer close(v.done)
		start := time.Now()
		v.err = run(context.Background(), k)
		v.took = time.Since(start)
	}()
	return v, true
}

// Name returns "vulkan".
func (*Vulkan) Name() string { return string(vmafxv1.BackendVulkan) }

// Score calls vmaf.Score with the device computing what it can, on no more
// threads than the device's memory holds workers for: all of them, or
// opts.OffloadThreads of them beside threads on the CPU, once the device
// has passed its self-test.
func (v *Vulkan) Score(ctx context.Context, ref, dist vmaf.FrameSource, opts vmaf.Options) (*vmaf.Result, error) {
	if err := v.verify(); err != nil {
		return nil, err // a device that failed its self-test scores nothing
	}
	opts.Offload = v.k
	_, n := v.offload(opts, ref.Info())
	if deviceThreads(opts) < threads(opts) {
		opts.OffloadThreads = n
	} else {
		opts.Threads = n
	}
	return vmaf.Score(ctx, ref, dist, opts)
}

// threads is how many threads vmaf.Score runs for opts.
func threads(opts vmaf.Options) int {
	if opts.Threads <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return opts.Threads
}

// deviceThreads is how many of them opts asks to score with the device
// (vmaf.Options.OffloadThreads).
func deviceThreads(opts vmaf.Options) int {
	if n := opts.OffloadThreads; n > 0 && n < threads(opts) {
		return n
	}
	return threads(opts)
}

// Staging is the host memory each scoring thread maps on top of the kernel's heap (its
// worker's staging and readback for the frames in flight, a v1 model's SpEED chroma and
// CAMBI included) and how many frames Score keeps queued on the device, for model m on
// frames of info; see backend.Staging.
func (v *Vulkan) Staging(m *vmaf.Model, info vmaf.VideoInfo, enc vmaf.Encode) (int64, int) {
	return v.k.HostBytesPerWorkerFor(workerConfig(m, info, enc)), v.k.FramesInFlight(info.Width, info.Height)
}

// workerConfig is the configuration Score gives a device's workers for model m
// (the distorted video's encode enc) on frames of info.
func workerConfig(m *vmaf.Model, info vmaf.VideoInfo, enc vmaf.Encode) vmaf.OffloadConfig {
	w, h, bpc := info.Width, info.Height, info.Format.BitDepth()
	if enc != (vmaf.Encode{}) {
		m = m.WithEncode(enc) // CAMBI at the encode's size, as Score scores it
	}
	cfg := m.OffloadConfig(w, h, bpc)
	cfg.Speed = m.SpeedConfig(w, h, info.Format)
	cfg.CAMBI = vmaf.CAMBIConfigCPU(w, h, bpc, m)
	return cfg
}

// Device describes the Vulkan device and the features it computes.
func (v *Vulkan) Device() *vmafxv1.WorkerDevice {
	info := v.k.Info()
	device, host := v.k.Features()
	return &vmafxv1.WorkerDevice{
		Name: info.Name, Driver: info.Driver, API: "Vulkan " + info.APIVersion,
		Features: device, HostFeatures: host,
	}
}

// Close frees the device, once its self-test has ended (it scores on the device).
func (v *Vulkan) Close() {
	<-v.test.done
	v.k.Close()
}
