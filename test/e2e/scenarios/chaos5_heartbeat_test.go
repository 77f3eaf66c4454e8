package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// placedAfterHeartbeat bounds how soon a waiting worker Pod is bound once its node's
// heartbeat is fresh again: the scheduler's queueing hint, not its 5-minute flush. The
// hint moves the Pod to the queue at once, but a Pod still inside its backoff waits out
// the rest of it, and kube-scheduler's backoff doubles with each failed attempt up to 10 s
// (podMaxBackoffSeconds, left at its default): a Pod that failed often while the
// heartbeat was stale can wait that long. Bound and margin, then.
const placedAfterHeartbeat = 10*time.Second + 2*time.Second

// TestChaos5HeartbeatStops is chaos scenario 5: the node's heartbeat stops (the device
// plugin keeps serving the kubelet but renews no Lease) while a job runs. After the
// staleness window the job is moved once (its attempt lost, not failed), the new attempt
// and a new job wait with vmafx-scheduler's stale-heartbeat reason, and once the Lease is
// renewed again (by a plugin that stamps no status.lastHeartbeat: the Lease alone brings
// the node back) a waiting Pod is placed within 2 s; both jobs succeed.
func TestChaos5HeartbeatStops(t *testing.T) {
	requireChaos(t)
	requireBaseline(t)
	ns := createNamespace(t)
	clip := newGatedClip(t, p01)
	moved := clip.job(ns, "moved")
	if err := c.Create(t.Context(), moved); err != nil {
		t.Fatal(err)
	}
	running := waitPhase(t, client.ObjectKeyFromObject(moved), 3*time.Minute, vmafxv1.JobRunning)

	restore := changeDevicePlugin(t, func(spec *corev1.PodSpec) {
		setEnv(&spec.Containers[0], "VMAFX_HEARTBEAT_INTERVAL", "0")
	})
	waitDevicePluginRolledOut(t, true)
	waitNodeHealthy(t, false)
	podGoneOrTerminal(t, ns, running.Status.PodName, 2*time.Minute)
	later := newJob(ns, "later", p01)
	if err := c.Create(t.Context(), later); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"moved", "later"} {
		eventually(t, 2*time.Minute, name+" waiting with the stale-heartbeat reason", func(ctx context.Context) error {
			pods, err := jobPods(ctx, ns, name)
			if err != nil {
				return err
			}
			for i := range pods {
				p := &pods[i]
				if p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
					continue
				}
				note, err := schedulingFailure(ctx, p)
				if err != nil {
					return err
				}
				if !strings.Contains(note, "stale VMAFX heartbeat") {
					return fmt.Errorf("FailedScheduling says %q", note)
				}
				return nil
			}
			return errors.New("no pending worker Pod")
		})
	}
	clip.release()

	before := heartbeatNow(t)
	leaseOnly(t)
	defer restore()
	var back time.Time
	eventually(t, 2*time.Minute, "a new heartbeat", func(ctx context.Context) error {
		if hb := heartbeatNow(t); hb.After(before) {
			back = time.Now()
			return nil
		}
		return errors.New("not yet")
	})
	var placed time.Time
	eventually(t, time.Minute, "a waiting worker Pod placed", func(ctx context.Context) error {
		for _, name := range []string{"moved", "later"} {
			pods, err := jobPods(ctx, ns, name)
			if err != nil {
				return err
			}
			for _, p := range pods {
				if p.Spec.NodeName != "" && p.CreationTimestamp.Time.After(running.CreationTimestamp.Time) {
					placed = time.Now()
					return nil
				}
			}
		}
		return errors.New("none placed")
	})
	t.Logf("a waiting Pod was placed %s after the heartbeat was back", placed.Sub(back).Round(10*time.Millisecond))
	if took := placed.Sub(back); took > placedAfterHeartbeat {
		t.Errorf("a waiting Pod was placed %s after the heartbeat was back; want within %s", took, placedAfterHeartbeat)
	}

	for _, j := range []*vmafxv1.VmafxJob{moved, later} {
		done := waitJobDone(t, client.ObjectKeyFromObject(j), 3*time.Minute)
		requireScore(t, done, p01)
	}
	done := &vmafxv1.VmafxJob{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(moved), done); err != nil {
		t.Fatal(err)
	}
	if done.Status.FailedAttempts != 0 || done.Status.LostAttempts != 1 || done.Status.Attempts != 2 {
		t.Errorf("moved: attempts %d, failed %d, lost %d; want 2, 0, 1", done.Status.Attempts, done.Status.FailedAttempts, done.Status.LostAttempts)
	}
	if n := nodeStaleEvents(t, ns, "moved"); n != 1 {
		t.Errorf("%d NodeStale events for the moved job; want 1 (moved once)", n)
	}
}

// heartbeatNow is the renewTime of the node's heartbeat Lease, zero without one.
func heartbeatNow(t *testing.T) time.Time {
	t.Helper()
	name, _ := vmafxv1.NodeLeaseName(nodeName)
	var lease coordinationv1.Lease
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: name}, &lease); err != nil || lease.Spec.RenewTime == nil {
		return time.Time{}
	}
	return lease.Spec.RenewTime.Time
}

// leaseOnly runs the device plugin with its default heartbeat period and no upgrade
// overlap (VMAFX_STATUS_HEARTBEAT_FOR=0): it renews the node's Lease and never stamps
// status.lastHeartbeat, so whatever the operator and vmafx-scheduler then see of the node
// comes from the Lease.
func leaseOnly(t *testing.T) {
	t.Helper()
	changeDevicePlugin(t, func(spec *corev1.PodSpec) {
		setEnv(&spec.Containers[0], "VMAFX_HEARTBEAT_INTERVAL", "10s")
		setEnv(&spec.Containers[0], "VMAFX_STATUS_HEARTBEAT_FOR", "0")
	})
	waitDevicePluginRolledOut(t, true)
}

func nodeStaleEvents(t *testing.T, ns, job string) int {
	t.Helper()
	var list eventsv1.EventList
	if err := c.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Reason == "NodeStale" && e.Regarding.Kind == "VmafxJob" && e.Regarding.Name == job {
			n++
			if e.Series != nil {
				n += int(e.Series.Count) - 1
			}
		}
	}
	return n
}
