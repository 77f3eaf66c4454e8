package scale

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
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

	"github.com/vmafx/vmafx/internal/testutil"
)

// process is a component started by the benchmark, known by its PID.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	// exited is closed when the process has ended, with its Wait error in waitErr.
	exited  chan struct{}
	waitErr error
}

// startProcess runs bin with args and env (added to the test's environment), its output in
// a log file, until stop or the end of the test.
func startProcess(tb testing.TB, name, bin string, args, env []string) *process {
	tb.Helper()
	logPath := filepath.Join(tb.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.exited)
	}()
	tb.Cleanup(func() { p.stop(tb) })
	return p
}

// stop sends SIGTERM and waits; a process still running after 30 s is killed. Both by
// the PID this test started.
func (p *process) stop(tb testing.TB) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		tb.Errorf("%s did not stop within 30 s of SIGTERM; killing it", p.name)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// tail is the end of the process's log, for a failure message.
func (p *process) tail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every Linux
// architecture Go builds for.
const clockTicks = 100

// cpu is the CPU time, user and system, the process has used so far.
func (p *process) cpu() (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: the fields after it start at ") ".
	rest := string(data[bytes.LastIndexByte(data, ')')+2:])
	f := strings.Fields(rest)
	// utime and stime are fields 14 and 15 of the whole line, 12 and 13 after ") ".
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat line")
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	sys, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(user+sys) * time.Second / clockTicks, nil
}

// memory returns the process's resident memory now and at its peak (VmRSS, VmHWM), in bytes.
func (p *process) memory() (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, sc.Err()
}

// waitReady polls url (http or https, the latter without verifying the self-signed
// certificate of a component on 127.0.0.1) until it answers 200.
func (p *process) waitReady(tb testing.TB, url string, timeout time.Duration) {
	tb.Helper()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a local test server's self-signed certificate
	}}
	err := testutil.Wait(context.Background(), timeout, func(ctx context.Context) error {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited: %w", p.name, p.waitErr)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("%s not ready: %v\n%s", p.name, err, p.tail())
	}
}

// loadAverage is the machine's 1-minute load average.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	v, err := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// controlPlane returns the API server and etcd processes this test process started
// (testenv's children), to read their CPU time like the components'.
func controlPlane() []*process {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []*process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
		if open < 0 || end < open {
			continue
		}
		name := string(data[open+1 : end])
		f := strings.Fields(string(data[end+2:]))
		if len(f) < 2 || f[1] != strconv.Itoa(self) || (name != "kube-apiserver" && name != "etcd") {
			continue
		}
		out = append(out, &process{name: name, cmd: &exec.Cmd{Process: &os.Process{Pid: pid}}})
	}
	return out
}
