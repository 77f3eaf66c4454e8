package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/test/e2e/internal/hoststate"
	"github.com/vmafx/vmafx/test/e2e/internal/netfilter"
	"github.com/vmafx/vmafx/test/e2e/internal/proc"
	"github.com/vmafx/vmafx/test/e2e/internal/sandbox"
)

// Down stops the cluster and puts the host back as Up found it: every process it started
// is stopped by its recorded PID, the Pods' sandboxes are removed through containerd
// (which frees their network), containerd's shims for this cluster's socket are stopped,
// mounts, the bridge, iptables chains, cgroups and kernel parameters are restored, the
// host paths that Up made appear are removed, and so is the state folder (but for its
// artifacts). It ends by comparing the host with the snapshot Up took, and fails when
// anything differs. Down on a machine without a cluster does nothing.
func Down(ctx context.Context, cfg Config, out io.Writer) error {
	r, err := newRun(cfg, out)
	if err != nil {
		return err
	}
	if r.st, err = loadState(r.l.StateFile()); err != nil {
		return err
	}
	_, runErr := os.Stat(r.l.Procs())
	if r.st == nil && runErr != nil {
		r.logf("no cluster in %s; nothing to do", cfg.StateDir)
		return nil
	}
	if os.Geteuid() != 0 {
		return errors.New("tearing the local cluster down needs root")
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	// Another command may have torn the cluster down while this one waited.
	if r.st, err = loadState(r.l.StateFile()); err != nil {
		return err
	}
	if _, runErr := os.Stat(r.l.Procs()); r.st == nil && runErr != nil {
		r.logf("no cluster in %s; nothing to do", cfg.StateDir)
		return r.removeStateDir()
	}
	var errs []error
	step := func(what string, err error) {
		if err != nil {
			r.logf("%s: %v", what, err)
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}

	comps := map[string]component{}
	for _, c := range components() {
		comps[c.name] = c
	}
	// The kubelet first, so that it restarts nothing; then the sandboxes, while
	// containerd still runs to tear down their networks.
	step("stop kubelet", r.stop(ctx, comps[binKubelet]))
	step("remove pod sandboxes", r.removeSandboxes(ctx))
	step("stop containerd", r.stop(ctx, comps[binContainerd]))
	step("stop containerd shims", r.stopShims(ctx))
	step("stop leftover pod processes", r.stopPodProcesses(ctx))
	for _, name := range []string{binKubeProxy, binScheduler, binControllerManager, binAPIServer, binEtcd} {
		step("stop "+name, r.stop(ctx, comps[name]))
	}
	if r.st == nil {
		// A state folder without a state file: Up failed before it recorded the host.
		// Processes are stopped; nothing else is known to restore.
		return errors.Join(append(errs, fmt.Errorf("no %s: host state was not recorded, not restoring it", r.l.StateFile()))...)
	}

	unmount := []string{KubeletRoot, cfg.StateDir}
	for _, p := range []string{"/run/containerd", "/var/run/netns"} {
		if !slices.Contains(r.st.HostPaths, p) {
			unmount = append(unmount, p)
		}
	}
	done, err := hoststate.UnmountUnder(unmount)
	step("unmount", err)
	if len(done) > 0 {
		r.logf("unmounted %d mounts under %s", len(done), strings.Join(unmount, ", "))
	}
	step("remove network links", r.removeLinks(ctx))
	step("remove iptables rules", r.removeIPTables(ctx))
	step("remove cgroups", r.removeCgroups())
	step("restore sysctls", hoststate.RestoreSysctls(r.st.Sysctls))
	for _, p := range hoststate.HostPaths {
		if !slices.Contains(r.st.HostPaths, p) {
			step("remove "+p, hoststate.RemoveTree(p))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("teardown incomplete (state kept in %s; run again after fixing): %w", cfg.StateDir, errors.Join(errs...))
	}
	// Every step succeeded: what the comparison finds is for people to look at, and the
	// state folder has served its purpose either way.
	diffErr := r.compareHost(ctx)
	if diffErr != nil {
		path := filepath.Join(r.l.Artifacts(), time.Now().UTC().Format("20060102T150405Z")+"-host-diff.txt")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			_ = os.WriteFile(path, []byte(diffErr.Error()+"\n"), 0o644)
			diffErr = fmt.Errorf("%w\n(saved in %s)", diffErr, path)
		}
	}
	if err := r.removeStateDir(); err != nil {
		return errors.Join(diffErr, err)
	}
	if diffErr != nil {
		return diffErr
	}
	r.logf("cluster is down; host state restored")
	return nil
}

func (r *run) stop(ctx context.Context, c component) error {
	rec, found, err := proc.Load(r.l.Procs(), c.name)
	if err != nil || !found {
		return err
	}
	if rec.Alive() {
		t0 := time.Now()
		if err := proc.Stop(ctx, rec, c.stopGrace); err != nil {
			return err
		}
		r.logf("stopped %s (pid %d) in %.1fs", c.name, rec.PID, time.Since(t0).Seconds())
	}
	return proc.Forget(r.l.Procs(), c.name)
}

func (r *run) removeSandboxes(ctx context.Context) error {
	rec, found, err := proc.Load(r.l.Procs(), binContainerd)
	if err != nil || !found || !rec.Alive() {
		return err
	}
	cl, err := sandbox.Dial(r.l.ContainerdSocket())
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	n, err := cl.RemoveAll(ctx)
	if n > 0 {
		r.logf("removed %d pod sandboxes", n)
	}
	return err
}

// stopShims stops the shims containerd started for this cluster's socket: they outlive
// containerd (re-parented to PID 1). Each is told apart from any other containerd's by
// the -address argument naming our socket.
func (r *run) stopShims(ctx context.Context) error {
	sock := r.l.ContainerdSocket()
	shims, err := proc.Find(func(args []string) bool {
		// containerd starts the shim by its resolved path: the cached binary's,
		// containerd-shim-runc-v2-<version>.
		if !strings.HasPrefix(filepath.Base(args[0]), binShim) {
			return false
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-address" && args[i+1] == sock {
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range shims {
		errs = append(errs, proc.Stop(ctx, s, 5*time.Second))
	}
	if len(shims) > 0 {
		r.logf("stopped %d containerd shims", len(shims))
	}
	return errors.Join(errs...)
}

// stopPodProcesses stops what is still in the kubelet's kubepods cgroups once the
// runtime is gone: only container processes live there.
func (r *run) stopPodProcesses(ctx context.Context) error {
	dirs, err := hoststate.CgroupDirs("kubepods")
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		if slices.Contains(r.st.Before.Cgroups, d) {
			continue
		}
		pids, err := hoststate.CgroupPIDs(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, pid := range pids {
			rec, err := proc.ByPID(pid)
			if err != nil {
				continue
			}
			r.logf("stopping leftover pod process %d (%s)", pid, strings.Join(rec.Args, " "))
			errs = append(errs, proc.Stop(ctx, rec, 5*time.Second))
		}
	}
	return errors.Join(errs...)
}

func (r *run) removeLinks(ctx context.Context) error {
	links, err := hoststate.Links(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range links {
		if slices.Contains(r.st.Links, l.Name) {
			continue
		}
		// The bridge, and any veth still attached to it (a sandbox whose netns is gone
		// takes its veth pair with it, so normally none is left).
		if l.Name == BridgeName || l.Master == BridgeName {
			errs = append(errs, hoststate.DeleteLink(ctx, l.Name))
		}
	}
	return errors.Join(errs...)
}

func (r *run) removeIPTables(ctx context.Context) error {
	var errs []error
	for _, f := range []netfilter.Family{netfilter.IPv4, netfilter.IPv6} {
		removed, err := netfilter.Sweep(ctx, f, netfilter.ClusterChainPrefixes)
		errs = append(errs, err)
		if len(removed) > 0 {
			r.logf("removed %d %s chains", len(removed), f.Name)
		}
		dropped, err := netfilter.DropEmptyTables(ctx, f, r.st.IPTablesTables[f.Name])
		errs = append(errs, err)
		if len(dropped) > 0 {
			r.logf("dropped empty %s tables %s", f.Name, strings.Join(dropped, ", "))
		}
	}
	return errors.Join(errs...)
}

func (r *run) removeCgroups() error {
	dirs, err := hoststate.CgroupDirs("kubepods")
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		if !slices.Contains(r.st.Before.Cgroups, d) {
			errs = append(errs, hoststate.RemoveCgroupTree(d))
		}
	}
	return errors.Join(errs...)
}

// compareHost fails when the host differs from the snapshot Up took before it started.
func (r *run) compareHost(ctx context.Context) error {
	after, err := r.snapshot(ctx)
	if err != nil {
		return err
	}
	if diff := cmp.Diff(r.st.Before, after); diff != "" {
		return fmt.Errorf("host state differs from before the cluster (-before +after):\n%s", diff)
	}
	r.logf("host state matches the snapshot taken before the cluster started (mounts, links, addresses, routes, iptables, sysctls, cgroups, host paths, processes)")
	return nil
}

// removeStateDir removes everything in the state folder but artifacts/.
func (r *run) removeStateDir() error {
	entries, err := os.ReadDir(r.cfg.StateDir)
	if err != nil {
		return err
	}
	keep := false
	for _, e := range entries {
		if e.Name() == filepath.Base(r.l.Artifacts()) {
			keep = true
			continue
		}
		if err := hoststate.RemoveTree(filepath.Join(r.cfg.StateDir, e.Name())); err != nil {
			return err
		}
	}
	if !keep {
		return os.Remove(r.cfg.StateDir)
	}
	return nil
}
