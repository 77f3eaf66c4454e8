// Package kueue_test runs the operator's worker Pods through a real Kueue: Kueue's own
// manager (sigs.k8s.io/kueue/cmd/kueue v0.16.2, built in hack/tools/kueue by `make kueue`)
// with its plain-Pod integration, against a real kube-apiserver and etcd
// (test/integration/testenv) that carries Kueue's CRDs and calls Kueue's admission
// webhooks (from the same module's manifests) on 127.0.0.1, and the vmafx-operator binary.
// No kubelet or scheduler runs: the test binds and finishes the Pods Kueue admits.
//
// Kueue's manager reads a metrics certificate from the fixed path
// /etc/kueue/metrics/certs, where its Pod mounts a Secret. The test gives it one the same
// way without touching the host: the test binary re-executes itself under unshare
// --mount (a private mount namespace, as test/integration/deviceplugin does), lays an
// overlay over /etc that adds /etc/kueue/metrics/certs, and execs Kueue there. This needs
// root and unshare(1).
//
// VMAFX_KUEUE names the Kueue binary. Without it the package skips, and fails only under
// VMAFX_REQUIRE_KUEUE: building Kueue takes about 10 minutes on 2 cores, so `make test`
// runs this package when Kueue is already built and `make test-kueue` builds it first
// (.ci/run's nightly tier). Without root, unshare or KUBEBUILDER_ASSETS it skips, and
// fails under VMAFX_REQUIRE_INTEGRATION.
package kueue_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

const (
	envKueue   = "VMAFX_KUEUE"
	envRequire = "VMAFX_REQUIRE_INTEGRATION"
	// envRequireKueue makes a missing VMAFX_KUEUE a failure.
	envRequireKueue = "VMAFX_REQUIRE_KUEUE"
	// envLaunch marks the test binary re-executed to start Kueue in its mount namespace;
	// envCerts and envOverlay are the certificate folder and a scratch folder for it.
	envLaunch  = "VMAFX_KUEUE_TEST_LAUNCH"
	envCerts   = "VMAFX_KUEUE_TEST_CERTS"
	envOverlay = "VMAFX_KUEUE_TEST_OVERLAY"
)

// kueueBinary is Kueue's manager; kueueSources the folder of its module sources, with
// its CRDs and webhook manifests.
var kueueBinary, kueueSources string

func TestMain(m *testing.M) {
	if os.Getenv(envLaunch) != "" {
		os.Exit(launchKueue(os.Args[1:]))
	}
	if os.Getenv(envKueue) == "" {
		os.Exit(skipOrFail(envKueue+" is not set (make kueue builds Kueue and prints it; make test-kueue runs this package)", envRequireKueue))
	}
	if why := missing(); why != "" {
		os.Exit(skipOrFail(why, envRequire))
	}
	testenv.RunWith(m, func(env *envtest.Environment) {
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, filepath.Join(kueueSources, "config/components/crd/bases"))
		// envtest points the webhooks at its own serving address and CA (127.0.0.1 and a
		// free port), which Kueue then serves with the certificate envtest made.
		env.WebhookInstallOptions.Paths = []string{filepath.Join(kueueSources, "config/components/webhook/manifests.yaml")}
	})
}

// skipOrFail reports why the package cannot run: a skip, or a failure when the
// environment variable require is set.
func skipOrFail(why, require string) int {
	code, verdict := 0, "SKIP"
	if os.Getenv(require) != "" {
		code, verdict = 1, "FAIL"
	}
	fmt.Fprintf(os.Stderr, "kueue: %s: %s\n", verdict, why)
	return code
}

// missing says what the package lacks to run, or "".
func missing() string {
	kueueBinary = os.Getenv(envKueue)
	if os.Geteuid() != 0 {
		return "Kueue's metrics certificate is mounted in a private mount namespace, which needs root"
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return "unshare(1) not found"
	}
	var err error
	if kueueSources, err = kueueModule(); err != nil {
		return fmt.Sprintf("finding Kueue's module sources: %v", err)
	}
	return ""
}

// kueueModule is the folder of the Kueue module sources hack/tools/kueue builds from,
// which hold its CRDs and webhook manifests.
func kueueModule() (string, error) {
	goCmd, err := testutil.GoCommand()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(goCmd, "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue")
	cmd.Dir = filepath.Join(testutil.RepoRoot(), "hack/tools/kueue")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m sigs.k8s.io/kueue in %s: %w", cmd.Dir, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("sigs.k8s.io/kueue is not downloaded (make kueue)")
	}
	return dir, nil
}
