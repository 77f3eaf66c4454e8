package agent

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/klog/v2/ktesting"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
)

func TestPrepareSelfTestDirs(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	devs := []discovery.Device{{Vendor: vmafxv1.VendorNVIDIA, Index: 0}, {Vendor: vmafxv1.VendorNVIDIA, Index: 1}}
	dir := filepath.Join(t.TempDir(), "run", "vmafx", "selftest")
	if got := prepareSelfTestDirs(logger, dir, devs); got != dir {
		t.Fatalf("prepareSelfTestDirs = %q, want %q", got, dir)
	}
	for _, d := range devs {
		fi, err := os.Stat(filepath.Join(dir, d.Name()))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o777 {
			t.Errorf("%s: %v, %v: want a directory writable by every user", d.Name(), fi, err)
		}
	}
	if got := prepareSelfTestDirs(logger, "", devs); got != "" {
		t.Errorf("off: %q, want empty", got)
	}
	// A directory that cannot be made (a file in the way): off, not a dangling mount.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := prepareSelfTestDirs(logger, filepath.Join(file, "selftest"), devs); got != "" {
		t.Errorf("unpreparable: %q, want empty", got)
	}
	if got := prepareSelfTestDirs(logger, filepath.Join(file, "selftest"), []discovery.Device{{Vendor: vmafxv1.VendorCPU}}); got == "" {
		t.Errorf("a CPU node needs no directory: want the directory returned")
	}
}
