package testutil

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
