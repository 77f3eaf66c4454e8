package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func condition(j *vmafxv1.VmafxJob, typ string) string {
	c := meta.FindStatusCondition(j.Status.Conditions, typ)
	if c == nil {
		return "<none>"
	}
	return string(c.Status) + "/" + c.Reason
}

func TestJobHappyPath(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "happy", func(s *vmafxv1.VmafxJobSpec) {
		s.ActiveDeadlineSeconds = ptr.To[int64](600)
		s.Reference, s.Distorted, s.Width, s.Height = "file:///data/ref.yuv", "file:///data/dist.yuv", ptr.To[int32](176), ptr.To[int32](144)
		s.Volume = &vmafxv1.JobVolume{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}}
	}))

	pod := waitForPod(t, ns, "happy-1")
	t.Run("worker Pod", func(t *testing.T) {
		c := pod.Spec.Containers[0]
		got := map[string]any{
			"scheduler":      pod.Spec.SchedulerName,
			"slot limit":     c.Resources.Limits.Name(vmafxv1.ResourceSlot, resource.DecimalSI).String(),
			"job label":      pod.Labels[vmafxv1.LabelJob],
			"attempt label":  pod.Labels[vmafxv1.LabelAttempt],
			"backend":        pod.Annotations[vmafxv1.AnnotationBackend],
			"restart":        string(pod.Spec.RestartPolicy),
			"deadline":       *pod.Spec.ActiveDeadlineSeconds,
			"termination":    string(c.TerminationMessagePolicy),
			"token":          *pod.Spec.AutomountServiceAccountToken,
			"non-root":       *pod.Spec.SecurityContext.RunAsNonRoot,
			"read-only root": *c.SecurityContext.ReadOnlyRootFilesystem,
			"caps dropped":   c.SecurityContext.Capabilities.Drop,
			"image":          c.Image,
			"owner":          pod.OwnerReferences[0].Kind + "/" + pod.OwnerReferences[0].Name,
			"data mount":     c.VolumeMounts[1].MountPath + " ro=" + map[bool]string{true: "true", false: "false"}[c.VolumeMounts[1].ReadOnly],
			"request":        podRequest(t, pod).Score,
			"claim ro":       pod.Spec.Volumes[1].PersistentVolumeClaim.ReadOnly,
			"finalizers":     pod.Finalizers,
			"job name":       pod.Annotations[vmafxv1.AnnotationJobName],
			"hostname":       pod.Spec.Hostname,
		}
		want := map[string]any{
			"scheduler": "vmafx-scheduler", "slot limit": "1", "job label": "happy", "attempt label": "1",
			"backend": "auto", "restart": "Never", "deadline": int64(600), "termination": "FallbackToLogsOnError",
			"token": false, "non-root": true, "read-only root": true, "caps dropped": []corev1.Capability{"ALL"},
			"image": "vmafx-worker:test", "owner": "VmafxJob/happy", "data mount": "/data ro=true",
			"request": &vmafxv1.ScoreRequest{Reference: "file:///data/ref.yuv", Distorted: "file:///data/dist.yuv", Width: 176, Height: 144,
				PixelFormat: "yuv420p", Model: "vmaf_v0.6.1"},
			"claim ro": true, "finalizers": []string{vmafxv1.FinalizerResult}, "job name": "happy", "hostname": "happy-1",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("worker Pod (-want +got):\n%s", diff)
		}
	})

	waitForJobWithin(t, queuedShown, ns, "happy", "Pending, waiting for the scheduler", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Phase == vmafxv1.JobPending && j.Status.Attempts == 1 && condition(j, vmafxv1.JobScheduled) == "False/WaitingForScheduler"
	})
	kubeletBind(t, pod, "node-a", true)
	j := waitForJob(t, ns, "happy", "Running on node-a", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Phase == vmafxv1.JobRunning && j.Status.Node == "node-a" && j.Status.StartTime != nil
	})
	if got := condition(j, vmafxv1.JobScheduled) + " " + condition(j, vmafxv1.JobRunningCondition); got != "True/Scheduled True/Started" {
		t.Errorf("conditions while running: %s", got)
	}
	kubeletFinish(t, pod, 0, resultMessage(93.123456789, 24))
	j = waitForJob(t, ns, "happy", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	wantResult := &vmafxv1.JobResult{Mean: "93.123457", HarmonicMean: "92.623457", Min: "90.123457", Max: "95.123457",
		Frames: 24, FPS: "120.50", Backend: "cpu", Model: "vmaf_v0.6.1@sha256:4d5c",
		JobWorst: vmafxv1.JobWorst{Percentiles: &vmafxv1.JobPercentiles{P1: "90.623457", P5: "91.123457", P50: "93.123457"},
			WorstFrames: []vmafxv1.JobFrame{{Index: 23, VMAF: "90.123457"}}}}
	if diff := cmp.Diff(wantResult, j.Status.Result); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if j.Status.Score != "93.123457" || j.Status.CompletionTime == nil || j.Status.PodName != "happy-1" ||
		condition(j, vmafxv1.JobComplete) != "True/Succeeded" || j.Status.ObservedGeneration != j.Generation {
		t.Errorf("status after success: %+v", j.Status)
	}
	eventually(t, 10*time.Second, "events PodCreated and Succeeded", func() (bool, error) {
		ev := jobEvents(t, ns, "happy")
		return slices.Contains(ev, "PodCreated") && slices.Contains(ev, "Succeeded"), nil
	})
}

func TestJobExplainsWhyItIsUnschedulable(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "stuck", func(s *vmafxv1.VmafxJobSpec) { s.Backend = vmafxv1.BackendCUDA }))
	pod := waitForPod(t, ns, "stuck-1")
	msg := "0/3 nodes are available: 2 node(s) had a stale VMAFX heartbeat (last 94s ago), 1 node(s) offer amd but the job needs cuda."
	schedulerReject(t, pod, msg)
	j := waitForJob(t, ns, "stuck", "Scheduled=False/Unschedulable", func(j *vmafxv1.VmafxJob) bool {
		return condition(j, vmafxv1.JobScheduled) == "False/Unschedulable"
	})
	c := meta.FindStatusCondition(j.Status.Conditions, vmafxv1.JobScheduled)
	if c.Message != msg || j.Status.Message != msg || j.Status.Phase != vmafxv1.JobPending {
		t.Errorf("job does not carry the scheduler's words: phase %s, condition %q, message %q", j.Status.Phase, c.Message, j.Status.Message)
	}
}

// TestJobShowsItWaitsForASlot: a Pod that waits only because every slot is taken is a
// job waiting its turn, shown once the wait has lasted queuedDelay (30 s, not 5 s: a burst
// that gets its slots sooner writes no such state), still in the scheduler's words.
func TestJobShowsItWaitsForASlot(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "queued"))
	pod := waitForPod(t, ns, "queued-1")
	msg := "0/3 nodes are available: 2 Insufficient vmafx.dev/slot, 1 node(s) had no free vmafx.dev/slot. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	schedulerReject(t, pod, msg)
	j := waitForJobWithin(t, queuedShown, ns, "queued", "Scheduled=False/Unschedulable", func(j *vmafxv1.VmafxJob) bool {
		return condition(j, vmafxv1.JobScheduled) == "False/Unschedulable"
	})
	if c := meta.FindStatusCondition(j.Status.Conditions, vmafxv1.JobScheduled); c.Message != msg || j.Status.Phase != vmafxv1.JobPending {
		t.Errorf("job does not carry the scheduler's words: phase %s, condition %q", j.Status.Phase, c.Message)
	}
}

func TestJobRetriesAFailedAttempt(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "flaky"))
	pod1 := waitForPod(t, ns, "flaky-1")
	kubeletBind(t, pod1, "node-a", true)
	kubeletFinish(t, pod1, 3, errorMessage(vmafxv1.ReasonFetchFailed, "GET http://media/ref.y4m: 503 Service Unavailable"))

	pod2 := waitForPod(t, ns, "flaky-2")
	waitForJob(t, ns, "flaky", "attempts 2, failedAttempts 1", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Attempts == 2 && j.Status.FailedAttempts == 1
	})
	kubeletBind(t, pod2, "node-b", true)
	kubeletFinish(t, pod2, 0, resultMessage(80, 10))
	j := waitForJob(t, ns, "flaky", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	if j.Status.Node != "node-b" || j.Status.PodName != "flaky-2" || j.Status.Score != "80.000000" {
		t.Errorf("status: node %s, pod %s, score %s", j.Status.Node, j.Status.PodName, j.Status.Score)
	}
	eventually(t, 10*time.Second, "AttemptFailed event", func() (bool, error) {
		return slices.Contains(jobEvents(t, ns, "flaky"), "AttemptFailed"), nil
	})
}

func TestJobFailsWhenTheBackoffLimitIsReached(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "broken", func(s *vmafxv1.VmafxJobSpec) { s.BackoffLimit = ptr.To[int32](1) }))
	for _, name := range []string{"broken-1", "broken-2"} {
		pod := waitForPod(t, ns, name)
		kubeletBind(t, pod, "node-a", true)
		kubeletFinish(t, pod, 3, errorMessage(vmafxv1.ReasonFetchFailed, "GET https://media.example.com/dist.y4m: 503 Service Unavailable"))
	}
	j := waitForJob(t, ns, "broken", "Failed", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobFailed })
	c := meta.FindStatusCondition(j.Status.Conditions, vmafxv1.JobFailedCondition)
	if c == nil || c.Reason != vmafxv1.ReasonFetchFailed || !strings.Contains(c.Message, "503 Service Unavailable") {
		t.Errorf("Failed condition %+v; want the worker's reason FetchFailed and message", c)
	}
	if j.Status.Score != "" || j.Status.Result != nil || j.Status.FailedAttempts != 2 || j.Status.CompletionTime == nil {
		t.Errorf("failed job status: %+v", j.Status)
	}
	// The backoff is 200 ms here: a wrong third attempt would show within a second.
	consistently(t, time.Second, "no attempt after the limit", func() (bool, error) {
		return len(workerPods(t, ns, "broken")) == 2, nil
	})
}

func TestJobNeverRecordsAnUnparsableResult(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "garbled"))
	pod := waitForPod(t, ns, "garbled-1")
	kubeletBind(t, pod, "node-a", true)
	kubeletFinish(t, pod, 0, "VMAF score: 97.2\n")
	j := waitForJob(t, ns, "garbled", "Failed", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobFailed })
	if condition(j, vmafxv1.JobFailedCondition) != "True/UnparsableResult" || j.Status.Score != "" || j.Status.Result != nil {
		t.Errorf("status: %+v", j.Status)
	}
	if !strings.Contains(j.Status.Message, "not a worker result") {
		t.Errorf("message %q does not name the problem", j.Status.Message)
	}
	if j.Status.Attempts != 1 {
		t.Errorf("%d attempts; an unparsable result is not retried (the same worker writes the same)", j.Status.Attempts)
	}
}

func TestJobReplacesADeletedPod(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "orphaned", func(s *vmafxv1.VmafxJobSpec) { s.BackoffLimit = ptr.To[int32](0) }))
	pod := waitForPod(t, ns, "orphaned-1")
	if err := testenv.Client().Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	pod2 := waitForPod(t, ns, "orphaned-2")
	j := waitForJob(t, ns, "orphaned", "attempt 2", func(j *vmafxv1.VmafxJob) bool { return j.Status.Attempts == 2 })
	if j.Status.FailedAttempts != 0 {
		t.Errorf("a lost Pod counted as a failure: failedAttempts %d", j.Status.FailedAttempts)
	}
	// backoffLimit 0 and still succeeds: the lost attempt did not use the budget.
	kubeletBind(t, pod2, "node-a", true)
	kubeletFinish(t, pod2, 0, resultMessage(70, 5))
	waitForJob(t, ns, "orphaned", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	eventually(t, 10*time.Second, "PodLost event", func() (bool, error) {
		return slices.Contains(jobEvents(t, ns, "orphaned"), "PodLost"), nil
	})
}

func TestOperatorRestartKeepsOnePodPerAttempt(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	// A crash between creating a Pod and recording it: the Pod exists, the status does not
	// know it. The operator must adopt it, not create another.
	job := newJob(ns, "survivor")
	create(t, job)
	op := startOperator(t, operatorEnv())
	pod := waitForPod(t, ns, "survivor-1")
	op.stop()

	restarted := startOperator(t, operatorEnv())
	kubeletBind(t, pod, "node-a", true)
	waitForJob(t, ns, "survivor", "Running after restart", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobRunning })
	restarted.stop()
	// Wipe what the operator wrote, as a lost status write would.
	j := getJob(t, ns, "survivor")
	j.Status = vmafxv1.VmafxJobStatus{}
	if err := testenv.Client().Status().Update(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	startOperator(t, operatorEnv())
	kubeletFinish(t, pod, 0, resultMessage(88, 12))
	j = waitForJob(t, ns, "survivor", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	if pods := workerPods(t, ns, "survivor"); len(pods) != 1 || j.Status.Attempts != 1 {
		t.Errorf("%d worker Pods, attempts %d; want exactly one of each", len(pods), j.Status.Attempts)
	}
}

func TestConcurrentReconcilesNeverDuplicateAPod(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	// Two operators without leader election race on the same jobs; deterministic names
	// and optimistic status writes must still give exactly one Pod per job.
	startOperator(t, operatorEnv())
	startOperator(t, operatorEnv())
	for i := range 20 {
		create(t, newJob(ns, "race-"+string(rune('a'+i))))
	}
	podsPerJob := func() map[string]int {
		var pods corev1.PodList
		if err := testenv.Client().List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, p := range pods.Items {
			seen[p.Labels[vmafxv1.LabelJob]]++
		}
		return seen
	}
	eventually(t, 30*time.Second, "a Pod for each of the 20 jobs", func() (bool, error) { return len(podsPerJob()) == 20, nil })
	// Both operators saw every job; a duplicate would follow within their next reconciles.
	consistently(t, 2*time.Second, "exactly one Pod per job", func() (bool, error) {
		for job, n := range podsPerJob() {
			if n != 1 {
				return false, fmt.Errorf("job %s has %d Pods", job, n)
			}
		}
		return true, nil
	})
}
