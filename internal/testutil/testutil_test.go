package testutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	calls := 0
	err := Wait(context.Background(), 5*time.Second, func(context.Context) error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Wait = %v after %d calls, want nil after 3", err, calls)
	}
	start := time.Now()
	err = Wait(context.Background(), 300*time.Millisecond, func(context.Context) error { return errors.New("never") })
	if err == nil || !strings.Contains(err.Error(), "never") {
		t.Fatalf("Wait = %v, want the last error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a 300 ms wait took %s", took)
	}
}

func TestConsistently(t *testing.T) {
	calls := 0
	Consistently(t, 100*time.Millisecond, "holds", func(context.Context) error { calls++; return nil })
	if calls < 2 {
		t.Errorf("Consistently checked %d times in 100 ms; want at least 2", calls)
	}
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		n := 0
		Consistently(ft, 5*time.Second, "breaks", func(context.Context) error {
			if n++; n == 3 {
				return errors.New("broke")
			}
			return nil
		})
	}()
	<-done
	if !strings.Contains(ft.msg, "breaks: broke") {
		t.Errorf("Consistently reported %q; want the breaking check's error", ft.msg)
	}
}

func TestCondition(t *testing.T) {
	if err := Condition("x", func() (bool, error) { return true, nil })(context.Background()); err != nil {
		t.Errorf("a holding condition gave %v", err)
	}
	if err := Condition("x", func() (bool, error) { return false, nil })(context.Background()); err == nil || !strings.Contains(err.Error(), "x: not yet") {
		t.Errorf("a failing condition gave %v", err)
	}
	cause := errors.New("api down")
	if err := Condition("x", func() (bool, error) { return false, cause })(context.Background()); !errors.Is(err, cause) {
		t.Errorf("a condition's error was not kept: %v", err)
	}
}

// fatalRecorder records Fatalf and ends the goroutine, as testing.T does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestFreePortListens(t *testing.T) {
	port := FreePort(t)
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d from FreePort is not free: %v", port, err)
	}
	ln.Close()
}

func TestCredentialsDir(t *testing.T) {
	dir := CredentialsDir(t, map[string]string{"accessKeyID": "id"})
	data, err := os.ReadFile(filepath.Join(dir, "accessKeyID"))
	if err != nil || string(data) != "id" {
		t.Fatalf("read %q, %v", data, err)
	}
}

func TestRepoRoot(t *testing.T) {
	if _, err := os.Stat(filepath.Join(RepoRoot(), "go.mod")); err != nil {
		t.Fatalf("RepoRoot %s has no go.mod: %v", RepoRoot(), err)
	}
}

func TestParallel(t *testing.T) {
	const n = 1000
	var seen [n]atomic.Int32
	boom := errors.New("boom")
	err := Parallel(n, func(i int) error {
		seen[i].Add(1)
		if i == 500 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("Parallel returned %v, want the failing call's error", err)
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("f(%d) called %d times, want once", i, c)
		}
	}
	if err := Parallel(0, func(int) error { return boom }); err != nil {
		t.Errorf("Parallel of nothing returned %v", err)
	}
}

func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ticks := make(chan time.Time, 100)
	Every(ctx, 5*time.Millisecond, func(now time.Time) { ticks <- now })
	first, second := <-ticks, <-ticks
	if !second.After(first) {
		t.Errorf("ticks at %v then %v", first, second)
	}
	cancel()
	// Once ctx has ended, at most a call already under way may still report.
	before := len(ticks)
	Consistently(t, 50*time.Millisecond, "no tick after the context ended", func(context.Context) error {
		if n := len(ticks) - before; n > 1 {
			return fmt.Errorf("%d ticks after cancel", n)
		}
		return nil
	})
}
