package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// envChaos, set by `make chaos`, runs the long chaos scenarios (1, 2, 4, 5); `make e2e`
// leaves them out and runs the quick ones (3, 6, 7).
const envChaos = "VMAFX_CHAOS"

// requireChaos skips a chaos scenario outside `make chaos`.
func requireChaos(t *testing.T) {
	t.Helper()
	if os.Getenv(envChaos) == "" {
		t.Skipf("%s is not set: the chaos scenarios run with `make chaos`", envChaos)
	}
}

// gatedClip is a clip pair for one job whose distorted clip the worker reads through a
// named pipe: a reader gets the first frames at once and the rest only after release, so a
// job can be kept running as long as a scenario needs, without a clip big enough to take
// minutes. The reference is a plain copy. A reader that goes away before it has the whole
// clip (its Pod deleted) is noticed, and the next one (the next attempt) starts afresh;
// once a reader has had the whole clip, the pipe serves no more, since a new writer could
// not tell a next reader from the last one still draining the pipe.
type gatedClip struct {
	dir      string
	pair     clipPair
	released chan struct{}
	once     sync.Once
}

// headFrames are given at once, so that the worker is past its start and scoring.
const headFrames = 2

func newGatedClip(t *testing.T, pair clipPair) *gatedClip {
	t.Helper()
	dir := hostDir(t)
	src := filepath.Join(testdata(), "clips")
	data, err := os.ReadFile(filepath.Join(src, pair.name+"_ref.yuv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, pair.name+"_ref.yuv"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	dist, err := os.ReadFile(filepath.Join(src, pair.name+"_dist.yuv"))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, pair.name+"_dist.yuv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(fifo, 0o644); err != nil { // the umask may have taken read from others
		t.Fatal(err)
	}
	g := &gatedClip{dir: dir, pair: pair, released: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.serve(ctx, t, fifo, dist)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return g
}

// release lets every reader, present and future, have the whole clip.
func (g *gatedClip) release() { g.once.Do(func() { close(g.released) }) }

// job returns a job scoring the gated pair.
func (g *gatedClip) job(ns, name string) *vmafxv1.VmafxJob {
	j := newJob(ns, name, g.pair)
	j.Spec.Volume.HostPath.Path = g.dir
	return j
}

func (g *gatedClip) serve(ctx context.Context, t *testing.T, fifo string, data []byte) {
	frame := int(g.pair.width) * int(g.pair.height) * 3 / 2
	for ctx.Err() == nil {
		// Opening for writing without blocking fails (ENXIO) until a reader has the pipe
		// open; polling keeps the loop cancellable.
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		err = g.session(ctx, f, data, frame)
		f.Close()
		if err == nil {
			return // the reader has the whole clip, and EOF with this close
		}
		if ctx.Err() == nil {
			t.Logf("gated clip: a reader went away: %v", err)
		}
	}
}

// session gives one reader the head of the clip, waits for release while checking that
// the reader is still there, then gives it the rest.
func (g *gatedClip) session(ctx context.Context, f *os.File, data []byte, frame int) error {
	if _, err := f.Write(data[:headFrames*frame]); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-g.released:
			_, err := f.Write(data[headFrames*frame:])
			return err
		case <-time.After(100 * time.Millisecond):
		}
		if hungUp(f) {
			return errors.New("the reader closed the pipe before the clip was released")
		}
	}
}

// hungUp reports whether every reader of the pipe f writes to has closed it.
func hungUp(f *os.File) bool {
	raw, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var revents int16
	_ = raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			revents = fds[0].Revents
		}
	})
	return revents&(unix.POLLERR|unix.POLLHUP) != 0
}

// waitPhase waits until the job's phase is one of phases and returns it.
func waitPhase(t *testing.T, key types.NamespacedName, timeout time.Duration, phases ...vmafxv1.JobPhase) *vmafxv1.VmafxJob {
	t.Helper()
	job := &vmafxv1.VmafxJob{}
	eventually(t, timeout, fmt.Sprintf("VmafxJob %s %v", key, phases), func(ctx context.Context) error {
		if err := c.Get(ctx, key, job); err != nil {
			return err
		}
		for _, p := range phases {
			if job.Status.Phase == p {
				return nil
			}
		}
		return fmt.Errorf("phase %q: %s", job.Status.Phase, job.Status.Message)
	})
	return job
}

// requireScore checks that a job succeeded with libvmaf's score of its pair.
func requireScore(t *testing.T, job *vmafxv1.VmafxJob, pair clipPair) {
	t.Helper()
	if job.Status.Phase != vmafxv1.JobSucceeded {
		t.Errorf("job %s: phase %s: %s", job.Name, job.Status.Phase, job.Status.Message)
		return
	}
	score, err := strconv.ParseFloat(job.Status.Score, 64)
	if want := libvmafMean(t, pair); err != nil || math.Abs(score-want) > 1e-6 {
		t.Errorf("job %s: score %q, libvmaf's mean %v", job.Name, job.Status.Score, want)
	}
}

// jobPods lists the worker Pods of a job.
func jobPods(ctx context.Context, ns, job string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{vmafxv1.LabelJob: vmafxv1.JobLabelValue(job)})
	return pods.Items, err
}

// podGoneOrTerminal waits until the Pod is gone or its containers have stopped.
func podGoneOrTerminal(t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "Pod "+name+" stopped", func(ctx context.Context) error {
		var pod corev1.Pod
		err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &pod)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
			return nil
		}
		return fmt.Errorf("phase %s", pod.Status.Phase)
	})
}

// harness runs the cluster harness (bin/vmafx-cluster) with the flags `make` gives it.
func harness(t *testing.T, args ...string) {
	t.Helper()
	bin := os.Getenv(envCluster)
	if bin == "" {
		t.Skipf("%s is not set (`make chaos` sets it)", envCluster)
	}
	args = append(args, strings.Fields(os.Getenv(envClusterFlags))...)
	out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	t.Logf("%s", out)
}

var operatorKey = types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: "vmafx-operator"}

// setOperatorEnv sets (or, with an empty value, removes) an environment variable of the
// operator and waits for the new operator to run; the returned function, also run at
// cleanup, puts the old value back.
func setOperatorEnv(t *testing.T, name, value string) (restore func()) {
	t.Helper()
	var dep appsv1.Deployment
	if err := c.Get(t.Context(), operatorKey, &dep); err != nil {
		t.Fatal(err)
	}
	var old *corev1.EnvVar
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			old = e.DeepCopy()
		}
	}
	set := func(ctx context.Context, v *corev1.EnvVar) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur appsv1.Deployment
			if err := c.Get(ctx, operatorKey, &cur); err != nil {
				return err
			}
			ctr := &cur.Spec.Template.Spec.Containers[0]
			var env []corev1.EnvVar
			for _, e := range ctr.Env {
				if e.Name != name {
					env = append(env, e)
				}
			}
			if v != nil {
				env = append(env, *v)
			}
			ctr.Env = env
			return c.Update(ctx, &cur)
		})
	}
	var v *corev1.EnvVar
	if value != "" {
		v = &corev1.EnvVar{Name: name, Value: value}
	}
	if err := set(t.Context(), v); err != nil {
		t.Fatal(err)
	}
	if err := waitOperatorRolledOut(t.Context()); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		// Not the test's context: this also runs at cleanup, when that one is done.
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		if err := set(ctx, old); err != nil {
			t.Errorf("restoring the operator's %s: %v", name, err)
			return
		}
		if err := waitOperatorRolledOut(ctx); err != nil {
			t.Errorf("restoring the operator's %s: %v", name, err)
		}
	}
	t.Cleanup(restore)
	return restore
}

// waitOperatorRolledOut waits, within 3 minutes, until the operator Deployment's current
// template runs and is ready, and no Pod of an older one is left.
func waitOperatorRolledOut(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		var dep appsv1.Deployment
		err := c.Get(ctx, operatorKey, &dep)
		if err == nil {
			st := dep.Status
			want := *dep.Spec.Replicas
			if st.ObservedGeneration >= dep.Generation && st.UpdatedReplicas == want && st.ReadyReplicas == want && st.Replicas == want {
				return nil
			}
			err = fmt.Errorf("generation %d/%d, updated %d, ready %d, total %d; want %d", st.ObservedGeneration, dep.Generation,
				st.UpdatedReplicas, st.ReadyReplicas, st.Replicas, want)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("operator not rolled out: %w", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
