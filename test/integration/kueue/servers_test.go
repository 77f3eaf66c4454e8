package kueue_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// tail is the last n lines of the file at path.
func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// run starts a server for the test: stopped when the test ends by its PID, with SIGTERM
// and, 30 s later, SIGKILL; its log is shown when the test fails. exited reports whether
// it has ended, and why.
func run(t *testing.T, name string, args []string, env ...string) (exited func() error) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Env = append(os.Environ(), env...)
	logPath := filepath.Join(t.TempDir(), name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		stop()
		<-done
		log.Close()
		if t.Failed() {
			t.Logf("%s log (last lines):\n%s", name, tail(logPath, 40))
		}
	})
	return func() error {
		select {
		case <-done:
			return fmt.Errorf("%s exited: %s", name, tail(logPath, 20))
		default:
			return nil
		}
	}
}

// writeTemp writes data to a file of the test's temporary folder and returns its path.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// adminKubeconfig writes a kubeconfig of a cluster admin for the processes the test runs.
func adminKubeconfig(t *testing.T) string {
	t.Helper()
	user, err := testenv.Environment().ControlPlane.AddUser(envtest.User{Name: "kueue-test-admin", Groups: []string{"system:masters"}}, nil)
	var data []byte
	if err == nil {
		data, err = user.KubeConfig()
	}
	if err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, "kubeconfig", data)
}

// kueueConfig is Kueue's configuration in the test: the plain-Pod integration only, the
// webhooks served where envtest pointed them, with envtest's certificate; one replica;
// no metrics listener, and no on-demand visibility API server (it would listen on every
// interface).
const kueueConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: %s
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: ["pod"]
featureGates:
  VisibilityOnDemand: false
`

// startKueue runs Kueue's manager in a mount namespace of its own (see launchKueue) and
// waits until it is ready.
func startKueue(t *testing.T, kubeconfig string) {
	t.Helper()
	wh := testenv.Environment().WebhookInstallOptions
	health := testutil.FreePort(t)
	cfg := writeTemp(t, "kueue-config.yaml", fmt.Appendf(nil, kueueConfig, health, wh.LocalServingHost, wh.LocalServingPort, wh.LocalServingCertDir))
	exited := run(t, "kueue", []string{"unshare", "--mount", "--propagation", "private", "--", os.Args[0], "--config=" + cfg, "--zap-log-level=2"},
		"KUBECONFIG="+kubeconfig, envLaunch+"=1", envCerts+"="+wh.LocalServingCertDir, envOverlay+"="+t.TempDir())
	hc := &http.Client{Timeout: 2 * time.Second}
	testutil.Eventually(t, 2*time.Minute, "Kueue ready", func(context.Context) error {
		if err := exited(); err != nil {
			return err
		}
		resp, err := hc.Get("http://127.0.0.1:" + strconv.Itoa(health) + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("readyz answers %d", resp.StatusCode)
			}
		}
		return err
	})
}

// startOperator runs the vmafx-operator binary (its settings are
// VMAFX_OPERATOR_* variables, docs/operator.md) with Kueue's queue for every worker Pod
// and fast retries.
func startOperator(t *testing.T, kubeconfig, queue string) {
	t.Helper()
	bin := testutil.Build(t, "./operator/cmd/vmafx-operator")
	run(t, "vmafx-operator", []string{bin}, "KUBECONFIG="+kubeconfig,
		"VMAFX_OPERATOR_METRICS_ADDR=0", "VMAFX_OPERATOR_HEALTH_PROBE_ADDR=127.0.0.1:0",
		"VMAFX_OPERATOR_RETRY_BACKOFF=200ms", "VMAFX_OPERATOR_WORKER_IMAGE=vmafx-worker:test",
		"VMAFX_OPERATOR_TTL_AFTER_FINISHED=never", "VMAFX_OPERATOR_KUEUE_QUEUE_NAME="+queue)
}
