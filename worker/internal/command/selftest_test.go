package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/selftestverdict"
	"github.com/vmafx/vmafx/vmaf/vkkernel/selftest"
	"github.com/vmafx/vmafx/vmaf/vkkernel/testing/vkdevice"
	"github.com/vmafx/vmafx/vmaf/vkkernel/testing/wrongsum"
	"github.com/vmafx/vmafx/worker/internal/backend"
)

// TestScoreSelfTestFails: on a GPU slot whose device fails the self-test (here the real
// device, lavapipe in CI, with one wrong VIF sum put between it and the comparison, as a
// miscompiled shader would give) the attempt fails with BackendUnavailable naming the
// device, its driver and the first wrong feature, and the verdict the device plugin
// reads says fail; a device that passes leaves a pass.
func TestScoreSelfTestFails(t *testing.T) {
	k := vkdevice.Open(t)
	info := k.Info()
	wrong := selftest.Check(context.Background(), wrongsum.Offload(k, 2), info)
	k.Close()
	if wrong == nil {
		t.Skip("VIF runs on the CPU on this device: the wrong sum is never used")
	}
	defer func(orig func(string, string) (backend.Backend, string, error)) { selectBackend = orig }(selectBackend)
	selectBackend = func(string, string) (backend.Backend, string, error) {
		return nil, "", fmt.Errorf("%w: backend vulkan is not usable on this node: %w", backend.ErrUnavailable, wrong)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "nvidia-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{vmafxv1.EnvBackend: "cuda", vmafxv1.EnvDevice: "nvidia-0", vmafxv1.EnvSelfTestDir: dir}
	r := runWorker(t, context.Background(), env, rawArgs(refClip, distClip)...)
	if r.code != 5 {
		t.Fatalf("exit %d, want 5 (BackendUnavailable); stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	if got.Error == nil || got.Error.Reason != vmafxv1.ReasonBackendUnavailable {
		t.Fatalf("error = %+v, want BackendUnavailable", got.Error)
	}
	for _, want := range []string{info.Name, info.Driver, "Vulkan " + info.APIVersion, "frame 2 integer_vif_scale1"} {
		if !strings.Contains(got.Error.Message, want) {
			t.Errorf("message %q does not name %q", got.Error.Message, want)
		}
	}
	v, ok, err := selftestverdict.Read(filepath.Join(dir, "nvidia-0"))
	if !ok || err != nil || v.Result != selftestverdict.Fail || v.Device != info.Name || !strings.Contains(v.Message, "integer_vif_scale1") {
		t.Fatalf("verdict %+v, %v, %v: want fail on %s naming the feature", v, ok, err, info.Name)
	}

	selectBackend = backend.SelectBeside
	env[vmafxv1.EnvBackend] = "vulkan"
	if r := runWorker(t, context.Background(), env, rawArgs(refClip, distClip)...); r.code != 0 {
		t.Fatalf("exit %d on a device that passes; stderr:\n%s", r.code, r.stderr)
	}
	if v, ok, err := selftestverdict.Read(filepath.Join(dir, "nvidia-0")); !ok || err != nil || v.Result != selftestverdict.Pass || v.Device != info.Name {
		t.Fatalf("verdict %+v, %v, %v: want pass on %s", v, ok, err, info.Name)
	}
}
