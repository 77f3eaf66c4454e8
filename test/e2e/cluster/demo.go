package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

// demoJob is the VmafxJob `make demo` applies: the worker's first test clip pair (24
// frames of 176x144, libx264 CRF 18; libvmaf scores it 98.653389), mounted from this work
// tree through a hostPath volume (the node is this machine, and the local overlay allows
// every host path), with backend at its default (auto: the node's CPU slots).
const demoJob = `apiVersion: vmafx.dev/v1
kind: VmafxJob
metadata:
  name: demo
  namespace: default
spec:
  reference: file:///data/p01_ref.yuv
  distorted: file:///data/p01_dist.yuv
  width: 176
  height: 144
  pixelFormat: yuv420p
  model: vmaf_v0.6.1
  volume:
    hostPath:
      path: {{.Clips}}
      type: Directory
`

// Demo applies the demo VmafxJob (replacing an earlier one), waits for it to finish and
// prints `kubectl get vmjob` and where to look further.
func Demo(ctx context.Context, cfg Config, out io.Writer) error {
	r, err := newRun(cfg, out)
	if err != nil {
		return err
	}
	clips := filepath.Join(cfg.RepoRoot, "vmaf", "testdata", "clips")
	if _, err := os.Stat(filepath.Join(clips, "p01_ref.yuv")); err != nil {
		return fmt.Errorf("the demo clips are missing: %w", err)
	}
	t, err := template.New("demo").Parse(demoJob)
	if err != nil {
		return err
	}
	var manifest strings.Builder
	if err := t.Execute(&manifest, struct{ Clips string }{clips}); err != nil {
		return err
	}
	path := filepath.Join(cfg.StateDir, "demo-job.yaml")
	if err := os.WriteFile(path, []byte(manifest.String()), 0o644); err != nil {
		return err
	}
	kubectl := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, cfg.Kubectl(), append([]string{"--kubeconfig", r.l.Kubeconfig()}, args...)...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			return string(b), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(b)))
		}
		return string(b), nil
	}
	if _, err := kubectl("delete", "vmafxjob", "demo", "--namespace=default", "--ignore-not-found", "--wait=true"); err != nil {
		return err
	}
	applied := time.Now()
	o, err := kubectl("apply", "-f", path)
	if err != nil {
		return err
	}
	fmt.Fprint(out, o)
	r.logf("waiting for the job to finish")
	var phase string
	for deadline := time.Now().Add(3 * time.Minute); ; {
		phase, err = kubectl("get", "vmafxjob", "demo", "--namespace=default", "--output=jsonpath={.status.phase}")
		if err != nil {
			return err
		}
		if phase == "Succeeded" || phase == "Failed" {
			break
		}
		if time.Now().After(deadline) {
			phase = "still " + phase
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	r.logf("job %s, %.1fs after kubectl apply", phase, time.Since(applied).Seconds())
	o, err = kubectl("get", "vmafxjob", "demo", "--namespace=default")
	fmt.Fprintf(out, "\n$ kubectl get vmjob demo\n%s\n", o)
	if err != nil {
		return err
	}
	pod, _ := kubectl("get", "vmafxjob", "demo", "--namespace=default", "--output=jsonpath={.status.podName}")
	if pod == "" {
		pod = "<worker pod>"
	}
	fmt.Fprintf(out, "Look further (export KUBECONFIG=%s; kubectl is %s):\n", r.l.Kubeconfig(), cfg.Kubectl())
	for _, l := range [][2]string{
		{"kubectl describe vmjob demo", "the job's result, timings and events"},
		{"kubectl logs " + pod, "the worker's log"},
		{"kubectl describe node " + nodeNameOrDefault(r), "vmafx.dev/slot under Capacity and Allocatable"},
		{"kubectl get vmafx -A", "every VMAFX object, the node's VmafxNode included"},
		{"make cluster-down", "stop the cluster and restore the machine"},
	} {
		fmt.Fprintf(out, "  %-34s %s\n", l[0], l[1])
	}
	if phase != "Succeeded" {
		return errors.New("the demo job did not succeed; `make cluster-status` and `bin/vmafx-cluster collect` help find out why")
	}
	return nil
}

func nodeNameOrDefault(r *run) string {
	if st, err := loadState(r.l.StateFile()); err == nil && st != nil {
		return st.NodeName
	}
	return "<node>"
}
