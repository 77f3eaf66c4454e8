package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// staleWait bounds the wait for the node to turn unhealthy: the shipped stale threshold
// is 60 s (operator VMAFX_OPERATOR_NODE_STALE_AFTER, vmafx-scheduler heartbeatStaleAfter),
// plus one heartbeat period and the operator's recheck.
const staleWait = 2 * time.Minute

// TestHeartbeat is scenario 3, in two parts.
//
// When the device plugin keeps serving the kubelet but its heartbeat stops (it runs with
// VMAFX_HEARTBEAT_INTERVAL=0: no API server access, so its Lease is not renewed), the node
// keeps its slots, the VmafxNode turns unhealthy after the stale threshold, a new job stays
// Pending with vmafx-scheduler's stale-heartbeat reason in `kubectl describe`, and once the
// Lease is renewed again (by a plugin that stamps no status.lastHeartbeat) the job is
// placed within seconds and succeeds.
//
// When the device plugin stops altogether, the kubelet marks its slots unhealthy (node
// allocatable 0) within seconds, so the job stays Pending for want of a slot, which is
// the reason vmafx-scheduler gives first; restarting the plugin places the job.
func TestHeartbeat(t *testing.T) {
	requireBaseline(t)
	t.Run("heartbeat stops", func(t *testing.T) {
		ns := createNamespace(t)
		restore := changeDevicePlugin(t, func(spec *corev1.PodSpec) {
			setEnv(&spec.Containers[0], "VMAFX_HEARTBEAT_INTERVAL", "0")
		})
		waitDevicePluginRolledOut(t, true)
		waitNodeHealthy(t, false)

		job := newJob(ns, "stale", p01)
		if err := c.Create(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		var pod *corev1.Pod
		eventually(t, time.Minute, "worker Pod Pending with the stale-heartbeat reason", func(ctx context.Context) error {
			var err error
			if pod, err = workerPod(ctx, ns, job.Name); err != nil {
				return err
			}
			if pod.Spec.NodeName != "" {
				t.Fatalf("worker Pod was placed on %s despite the stale heartbeat", pod.Spec.NodeName)
			}
			note, err := schedulingFailure(ctx, pod)
			if err != nil {
				return err
			}
			if !strings.Contains(note, "stale VMAFX heartbeat") {
				return fmt.Errorf("FailedScheduling says %q", note)
			}
			return nil
		})
		if out := kubectl(t, "describe", "pod", "--namespace", ns, pod.Name); !strings.Contains(out, "stale VMAFX heartbeat") {
			t.Errorf("kubectl describe pod does not show the VMAFX reason:\n%s", out)
		}

		leaseOnly(t)
		back := time.Now()
		done := waitJobDone(t, client.ObjectKeyFromObject(job), time.Minute)
		if done.Status.Phase != vmafxv1.JobSucceeded {
			t.Fatalf("job %s: %s", done.Status.Phase, done.Status.Message)
		}
		t.Logf("heartbeat back to job Succeeded in %s", time.Since(back).Round(100*time.Millisecond))
		restore()
	})

	t.Run("device plugin stops", func(t *testing.T) {
		ns := createNamespace(t)
		restore := changeDevicePlugin(t, func(spec *corev1.PodSpec) {
			if spec.NodeSelector == nil {
				spec.NodeSelector = map[string]string{}
			}
			spec.NodeSelector["vmafx.dev/e2e-no-such-node"] = "true"
		})
		waitDevicePluginRolledOut(t, false)
		eventually(t, time.Minute, "node allocatable "+vmafxv1.ResourceSlot+" 0", func(ctx context.Context) error {
			n, err := allocatableSlots(ctx)
			if err != nil {
				return err
			}
			if n != 0 {
				return fmt.Errorf("allocatable %d", n)
			}
			return nil
		})

		job := newJob(ns, "no-plugin", p01)
		if err := c.Create(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "worker Pod Pending for want of a slot", func(ctx context.Context) error {
			pod, err := workerPod(ctx, ns, job.Name)
			if err != nil {
				return err
			}
			if pod.Spec.NodeName != "" {
				t.Fatalf("worker Pod was placed on %s without a device plugin", pod.Spec.NodeName)
			}
			_, err = schedulingFailure(ctx, pod)
			return err
		})

		restore()
		back := time.Now()
		done := waitJobDone(t, client.ObjectKeyFromObject(job), time.Minute)
		if done.Status.Phase != vmafxv1.JobSucceeded {
			t.Fatalf("job %s: %s", done.Status.Phase, done.Status.Message)
		}
		t.Logf("device plugin back to job Succeeded in %s", time.Since(back).Round(100*time.Millisecond))
	})
}

// waitNodeHealthy waits until the node's VmafxNode reports healthy as wanted.
func waitNodeHealthy(t *testing.T, healthy bool) {
	t.Helper()
	eventually(t, staleWait, fmt.Sprintf("VmafxNode %s healthy=%v", nodeName, healthy), func(ctx context.Context) error {
		var vn vmafxv1.VmafxNode
		if err := c.Get(ctx, types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: nodeName}, &vn); err != nil {
			return err
		}
		if vn.Status.Healthy != healthy {
			return errors.New("not yet")
		}
		return nil
	})
}

// setEnv sets an environment variable of a container, replacing an existing one.
func setEnv(ctr *corev1.Container, name, value string) {
	for i := range ctr.Env {
		if ctr.Env[i].Name == name {
			ctr.Env[i] = corev1.EnvVar{Name: name, Value: value}
			return
		}
	}
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: name, Value: value})
}
