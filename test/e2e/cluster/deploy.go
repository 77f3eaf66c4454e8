package cluster

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// WaitDeployed waits until every Deployment and DaemonSet of the system namespace has
// rolled out, as `make deploy` promises. On failure it collects artifacts.
func WaitDeployed(ctx context.Context, cfg Config, out io.Writer, timeout time.Duration) (err error) {
	r, err := newRun(cfg, out)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			if dir, cerr := Collect(context.WithoutCancel(ctx), cfg, out); cerr == nil {
				err = fmt.Errorf("%w\nlogs and cluster state collected in %s", err, dir)
			}
		}
	}()
	kubectl := func(args ...string) (string, error) {
		full := append([]string{"--kubeconfig", r.l.Kubeconfig(), "--namespace", vmafxv1.SystemNamespace}, args...)
		cmd := exec.CommandContext(ctx, cfg.Kubectl(), full...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			return string(b), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(b)))
		}
		return string(b), nil
	}
	list, err := kubectl("get", "deployments,daemonsets", "-o", "name")
	if err != nil {
		return err
	}
	workloads := strings.Fields(list)
	if len(workloads) == 0 {
		return fmt.Errorf("no Deployment or DaemonSet in namespace %s", vmafxv1.SystemNamespace)
	}
	deadline := time.Now().Add(timeout)
	for _, w := range workloads {
		left := time.Until(deadline).Round(time.Second)
		if left <= 0 {
			return fmt.Errorf("timed out before %s rolled out", w)
		}
		if _, err := kubectl("rollout", "status", w, "--timeout="+left.String()); err != nil {
			return err
		}
		r.logf("%s rolled out", w)
	}
	return nil
}
