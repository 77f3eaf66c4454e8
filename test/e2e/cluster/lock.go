package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lock takes an exclusive lock on the state folder, so that two harness commands (say,
// two people's `make cluster-up` in one checkout) never start or stop the cluster at the
// same time; the second waits. The lock is released when the process exits, or by the
// returned function.
func (r *run) lock() (unlock func(), err error) {
	if err := os.MkdirAll(r.cfg.StateDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(r.cfg.StateDir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		r.logf("another vmafx-cluster command holds %s; waiting", f.Name())
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
		}
	}
	return func() { f.Close() }, nil
}
