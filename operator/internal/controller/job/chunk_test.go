package job

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func chunkedTestJob() *vmafxv1.VmafxJob {
	return &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Name: "split", Namespace: "ns"},
		Spec:       vmafxv1.VmafxJobSpec{Parallelism: 3, Output: ptr.To[vmafxv1.OutputURI]("s3://b/out.json")},
	}
}

func TestStepPodName(t *testing.T) {
	job := chunkedTestJob()
	for step, want := range map[string]string{"probe": "split-probe-2", "merge": "split-merge-2", "7": "split-c7-2"} {
		if got := StepPodName(job, step, 2); got != want {
			t.Errorf("StepPodName(%s) = %q, want %q", step, got, want)
		}
	}
	long := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 253)}}
	if got := StepPodName(long, "255", 10); len(got) > 253 || !strings.HasSuffix(got, "-c255-10") {
		t.Errorf("long job name: %q (%d characters)", got, len(got))
	}
}

// TestStepsRoundTrip: the plan and the steps' progress survive status.chunks, the probe
// and the merge included, and the job's counters add up the steps'.
func TestStepsRoundTrip(t *testing.T) {
	job := chunkedTestJob()
	ss := loadSteps(job)
	ss.probe.state, ss.probe.attempts = vmafxv1.ChunkDone, 1
	ss.plan(job, 10)
	ss.chunks[0].state, ss.chunks[0].attempts = vmafxv1.ChunkDone, 1
	ss.chunks[1].state, ss.chunks[1].attempts, ss.chunks[1].failed = vmafxv1.ChunkFailed, 2, 2
	ss.chunks[2].state, ss.chunks[2].attempts = vmafxv1.ChunkRunning, 3 // two lost
	ss.store(job)
	want := &vmafxv1.JobChunks{Frames: 10, Total: 3, Done: 1, Progress: "1/3", States: "DFR",
		Attempts: []int32{1, 2, 3}, Failed: []int32{0, 2, 0}, Probe: &vmafxv1.ChunkStep{State: "D", Attempts: 1}}
	if diff := cmp.Diff(want, job.Status.Chunks); diff != "" {
		t.Errorf("status.chunks (-want,+got):\n%s", diff)
	}
	if s := job.Status; s.Attempts != 7 || s.FailedAttempts != 2 || s.LostAttempts != 2 {
		t.Errorf("attempts %d, failed %d, lost %d; want 7, 2, 2", s.Attempts, s.FailedAttempts, s.LostAttempts)
	}
	back := loadSteps(job)
	if diff := cmp.Diff(ss, back, cmp.AllowUnexported(steps{}, step{})); diff != "" {
		t.Errorf("loaded steps differ from the stored (-want,+got):\n%s", diff)
	}
	if got, want := back.chunks[1].chunk, (vmafxv1.RequestChunk{Start: 4, Count: 3, TotalFrames: 10, Part: "s3://b/out.json.chunk-001"}); got == nil || *got != want {
		t.Errorf("chunk 1's request: %+v, want %+v", got, want)
	}
	if got := back.merge.merge; got == nil || got.Parts != 3 || !back.probe.probe {
		t.Errorf("the merge's request: %+v, the probe's: %v", got, back.probe.probe)
	}
}

// TestRecordedStepPods: a step's Pod is released once the status records its outcome: an
// earlier attempt, or the current one done, failed or lost; never a running one.
func TestRecordedStepPods(t *testing.T) {
	job := chunkedTestJob()
	job.Status.Chunks = &vmafxv1.JobChunks{Frames: 10, Total: 3, States: "DFR", Attempts: []int32{1, 2, 3}, Failed: []int32{0, 2, 0},
		Probe: &vmafxv1.ChunkStep{State: "D", Attempts: 1}}
	pod := func(step string, n int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: step + "-" + string(rune('0'+n)),
			Labels: map[string]string{vmafxv1.LabelChunk: step, vmafxv1.LabelAttempt: string(rune('0' + n))}}}
	}
	pods := []*corev1.Pod{pod("probe", 1), pod("0", 1), pod("1", 1), pod("1", 2), pod("2", 2), pod("2", 3), pod("merge", 1), pod("9", 1)}
	var got []string
	for _, p := range recordedStepPods(job, pods) {
		got = append(got, p.Name)
	}
	if diff := cmp.Diff([]string{"probe-1", "0-1", "1-1", "1-2", "2-2"}, got); diff != "" {
		t.Errorf("released Pods (-want,+got):\n%s", diff)
	}
	job.Status.Phase = vmafxv1.JobFailed
	if n := len(recordedStepPods(job, pods)); n != len(pods) {
		t.Errorf("a finished job releases %d of %d Pods", n, len(pods))
	}
}
