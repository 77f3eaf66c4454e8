package cluster

import (
	"context"
	"fmt"
	"io"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmafx/vmafx/test/e2e/internal/proc"
)

// Status prints each component's process and the node's conditions and capacity. It
// returns an error when the cluster is not fully up.
func Status(ctx context.Context, cfg Config, out io.Writer) error {
	r, err := newRun(cfg, out)
	if err != nil {
		return err
	}
	st, err := loadState(r.l.StateFile())
	if err != nil {
		return err
	}
	if st == nil {
		fmt.Fprintf(out, "no cluster in %s\n", cfg.StateDir)
		return fmt.Errorf("cluster is down")
	}
	down := 0
	for _, c := range components() {
		rec, found, err := proc.Load(r.l.Procs(), c.name)
		switch {
		case err != nil:
			return err
		case !found:
			fmt.Fprintf(out, "  %-24s not started\n", c.name)
			down++
		case rec.Alive():
			fmt.Fprintf(out, "  %-24s running, pid %d, log %s\n", c.name, rec.PID, rec.Log)
		default:
			fmt.Fprintf(out, "  %-24s exited (was pid %d), log %s\n", c.name, rec.PID, rec.Log)
			down++
		}
	}
	fmt.Fprintf(out, "  kubeconfig               %s\n", r.l.Kubeconfig())
	cs, err := r.client()
	if err != nil {
		return err
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, st.NodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("node %s: %w", st.NodeName, err)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			fmt.Fprintf(out, "  node %s: Ready=%s (%s)\n", n.Name, c.Status, c.Message)
		}
	}
	names := make([]string, 0, len(n.Status.Capacity))
	for name := range n.Status.Capacity {
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, name := range names {
		c, a := n.Status.Capacity[corev1.ResourceName(name)], n.Status.Allocatable[corev1.ResourceName(name)]
		fmt.Fprintf(out, "    %-24s capacity %s, allocatable %s\n", name, c.String(), a.String())
	}
	if down > 0 {
		return fmt.Errorf("%d components are not running", down)
	}
	return nil
}
