package agent

import (
	"os"
	"path/filepath"

	"k8s.io/klog/v2"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
)

// prepareSelfTestDirs makes each GPU's self-test verdict directory under dir, writable
// by the workers whatever user they run as, and returns dir; or "" (no verdicts, no
// mounts) when dir is empty or cannot be prepared: Allocate must never name a host
// directory that is not there, which would fail the worker's container.
func prepareSelfTestDirs(logger klog.Logger, dir string, devs []discovery.Device) string {
	if dir == "" {
		return ""
	}
	for _, d := range devs {
		if d.Vendor == vmafxv1.VendorCPU {
			continue
		}
		p := filepath.Join(dir, d.Name())
		err := os.MkdirAll(p, 0o755)
		if err == nil {
			// Workers run as a user of their image's choosing; the directory is the
			// device's alone, mounted only into the workers on its slots.
			err = os.Chmod(p, 0o777)
		}
		if err != nil {
			logger.Error(err, "Cannot prepare the Vulkan self-test verdict directory; workers' self-test failures will not mark devices unhealthy", "dir", p)
			return ""
		}
	}
	return dir
}
