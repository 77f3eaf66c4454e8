package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmafx/vmafx/hack/release/project"
	"github.com/vmafx/vmafx/test/e2e/internal/hoststate"
	"github.com/vmafx/vmafx/test/e2e/internal/netfilter"
	"github.com/vmafx/vmafx/test/e2e/internal/proc"
)

// debianPackages are installed with apt when the file that shows each is missing.
var debianPackages = []struct{ pkg, file string }{
	{"runc", runcPath},
	{"containernetworking-plugins", filepath.Join(cniBinDir, "bridge")},
	{"iptables", "/usr/sbin/iptables"},
	// nft drops the iptables tables the cluster made appear (netfilter.DropEmptyTables).
	{"nftables", "/usr/sbin/nft"},
	// The worker image carries ffmpeg and ffprobe, with their libraries, to decode encoded
	// videos (images.go, ffmpegRuntime).
	{"ffmpeg", "/usr/bin/ffmpeg"},
}

// Up starts every part of the cluster that is not running and waits until the node is
// Ready and the default ServiceAccount exists. On a cluster that is up it changes nothing.
// When a part fails to start, Up collects the logs into an artifacts folder and says where.
func Up(ctx context.Context, cfg Config, out io.Writer) (err error) {
	r, err := newRun(cfg, out)
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("the local cluster needs root (it runs a kubelet, containerd and iptables)")
	}
	if err := r.checkBinaries(); err != nil {
		return err
	}
	if err := r.ensurePackages(ctx); err != nil {
		return err
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
		if err := r.recordHost(ctx); err != nil {
			return err
		}
	} else {
		r.logf("cluster state found in %s (node %s, %s)", r.cfg.StateDir, r.st.NodeName, r.st.NodeIP)
	}
	started := false
	defer func() {
		if err != nil && started {
			if dir, cerr := Collect(context.WithoutCancel(ctx), cfg, out); cerr == nil {
				err = fmt.Errorf("%w\nlogs and cluster state collected in %s", err, dir)
			}
		}
	}()
	if err := r.prepare(ctx); err != nil {
		return err
	}
	if r.adminHTTP, err = adminHTTPClient(r.l); err != nil {
		return err
	}
	startedAny := false
	for _, c := range components() {
		s, err := r.ensure(ctx, c)
		started = true
		if err != nil {
			return err
		}
		startedAny = startedAny || s
		if c.name == binContainerd {
			if err := r.ensurePause(ctx); err != nil {
				return err
			}
		}
	}
	// kube-proxy and the kubelet insert jumps at the top of INPUT and FORWARD: put the
	// guard's back in front.
	if err := (netfilter.Guard{PodCIDR: PodCIDR, ServiceCIDR: ServiceCIDR, Ports: []int{APIServerPort, KubeletPort}}).Apply(ctx); err != nil {
		return err
	}
	if err := r.waitNodeReady(ctx); err != nil {
		return err
	}
	if err := r.waitDefaultServiceAccount(ctx); err != nil {
		return err
	}
	if startedAny {
		r.logf("cluster is up")
	} else {
		r.logf("cluster was already up; nothing to do")
	}
	fmt.Fprintf(out, "\n  export KUBECONFIG=%s\n  %s get nodes\n\n", r.l.Kubeconfig(), r.cfg.Kubectl())
	return nil
}

func (r *run) checkBinaries() error {
	var missing []string
	for _, b := range []string{binEtcd, binAPIServer, binControllerManager, binScheduler, binKubelet, binKubeProxy, binKubectl, binContainerd, binShim, binCtr} {
		if _, err := os.Stat(r.cfg.Binary(b)); err != nil {
			missing = append(missing, r.cfg.Binary(b))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("binaries missing (run `make cluster-bins`): %s", strings.Join(missing, ", "))
	}
	return nil
}

// ensurePackages installs the Debian packages whose files are missing.
func (r *run) ensurePackages(ctx context.Context) error {
	var pkgs []string
	for _, p := range debianPackages {
		if _, err := os.Stat(p.file); err != nil {
			pkgs = append(pkgs, p.pkg)
		}
	}
	if len(pkgs) == 0 {
		return nil
	}
	r.logf("installing Debian packages: %s", strings.Join(pkgs, " "))
	install := func() error {
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y", "-qq", "--no-install-recommends"}, pkgs...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = r.out, r.out
		return cmd.Run()
	}
	if err := install(); err == nil {
		return nil
	}
	update := exec.CommandContext(ctx, "apt-get", "update", "-qq")
	update.Stdout, update.Stderr = r.out, r.out
	if err := update.Run(); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	if err := install(); err != nil {
		return fmt.Errorf("apt-get install %s: %w", strings.Join(pkgs, " "), err)
	}
	return nil
}

// recordHost checks that nothing else runs a node here, then records the host state
// before anything changes it.
func (r *run) recordHost(ctx context.Context) error {
	nodeIP, nodeName := r.cfg.NodeIP, r.cfg.NodeName
	var err error
	if nodeIP == "" {
		if nodeIP, err = DetectNodeIP(); err != nil {
			return err
		}
	}
	if nodeName == "" {
		if nodeName, err = DetectNodeName(); err != nil {
			return err
		}
	}
	if err := preflight(ctx, nodeIP); err != nil {
		return err
	}
	if err := os.MkdirAll(r.cfg.StateDir, 0o755); err != nil {
		return err
	}
	st := &State{NodeIP: nodeIP, NodeName: nodeName, Created: time.Now().UTC(), IPTablesTables: map[string][]string{}}
	if st.Sysctls, err = hoststate.ReadSysctls(hoststate.Sysctls); err != nil {
		return err
	}
	st.HostPaths = hoststate.Existing(hoststate.HostPaths)
	for _, f := range []netfilter.Family{netfilter.IPv4, netfilter.IPv6} {
		if st.IPTablesTables[f.Name], err = netfilter.Tables(ctx, f); err != nil {
			return err
		}
	}
	links, err := hoststate.Links(ctx)
	if err != nil {
		return err
	}
	for _, l := range links {
		st.Links = append(st.Links, l.Name)
	}
	if st.Before, err = r.snapshot(ctx); err != nil {
		return err
	}
	if err := st.save(r.l.StateFile()); err != nil {
		return err
	}
	r.st = st
	r.logf("new cluster in %s: node %s at %s", r.cfg.StateDir, nodeName, nodeIP)
	return nil
}

// preflight refuses to start next to another node's leftovers or on busy ports.
func preflight(ctx context.Context, nodeIP string) error {
	var errs []error
	if ms, err := hoststate.MountsUnder([]string{KubeletRoot}); err == nil && len(ms) > 0 {
		errs = append(errs, fmt.Errorf("%s is mounted: another kubelet runs here, or one was not torn down", KubeletRoot))
	}
	// An existing, unmounted /var/lib/kubelet is fine: the bind mount covers it while the
	// cluster runs and uncovers it unchanged at teardown. (The device plugin's integration
	// tests leave an empty device-plugins folder there.)
	if _, err := net.InterfaceByName(BridgeName); err == nil {
		errs = append(errs, fmt.Errorf("network interface %s exists: another pod network runs here", BridgeName))
	}
	if saved, err := netfilter.Snapshot(ctx, netfilter.IPv4); err == nil {
		for _, p := range netfilter.ClusterChainPrefixes {
			if strings.Contains(saved, ":"+p) {
				errs = append(errs, fmt.Errorf("iptables has %s* chains: another node's rules are in place", p))
			}
		}
	}
	addrs := []string{}
	for _, p := range []int{EtcdClientPort, EtcdPeerPort, ControllerManagerPort, SchedulerPort, KubeletHealthzPort, KubeProxyHealthzPort, KubeProxyMetricsPort} {
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	}
	for _, p := range []int{APIServerPort, KubeletPort} {
		addrs = append(addrs, net.JoinHostPort(nodeIP, strconv.Itoa(p)))
	}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			errs = append(errs, fmt.Errorf("port %s is taken: %w", a, err))
			continue
		}
		ln.Close()
	}
	return errors.Join(errs...)
}

// prepare writes certificates, configs and binary links, mounts the kubelet's root and
// applies the guard. Each step is a no-op when done already.
func (r *run) prepare(ctx context.Context) error {
	if err := writePKI(r.l, r.st.NodeIP, r.st.NodeName); err != nil {
		return err
	}
	d := newRenderData(r.l, r.st.NodeIP, r.st.NodeName)
	files := []struct{ path, name, tmpl string }{
		{filepath.Join(r.l.Config(), "containerd.toml"), "containerd", containerdConfig},
		{filepath.Join(r.l.Config(), "kubelet.yaml"), "kubelet", kubeletConfig},
		{filepath.Join(r.l.Config(), "kube-proxy.yaml"), "kube-proxy", kubeProxyConfig},
		{filepath.Join(r.l.CNIConfDir(), "10-vmafx.conflist"), "cni", cniConfig},
	}
	for _, f := range files {
		data, err := render(f.name, f.tmpl, d)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return err
		}
		if err := writeIfChanged(f.path, data); err != nil {
			return err
		}
	}
	for _, dir := range []string{r.l.Bin(), r.l.Logs(), r.l.Procs(), r.l.Etcd(), r.l.KubeletDir(), r.l.PodLogs(), r.l.CNIIPAMDir()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	for _, b := range []string{binEtcd, binAPIServer, binControllerManager, binScheduler, binKubelet, binKubeProxy, binKubectl, binContainerd, binShim, binCtr} {
		link := filepath.Join(r.l.Bin(), b)
		if cur, err := os.Readlink(link); err == nil && cur == r.cfg.Binary(b) {
			continue
		}
		_ = os.Remove(link)
		if err := os.Symlink(r.cfg.Binary(b), link); err != nil {
			return err
		}
	}
	mounted, err := hoststate.IsMountPoint(KubeletRoot)
	if err != nil {
		return err
	}
	if !mounted {
		if err := os.MkdirAll(KubeletRoot, 0o700); err != nil {
			return err
		}
		if err := hoststate.BindShared(r.l.KubeletDir(), KubeletRoot); err != nil {
			return err
		}
	}
	return netfilter.Guard{PodCIDR: PodCIDR, ServiceCIDR: ServiceCIDR, Ports: []int{APIServerPort, KubeletPort}}.Apply(ctx)
}

// writeIfChanged leaves a file with the right content alone: kube-proxy exits when its
// config file is written to, so rewriting it on every up would restart it.
func writeIfChanged(path string, data []byte) error {
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, data) {
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}

// ensure starts c unless it runs, then waits until it is ready. started tells whether it
// had to start it.
func (r *run) ensure(ctx context.Context, c component) (started bool, err error) {
	rec, found, err := proc.Load(r.l.Procs(), c.name)
	if err != nil {
		return false, err
	}
	if found && rec.Alive() {
		if err := c.ready(ctx, r); err == nil {
			r.logf("%s runs (pid %d)", c.name, rec.PID)
			return false, nil
		}
		r.logf("%s runs (pid %d) but is not ready yet; waiting", c.name, rec.PID)
	} else {
		if found {
			r.logf("%s (pid %d) is gone; starting it again", c.name, rec.PID)
		}
		spec := proc.Spec{Name: c.name, Path: filepath.Join(r.l.Bin(), c.name), Args: c.args(r), Log: r.l.Log(c.name), Dir: r.cfg.StateDir}
		if c.env != nil {
			spec.Env = c.env(r)
		}
		if rec, err = proc.Start(r.l.Procs(), spec); err != nil {
			return false, err
		}
		started = true
		r.logf("started %s (pid %d), log %s", c.name, rec.PID, rec.Log)
	}
	deadline := time.Now().Add(c.readyTimeout)
	var last error
	for time.Now().Before(deadline) {
		if !rec.Alive() {
			return started, fmt.Errorf("%s exited; last lines of %s:\n%s", c.name, rec.Log, tail(rec.Log, 25))
		}
		if last = c.ready(ctx, r); last == nil {
			r.logf("%s is ready", c.name)
			return started, nil
		}
		select {
		case <-ctx.Done():
			return started, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return started, fmt.Errorf("%s not ready after %s: %w; last lines of %s:\n%s", c.name, c.readyTimeout, last, rec.Log, tail(rec.Log, 25))
}

// ensurePause builds the pause image and imports it, unless containerd has it.
func (r *run) ensurePause(ctx context.Context) error {
	have, err := r.imageRefs(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(have, PauseImage) {
		return nil
	}
	// The pause program reports no version: an empty stamp.
	binDir := filepath.Join(r.cfg.ImagesDir, "bin")
	if err := project.BuildBinaries(ctx, r.cfg.RepoRoot, []project.Image{project.Pause()}, runtime.GOARCH, binDir, project.Stamp{}); err != nil {
		return err
	}
	img, err := r.buildImage(project.Pause(), binDir)
	if err != nil {
		return err
	}
	if err := r.importImages(ctx, []builtImage{img}); err != nil {
		return err
	}
	r.logf("imported %s", PauseImage)
	return nil
}

func (r *run) waitNodeReady(ctx context.Context) error {
	cs, err := r.client()
	if err != nil {
		return err
	}
	return r.poll(ctx, "node "+r.st.NodeName+" Ready", 120*time.Second, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, r.st.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("condition Ready=%s: %s", c.Status, c.Message)
			}
		}
		return errors.New("no Ready condition yet")
	})
}

// waitDefaultServiceAccount waits for what a Pod in the default namespace needs: its
// ServiceAccount (a Pod applied before it exists is refused) and the kube-root-ca.crt
// ConfigMap that its token volume projects.
func (r *run) waitDefaultServiceAccount(ctx context.Context) error {
	cs, err := r.client()
	if err != nil {
		return err
	}
	return r.poll(ctx, "default ServiceAccount", 60*time.Second, func() error {
		if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return err
		}
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})
}

func (r *run) poll(ctx context.Context, what string, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if last = f(); last == nil {
			r.logf("%s", what)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("waiting for %s: %w", what, last)
}
