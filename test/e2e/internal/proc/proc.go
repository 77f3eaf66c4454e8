package proc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Record identifies one started process. The start time tells the process apart from a
// later one that happens to get the same PID.
type Record struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	// StartTime is field 22 of /proc/<pid>/stat: clock ticks after boot.
	StartTime uint64   `json:"startTime"`
	Args      []string `json:"args"`
	Log       string   `json:"log"`
}

// Spec describes a daemon to start.
type Spec struct {
	Name string
	Path string
	Args []string
	// Env is the whole environment of the process; nil inherits ours.
	Env []string
	// Dir is the working directory; empty means ours.
	Dir string
	// Log receives the process's stdout and stderr, appended.
	Log string
}

// Start runs spec in a session of its own, so that it outlives the command that started
// it and no terminal signal reaches it, and writes its record to dir/<name>.json.
func Start(dir string, spec Spec) (Record, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Record{}, err
	}
	if err := os.MkdirAll(filepath.Dir(spec.Log), 0o755); err != nil {
		return Record{}, err
	}
	logFile, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Record{}, err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "\n==> %s %s: %s %s\n", time.Now().Format(time.RFC3339), spec.Name, spec.Path, strings.Join(spec.Args, " "))

	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return Record{}, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	pid := cmd.Process.Pid
	// The child is reaped by whoever adopts it once this command exits.
	_ = cmd.Process.Release()
	st, err := readStat(pid)
	if err != nil {
		return Record{}, fmt.Errorf("%s exited at once (see %s): %w", spec.Name, spec.Log, err)
	}
	rec := Record{Name: spec.Name, PID: pid, StartTime: st.startTime, Args: append([]string{spec.Path}, spec.Args...), Log: spec.Log}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return Record{}, err
	}
	if err := os.WriteFile(recordPath(dir, spec.Name), append(data, '\n'), 0o644); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// Load reads the record of name from dir. found is false when there is none.
func Load(dir, name string) (rec Record, found bool, err error) {
	data, err := os.ReadFile(recordPath(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return Record{}, false, fmt.Errorf("%s: %w", recordPath(dir, name), err)
	}
	return rec, true, nil
}

// Forget removes the record of name from dir.
func Forget(dir, name string) error {
	err := os.Remove(recordPath(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func recordPath(dir, name string) string { return filepath.Join(dir, name+".json") }

// Alive reports whether the recorded process still runs: its PID exists, is not a zombie
// and started when the record says.
func (r Record) Alive() bool {
	st, err := readStat(r.PID)
	return err == nil && st.startTime == r.StartTime && st.state != 'Z' && st.state != 'X'
}

// Stop sends SIGTERM to the recorded process, waits up to grace for it to exit, then
// sends SIGKILL. A process that is gone (or whose PID now belongs to another process) is
// left alone.
func Stop(ctx context.Context, r Record, grace time.Duration) error {
	if !r.Alive() {
		return nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s (pid %d): %w", r.Name, r.PID, err)
	}
	if waitGone(ctx, r, grace) {
		return nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", r.Name, r.PID, err)
	}
	// SIGKILL cannot be ignored; 10 s covers a process stuck in uninterruptible I/O.
	if !waitGone(ctx, r, 10*time.Second) {
		return fmt.Errorf("%s (pid %d) still runs after SIGKILL", r.Name, r.PID)
	}
	return nil
}

func waitGone(ctx context.Context, r Record, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !r.Alive() {
			return true
		}
		select {
		case <-ctx.Done():
			return !r.Alive()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return !r.Alive()
}

// Find returns a record for every running process whose command line satisfies match,
// except this process and its ancestors.
// It finds the processes that a daemon started and that outlive it (containerd's shims,
// re-parented to PID 1): match names them by something only ours have, such as the path
// of our containerd socket, never by program name alone.
func Find(match func(args []string) bool) ([]Record, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	skip := ancestors()
	var out []Record
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if !match(args) {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.state == 'Z' {
			continue
		}
		out = append(out, Record{Name: filepath.Base(args[0]), PID: pid, StartTime: st.startTime, Args: args})
	}
	return out, nil
}

// ancestors returns this process and its ancestors: the make recipe's shell that runs the
// harness names the state folder in its command line too, but is not the cluster's.
func ancestors() map[int]bool {
	out := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !out[pid]; {
		out[pid] = true
		st, err := readStat(pid)
		if err != nil {
			break
		}
		pid = st.ppid
	}
	return out
}

// ByPID returns the record of a running process, for PIDs learnt from the kernel (a
// cgroup's member list) rather than from Start.
func ByPID(pid int) (Record, error) {
	st, err := readStat(pid)
	if err != nil {
		return Record{}, err
	}
	raw, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	return Record{Name: filepath.Base(args[0]), PID: pid, StartTime: st.startTime, Args: args}, nil
}

type stat struct {
	state     byte
	ppid      int
	startTime uint64
}

// readStat parses /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses, so the fields are counted after its last ')'.
func readStat(pid int) (stat, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return stat{}, err
	}
	return parseStat(raw)
}

func parseStat(raw []byte) (stat, error) {
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("malformed stat %q", raw)
	}
	// After ')': field 3 (state) is the first, so field 22 (starttime) is the 20th.
	fields := strings.Fields(string(raw[i+1:]))
	if len(fields) < 20 || len(fields[0]) != 1 {
		return stat{}, fmt.Errorf("malformed stat %q", raw)
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return stat{}, fmt.Errorf("malformed parent PID in stat %q: %w", raw, err)
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("malformed start time in stat %q: %w", raw, err)
	}
	return stat{state: fields[0][0], ppid: ppid, startTime: start}, nil
}
