package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Collect gathers, into a new folder under the state folder's artifacts/, every
// component's log, every container's log, kubectl's view of nodes, Pods, events and the
// project's objects, and the host's network and mount state. It returns the folder. It
// gathers what it can: a part that fails (the apiserver is down, say) leaves an error
// note in its place.
func Collect(ctx context.Context, cfg Config, out io.Writer) (string, error) {
	r, err := newRun(cfg, out)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(r.l.Artifacts(), time.Now().UTC().Format("20060102T150405Z"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	copyTree(r.l.Logs(), filepath.Join(dir, "components"))
	copyTree(r.l.PodLogs(), filepath.Join(dir, "pods"))
	for _, name := range []string{"cluster.json"} {
		copyFile(filepath.Join(cfg.StateDir, name), filepath.Join(dir, name))
	}

	kubectl := func(file string, args ...string) {
		full := append([]string{"--kubeconfig", r.l.Kubeconfig(), "--request-timeout=20s"}, args...)
		capture(ctx, filepath.Join(dir, "kubectl", file), cfg.Kubectl(), full...)
	}
	kubectl("nodes.txt", "get", "nodes", "-o", "wide")
	kubectl("describe-nodes.txt", "describe", "nodes")
	kubectl("pods.txt", "get", "pods", "-A", "-o", "wide")
	kubectl("describe-pods.txt", "describe", "pods", "-A")
	kubectl("events.txt", "get", "events", "-A", "--sort-by=.lastTimestamp", "-o", "wide")
	kubectl("workloads.txt", "get", "deployments,daemonsets,replicasets,services,endpointslices", "-A", "-o", "wide")
	kubectl("describe-workloads.txt", "describe", "deployments,daemonsets", "-A")
	kubectl("crds.txt", "get", "crds")
	kubectl("vmafx.yaml", "get", "vmafxjobs,vmafxnodes,vmafxmodeltrainings,vmafxcomparisons,vmafxladders", "-A", "-o", "yaml")
	kubectl("describe-vmafx.txt", "describe", "vmafxjobs,vmafxnodes", "-A")

	capture(ctx, filepath.Join(dir, "host", "iptables.txt"), "iptables-save")
	capture(ctx, filepath.Join(dir, "host", "ip6tables.txt"), "ip6tables-save")
	capture(ctx, filepath.Join(dir, "host", "addresses.txt"), "ip", "addr")
	capture(ctx, filepath.Join(dir, "host", "routes.txt"), "ip", "route")
	capture(ctx, filepath.Join(dir, "host", "processes.txt"), "ps", "-eo", "pid,ppid,stat,etime,args")
	copyFile("/proc/self/mountinfo", filepath.Join(dir, "host", "mountinfo.txt"))
	if _, err := os.Stat(r.l.ContainerdSocket()); err == nil {
		ctr := []string{"--address", r.l.ContainerdSocket(), "--namespace", "k8s.io"}
		capture(ctx, filepath.Join(dir, "host", "containerd-images.txt"), cfg.Binary(binCtr), append(ctr, "images", "list")...)
		capture(ctx, filepath.Join(dir, "host", "containerd-tasks.txt"), cfg.Binary(binCtr), append(ctr, "tasks", "list")...)
	}
	fmt.Fprintf(out, "collected logs and cluster state in %s\n", dir)
	return dir, nil
}

// capture runs a command and writes its output, or its error, to path.
func capture(ctx context.Context, path, name string, args ...string) {
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	var b bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(&b, "\n# %s %s: %v\n", name, strings.Join(args, " "), err)
	}
	_ = os.WriteFile(path, b.Bytes(), 0o644)
}

// copyTree copies the regular files below src (following the kubelet's log links is not
// needed: the pod log folder holds the files themselves).
func copyTree(src, dst string) {
	_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return nil
		}
		copyFile(p, filepath.Join(dst, rel))
		return nil
	})
}

func copyFile(src, dst string) {
	data, err := os.ReadFile(src)
	if err != nil {
		return
	}
	_ = os.MkdirAll(filepath.Dir(dst), 0o755)
	_ = os.WriteFile(dst, data, 0o644)
}
