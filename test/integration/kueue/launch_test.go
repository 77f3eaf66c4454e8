package kueue_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// metricsCertDir is where Kueue's manager reads its metrics certificate when it does not
// manage its certificates itself (cmd/kueue/main.go): a Secret's mount in its Pod.
const metricsCertDir = "/etc/kueue/metrics/certs"

// launchKueue runs in the test binary re-executed under unshare --mount: it lays an
// overlay over /etc, private to this mount namespace, that adds Kueue's metrics
// certificate, then execs Kueue with args. It returns only on failure.
func launchKueue(args []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "kueue launcher: %v\n", err)
		return 1
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fail(fmt.Errorf("making the mounts private: %w", err))
	}
	scratch := os.Getenv(envOverlay)
	upper, work := filepath.Join(scratch, "upper"), filepath.Join(scratch, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fail(err)
		}
	}
	if err := syscall.Mount("overlay", "/etc", "overlay", 0, "lowerdir=/etc,upperdir="+upper+",workdir="+work); err != nil {
		return fail(fmt.Errorf("overlay over /etc: %w", err))
	}
	if err := os.MkdirAll(metricsCertDir, 0o755); err != nil {
		return fail(err)
	}
	for _, f := range []string{"tls.crt", "tls.key"} {
		data, err := os.ReadFile(filepath.Join(os.Getenv(envCerts), f))
		if err == nil {
			err = os.WriteFile(filepath.Join(metricsCertDir, f), data, 0o600)
		}
		if err != nil {
			return fail(err)
		}
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if len(kv) < len(envLaunch) || kv[:len(envLaunch)] != envLaunch {
			env = append(env, kv)
		}
	}
	bin := os.Getenv(envKueue)
	return fail(syscall.Exec(bin, append([]string{bin}, args...), env))
}
