package fakehost

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// PCI vendor IDs as sysfs prints them.
const (
	VendorNVIDIA = "0x10de"
	VendorAMD    = "0x1002"
	VendorIntel  = "0x8086"
	// VendorGone is what a PCI config read returns once a device has fallen off the bus.
	VendorGone = "0xffff"
)

// GPU describes one PCI display device to add to a Host.
type GPU struct {
	// PCI is the device's address, like 0000:01:00.0.
	PCI string
	// Vendor and Device are the PCI IDs, like 0x10de and 0x2684.
	Vendor, Device string
	// NoDRM leaves the device out of /sys/class/drm and /dev/dri, as an NVIDIA GPU
	// without the nvidia-drm module.
	NoDRM bool
	// NVIDIAMinor is N in /dev/nvidiaN; only for NVIDIA devices.
	NVIDIAMinor int
	// NoProcInfo leaves out /proc/driver/nvidia/gpus/<pci>/information.
	NoProcInfo bool
}

// NVIDIA returns the i-th NVIDIA GPU of a node (an RTX 4090, 10de:2684) on bus i+1.
func NVIDIA(i int) GPU {
	return GPU{PCI: fmt.Sprintf("0000:%02x:00.0", 1+i), Vendor: VendorNVIDIA, Device: "0x2684", NVIDIAMinor: i}
}

// AMD returns the i-th AMD GPU of a node (an RX 7900 XTX, 1002:744c) on bus 0x21+i.
func AMD(i int) GPU {
	return GPU{PCI: fmt.Sprintf("0000:%02x:00.0", 0x21+i), Vendor: VendorAMD, Device: "0x744c"}
}

// Intel returns the i-th Intel GPU of a node (an Arc A770, 8086:56a0) on bus 0x41+i.
func Intel(i int) GPU {
	return GPU{PCI: fmt.Sprintf("0000:%02x:00.0", 0x41+i), Vendor: VendorIntel, Device: "0x56a0"}
}

// Host is a fake host tree under Root.
type Host struct {
	// Root is the directory standing for the host's /.
	Root string

	t        testing.TB
	nextCard int
}

// New returns an empty host tree in a fresh temporary directory with cpus CPUs online.
func New(t testing.TB, cpus int) *Host {
	t.Helper()
	h := &Host{Root: t.TempDir(), t: t}
	h.mkdir("/dev")
	h.mkdir("/sys/class/drm")
	h.mkdir("/sys/bus/pci/devices")
	h.SetCPUs(cpus)
	return h
}

// Path returns the path of host path p inside the tree.
func (h *Host) Path(p string) string { return filepath.Join(h.Root, p) }

// SetCPUs writes /sys/devices/system/cpu/online for n CPUs.
func (h *Host) SetCPUs(n int) {
	h.t.Helper()
	h.write("/sys/devices/system/cpu/online", fmt.Sprintf("0-%d\n", n-1))
}

// Added tells what AddGPU created.
type Added struct {
	// Card and Render are the DRM numbers: /dev/dri/card<Card>, /dev/dri/renderD<Render>.
	Card, Render int
	// SysfsDir is the device's directory under /sys/devices.
	SysfsDir string
}

// AddGPU adds a device: its sysfs entries, its DRM nodes (cards and render nodes are
// numbered in the order devices are added) and the vendor's device nodes.
func (h *Host) AddGPU(g GPU) Added {
	h.t.Helper()
	dir := "/sys/devices/pci0000:00/" + g.PCI
	h.write(dir+"/vendor", g.Vendor+"\n")
	h.write(dir+"/device", g.Device+"\n")
	h.write(dir+"/class", "0x030000\n")
	h.symlink("/sys/bus/pci/devices/"+g.PCI, "../../../devices/pci0000:00/"+g.PCI)
	a := Added{Card: -1, Render: -1, SysfsDir: dir}
	if !g.NoDRM {
		a.Card, a.Render = h.nextCard, 128+h.nextCard
		h.nextCard++
		for _, name := range []string{fmt.Sprintf("card%d", a.Card), fmt.Sprintf("renderD%d", a.Render)} {
			h.mkdir(dir + "/drm/" + name)
			h.symlink(dir+"/drm/"+name+"/device", "../..")
			h.symlink("/sys/class/drm/"+name, "../../devices/pci0000:00/"+g.PCI+"/drm/"+name)
			h.Create("/dev/dri/" + name)
		}
	}
	switch g.Vendor {
	case VendorNVIDIA:
		h.Create(fmt.Sprintf("/dev/nvidia%d", g.NVIDIAMinor))
		for _, n := range []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"} {
			h.Create(n)
		}
		if !g.NoProcInfo {
			h.write("/proc/driver/nvidia/gpus/"+g.PCI+"/information",
				fmt.Sprintf("Model: \t\t NVIDIA GeForce RTX 4090\nIRQ:   \t\t 180\nGPU UUID: \t GPU-0000\nDevice Minor: \t %d\nBus Location: \t %s\n", g.NVIDIAMinor, g.PCI))
		}
	case VendorAMD:
		h.Create("/dev/kfd")
	}
	return a
}

// Create creates the (empty) file standing for device node p, like /dev/nvidia0.
func (h *Host) Create(p string) {
	h.t.Helper()
	h.write(p, "")
}

// Remove deletes host path p (a device node, or a sysfs directory with everything in it).
func (h *Host) Remove(p string) {
	h.t.Helper()
	if err := os.RemoveAll(h.Path(p)); err != nil {
		h.t.Fatal(err)
	}
}

// SetVendor rewrites the PCI vendor of the device at pci, e.g. to VendorGone.
func (h *Host) SetVendor(pci, vendor string) {
	h.t.Helper()
	h.write("/sys/devices/pci0000:00/"+pci+"/vendor", vendor+"\n")
}

func (h *Host) mkdir(p string) {
	h.t.Helper()
	if err := os.MkdirAll(h.Path(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
}

func (h *Host) write(p, content string) {
	h.t.Helper()
	h.mkdir(filepath.Dir(p))
	if err := os.WriteFile(h.Path(p), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *Host) symlink(p, target string) {
	h.t.Helper()
	h.mkdir(filepath.Dir(p))
	if err := os.Symlink(target, h.Path(p)); err != nil && !os.IsExist(err) {
		h.t.Fatal(err)
	}
}
