// Package testutil holds the helpers that tests across the components share: building a
// binary of the project, a free loopback port, a bounded wait for a condition, a
// credentials folder as a mounted Secret. Only tests import it.
package testutil

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// RepoRoot is the repository's root folder, found from this file's own path.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// GoCommand is the go command that runs the tests: $GOROOT/bin/go when GOROOT is set,
// else the one on PATH.
func GoCommand() (string, error) {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); isFile(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building a binary for the test needs the go command: %w", err)
	}
	return p, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// BuildBinary builds the package pkg (relative to the repository root, e.g.
// "./worker/cmd/vmafx-worker") into dir with the test's own build settings, so the
// build cache the test binary filled serves it, plus env (e.g. "CGO_ENABLED=0" for a
// binary as static as in the images), and returns the binary's path.
func BuildBinary(dir, pkg string, env ...string) (string, error) {
	gobin, err := GoCommand()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(gobin, "build", "-o", bin, pkg)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// Build is BuildBinary into the test's temporary folder; it fails the test on error.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin, err := BuildBinary(t.TempDir(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// FreeAddr returns a loopback address ("127.0.0.1:port") that was free a moment ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreePort is FreeAddr's port; it fails the test on error.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// CredentialsDir writes keys as a mounted Secret shows them: one read-only file per key.
func CredentialsDir(t testing.TB, keys map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range keys {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Poll is how often Eventually checks.
const Poll = 200 * time.Millisecond

// Eventually calls f until it returns nil, and fails the test with f's last error when
// timeout passes first. f gets a context that ends at the deadline. Every wait in the
// tests is bounded by it; none sleeps for a fixed time and hopes.
func Eventually(t testing.TB, timeout time.Duration, what string, f func(ctx context.Context) error) {
	t.Helper()
	if err := Wait(context.Background(), timeout, f); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Wait calls f until it returns nil, ctx ends or timeout passes; then it returns f's
// last error, saying how long it waited.
func Wait(ctx context.Context, timeout time.Duration, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(Poll)
	defer tick.Stop()
	for {
		last := f(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s: %w", timeout, last)
		case <-tick.C:
		}
	}
}
