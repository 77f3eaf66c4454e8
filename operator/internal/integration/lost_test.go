package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestDeletedRunningPodIsLostNotFailed: `kubectl delete pod` of a running worker, played
// through as the kubelet does it (the worker is stopped, reports its cancellation, and the
// Pod turns Failed before it goes), does not count against backoffLimit 0: the job goes
// on to attempt 2 and succeeds.
func TestDeletedRunningPodIsLostNotFailed(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "deleted", func(s *vmafxv1.VmafxJobSpec) { s.BackoffLimit = ptr.To[int32](0) }))
	pod := waitForPod(t, ns, "deleted-1")
	kubeletBind(t, pod, "node-a", true)
	waitForJob(t, ns, "deleted", "Running", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobRunning })

	if err := testenv.Client().Delete(context.Background(), pod); err != nil { // kubectl delete pod
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "deleted-1 terminating", func() (bool, error) {
		p := waitForPod(t, ns, "deleted-1")
		return p.DeletionTimestamp != nil, nil
	})
	kubeletStopDeleted(t, pod)
	j := waitForJob(t, ns, "deleted", "attempt 2 or Failed", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Attempts == 2 || j.Status.Phase == vmafxv1.JobFailed
	})
	if j.Status.Phase == vmafxv1.JobFailed || j.Status.FailedAttempts != 0 || j.Status.LostAttempts != 1 {
		t.Fatalf("after the Pod was deleted: phase %s, failedAttempts %d, lostAttempts %d (%s); want attempt 2, 0 failed, 1 lost",
			j.Status.Phase, j.Status.FailedAttempts, j.Status.LostAttempts, j.Status.Message)
	}
	kubeletConfirmDeletion(t, ns, "deleted-1")
	waitForPodGone(t, ns, "deleted-1")

	pod2 := waitForPod(t, ns, "deleted-2")
	kubeletBind(t, pod2, "node-a", true)
	kubeletFinish(t, pod2, 0, resultMessage(77, 24))
	waitForJob(t, ns, "deleted", "Succeeded on attempt 2", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Phase == vmafxv1.JobSucceeded && j.Status.Attempts == 2
	})
	eventually(t, 10*time.Second, "PodLost event", func() (bool, error) {
		return slices.Contains(jobEvents(t, ns, "deleted"), "PodLost"), nil
	})
}

// TestKubeletRefusalsAndDisruptionsAreLost: Pods that the kubelet refuses at admission or
// that something disrupts are lost, not failed, whatever backoffLimit allows.
func TestKubeletRefusalsAndDisruptionsAreLost(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	outcomes := []func(*corev1.PodStatus){
		func(s *corev1.PodStatus) {
			s.Phase, s.Reason = corev1.PodFailed, "UnexpectedAdmissionError"
			s.Message = "Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy devices vmafx.dev/slot"
		},
		func(s *corev1.PodStatus) {
			s.Phase, s.Reason, s.Message = corev1.PodFailed, "Terminated", "Pod was terminated in response to imminent node shutdown."
		},
		func(s *corev1.PodStatus) {
			s.Phase = corev1.PodFailed
			s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "PreemptionByScheduler", Message: "vmafx-scheduler: preempting to accommodate a higher priority pod", LastTransitionTime: metav1.Now()})
		},
	}
	create(t, newJob(ns, "unlucky", func(s *vmafxv1.VmafxJobSpec) { s.BackoffLimit = ptr.To[int32](0) }))
	for i, outcome := range outcomes {
		pod := waitForPod(t, ns, podName("unlucky", int32(i+1)))
		kubeletBind(t, pod, "node-a", false)
		kubeletSetStatus(t, pod, outcome)
	}
	last := waitForPod(t, ns, podName("unlucky", int32(len(outcomes)+1)))
	kubeletBind(t, last, "node-a", true)
	kubeletFinish(t, last, 0, resultMessage(66, 10))
	j := waitForJob(t, ns, "unlucky", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return finished(j) })
	if j.Status.Phase != vmafxv1.JobSucceeded || j.Status.FailedAttempts != 0 || j.Status.LostAttempts != int32(len(outcomes)) {
		t.Errorf("phase %s, failedAttempts %d, lostAttempts %d (%s); want Succeeded, 0, %d",
			j.Status.Phase, j.Status.FailedAttempts, j.Status.LostAttempts, j.Status.Message, len(outcomes))
	}
}

// TestDeterministicFailureFailsAtOnce: a worker that says its input is unusable is not
// retried, whatever backoffLimit (default 2) allows.
func TestDeterministicFailureFailsAtOnce(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "truncated"))
	pod := waitForPod(t, ns, "truncated-1")
	kubeletBind(t, pod, "node-a", true)
	kubeletFinish(t, pod, 2, errorMessage(vmafxv1.ReasonBadInput, "distorted: truncated frame 7 (expected 38016 bytes, got 1200)"))
	j := waitForJob(t, ns, "truncated", "Failed", func(j *vmafxv1.VmafxJob) bool { return finished(j) })
	if j.Status.Phase != vmafxv1.JobFailed || condition(j, vmafxv1.JobFailedCondition) != "True/BadInput" || j.Status.Attempts != 1 {
		t.Errorf("phase %s, Failed %s, attempts %d; want Failed at once with BadInput after 1 attempt", j.Status.Phase,
			condition(j, vmafxv1.JobFailedCondition), j.Status.Attempts)
	}
	eventually(t, 10*time.Second, "NotRetried event", func() (bool, error) {
		return slices.Contains(jobEvents(t, ns, "truncated"), "NotRetried"), nil
	})
	if pods := workerPods(t, ns, "truncated"); len(pods) != 1 {
		t.Errorf("%d worker Pods; want 1", len(pods))
	}
}

// TestPodStuckTerminatingIsBounded: a deleted Pod whose kubelet never answers (its node
// is gone) is force-deleted after the terminating timeout and its attempt counts as lost.
func TestPodStuckTerminatingIsBounded(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv("VMAFX_OPERATOR_TERMINATING_TIMEOUT", "1s"))
	create(t, newJob(ns, "stuck"))
	pod := waitForPod(t, ns, "stuck-1")
	kubeletBind(t, pod, "node-gone", true)
	waitForJob(t, ns, "stuck", "Running", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobRunning })
	if err := testenv.Client().Delete(context.Background(), pod, client.GracePeriodSeconds(1)); err != nil {
		t.Fatal(err)
	}
	waitForPod(t, ns, "stuck-2")
	waitForPodGone(t, ns, "stuck-1")
	j := getJob(t, ns, "stuck")
	if j.Status.LostAttempts != 1 || j.Status.FailedAttempts != 0 {
		t.Errorf("lostAttempts %d, failedAttempts %d; want 1 and 0", j.Status.LostAttempts, j.Status.FailedAttempts)
	}
}

// TestPodThatNeverStartsIsBounded: a Pod bound to a node whose container never starts
// (its image cannot be pulled) fails its attempt with the kubelet's reason after the
// start timeout, and the next attempt follows once the Pod is gone.
func TestPodThatNeverStartsIsBounded(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv("VMAFX_OPERATOR_POD_START_TIMEOUT", "2s"))
	create(t, newJob(ns, "unpulled"))
	pod := waitForPod(t, ns, "unpulled-1")
	kubeletBind(t, pod, "node-a", false)
	kubeletSetStatus(t, pod, func(s *corev1.PodStatus) {
		s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: "vmafx-worker:test", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "vmafx-worker:test"`}}}}
	})
	j := waitForJob(t, ns, "unpulled", "the kubelet's reason shown", func(j *vmafxv1.VmafxJob) bool {
		return condition(j, vmafxv1.JobRunningCondition) == "False/ImagePullBackOff" || j.Status.FailedAttempts > 0
	})
	t.Logf("while waiting: %s", j.Status.Message)
	eventually(t, 20*time.Second, "unpulled-1 deleted after the start timeout", func() (bool, error) {
		p := waitForPod(t, ns, "unpulled-1")
		return p.DeletionTimestamp != nil, nil
	})
	// The operator deletes the Pod, then records the failure in the same reconcile's
	// status write: wait for that write rather than racing it.
	j = waitForJob(t, ns, "unpulled", "the failed attempt recorded", func(j *vmafxv1.VmafxJob) bool { return j.Status.FailedAttempts > 0 })
	if j.Status.FailedAttempts != 1 {
		t.Errorf("failedAttempts %d; want 1 (%s)", j.Status.FailedAttempts, j.Status.Message)
	}
	kubeletConfirmDeletion(t, ns, "unpulled-1")
	waitForPod(t, ns, "unpulled-2")
}
