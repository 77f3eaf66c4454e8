package vulkan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Info describes the device that runs the kernels, as the worker's result
// records it.
type Info struct {
	// Name is the device name, e.g. "NVIDIA H100 80GB HBM3" or
	// "llvmpipe (LLVM 15.0.6, 256 bits)".
	Name string
	// Driver is the driver's name and info, e.g. "llvmpipe (Mesa 22.3.6 (LLVM 15.0.6))".
	Driver string
	// APIVersion is the Vulkan version the device supports, e.g. "1.3.230".
	APIVersion string
	// Type is "discrete", "integrated", "virtual", "cpu" or "other".
	Type string
	// Float64 says whether shaders may use 64-bit floats (shaderFloat64).
	Float64 bool
	// MaxStorageBufferRange is the largest storage buffer a shader binds, in bytes.
	MaxStorageBufferRange uint32
	// MaxWorkGroupCount is the largest dispatch in each dimension.
	MaxWorkGroupCount [3]uint32
	// Memory is the size of the largest device-local memory heap, in bytes.
	Memory uint64
	// TimestampPeriod is the nanoseconds a tick of the device's timestamps
	// takes, and TimestampBits how many bits of them the compute queue
	// writes (0: it writes none); see Timestamps.
	TimestampPeriod float32
	TimestampBits   uint32
	// HostImportAlignment is the alignment, and the size granule, of host
	// memory the device takes as a buffer without a copy (ImportHost,
	// VK_EXT_external_memory_host); 0 where it cannot.
	HostImportAlignment uint64
}

// Config chooses the loader and the device.
type Config struct {
	// Library is the loader to dlopen; empty means DefaultLibrary.
	Library string
	// Device, when not empty, selects the device whose index (in the
	// loader's order) or name prefix it is; otherwise the first usable
	// device is taken, discrete GPUs before integrated ones before the rest.
	Device string
	// GPUOnly refuses devices that are CPU implementations (lavapipe,
	// SwiftShader): on those the CPU kernel is faster, so only an explicit
	// request for the vulkan backend uses them.
	GPUOnly bool
	// Drivers, when not empty, are the only drivers the loader loads: globs of
	// their manifest files' names (VendorDrivers), given to the loader as
	// VK_LOADER_DRIVERS_SELECT. vkCreateInstance loads every driver installed, and
	// the worker's image has Mesa's four (lavapipe, RADV, ANV and HASVK) beside the
	// node's: on an NVIDIA node they cost about 40 ms of each open with their files
	// in the page cache, and 0.35 to 0.4 s without, for LLVM's 117 MB
	// (docs/benchmarks.md, "Only the slot's Vulkan drivers"). When they find no
	// usable device (a driver whose manifest is named otherwise), Open loads every
	// driver, as without them. The loader's own variables win: with any of
	// driverEnv set, Drivers is not used.
	Drivers []string
}

// driverEnv are the loader's variables that choose its drivers (loader 1.3.234 and
// later; VK_ICD_FILENAMES before): where an operator sets one, Open leaves the choice
// to them.
var driverEnv = []string{"VK_LOADER_DRIVERS_SELECT", "VK_LOADER_DRIVERS_DISABLE", "VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES"}

// VendorDrivers are the manifest globs (Config.Drivers) of a GPU vendor's Vulkan
// drivers: nvidia's own (nvidia_icd.json), for amd Mesa's RADV (radeon_icd.*.json)
// and AMDVLK (amd_icd*.json), for intel Mesa's ANV and HASVK (intel_icd.*.json,
// intel_hasvk_icd.*.json); nil for any other vendor (cpu), which loads every driver.
func VendorDrivers(vendor string) []string {
	switch vendor {
	case "nvidia":
		return []string{"*nvidia*"}
	case "amd":
		return []string{"*radeon*", "*amd*"}
	case "intel":
		return []string{"*intel*"}
	}
	return nil
}

// driverSelection is the loader's VK_LOADER_DRIVERS_SELECT for drivers: empty, to load
// every driver, when there are none or the environment already chooses (driverEnv).
func driverSelection(drivers []string) string {
	if len(drivers) == 0 {
		return ""
	}
	for _, e := range driverEnv {
		if _, set := os.LookupEnv(e); set {
			return ""
		}
	}
	return strings.Join(drivers, ",")
}

// instanceMu serialises vkCreateInstance with the environment Open sets for it: the
// loader reads its variables there, and another Open must not see them.
var instanceMu sync.Mutex

// Device is an open logical device with one compute queue. Its methods may
// be called from several goroutines: submissions to the queue are
// serialised inside.
//
// One queue, although NVIDIA's GPUs offer 16 in the family: measured on an
// H200 (driver 580.159.04, 2026-11-27), a worker process that opened 16
// queues took about half a second longer on one thread, its frames' time the
// same, and a worker per queue scored 17% fewer 1080p frames a second on 16
// threads than all on one queue (docs/benchmarks.md, "Several queues").
type Device struct {
	Info Info

	lib      *library
	instance uintptr
	physical uintptr
	device   uintptr
	queue    uintptr
	family   uint32
	memProps physicalDeviceMemoryProperties
	fn       deviceFuncs
	submitMu sync.Mutex
	stats    struct{ submits, waits, readback, upload, barriers, dispatches atomic.Uint64 }
	steps    Steps
}

// Steps is how long each step of opening and closing a device took. On a GPU they are
// a fixed cost of every run beside its frames (a quarter of a second against 0.6 s of
// frames at 1080p on the H200, docs/benchmarks.md), and their parts say which one to
// attack. Open fills the device's steps, Close its teardown's; the kernel on top adds
// its own (Pipelines, Release).
type Steps struct {
	// Loader is loading the Vulkan loader and its entry points; Instance is
	// vkCreateInstance (the loader finds and loads the drivers); Select is listing
	// the physical devices and their properties; Device is vkCreateDevice.
	Loader, Instance, Select, Device time.Duration
	// Pipelines is building the kernel's compute pipelines (the driver compiles the
	// shaders, or finds them in its cache).
	Pipelines time.Duration
	// Release is freeing the kernel's buffers and pipelines; Idle is waiting for the
	// device to be idle; DestroyDevice and DestroyInstance are the last two calls.
	Release, Idle, DestroyDevice, DestroyInstance time.Duration
	// Drivers is the selection the loader was given for the device it opened
	// (Config.Drivers, comma-separated); empty when it was given none and loaded every
	// driver. A loader older than 1.3.234 ignores a selection.
	Drivers string
}

// Steps returns how long the device's open and close steps took (Steps).
func (d *Device) Steps() Steps { return d.steps }

// Stats counts what costs a host round trip or bus traffic, since the
// device opened: so that the structure of the work (how many submissions
// and host waits a frame takes, how many bytes come back) shows and can be
// tested without a GPU to time it on.
type Stats struct {
	// Submits is the number of queue submissions (Stream.Submit).
	Submits uint64
	// Waits is the number of host waits for a submission (Stream.Wait
	// with one pending).
	Waits uint64
	// ReadbackBytes is the bytes copies recorded into host-visible
	// buffers (Stream.Copy to a Host buffer): what comes back to the host.
	ReadbackBytes uint64
	// UploadBytes is the bytes copies recorded from host-visible buffers
	// into device-local ones (Stream.Copy from a Host buffer): what goes
	// over the bus to the device.
	UploadBytes uint64
	// Barriers and Dispatches are the pipeline barriers and dispatches
	// recorded (Stream.Barrier, Stream.Dispatch). On one queue each barrier
	// waits for all the work before it, so the barriers a frame takes are
	// the length of the chain its passes run in.
	Barriers, Dispatches uint64
}

// Stats returns the device's counters.
func (d *Device) Stats() Stats {
	return Stats{Submits: d.stats.submits.Load(), Waits: d.stats.waits.Load(), ReadbackBytes: d.stats.readback.Load(),
		UploadBytes: d.stats.upload.Load(), Barriers: d.stats.barriers.Load(), Dispatches: d.stats.dispatches.Load()}
}

// deviceFuncs are the device-level commands, resolved once.
type deviceFuncs struct {
	destroyDevice, getDeviceQueue, deviceWaitIdle                                        uintptr
	createBuffer, destroyBuffer, getBufferMemoryRequirements, bindBufferMemory           uintptr
	allocateMemory, freeMemory, mapMemory, unmapMemory                                   uintptr
	createShaderModule, destroyShaderModule                                              uintptr
	createDescriptorSetLayout, destroyDescriptorSetLayout                                uintptr
	createPipelineLayout, destroyPipelineLayout, createComputePipelines, destroyPipeline uintptr
	createDescriptorPool, destroyDescriptorPool, allocateDescriptorSets                  uintptr
	updateDescriptorSets, freeDescriptorSets                                             uintptr
	createCommandPool, destroyCommandPool, allocateCommandBuffers                        uintptr
	beginCommandBuffer, endCommandBuffer, resetCommandBuffer                             uintptr
	cmdBindPipeline, cmdBindDescriptorSets, cmdPushConstants, cmdDispatch                uintptr
	cmdCopyBuffer, cmdPipelineBarrier, cmdFillBuffer                                     uintptr
	queueSubmit, createFence, destroyFence, waitForFences, resetFences                   uintptr
	// Timestamps' commands, 0 where the device lacks them (only
	// measurements use them).
	createQueryPool, destroyQueryPool, cmdResetQueryPool, cmdWriteTimestamp, getQueryPoolResults uintptr
	// vkGetMemoryHostPointerPropertiesEXT, 0 where the device imports no host
	// memory (ImportHost).
	getMemoryHostPointerProperties uintptr
}

// candidate is what device selection knows about one physical device.
type candidate struct {
	index        int
	info         Info
	deviceType   uint32
	int64        bool
	computeQueue int // queue family index, -1 when none
}

// Open loads the Vulkan loader, creates an instance and opens the first
// usable device (see Config). Errors wrap ErrUnavailable when the machine
// has no usable device, and name what is missing.
func Open(cfg Config) (*Device, error) {
	if cfg.Library == "" {
		cfg.Library = DefaultLibrary
	}
	t := time.Now()
	// A step taken twice (an instance of the selected drivers, then of all) counts
	// both times.
	step := func(d *time.Duration) {
		now := time.Now()
		*d, t = *d+now.Sub(t), now
	}
	lib, err := load(cfg.Library)
	if err != nil {
		return nil, err
	}
	d := &Device{lib: lib}
	step(&d.steps.Loader)
	sel := driverSelection(cfg.Drivers)
	c, err := d.openInstance(sel, cfg, step)
	if err != nil && sel != "" && errors.Is(err, ErrUnavailable) {
		// None of the selected drivers has a usable device: every driver's, as
		// without a selection, and their error if they fail too.
		sel = ""
		c, err = d.openInstance(sel, cfg, step)
	}
	if err != nil {
		return nil, err
	}
	d.steps.Drivers = sel
	if err := d.createDevice(c); err != nil {
		d.destroyInstance()
		return nil, err
	}
	step(&d.steps.Device)
	return d, nil
}

// openInstance creates the loader's instance with the drivers of selection sel (empty:
// every driver) and chooses the device cfg asks for; on failure it destroys the
// instance.
func (d *Device) openInstance(sel string, cfg Config, step func(*time.Duration)) (candidate, error) {
	if err := d.createInstance(sel); err != nil {
		step(&d.steps.Instance)
		return candidate{}, err
	}
	step(&d.steps.Instance)
	defer step(&d.steps.Select)
	cands, err := d.candidates()
	if err != nil {
		d.destroyInstance()
		return candidate{}, err
	}
	c, err := choose(cands, cfg.Device, cfg.GPUOnly)
	if err != nil {
		d.destroyInstance()
		return candidate{}, err
	}
	return c, nil
}

// createInstance is vkCreateInstance with the loader's drivers of selection sel
// (VK_LOADER_DRIVERS_SELECT, set only for the call; empty: every driver).
func (d *Device) createInstance(sel string) error {
	instanceMu.Lock()
	defer instanceMu.Unlock()
	if sel != "" {
		if err := os.Setenv("VK_LOADER_DRIVERS_SELECT", sel); err != nil {
			return fmt.Errorf("%w: selecting the Vulkan drivers: %w", ErrUnavailable, err)
		}
		defer os.Unsetenv("VK_LOADER_DRIVERS_SELECT")
	}
	app := cstring("vmafx-worker")
	ai := &applicationInfo{sType: stApplicationInfo, pApplicationName: ptr(app), pEngineName: ptr(app), apiVersion: apiVersion12}
	ci := &instanceCreateInfo{sType: stInstanceCreateInfo, pApplicationInfo: unsafe.Pointer(ai)}
	var inst uintptr
	if err := call(d.lib.createInstance, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&inst))); err != nil {
		if errors.Is(err, Result(-9)) || errors.Is(err, Result(-3)) {
			// The loader answers INCOMPATIBLE_DRIVER when it finds no ICD at all.
			return fmt.Errorf("%w: no Vulkan device: the loader found no driver (ICD) that can run (%w)", ErrUnavailable, err)
		}
		return fmt.Errorf("%w: vkCreateInstance: %w", ErrUnavailable, err)
	}
	d.instance = inst
	return nil
}

func (d *Device) destroyInstance() {
	if fn := d.lib.instanceProc(d.instance, "vkDestroyInstance"); fn != 0 && d.instance != 0 {
		callVoid(fn, d.instance, 0)
	}
	d.instance = 0
}

// candidates lists the physical devices with what selection needs.
func (d *Device) candidates() ([]candidate, error) {
	enum := d.lib.instanceProc(d.instance, "vkEnumeratePhysicalDevices")
	getProps2 := d.lib.instanceProc(d.instance, "vkGetPhysicalDeviceProperties2")
	getFeatures := d.lib.instanceProc(d.instance, "vkGetPhysicalDeviceFeatures")
	getQueues := d.lib.instanceProc(d.instance, "vkGetPhysicalDeviceQueueFamilyProperties")
	if enum == 0 || getProps2 == 0 || getFeatures == 0 || getQueues == 0 {
		return nil, fmt.Errorf("%w: the Vulkan loader lacks Vulkan 1.1 commands", ErrUnavailable)
	}
	var n uint32
	if err := call(enum, d.instance, uintptr(unsafe.Pointer(&n)), 0); err != nil {
		return nil, fmt.Errorf("%w: vkEnumeratePhysicalDevices: %w", ErrUnavailable, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no Vulkan device: the loader's drivers report none", ErrUnavailable)
	}
	phys := make([]uintptr, n)
	if err := call(enum, d.instance, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&phys[0]))); err != nil && !errors.Is(err, Result(5)) {
		return nil, fmt.Errorf("%w: vkEnumeratePhysicalDevices: %w", ErrUnavailable, err)
	}
	var out []candidate
	for i, p := range phys[:n] {
		drv := &physicalDeviceDriverProperties{sType: stPhysicalDeviceDriverProp}
		props := &physicalDeviceProperties2{sType: stPhysicalDeviceProps2}
		// Driver properties are core in 1.2; older devices are asked without them.
		props.pNext = unsafe.Pointer(drv)
		callVoid(getProps2, p, uintptr(unsafe.Pointer(props)))
		raw := props.properties[:]
		api := binary.LittleEndian.Uint32(raw[propAPIVersion:])
		if api < apiVersion12 {
			drv = &physicalDeviceDriverProperties{}
		}
		features := make([]uint32, featureCount)
		callVoid(getFeatures, p, uintptr(unsafe.Pointer(&features[0])))
		var qn uint32
		callVoid(getQueues, p, uintptr(unsafe.Pointer(&qn)), 0)
		queues := make([]queueFamilyProperties, max(qn, 1))
		callVoid(getQueues, p, uintptr(unsafe.Pointer(&qn)), uintptr(unsafe.Pointer(&queues[0])))
		cq, tsBits := -1, uint32(0)
		for k, q := range queues[:qn] {
			if q.queueFlags&queueCompute != 0 && q.queueCount > 0 {
				cq, tsBits = k, q.timestampValidBits
				break
			}
		}
		c := candidate{
			index:        i,
			deviceType:   binary.LittleEndian.Uint32(raw[propDeviceType:]),
			int64:        features[featureShaderInt64] != 0,
			computeQueue: cq,
			info: Info{
				Name:                  gostring(raw[propDeviceName : propDeviceName+deviceNameSize]),
				Driver:                driverString(gostring(drv.driverName[:]), gostring(drv.driverInfo[:]), binary.LittleEndian.Uint32(raw[propDriverVersion:])),
				APIVersion:            Version(api),
				Float64:               features[featureShaderFloat64] != 0,
				MaxStorageBufferRange: binary.LittleEndian.Uint32(raw[limitMaxStorageRange:]),
				TimestampPeriod:       math.Float32frombits(binary.LittleEndian.Uint32(raw[limitTimestampPeriod:])),
				TimestampBits:         tsBits,
			},
		}
		c.info.Type = typeName(c.deviceType)
		c.info.HostImportAlignment = d.hostImportAlignment(p, api)
		for k := range 3 {
			c.info.MaxWorkGroupCount[k] = binary.LittleEndian.Uint32(raw[limitMaxGroupCount+4*k:])
		}
		out = append(out, c)
	}
	return out, nil
}

func driverString(name, info string, version uint32) string {
	switch {
	case name != "" && info != "":
		return name + " (" + info + ")"
	case name != "":
		return name
	}
	return fmt.Sprintf("driver version %#x", version)
}

func typeName(t uint32) string {
	switch t {
	case physicalDeviceIntegrated:
		return "integrated"
	case physicalDeviceDiscrete:
		return "discrete"
	case 3:
		return "virtual"
	case physicalDeviceCPU:
		return "cpu"
	}
	return "other"
}

// rank orders device types: discrete GPUs, integrated, virtual, then CPUs
// (lavapipe) and anything else.
func rank(t uint32) int {
	switch t {
	case physicalDeviceDiscrete:
		return 0
	case physicalDeviceIntegrated:
		return 1
	case 3:
		return 2
	}
	return 3
}

// choose picks the device to open. want, when set, is an index or a name
// prefix; gpuOnly refuses CPU implementations. The error names why each
// device was refused.
func choose(cands []candidate, want string, gpuOnly bool) (candidate, error) {
	var usable []candidate
	var refused []string
	for _, c := range cands {
		if want != "" && fmt.Sprint(c.index) != want && !strings.HasPrefix(c.info.Name, want) {
			continue
		}
		switch {
		case c.computeQueue < 0:
			refused = append(refused, fmt.Sprintf("%s has no compute queue", c.info.Name))
		case !c.int64:
			refused = append(refused, fmt.Sprintf("%s lacks shaderInt64 (64-bit integers in shaders), which the integer kernels need", c.info.Name))
		case gpuOnly && c.deviceType == physicalDeviceCPU:
			refused = append(refused, fmt.Sprintf("%s is a CPU implementation, not a GPU", c.info.Name))
		default:
			usable = append(usable, c)
		}
	}
	if len(usable) == 0 {
		switch {
		case len(refused) > 0:
			return candidate{}, fmt.Errorf("%w: no usable Vulkan device: %s", ErrUnavailable, strings.Join(refused, "; "))
		case want != "":
			return candidate{}, fmt.Errorf("%w: no Vulkan device %q among %d", ErrUnavailable, want, len(cands))
		}
		return candidate{}, fmt.Errorf("%w: no Vulkan device", ErrUnavailable)
	}
	sort.SliceStable(usable, func(i, j int) bool { return rank(usable[i].deviceType) < rank(usable[j].deviceType) })
	return usable[0], nil
}

func (d *Device) createDevice(c candidate) error {
	enum := d.lib.instanceProc(d.instance, "vkEnumeratePhysicalDevices")
	var n uint32
	if err := call(enum, d.instance, uintptr(unsafe.Pointer(&n)), 0); err != nil {
		return err
	}
	phys := make([]uintptr, n)
	if err := call(enum, d.instance, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&phys[0]))); err != nil && !errors.Is(err, Result(5)) {
		return err
	}
	d.physical = phys[c.index]
	d.family = uint32(c.computeQueue)
	d.Info = c.info

	getMem := d.lib.instanceProc(d.instance, "vkGetPhysicalDeviceMemoryProperties")
	callVoid(getMem, d.physical, uintptr(unsafe.Pointer(&d.memProps)))
	for _, h := range d.memProps.memoryHeaps[:min(d.memProps.memoryHeapCount, 16)] {
		if h.flags&memoryHeapDeviceLocal != 0 {
			d.Info.Memory = max(d.Info.Memory, h.size)
		}
	}

	prio := []float32{1}
	qci := &deviceQueueCreateInfo{sType: stDeviceQueueCreateInfo, queueFamilyIndex: d.family, queueCount: 1, pQueuePriorities: ptr(prio)}
	features := make([]uint32, featureCount)
	features[featureShaderInt64] = 1
	if c.info.Float64 {
		features[featureShaderFloat64] = 1
	}
	dci := &deviceCreateInfo{sType: stDeviceCreateInfo, queueCreateInfoCount: 1, pQueueCreateInfos: unsafe.Pointer(qci), pEnabledFeatures: ptr(features)}
	var exts []unsafe.Pointer
	if c.info.HostImportAlignment != 0 {
		name := cstring(extExternalMemoryHost)
		exts = append(exts, unsafe.Pointer(&name[0]))
		dci.enabledExtensionCount, dci.ppEnabledExtensionNames = uint32(len(exts)), unsafe.Pointer(&exts[0])
	}
	create := d.lib.instanceProc(d.instance, "vkCreateDevice")
	var dev uintptr
	if err := call(create, d.physical, uintptr(unsafe.Pointer(dci)), 0, uintptr(unsafe.Pointer(&dev))); err != nil {
		return fmt.Errorf("%w: vkCreateDevice on %s: %w", ErrUnavailable, c.info.Name, err)
	}
	d.device = dev
	if err := d.resolve(); err != nil {
		d.Close()
		return err
	}
	callVoid(d.fn.getDeviceQueue, d.device, uintptr(d.family), 0, uintptr(unsafe.Pointer(&d.queue)))
	return nil
}

// resolve fills d.fn through vkGetDeviceProcAddr.
func (d *Device) resolve() error {
	gdpa := d.lib.instanceProc(d.instance, "vkGetDeviceProcAddr")
	if gdpa == 0 {
		return fmt.Errorf("%w: the loader has no vkGetDeviceProcAddr", ErrUnavailable)
	}
	var missing []string
	get := func(name string) uintptr {
		n := cstring(name)
		r := callPtr(gdpa, d.device, uintptr(unsafe.Pointer(&n[0])))
		if r == 0 {
			missing = append(missing, name)
		}
		return r
	}
	f := &d.fn
	f.destroyDevice, f.getDeviceQueue, f.deviceWaitIdle = get("vkDestroyDevice"), get("vkGetDeviceQueue"), get("vkDeviceWaitIdle")
	f.createBuffer, f.destroyBuffer = get("vkCreateBuffer"), get("vkDestroyBuffer")
	f.getBufferMemoryRequirements, f.bindBufferMemory = get("vkGetBufferMemoryRequirements"), get("vkBindBufferMemory")
	f.allocateMemory, f.freeMemory, f.mapMemory, f.unmapMemory = get("vkAllocateMemory"), get("vkFreeMemory"), get("vkMapMemory"), get("vkUnmapMemory")
	f.createShaderModule, f.destroyShaderModule = get("vkCreateShaderModule"), get("vkDestroyShaderModule")
	f.createDescriptorSetLayout, f.destroyDescriptorSetLayout = get("vkCreateDescriptorSetLayout"), get("vkDestroyDescriptorSetLayout")
	f.createPipelineLayout, f.destroyPipelineLayout = get("vkCreatePipelineLayout"), get("vkDestroyPipelineLayout")
	f.createComputePipelines, f.destroyPipeline = get("vkCreateComputePipelines"), get("vkDestroyPipeline")
	f.createDescriptorPool, f.destroyDescriptorPool = get("vkCreateDescriptorPool"), get("vkDestroyDescriptorPool")
	f.allocateDescriptorSets, f.updateDescriptorSets = get("vkAllocateDescriptorSets"), get("vkUpdateDescriptorSets")
	f.freeDescriptorSets = get("vkFreeDescriptorSets")
	f.createCommandPool, f.destroyCommandPool, f.allocateCommandBuffers = get("vkCreateCommandPool"), get("vkDestroyCommandPool"), get("vkAllocateCommandBuffers")
	f.beginCommandBuffer, f.endCommandBuffer, f.resetCommandBuffer = get("vkBeginCommandBuffer"), get("vkEndCommandBuffer"), get("vkResetCommandBuffer")
	f.cmdBindPipeline, f.cmdBindDescriptorSets = get("vkCmdBindPipeline"), get("vkCmdBindDescriptorSets")
	f.cmdPushConstants, f.cmdDispatch = get("vkCmdPushConstants"), get("vkCmdDispatch")
	f.cmdCopyBuffer, f.cmdPipelineBarrier, f.cmdFillBuffer = get("vkCmdCopyBuffer"), get("vkCmdPipelineBarrier"), get("vkCmdFillBuffer")
	f.queueSubmit, f.createFence, f.destroyFence = get("vkQueueSubmit"), get("vkCreateFence"), get("vkDestroyFence")
	f.waitForFences, f.resetFences = get("vkWaitForFences"), get("vkResetFences")
	if len(missing) > 0 {
		return fmt.Errorf("%w: the device lacks commands: %s", ErrUnavailable, strings.Join(missing, ", "))
	}
	optional := func(name string) uintptr {
		n := cstring(name)
		return callPtr(gdpa, d.device, uintptr(unsafe.Pointer(&n[0])))
	}
	f.createQueryPool, f.destroyQueryPool = optional("vkCreateQueryPool"), optional("vkDestroyQueryPool")
	f.cmdResetQueryPool, f.cmdWriteTimestamp = optional("vkCmdResetQueryPool"), optional("vkCmdWriteTimestamp")
	f.getQueryPoolResults = optional("vkGetQueryPoolResults")
	if d.Info.HostImportAlignment != 0 {
		f.getMemoryHostPointerProperties = optional("vkGetMemoryHostPointerPropertiesEXT")
	}
	return nil
}

// callPtr runs a command that returns a pointer.
//
//go:uintptrescapes
func callPtr(fn uintptr, args ...uintptr) uintptr {
	r := callRaw(fn, args...)
	return r
}

// Close waits for the device to finish and destroys it and its instance.
// Buffers, pipelines and streams must be closed first.
func (d *Device) Close() {
	if d.device != 0 {
		t := time.Now()
		callVoid(d.fn.deviceWaitIdle, d.device)
		d.steps.Idle = time.Since(t)
		t = time.Now()
		callVoid(d.fn.destroyDevice, d.device, 0)
		d.steps.DestroyDevice = time.Since(t)
		d.device = 0
	}
	if d.instance != 0 {
		t := time.Now()
		d.destroyInstance()
		d.steps.DestroyInstance = time.Since(t)
	}
}

// memoryType returns a memory type index allowed by bits with all of want,
// preferring one that also has prefer.
func (d *Device) memoryType(bits uint32, want, prefer uint32) (uint32, error) {
	best := -1
	for i := uint32(0); i < d.memProps.memoryTypeCount; i++ {
		f := d.memProps.memoryTypes[i].propertyFlags
		if bits&(1<<i) == 0 || f&want != want {
			continue
		}
		if f&prefer == prefer {
			return i, nil
		}
		if best < 0 {
			best = int(i)
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("no memory type with flags %#x", want)
	}
	return uint32(best), nil
}
