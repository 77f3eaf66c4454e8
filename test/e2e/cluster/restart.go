package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Restart stops one component by its recorded PID and starts it again with the same
// configuration, downFor later, then waits until it is ready (for the kubelet, until the
// node is Ready again). The end-to-end scenarios restart the kubelet this way, and keep
// the API server down for a while.
func Restart(ctx context.Context, cfg Config, name string, downFor time.Duration, out io.Writer) error {
	r, err := newRun(cfg, out)
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("restarting %s needs root", name)
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if r.st, err = loadState(r.l.StateFile()); err != nil {
		return err
	}
	if r.st == nil {
		return fmt.Errorf("no cluster in %s", cfg.StateDir)
	}
	if r.adminHTTP, err = adminHTTPClient(r.l); err != nil {
		return err
	}
	var names []string
	for _, c := range components() {
		names = append(names, c.name)
		if c.name != name {
			continue
		}
		if err := r.stop(ctx, c); err != nil {
			return err
		}
		if downFor > 0 {
			r.logf("%s stays down for %s", name, downFor)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(downFor):
			}
		}
		if _, err := r.ensure(ctx, c); err != nil {
			return err
		}
		if name == binKubelet {
			return r.waitNodeReady(ctx)
		}
		return nil
	}
	return fmt.Errorf("no component %q; the components are %s", name, strings.Join(names, ", "))
}
