package scheduler

import (
	"context"
	"crypto/tls"
	"fmt"
	"github.com/vmafx/vmafx/internal/testutil"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// replica is one vmafx-scheduler process.
type replica struct {
	cmd  *exec.Cmd
	port int
	done chan error
}

func startReplica(t *testing.T, bin, cfgPath, kubeconfig string) *replica {
	t.Helper()
	r := &replica{port: testutil.FreePort(t), done: make(chan error, 1)}
	r.cmd = exec.Command(bin,
		"--config="+cfgPath,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", r.port),
		"--cert-dir="+t.TempDir(),
		// Delegated authentication and authorization of the HTTPS endpoint, as in a cluster
		// (where the in-cluster config serves instead of these files).
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--v=2",
	)
	logFile, err := os.Create(filepath.Join(t.TempDir(), "vmafx-scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Kill()
			if err := <-r.done; err != nil {
				t.Logf("vmafx-scheduler exited: %v", err)
			}
		}
		if t.Failed() {
			_, _ = logFile.Seek(0, io.SeekStart)
			out, _ := io.ReadAll(logFile)
			t.Logf("vmafx-scheduler (port %d) log:\n%s", r.port, tail(string(out), 60))
		}
		logFile.Close()
	})
	return r
}

func tail(s string, lines int) string {
	all := strings.Split(s, "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// stop sends SIGTERM, as the kubelet does, and waits for a clean exit.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("vmafx-scheduler exited with %v after SIGTERM, want status 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("vmafx-scheduler did not exit within 30 s of SIGTERM")
	}
}

// get fetches a path of the replica's HTTPS endpoint, authenticating with the test API
// server's admin client certificate when it has one.
func (r *replica) get(ctx context.Context, path string) (int, string, error) {
	cfg := testenv.Config()
	tlsCfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the endpoint's self-signed serving cert
	if len(cfg.CertData) > 0 {
		cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
		if err != nil {
			return 0, "", err
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 5 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", r.port, path), nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

func (cl *cluster) leaseHolder() string {
	var lease coordinationv1.Lease
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: vmafxv1.SystemNamespace, Name: "vmafx-scheduler"}, &lease); err != nil {
		return ""
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// TestBinary runs the vmafx-scheduler command itself, twice over, as the Deployment would:
// the shipped config with leader election, the shipped RBAC, HTTPS health and metrics
// endpoints. One replica leads and places Pods; the other waits; on SIGTERM the leader
// exits cleanly and releases the lease, and the other takes over and places Pods.
func TestBinary(t *testing.T) {
	bin := testutil.Build(t, "./scheduler-plugin/cmd/vmafx-scheduler")
	cl := newCluster(t)
	n := cl.node("n", 8)
	cl.vmafxNode(n, vmafxv1.VendorNVIDIA, time.Now())

	cfg := schedulerConfig(t)
	kubeconfig := cfg["clientConnection"].(map[string]any)["kubeconfig"].(string)
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}

	first := startReplica(t, bin, cfgPath, kubeconfig)
	var holder string
	if err := wait.PollUntilContextTimeout(cl.ctx, 100*time.Millisecond, scheduleTimeout, true, func(context.Context) (bool, error) {
		holder = cl.leaseHolder()
		return holder != "", nil
	}); err != nil {
		t.Fatalf("no replica took the lease %s/vmafx-scheduler", vmafxv1.SystemNamespace)
	}
	cl.workerPod("first", "cuda", nil)
	cl.waitScheduled("first", scheduleTimeout)

	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		if code, body, err := first.get(cl.ctx, path); err != nil || code != http.StatusOK {
			t.Errorf("GET %s: %d %q %v, want 200", path, code, body, err)
		}
	}
	// Delegated authorization asks the API server, which may not yet have seen the RBAC
	// bindings created moments ago, and a denial is cached for 10 s (kube-scheduler's
	// --authorization-webhook-cache-unauthorized-ttl): poll as a scraper would retry.
	var code int
	var body string
	_ = testutil.Wait(cl.ctx, 30*time.Second, func(ctx context.Context) error {
		code, body, err = first.get(ctx, "/metrics")
		if err == nil && code != http.StatusOK {
			return fmt.Errorf("status %d", code)
		}
		return err
	})
	switch {
	case err != nil || code != http.StatusOK:
		t.Errorf("GET /metrics as the cluster admin: %d %v, want 200 (delegated authn/authz under the shipped RBAC)", code, err)
	case !strings.Contains(body, `scheduler_schedule_attempts_total{profile="vmafx-scheduler",result="scheduled"}`):
		t.Errorf("/metrics does not count the vmafx-scheduler profile's scheduled pods")
	}

	second := startReplica(t, bin, cfgPath, kubeconfig)
	// More than a retry period (2 s): the standby must not take over while the leader runs.
	testutil.Consistently(t, 3*time.Second, "the leader keeps the lease", func(context.Context) error {
		if got := cl.leaseHolder(); got != holder {
			return fmt.Errorf("lease holder changed from %q to %q while the leader ran", holder, got)
		}
		return nil
	})
	first.stop(t)
	if err := wait.PollUntilContextTimeout(cl.ctx, 100*time.Millisecond, scheduleTimeout, true, func(context.Context) (bool, error) {
		got := cl.leaseHolder()
		return got != "" && got != holder, nil
	}); err != nil {
		t.Fatalf("the standby did not take the lease after the leader stopped (holder %q)", cl.leaseHolder())
	}
	cl.workerPod("second", "cuda", nil)
	cl.waitScheduled("second", scheduleTimeout)
	second.stop(t)
}
