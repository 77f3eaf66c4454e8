package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// chunkedJob is a job split into parallelism chunks, every other field at its default
// but the output, which chunked jobs need.
func chunkedJob(ns, name string, parallelism int32, mutate ...func(*vmafxv1.VmafxJobSpec)) *vmafxv1.VmafxJob {
	return newJob(ns, name, append([]func(*vmafxv1.VmafxJobSpec){func(s *vmafxv1.VmafxJobSpec) {
		s.Parallelism = parallelism
		s.Output = ptr.To(vmafxv1.OutputURI("s3://results/" + name + ".json"))
	}}, mutate...)...)
}

// probeMessage is the result of a probe that counted frames.
func probeMessage(frames int) string {
	b, _ := json.Marshal(vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Frames: frames, Backend: "cpu", Model: "vmaf_v0.6.1"})
	return string(b)
}

// runStep plays the scheduler and the kubelet running a step's Pod to the end.
func runStep(t *testing.T, ns, name, node string, exitCode int32, message string) *corev1.Pod {
	t.Helper()
	pod := waitForPod(t, ns, name)
	kubeletBind(t, pod, node, true)
	kubeletFinish(t, pod, exitCode, message)
	return pod
}

// TestChunkedJob: a job of parallelism 3 probes, runs three chunk Pods with their ranges,
// retries the one chunk that failed (alone), merges, and takes the merge's result.
func TestChunkedJob(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, chunkedJob(ns, "split", 3))

	probe := waitForPod(t, ns, "split-probe-1")
	if got := podRequest(t, probe).Score; !got.Probe || got.Chunk != nil || got.Merge != nil || probe.Labels[vmafxv1.LabelChunk] != "probe" {
		t.Errorf("probe Pod: request %+v, labels %v", got, probe.Labels)
	}
	j := waitForJob(t, ns, "split", "probing", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Chunks != nil && j.Status.Chunks.Probe != nil && j.Status.Phase == vmafxv1.JobPending
	})
	if c := j.Status.Chunks; c.Total != 0 || c.Probe.State != "P" {
		t.Errorf("chunks while probing: %+v", c)
	}
	runStep(t, ns, "split-probe-1", "node-a", 0, probeMessage(10))

	wantChunks := map[string]vmafxv1.RequestChunk{
		"split-c0-1": {Start: 0, Count: 4, TotalFrames: 10, Part: "s3://results/split.json.chunk-000"},
		"split-c1-1": {Start: 4, Count: 3, TotalFrames: 10, Part: "s3://results/split.json.chunk-001"},
		"split-c2-1": {Start: 7, Count: 3, TotalFrames: 10, Part: "s3://results/split.json.chunk-002"},
	}
	for i, name := range []string{"split-c0-1", "split-c1-1", "split-c2-1"} {
		pod := waitForPod(t, ns, name)
		if r := podRequest(t, pod).Score; r.Output != "s3://results/split.json" || r.Chunk == nil || *r.Chunk != wantChunks[name] || r.Probe || r.Merge != nil {
			t.Errorf("%s request %+v, chunk %+v; want the output and chunk %+v", name, r, r.Chunk, wantChunks[name])
		}
		if got := pod.Labels[vmafxv1.LabelChunk]; got != []string{"0", "1", "2"}[i] || pod.Spec.SchedulerName != vmafxv1.SchedulerName || pod.Labels[vmafxv1.LabelJob] != "split" {
			t.Errorf("%s: chunk label %q, scheduler %q, labels %v", name, got, pod.Spec.SchedulerName, pod.Labels)
		}
	}
	waitForJob(t, ns, "split", "planned 3 chunks", func(j *vmafxv1.VmafxJob) bool {
		c := j.Status.Chunks
		return c.Frames == 10 && c.Total == 3 && c.States == "PPP" && c.Progress == "0/3" && c.Probe.State == "D"
	})

	runStep(t, ns, "split-c0-1", "node-a", 0, resultMessage(90, 4))
	runStep(t, ns, "split-c2-1", "node-b", 0, resultMessage(90, 3))
	runStep(t, ns, "split-c1-1", "node-c", 3, errorMessage(vmafxv1.ReasonFetchFailed, "GET s3://media/ref.y4m: 503 Slow Down"))
	j = waitForJob(t, ns, "split", "chunk 1 retried", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Chunks.Attempts[1] == 2
	})
	if diff := cmp.Diff([]int32{0, 1, 0}, j.Status.Chunks.Failed); diff != "" {
		t.Errorf("failures per chunk (-want,+got):\n%s", diff)
	}
	runStep(t, ns, "split-c1-2", "node-c", 0, resultMessage(90, 3))

	merge := waitForPod(t, ns, "split-merge-1")
	if r := podRequest(t, merge).Score; r.Output != "s3://results/split.json" || r.Merge == nil || r.Merge.Parts != 3 || r.Chunk != nil {
		t.Errorf("merge request %+v", r)
	}
	waitForJob(t, ns, "split", "merging", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Chunks.Progress == "3/3" && j.Status.Chunks.States == "DDD"
	})
	runStep(t, ns, "split-merge-1", "node-b", 0, resultMessage(91.25, 10))
	j = waitForJob(t, ns, "split", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	if r := j.Status.Result; r.Mean != "91.250000" || r.Min != "88.250000" || r.Frames != 10 || j.Status.Score != "91.250000" {
		t.Errorf("result %+v; want the merge's", r)
	}
	if s := j.Status; s.Attempts != 6 || s.FailedAttempts != 1 || s.LostAttempts != 0 || s.Node != "node-b" || s.PodName != "split-merge-1" {
		t.Errorf("status: attempts %d, failed %d, lost %d, node %s, pod %s; want 6, 1, 0, node-b, split-merge-1",
			s.Attempts, s.FailedAttempts, s.LostAttempts, s.Node, s.PodName)
	}
	var names []string
	for _, p := range workerPods(t, ns, "split") {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"split-c0-1", "split-c1-1", "split-c1-2", "split-c2-1", "split-merge-1", "split-probe-1"}, names); diff != "" {
		t.Errorf("worker Pods (-want,+got): only chunk 1 is retried\n%s", diff)
	}
	eventually(t, 10*time.Second, "every Pod released", func() (bool, error) {
		for _, p := range workerPods(t, ns, "split") {
			if slices.Contains(p.Finalizers, vmafxv1.FinalizerResult) {
				return false, nil
			}
		}
		return true, nil
	})
	eventually(t, 10*time.Second, "ChunksPlanned and Succeeded events", func() (bool, error) {
		ev := jobEvents(t, ns, "split")
		return slices.Contains(ev, "ChunksPlanned") && slices.Contains(ev, "Succeeded"), nil
	})
}

// TestChunkedJobLostAndDeterministicFailures: a chunk whose Pod is deleted while it runs
// is replaced without counting against backoffLimit 0; a chunk that fails on bad input
// fails the job at once and stops the chunks still running.
func TestChunkedJobLostAndDeterministicFailures(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, chunkedJob(ns, "lossy", 2, func(s *vmafxv1.VmafxJobSpec) { s.BackoffLimit = ptr.To[int32](0) }))
	runStep(t, ns, "lossy-probe-1", "node-a", 0, probeMessage(5))

	c0 := waitForPod(t, ns, "lossy-c0-1")
	kubeletBind(t, c0, "node-a", true)
	c1 := waitForPod(t, ns, "lossy-c1-1")
	kubeletBind(t, c1, "node-b", true)
	waitForJob(t, ns, "lossy", "Running, both chunks running", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Phase == vmafxv1.JobRunning && j.Status.Chunks.States == "RR"
	})
	if err := testenv.Client().Delete(context.Background(), c0); err != nil {
		t.Fatal(err)
	}
	kubeletStopDeleted(t, c0)
	kubeletConfirmDeletion(t, ns, "lossy-c0-1")
	waitForPodGone(t, ns, "lossy-c0-1")
	c0b := waitForPod(t, ns, "lossy-c0-2")
	j := waitForJob(t, ns, "lossy", "chunk 0 lost, not failed", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.LostAttempts == 1 && j.Status.Chunks.Attempts[0] == 2
	})
	if j.Status.Phase == vmafxv1.JobFailed || j.Status.FailedAttempts != 0 {
		t.Fatalf("after chunk 0's Pod was deleted: phase %s, failedAttempts %d (%s)", j.Status.Phase, j.Status.FailedAttempts, j.Status.Message)
	}
	kubeletBind(t, c0b, "node-a", true)

	kubeletFinish(t, c1, 2, errorMessage(vmafxv1.ReasonBadInput, "distorted: cannot decode frame 3"))
	j = waitForJob(t, ns, "lossy", "Failed", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobFailed })
	if !strings.Contains(j.Status.Message, "chunk 1, attempt 1, failed (BadInput)") {
		t.Errorf("message %q; want it to name chunk 1 and BadInput", j.Status.Message)
	}
	eventually(t, 10*time.Second, "chunk 0's second Pod stopped", func() (bool, error) {
		p := waitForPod(t, ns, "lossy-c0-2")
		return p.DeletionTimestamp != nil, nil
	})
}

// TestChunkedJobProbeFailureFailsIt: a probe that finds the inputs unusable fails the job
// before any chunk is created.
func TestChunkedJobProbeFailureFailsIt(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, chunkedJob(ns, "unusable", 4))
	runStep(t, ns, "unusable-probe-1", "node-a", 2, errorMessage(vmafxv1.ReasonBadInput, "reference: not a video"))
	j := waitForJob(t, ns, "unusable", "Failed", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobFailed })
	if j.Status.Chunks.Total != 0 || !strings.Contains(j.Status.Message, "the probe, attempt 1, failed (BadInput)") {
		t.Errorf("status: %d chunks, message %q", j.Status.Chunks.Total, j.Status.Message)
	}
	if pods := workerPods(t, ns, "unusable"); len(pods) != 1 {
		t.Errorf("%d worker Pods; want the probe's alone", len(pods))
	}
}

// TestChunkedJobRespectsTheNamespaceLimit: with a limit of 2 live worker Pods per
// namespace, a job split in 3 runs two chunks at once and starts the third when one ends.
func TestChunkedJobRespectsTheNamespaceLimit(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvMaxWorkersPerNamespace, "2"))
	create(t, chunkedJob(ns, "capped", 3))
	runStep(t, ns, "capped-probe-1", "node-a", 0, probeMessage(9))
	waitForPod(t, ns, "capped-c0-1")
	waitForPod(t, ns, "capped-c1-1")
	// The probe's Pod has finished, so two chunks are live: the third must wait.
	consistently(t, 2*time.Second, "no third live chunk Pod", func() (bool, error) {
		var pod corev1.Pod
		err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "capped-c2-1"}, &pod)
		if err == nil {
			return false, fmt.Errorf("capped-c2-1 was created while two chunks ran")
		}
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	runStep(t, ns, "capped-c0-1", "node-a", 0, resultMessage(90, 3))
	waitForPod(t, ns, "capped-c2-1")
}

// podRequest is the worker request a worker Pod carries.
func podRequest(t *testing.T, pod *corev1.Pod) *vmafxv1.WorkerRequest {
	t.Helper()
	r, err := workerpod.Request(pod.Spec.Containers[0].Args)
	if err != nil {
		t.Fatalf("Pod %s: %v", pod.Name, err)
	}
	return r
}
