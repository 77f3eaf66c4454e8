package deviceplugin_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"context"
	"k8s.io/apimachinery/pkg/util/wait"
)

// plugin is a running vmafx-device-plugin process.
type plugin struct {
	t    *testing.T
	cmd  *exec.Cmd
	http string
	done chan struct{}
	err  error
	log  *lockedBuffer
}

// lockedBuffer collects the plugin's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPlugin runs the binary on the fake host root with the given extra flags;
// without a heartbeat unless the flags ask for one. When the test ends it sends
// SIGTERM and checks a clean exit that removes the plugin's socket.
func startPlugin(t *testing.T, hostRoot string, flags ...string) *plugin {
	t.Helper()
	p := &plugin{t: t, http: freeAddress(t), done: make(chan struct{}), log: &lockedBuffer{}}
	args := append([]string{
		"--host-root=" + hostRoot,
		"--device-plugin-dir=" + pluginDir,
		"--pod-resources-socket=",
		"--heartbeat-interval=0",
		"--http-address=" + p.http,
		"--recovery-delay=1s",
		"--self-test-dir=" + t.TempDir(), // never the host's /run
		"-v=2",
	}, flags...)
	p.cmd = exec.Command(pluginBinary, args...)
	// A clean environment: nothing of the test's (KUBECONFIG, NODE_NAME...) leaks in.
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting the plugin: %v", err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("plugin log:\n%s", p.log.String())
		}
	})
	return p
}

// stop sends SIGTERM and expects exit status 0 and no socket left behind.
func (p *plugin) stop() {
	p.t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.t.Error("plugin did not exit within 15 s of SIGTERM")
		return
	}
	if p.err != nil {
		p.t.Errorf("plugin exit after SIGTERM: %v", p.err)
	}
	if left, _ := filepath.Glob(filepath.Join(pluginDir, "vmafx-slot-*")); len(left) != 0 {
		p.t.Errorf("plugin left sockets behind: %v", left)
	}
}

// get fetches a path of the plugin's HTTP server.
func (p *plugin) get(path string) (int, string, error) {
	resp, err := http.Get("http://" + p.http + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// metric returns the value of a sample of the plugin's metrics, like
// `vmafx_device_plugin_registrations_total{result="success"}`, or -1 if absent.
func (p *plugin) metric(sample string) float64 {
	_, body, err := p.get("/metrics")
	if err != nil {
		return -1
	}
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// waitMetric waits until a sample reaches at least min.
func (p *plugin) waitMetric(sample string, min float64) {
	p.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return p.metric(sample) >= min, nil
	})
	if err != nil {
		p.t.Fatalf("%s = %v, want at least %v", sample, p.metric(sample), min)
	}
}

// waitReady waits for the readiness probe's answer.
func (p *plugin) waitReady(want int) {
	p.t.Helper()
	var got int
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		got, _, _ = p.get("/readyz")
		return got == want, nil
	})
	if err != nil {
		p.t.Fatalf("/readyz = %d, want %d", got, want)
	}
}

func (p *plugin) String() string { return fmt.Sprintf("plugin pid %d", p.cmd.Process.Pid) }
