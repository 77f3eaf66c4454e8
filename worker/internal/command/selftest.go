package command

import (
	"errors"
	"path/filepath"
	"strings"

	"k8s.io/klog/v2"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/selftestverdict"
	"github.com/vmafx/vmafx/vmaf/vkkernel/selftest"
	"github.com/vmafx/vmafx/worker/internal/backend"
)

// recordSelfTest writes the Vulkan self-test's verdict for the slot's device where the
// device plugin reads it (VMAFX_SELFTEST_DIR, set by Allocate on GPU slots), so that a
// device that failed is marked Unhealthy and gets no more workers. Nothing is written
// without the variable, for a slot of several devices (which one failed is not known),
// or when no self-test ran (the CPU backend, a device that could not be opened). A
// verdict that cannot be written is logged: the attempt's own outcome stands.
func recordSelfTest(env func(string) string, log klog.Logger, b backend.Backend, err error) {
	dir, device := env(vmafxv1.EnvSelfTestDir), env(vmafxv1.EnvDevice)
	if dir == "" || device == "" || strings.Contains(device, ",") || strings.ContainsAny(device, `/\`) {
		return
	}
	var v selftestverdict.Verdict
	var mm *selftest.MismatchError
	switch {
	case errors.As(err, &mm):
		v = selftestverdict.Verdict{Result: selftestverdict.Fail, Device: mm.Device.Name, Driver: mm.Device.Driver,
			API: "Vulkan " + mm.Device.APIVersion, Message: err.Error()}
	case errors.Is(err, selftest.ErrFailed):
		v = selftestverdict.Verdict{Result: selftestverdict.Fail, Message: err.Error()}
	case err == nil && b != nil && b.Name() == string(vmafxv1.BackendVulkan) && b.Device() != nil:
		d := b.Device()
		v = selftestverdict.Verdict{Result: selftestverdict.Pass, Device: d.Name, Driver: d.Driver, API: d.API}
	default:
		return
	}
	if werr := selftestverdict.Write(filepath.Join(dir, device), v); werr != nil {
		log.Error(werr, "Cannot record the Vulkan self-test verdict for the device plugin", "device", device, "result", v.Result)
	}
}
