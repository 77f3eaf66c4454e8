package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vmafx/vmafx/test/e2e/internal/hoststate"
	"github.com/vmafx/vmafx/test/e2e/internal/netfilter"
	"github.com/vmafx/vmafx/test/e2e/internal/proc"
)

// run is one invocation of the harness.
type run struct {
	cfg       Config
	l         Layout
	st        *State
	out       io.Writer
	start     time.Time
	adminHTTP *http.Client
}

func newRun(cfg Config, out io.Writer) (*run, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &run{cfg: cfg, l: Layout{Root: cfg.StateDir}, out: out, start: time.Now()}, nil
}

// logf prints one progress line, with the seconds since the command started.
func (r *run) logf(format string, args ...any) {
	fmt.Fprintf(r.out, "[%6.1fs] %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// client returns a clientset with the admin kubeconfig.
func (r *run) client() (kubernetes.Interface, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", r.l.Kubeconfig())
	if err != nil {
		return nil, err
	}
	rc.Timeout = 10 * time.Second
	return kubernetes.NewForConfig(rc)
}

// clusterProcesses lists the command lines of the cluster's processes: those run from
// the state folder (every daemon runs through a link in .cluster/bin) and containerd's
// shims for its socket. None before Up, none after Down. (A kubectl or harness command
// that merely names the state folder is not the cluster's.)
func (r *run) clusterProcesses() ([]string, error) {
	sock := r.l.ContainerdSocket()
	recs, err := proc.Find(func(args []string) bool {
		if strings.HasPrefix(args[0], r.cfg.StateDir+"/") {
			return true
		}
		for _, a := range args[1:] {
			if a == sock {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(recs))
	for _, rec := range recs {
		out = append(out, strings.Join(rec.Args, " "))
	}
	return out, nil
}

// snapshot takes the host snapshot that Up stores and Down compares with.
func (r *run) snapshot(ctx context.Context) (hoststate.Snapshot, error) {
	ipt := map[string]string{}
	for _, f := range []netfilter.Family{netfilter.IPv4, netfilter.IPv6} {
		s, err := netfilter.Snapshot(ctx, f)
		if err != nil {
			return hoststate.Snapshot{}, err
		}
		ipt[f.Name] = s
	}
	procs, err := r.clusterProcesses()
	if err != nil {
		return hoststate.Snapshot{}, err
	}
	return hoststate.Take(ctx, ipt, procs)
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
