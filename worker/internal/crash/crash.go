package crash

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
)

// envFD names, in the child's environment, the descriptor of the pipe that
// carries its crash report.
const envFD = "VMAFX_WORKER_CRASH_FD"

// childFD is the pipe's descriptor in the child: the first of ExtraFiles.
const childFD = "3"

// maxReport bounds what is kept of a crash report; the first line is at its
// start and the rest (every goroutine's stack) can be megabytes.
const maxReport = 64 << 10

// Supervised reports whether this process is a child started by Supervise.
func Supervised() bool { return os.Getenv(envFD) != "" }

// Watch, in a child started by Supervise, sends the runtime's crash report
// to the parent. Elsewhere it does nothing.
func Watch() error {
	if os.Getenv(envFD) != childFD {
		return nil
	}
	os.Unsetenv(envFD)
	f := os.NewFile(3, "crash-report")
	defer f.Close() // SetCrashOutput keeps its own duplicate
	return debug.SetCrashOutput(f, debug.CrashOptions{})
}

// Supervise runs exe with args and env as a child with this process's
// standard streams, forwarding SIGTERM and SIGINT to it, and returns its
// exit code (128 + the signal number when a signal killed it). report is the
// first line of the child's crash report, or "" when it did not crash.
func Supervise(exe string, args, env []string) (code int, report string, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, "", err
	}
	defer r.Close()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(env, envFD+"="+childFD)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w}
	// The child must not outlive a parent killed without a chance to forward.
	// Linux sends Pdeathsig when the forking thread ends, so hold the thread.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		w.Close()
		return 0, "", err
	}
	w.Close()

	// Read the pipe while the child runs: a crash report larger than the pipe
	// buffer would block the dying child otherwise.
	reportc := make(chan []byte, 1)
	go func() {
		var buf bytes.Buffer
		_, _ = io.Copy(&buf, io.LimitReader(r, maxReport)) // what arrived before an error is the report
		_, _ = io.Copy(io.Discard, r)
		reportc <- buf.Bytes()
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
wait:
	for {
		select {
		case s := <-sigs:
			cmd.Process.Signal(s)
		case waitErr = <-done:
			break wait
		}
	}
	report = firstLine(<-reportc)
	var exit *exec.ExitError
	switch {
	case waitErr == nil:
		return 0, report, nil
	case errors.As(waitErr, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), report, nil
		}
		return exit.ExitCode(), report, nil
	}
	return 0, report, waitErr
}

// firstLine returns the first non-empty line of a crash report, e.g.
// "panic: runtime error: index out of range [3] with length 3".
func firstLine(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxReport)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			return l
		}
	}
	return ""
}
