package discovery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// PCI vendor IDs (as sysfs prints them, without 0x) of the vendors VMAFX can score on.
const (
	pciNVIDIA = "10de"
	pciAMD    = "1002"
	pciIntel  = "8086"
	// pciGone is what a config-space read returns once a device has fallen off the
	// bus (all ones): sysfs still lists it, but it is gone.
	pciGone = "ffff"
)

var vendorByPCI = map[string]vmafxv1.GPUVendor{
	pciNVIDIA: vmafxv1.VendorNVIDIA,
	pciAMD:    vmafxv1.VendorAMD,
	pciIntel:  vmafxv1.VendorIntel,
}

// ErrNoDevices is returned when the configuration names a vendor the node has no
// device of.
var ErrNoDevices = errors.New("no devices of the requested vendor")

// ErrDeviceGone wraps every Probe failure: a device node or sysfs entry is missing,
// or sysfs says the device has fallen off the bus.
var ErrDeviceGone = errors.New("device gone")

// Options steer discovery.
type Options struct {
	// Root is where the host's /dev, /sys and /proc are found.
	Root string
	// Vendor is "auto" (first of nvidia, amd, intel present, else cpu) or a vendor.
	Vendor string
	// SlotsPerDevice is how many slots each GPU is offered as.
	SlotsPerDevice int
	// CPUsPerSlot sizes CPU slots when CPUSlots is 0.
	CPUsPerSlot int
	// CPUSlots, when above 0, is the CPU slot count.
	CPUSlots int
}

// Node is a device node a container needs.
type Node struct {
	// Path is the node's path on the host (and in the container), like /dev/nvidia0.
	Path string
	// Optional nodes are handed to containers but their absence does not make the
	// device unhealthy (e.g. /dev/nvidia-uvm-tools, only for profilers).
	Optional bool
}

// Device is one scoring device, offered as Slots slots.
type Device struct {
	// Vendor is the device's vendor; cpu for the CPU pseudo-device.
	Vendor vmafxv1.GPUVendor
	// Index numbers the vendor's devices: the minor number for NVIDIA (/dev/nvidiaN),
	// the position in PCI address order for AMD and Intel, 0 for cpu.
	Index int
	// PCIAddress is like 0000:01:00.0; empty for cpu.
	PCIAddress string
	// PCIVendor and PCIDevice are the PCI IDs without 0x, like 10de and 2684.
	PCIVendor, PCIDevice string
	// SysfsDir is the device's sysfs directory on the host; empty for cpu.
	SysfsDir string
	// Nodes are the device nodes a container needs, in a stable order.
	Nodes []Node
	// Slots is how many slots the device is offered as.
	Slots int
}

// Name is the device's name in VMAFX_DEVICE and in logs: <vendor>-<index>, or cpu.
func (d Device) Name() string {
	if d.Vendor == vmafxv1.VendorCPU {
		return string(vmafxv1.VendorCPU)
	}
	return string(d.Vendor) + "-" + strconv.Itoa(d.Index)
}

// SlotID is the ID of the device's k-th slot: <vendor>-<index>-slot-<k>.
func (d Device) SlotID(k int) string {
	return string(d.Vendor) + "-" + strconv.Itoa(d.Index) + "-slot-" + strconv.Itoa(k)
}

// Probe returns nil while the device is usable: every required device node exists
// and sysfs still lists the device with a real vendor ID. Otherwise it returns an error
// wrapping ErrDeviceGone that says what is missing.
func (d Device) Probe(root string) error {
	for _, n := range d.Nodes {
		if n.Optional {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, n.Path)); err != nil {
			return fmt.Errorf("device node %s missing: %w", n.Path, ErrDeviceGone)
		}
	}
	if d.SysfsDir != "" {
		v, err := readID(filepath.Join(root, d.SysfsDir, "vendor"))
		if err != nil {
			return fmt.Errorf("sysfs entry %s missing: %w", d.SysfsDir, ErrDeviceGone)
		}
		if v == pciGone {
			return fmt.Errorf("sysfs %s reads vendor 0xffff, the device fell off the bus: %w", d.SysfsDir, ErrDeviceGone)
		}
	}
	return nil
}

// Inventory is what discovery found.
type Inventory struct {
	// Vendor is the vendor whose devices are offered.
	Vendor vmafxv1.GPUVendor
	// Devices are the offered devices, ordered by index.
	Devices []Device
	// Ignored are devices found but not offered: one resource name cannot tell a pod
	// which vendor it gets, so a mixed node offers one vendor only.
	Ignored []Device
	// CPUs is the number of CPUs online on the node.
	CPUs int
}

// Capacity is the number of slots offered.
func (inv Inventory) Capacity() int {
	n := 0
	for _, d := range inv.Devices {
		n += d.Slots
	}
	return n
}

// Description summarises the offered devices for VmafxNode status.device, like
// "2x nvidia (10de:2684)" or "cpu (8 CPUs)".
func (inv Inventory) Description() string {
	if inv.Vendor == vmafxv1.VendorCPU {
		return fmt.Sprintf("cpu (%d CPUs)", inv.CPUs)
	}
	return describe(inv.Devices)
}

func describe(devs []Device) string {
	type model struct{ vendor, ids string }
	var order []model
	count := map[model]int{}
	for _, d := range devs {
		m := model{string(d.Vendor), d.PCIVendor + ":" + d.PCIDevice}
		if count[m] == 0 {
			order = append(order, m)
		}
		count[m]++
	}
	parts := make([]string, 0, len(order))
	for _, m := range order {
		parts = append(parts, fmt.Sprintf("%dx %s (%s)", count[m], m.vendor, m.ids))
	}
	return strings.Join(parts, ", ")
}

// Discover finds the node's devices and picks the ones to offer.
func Discover(opts Options) (Inventory, error) {
	gpus, err := findGPUs(opts.Root)
	if err != nil {
		return Inventory{}, err
	}
	inv := Inventory{CPUs: countCPUs(opts.Root)}
	switch v := vmafxv1.GPUVendor(opts.Vendor); {
	case opts.Vendor == "auto" || opts.Vendor == "":
		inv.Vendor = vmafxv1.VendorCPU
		for _, gv := range vmafxv1.GPUVendors {
			if len(gpus[gv]) > 0 {
				inv.Vendor = gv
				break
			}
		}
	case v == vmafxv1.VendorCPU || slices.Contains(vmafxv1.GPUVendors, v):
		inv.Vendor = v
		if v != vmafxv1.VendorCPU && len(gpus[v]) == 0 {
			return Inventory{}, fmt.Errorf("vendor %s: %w (found %s)", v, ErrNoDevices, describeAll(gpus))
		}
	default:
		return Inventory{}, fmt.Errorf("unknown vendor %q", opts.Vendor)
	}
	for _, gv := range vmafxv1.GPUVendors {
		for _, d := range gpus[gv] {
			if gv == inv.Vendor {
				d.Slots = opts.SlotsPerDevice
				inv.Devices = append(inv.Devices, d)
			} else {
				inv.Ignored = append(inv.Ignored, d)
			}
		}
	}
	if inv.Vendor == vmafxv1.VendorCPU {
		slots := opts.CPUSlots
		if slots <= 0 {
			slots = max(1, inv.CPUs/max(1, opts.CPUsPerSlot))
		}
		inv.Devices = []Device{{Vendor: vmafxv1.VendorCPU, Slots: slots}}
	}
	return inv, nil
}

func describeAll(gpus map[vmafxv1.GPUVendor][]Device) string {
	var all []Device
	for _, gv := range vmafxv1.GPUVendors {
		all = append(all, gpus[gv]...)
	}
	if len(all) == 0 {
		return "no GPU"
	}
	return describe(all)
}

// pciDevice is a PCI display device as sysfs shows it.
type pciDevice struct {
	addr, vendor, device string
	sysfsDir             string // host path
	renders              []int  // render node minors (renderD<N>)
}

var drmName = regexp.MustCompile(`^(card|renderD)([0-9]+)$`)

// findGPUs lists the node's GPUs by vendor, each vendor's ordered by index.
func findGPUs(root string) (map[vmafxv1.GPUVendor][]Device, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("host root: %w", err)
	}
	byAddr := map[string]*pciDevice{}
	// Every DRM device (card or render node) names its parent through the device
	// link; that parent's vendor file says who made it.
	entries, err := os.ReadDir(filepath.Join(realRoot, "sys/class/drm"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("listing DRM devices: %w", err)
	}
	for _, e := range entries {
		m := drmName.FindStringSubmatch(e.Name())
		if m == nil {
			continue // connectors (card0-HDMI-A-1) and the version file
		}
		dir, err := filepath.EvalSymlinks(filepath.Join(realRoot, "sys/class/drm", e.Name(), "device"))
		if err != nil {
			continue // a DRM device without a parent device (e.g. vgem) scores nothing
		}
		p, err := readPCI(realRoot, dir, byAddr)
		if err != nil {
			continue
		}
		if m[1] == "renderD" {
			n, _ := strconv.Atoi(m[2])
			p.renders = append(p.renders, n)
		}
	}
	// NVIDIA's driver works without nvidia-drm, and then its GPUs are in no DRM class:
	// find them on the PCI bus (class 0x03xxxx is a display controller).
	entries, err = os.ReadDir(filepath.Join(realRoot, "sys/bus/pci/devices"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("listing PCI devices: %w", err)
	}
	for _, e := range entries {
		dir, err := filepath.EvalSymlinks(filepath.Join(realRoot, "sys/bus/pci/devices", e.Name()))
		if err != nil {
			continue
		}
		if v, _ := readID(filepath.Join(dir, "vendor")); v != pciNVIDIA {
			continue
		}
		if c, _ := readID(filepath.Join(dir, "class")); !strings.HasPrefix(c, "03") {
			continue
		}
		_, _ = readPCI(realRoot, dir, byAddr)
	}

	addrs := make([]string, 0, len(byAddr))
	for a := range byAddr {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	out := map[vmafxv1.GPUVendor][]Device{}
	for _, a := range addrs {
		p := byAddr[a]
		vendor, ok := vendorByPCI[p.vendor]
		if !ok {
			continue // e.g. a server's BMC display (ASPEED 1a03): no compute
		}
		d := Device{Vendor: vendor, PCIAddress: p.addr, PCIVendor: p.vendor, PCIDevice: p.device, SysfsDir: p.sysfsDir}
		switch vendor {
		case vmafxv1.VendorNVIDIA:
			d.Index = nvidiaMinor(realRoot, p.addr, len(out[vendor]))
			d.Nodes = nvidiaNodes(realRoot, d.Index)
		case vmafxv1.VendorAMD, vmafxv1.VendorIntel:
			if len(p.renders) == 0 {
				continue // no render node: display only, no compute
			}
			slices.Sort(p.renders)
			d.Index = len(out[vendor])
			d.Nodes = []Node{{Path: "/dev/dri/renderD" + strconv.Itoa(p.renders[0])}}
			if vendor == vmafxv1.VendorAMD {
				// ROCm reaches every AMD GPU through the one KFD node.
				d.Nodes = append(d.Nodes, Node{Path: "/dev/kfd"})
			}
		}
		out[vendor] = append(out[vendor], d)
	}
	for v := range out {
		slices.SortStableFunc(out[v], func(a, b Device) int { return a.Index - b.Index })
	}
	return out, nil
}

// readPCI records the PCI device in sysfs directory dir (a real path under realRoot).
func readPCI(realRoot, dir string, byAddr map[string]*pciDevice) (*pciDevice, error) {
	addr := filepath.Base(dir)
	if p, ok := byAddr[addr]; ok {
		return p, nil
	}
	vendor, err := readID(filepath.Join(dir, "vendor"))
	if err != nil {
		return nil, err
	}
	device, _ := readID(filepath.Join(dir, "device"))
	host := "/" + strings.TrimPrefix(strings.TrimPrefix(dir, realRoot), "/")
	p := &pciDevice{addr: addr, vendor: vendor, device: device, sysfsDir: host}
	byAddr[addr] = p
	return p, nil
}

// readID reads a sysfs ID file like vendor ("0x10de\n") as "10de".
func readID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(string(b))), "0x"), nil
}

// nvidiaMinor reads the GPU's minor number (N in /dev/nvidiaN) from the driver's proc
// file; without it, the driver's own rule applies: minors follow PCI address order.
func nvidiaMinor(realRoot, addr string, ordinal int) int {
	b, err := os.ReadFile(filepath.Join(realRoot, "proc/driver/nvidia/gpus", addr, "information"))
	if err != nil {
		return ordinal
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "Device Minor" {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				return n
			}
		}
	}
	return ordinal
}

// nvidiaNodes are what CUDA opens: the GPU, the control device and the unified memory
// device; uvm-tools (profilers only) is handed over when the node has it.
func nvidiaNodes(realRoot string, minor int) []Node {
	nodes := []Node{
		{Path: "/dev/nvidia" + strconv.Itoa(minor)},
		{Path: "/dev/nvidiactl"},
		{Path: "/dev/nvidia-uvm"},
	}
	if _, err := os.Stat(filepath.Join(realRoot, "dev/nvidia-uvm-tools")); err == nil {
		nodes = append(nodes, Node{Path: "/dev/nvidia-uvm-tools", Optional: true})
	}
	return nodes
}

// countCPUs counts the node's online CPUs from sysfs ("0-3,8-11"), falling back to
// the CPUs this process may use.
func countCPUs(root string) int {
	b, err := os.ReadFile(filepath.Join(root, "sys/devices/system/cpu/online"))
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			return runtime.NumCPU()
		}
		n += b - a + 1
	}
	if n == 0 {
		return runtime.NumCPU()
	}
	return n
}
