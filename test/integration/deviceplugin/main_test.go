// Package deviceplugin_test runs the vmafx-device-plugin binary against the kubelet's
// own device manager (k8s.io/kubernetes/pkg/kubelet/cm/devicemanager), in-process, and
// its heartbeat against a real kube-apiserver (test/integration/testenv).
//
// The device manager always serves /var/lib/kubelet/device-plugins/kubelet.sock, where
// a real kubelet on this machine (the end-to-end cluster) may be serving too. So
// TestMain re-executes the test binary in a mount namespace of its own (unshare
// --mount, private propagation) with a tmpfs over that directory: the tests and the
// plugin processes they start see an empty, private directory, and the host's is
// never touched. This needs root and unshare(1); without them the package skips
// (fails under VMAFX_REQUIRE_INTEGRATION).
package deviceplugin_test

import (
	"errors"
	"fmt"
	"github.com/vmafx/vmafx/internal/testutil"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

const (
	// pluginDir is the kubelet's fixed device plugin directory.
	pluginDir = "/var/lib/kubelet/device-plugins"
	// envInNamespace marks the re-executed test binary.
	envInNamespace = "VMAFX_DEVICEPLUGIN_TEST_MOUNTNS"
	envRequire     = "VMAFX_REQUIRE_INTEGRATION"
	envAssets      = "KUBEBUILDER_ASSETS"
)

// pluginBinary is the vmafx-device-plugin built for this run.
var pluginBinary string

func TestMain(m *testing.M) {
	if os.Getenv(envInNamespace) == "" {
		os.Exit(reexec())
	}
	// In the private mount namespace now: the tmpfs hides the host's directory.
	if err := syscall.Mount("tmpfs", pluginDir, "tmpfs", 0, "mode=0750,size=16m"); err != nil {
		fmt.Fprintf(os.Stderr, "deviceplugin: mounting a tmpfs over %s: %v\n", pluginDir, err)
		os.Exit(1)
	}
	bin, cleanup, err := buildPlugin()
	if err != nil {
		fmt.Fprintf(os.Stderr, "deviceplugin: building vmafx-device-plugin: %v\n", err)
		os.Exit(1)
	}
	pluginBinary = bin
	if os.Getenv(envAssets) == "" && os.Getenv(envRequire) == "" {
		// The kubelet tests need no apiserver: run them, and let the heartbeat
		// tests skip.
		fmt.Fprintf(os.Stderr, "deviceplugin: %s is not set, the heartbeat tests skip\n", envAssets)
		code := m.Run()
		cleanup()
		os.Exit(code)
	}
	defer cleanup()
	testenv.Run(m)
}

// reexec runs this test binary again under unshare --mount and returns its exit code.
func reexec() int {
	skip := func(why string) int {
		if os.Getenv(envRequire) != "" {
			fmt.Fprintf(os.Stderr, "deviceplugin: %s\n", why)
			return 1
		}
		fmt.Fprintf(os.Stderr, "deviceplugin: SKIP: %s\n", why)
		return 0
	}
	if os.Geteuid() != 0 {
		return skip("the kubelet device manager tests need root for a private mount namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return skip("unshare(1) not found")
	}
	// The mount point must exist on the host; it is created if missing and left.
	if err := os.MkdirAll(pluginDir, 0o750); err != nil {
		return skip(fmt.Sprintf("creating %s: %v", pluginDir, err))
	}
	cmd := exec.Command(unshare, append([]string{"--mount", "--propagation", "private", "--", os.Args[0]}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), envInNamespace+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "deviceplugin: running the tests in a mount namespace: %v\n", err)
		return 1
	}
	return 0
}

// buildPlugin builds the binary the tests run into a temporary folder.
func buildPlugin() (string, func(), error) {
	dir, err := os.MkdirTemp("", "vmafx-device-plugin-test")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	bin, err := testutil.BuildBinary(dir, "./device-plugin/cmd/vmafx-device-plugin")
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return bin, cleanup, nil
}
