package job

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/workermemory"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
	"github.com/vmafx/vmafx/vmaf"
)

// renditionsJob is a job of three distorted videos, each with its output.
func renditionsJob() *vmafxv1.VmafxJob {
	return &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Name: "group", Namespace: "ns", UID: "u1"}, Spec: vmafxv1.VmafxJobSpec{
		Reference: "s3://media/ref.y4m", Distorted: "s3://media/dist.mp4",
		Output: ptr.To[vmafxv1.OutputURI]("s3://results/dist.json"), OutputFormat: vmafxv1.OutputJSON,
		Renditions: []vmafxv1.JobRendition{
			{Distorted: "s3://media/dist-2.mp4", Output: ptr.To[vmafxv1.OutputURI]("s3://results/dist-2.json")},
			{Distorted: "s3://media/dist-3.mp4", Output: ptr.To[vmafxv1.OutputURI]("s3://results/dist-3.json")},
		},
		Features: []vmafxv1.Feature{vmafxv1.FeaturePSNR}, BackoffLimit: ptr.To[int32](2),
	}}
}

// requestOf is the score request of job's worker Pod.
func requestOf(t *testing.T, job *vmafxv1.VmafxJob) *vmafxv1.ScoreRequest {
	t.Helper()
	req, err := workerpod.Request(buildPod(job, 1, config.WorkerConfig{Image: "w:dev"}).Spec.Containers[0].Args)
	if err != nil {
		t.Fatal(err)
	}
	return req.Score
}

// TestRenditionsRequestMissingOnly: a retry's Pod scores only the distorted videos
// without a row yet, the first of them in the request's own distorted field.
func TestRenditionsRequestMissingOnly(t *testing.T) {
	job := renditionsJob()
	job.Status.Results = []vmafxv1.JobRenditionResult{{Distorted: "s3://media/dist.mp4", Phase: vmafxv1.JobSucceeded, Mean: "90.000000"}}
	r := requestOf(t, job)
	want := []vmafxv1.RequestRendition{{Distorted: "s3://media/dist-3.mp4", Output: "s3://results/dist-3.json"}}
	if r.Distorted != "s3://media/dist-2.mp4" || r.Output != "s3://results/dist-2.json" || len(r.Renditions) != 1 || r.Renditions[0] != want[0] {
		t.Errorf("request scores %s (%s) and %+v; want dist-2 with its output, then %+v", r.Distorted, r.Output, r.Renditions, want)
	}
	job.Status.Results = append(job.Status.Results, vmafxv1.JobRenditionResult{Distorted: "s3://media/dist-3.mp4", Phase: vmafxv1.JobFailed})
	if r := requestOf(t, job); r.Distorted != "s3://media/dist-2.mp4" || len(r.Renditions) != 0 || r.OutputFormat != "json" {
		t.Errorf("one left: request scores %s and %+v (format %q), want dist-2 alone in json", r.Distorted, r.Renditions, r.OutputFormat)
	}
	job.Spec.Renditions[0].Output = nil
	if r := requestOf(t, job); r.Output != "" || r.OutputFormat != "" {
		t.Errorf("one left without an output: output %q, format %q; want neither", r.Output, r.OutputFormat)
	}
}

// endedPod is attempt n's worker Pod of job, ended with the worker's result res.
func endedPod(t *testing.T, job *vmafxv1.VmafxJob, n int32, res *vmafxv1.WorkerResult, exit int32) *corev1.Pod {
	t.Helper()
	msg, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	pod := buildPod(job, n, config.WorkerConfig{Image: "w:dev"})
	pod.Spec.NodeName = "n1"
	pod.Status.Phase = corev1.PodSucceeded
	if exit != 0 {
		pod.Status.Phase = corev1.PodFailed
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: workerpod.ContainerName, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Message: string(msg), FinishedAt: metav1.NewTime(time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC))},
	}}}
	return pod
}

func row(score float64) vmafxv1.WorkerRendition {
	return vmafxv1.WorkerRendition{Score: score, HarmonicMean: score - 1, Min: score - 10, Max: score + 1, Frames: 48, FPS: 30,
		Percentiles: &vmafxv1.WorkerPercentiles{P1: score - 8, P5: score - 5, P50: score},
		WorstFrames: []vmafxv1.WorkerFrame{{Index: 7, VMAF: score - 10}, {Index: 9, VMAF: score - 9}},
		Scenes:      &vmafxv1.WorkerScenes{Count: 2, Worst: &vmafxv1.WorkerScene{Start: 24, Frames: 24, Mean: score - 2, Min: score - 10, P5: score - 6}},
		Report:      true, Features: map[string]float64{"psnr_y": 40}}
}

func failedRow(reason, msg string) vmafxv1.WorkerRendition {
	return vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: reason, Message: msg}}
}

func rowsResult(rows ...vmafxv1.WorkerRendition) *vmafxv1.WorkerResult {
	return &vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Backend: "cpu", Model: "vmaf_v0.6.1", Renditions: rows}
}

// end runs what the controller does when attempt n's Pod of job ended with res.
func end(t *testing.T, job *vmafxv1.VmafxJob, n int32, res *vmafxv1.WorkerResult, exit int32) {
	t.Helper()
	job.Status.Attempts = n
	pod := endedPod(t, job, n, res, exit)
	got := renditionsResult(job, pod)
	if got == nil {
		t.Fatalf("attempt %d: the Pod's rows are not recorded", n)
	}
	r := &Reconciler{Attempts: config.Attempts{RetryBackoff: time.Second, MaxRetryBackoff: time.Minute}}
	s := &scope{job: job, pods: []*corev1.Pod{pod}, now: time.Date(2026, 11, 27, 7, 0, 1, 0, time.UTC)}
	r.renditionsEnded(s, n, pod, observe(pod), got)
}

// TestRenditionsRows: the rows are recorded in spec order; a BadInput row is final, a
// FetchFailed one is scored again by the next attempt, which lists only it; the job
// succeeds once every video has its row, with spec.distorted's score as its own.
func TestRenditionsRows(t *testing.T) {
	job := renditionsJob()
	end(t, job, 1, rowsResult(row(91), failedRow(vmafxv1.ReasonBadInput, "distorted: 640x360, the reference 1280x720"),
		failedRow(vmafxv1.ReasonFetchFailed, "distorted: connection reset")), 0)
	st := &job.Status
	if st.Phase != vmafxv1.JobPending || st.FailedAttempts != 1 || len(st.Results) != 2 || !lastFailed(job) {
		t.Fatalf("after attempt 1: phase %s, failed attempts %d, %d rows, message %q; want Pending to retry, 1 failed attempt, 2 rows",
			st.Phase, st.FailedAttempts, len(st.Results), st.Message)
	}
	if r := st.Results[1]; r.Distorted != "s3://media/dist-2.mp4" || r.Phase != vmafxv1.JobFailed || r.Reason != vmafxv1.ReasonBadInput {
		t.Errorf("row 2 %+v, want dist-2 failed with BadInput", r)
	}
	if st.Score != "91.000000" || st.Result == nil || st.Result.Percentiles.P5 != "86.000000" {
		t.Errorf("score %q, result %+v: want spec.distorted's row's", st.Score, st.Result)
	}
	if r := requestOf(t, job); r.Distorted != "s3://media/dist-3.mp4" || len(r.Renditions) != 0 {
		t.Errorf("the retry scores %s and %+v, want dist-3 alone", r.Distorted, r.Renditions)
	}
	// A request of one video is a plain score, and its result that video's row.
	r80 := row(80)
	end(t, job, 2, &vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Backend: "cpu", Model: "vmaf_v0.6.1", Score: 80, HarmonicMean: 79, Min: 70, Max: 81,
		Frames: 48, FPS: 30, Features: r80.Features, Percentiles: &vmafxv1.WorkerPercentiles{P5: 75}, WorstFrames: []vmafxv1.WorkerFrame{{Index: 7, VMAF: 70}}}, 0)
	if st.Phase != vmafxv1.JobSucceeded || len(st.Results) != 3 || st.Score != "91.000000" || !meta.IsStatusConditionTrue(st.Conditions, vmafxv1.JobComplete) {
		t.Fatalf("after attempt 2: phase %s, %d rows, score %q, message %q; want Succeeded, 3 rows, spec.distorted's score", st.Phase, len(st.Results), st.Score, st.Message)
	}
	want := []string{"s3://media/dist.mp4", "s3://media/dist-2.mp4", "s3://media/dist-3.mp4"}
	for i, r := range st.Results {
		if r.Distorted != want[i] {
			t.Errorf("row %d is %s, want %s (spec order)", i, r.Distorted, want[i])
		}
	}
	if r := st.Results[2]; r.Mean != "80.000000" || r.Frames != 48 || r.Percentiles.P5 != "75.000000" || r.WorstFrames[0].Index != 7 || r.Features["psnr_y"] != "40.000000" || r.Report != "" {
		t.Errorf("row 3 %+v, want the worker's row, without a report", r)
	}
}

// TestRenditionsRowsWorst: every row lists its video's worst frames, percentiles, scenes
// and the report beside its own output, as a job of that video alone lists them in
// status.result; spec.distorted's row and status.result agree.
func TestRenditionsRowsWorst(t *testing.T) {
	job := renditionsJob()
	r2 := row(85)
	r2.Report = false
	end(t, job, 1, rowsResult(row(91), r2, row(70)), 0)
	st := &job.Status
	if st.Phase != vmafxv1.JobSucceeded || len(st.Results) != 3 {
		t.Fatalf("phase %s, %d rows; want Succeeded with 3", st.Phase, len(st.Results))
	}
	want := vmafxv1.JobWorst{
		Percentiles: &vmafxv1.JobPercentiles{P1: "62.000000", P5: "65.000000", P50: "70.000000"},
		WorstFrames: []vmafxv1.JobFrame{{Index: 7, VMAF: "60.000000"}, {Index: 9, VMAF: "61.000000"}},
		Scenes:      &vmafxv1.JobScenes{Count: 2, Worst: &vmafxv1.JobScene{Start: 24, Frames: 24, Mean: "68.000000", Min: "60.000000", P5: "64.000000"}},
		Report:      "s3://results/dist-3.json" + vmafxv1.ReportSuffix,
	}
	if diff := cmp.Diff(want, st.Results[2].JobWorst); diff != "" {
		t.Errorf("dist-3's row (-want +got):\n%s", diff)
	}
	if r := st.Results[1]; len(r.WorstFrames) != 2 || r.Report != "" {
		t.Errorf("dist-2's row %+v: want its worst frames and no report (none written)", r)
	}
	if diff := cmp.Diff(st.Results[0].JobWorst, st.Result.JobWorst); diff != "" || st.Result.Report != "s3://results/dist.json"+vmafxv1.ReportSuffix {
		t.Errorf("status.result's worst (report %q) differs from spec.distorted's row (-row +result):\n%s", st.Result.Report, diff)
	}
	for i, v := range job.Videos() {
		if v.Phase != vmafxv1.JobSucceeded || v.Worst == nil || len(v.Worst.WorstFrames) != 2 || v.Output != renditionsOf(job)[i].output {
			t.Errorf("video %d: %+v", i, v)
		}
	}
}

// TestRenditionsEveryRowFails: a job whose every row failed fails with the first row's
// reason; one whose spec.distorted failed alone succeeds without a score of its own.
func TestRenditionsEveryRowFails(t *testing.T) {
	job := renditionsJob()
	res := rowsResult(failedRow(vmafxv1.ReasonBadInput, "too short"), failedRow(vmafxv1.ReasonBadInput, "not a video"), failedRow(vmafxv1.ReasonBadInput, "too short"))
	res.Error = &vmafxv1.WorkerError{Reason: vmafxv1.ReasonBadInput, Message: "every rendition failed; the first: too short"}
	end(t, job, 1, res, 2)
	if st := job.Status; st.Phase != vmafxv1.JobFailed || len(st.Results) != 3 || !meta.IsStatusConditionTrue(st.Conditions, vmafxv1.JobFailedCondition) ||
		meta.FindStatusCondition(st.Conditions, vmafxv1.JobFailedCondition).Reason != vmafxv1.ReasonBadInput {
		t.Errorf("phase %s, %d rows, conditions %+v; want Failed with BadInput and every row", st.Phase, len(st.Results), st.Conditions)
	}

	job = renditionsJob()
	end(t, job, 1, rowsResult(failedRow(vmafxv1.ReasonBadInput, "too short"), row(70), row(60)), 0)
	if st := job.Status; st.Phase != vmafxv1.JobSucceeded || st.Score != "" || st.Result != nil || len(st.Results) != 3 {
		t.Errorf("phase %s, score %q, %d rows; want Succeeded with no score of its own", st.Phase, st.Score, len(st.Results))
	}
}

// TestRenditionsRetriesSpent: once backoffLimit is spent, a row that failed for a
// retriable cause is final.
func TestRenditionsRetriesSpent(t *testing.T) {
	job := renditionsJob()
	job.Spec.BackoffLimit = ptr.To[int32](0)
	end(t, job, 1, rowsResult(row(91), row(85), failedRow(vmafxv1.ReasonFetchFailed, "connection reset")), 0)
	if st := job.Status; st.Phase != vmafxv1.JobSucceeded || len(st.Results) != 3 || st.Results[2].Reason != vmafxv1.ReasonFetchFailed {
		t.Errorf("phase %s, rows %+v; want Succeeded with dist-3's FetchFailed row", st.Phase, st.Results)
	}
}

// TestRenditionsPodMemory: a group's Pod asks for more memory for each distorted video
// beyond the first that it scores; a retry of fewer asks for less.
func TestRenditionsPodMemory(t *testing.T) {
	w := config.WorkerConfig{Image: "w:dev", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
	}}
	job := renditionsJob()
	// Encoded inputs: their geometry is unknown until the worker opens them, so each video
	// beyond the first is sized as 1080p 8-bit 4:2:0 with the job's PSNR.
	psnr := []vmaf.Feature{vmaf.FeaturePSNR}
	hd := workermemory.Rendition(workermemory.Default1080p, workermemory.Default1080p, psnr, nil)
	res := buildPod(job, 1, w).Spec.Containers[0].Resources
	if got := res.Limits[corev1.ResourceMemory]; got.Value() != 2<<30+2*hd {
		t.Errorf("limit %s for 3 videos, want 2Gi + 2 x %d MiB", got.String(), hd>>20)
	}
	if got := res.Requests[corev1.ResourceMemory]; got.Value() != 1<<30+2*hd {
		t.Errorf("request %s for 3 videos, want 1Gi + 2 x %d MiB", got.String(), hd>>20)
	}
	if got := w.Resources.Limits[corev1.ResourceMemory]; got.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("the operator's worker limit changed to %s", got.String())
	}
	job.Status.Results = []vmafxv1.JobRenditionResult{{Distorted: "s3://media/dist.mp4", Phase: vmafxv1.JobSucceeded}, {Distorted: "s3://media/dist-2.mp4", Phase: vmafxv1.JobSucceeded}}
	if got := buildPod(job, 2, w).Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; got.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("limit %s for the one video left, want 2Gi", got.String())
	}

	// The spec's geometry sizes them: raw 2160p 10-bit, 1080p scored at 10 bits, and
	// 1080p references of encodes decoded at 2160p; so does a built-in v1 model.
	uhd10 := vmaf.VideoInfo{Width: 3840, Height: 2160, Format: vmaf.YUV420P10LE}
	hd10 := vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P10LE}
	v1, err := vmaf.LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  func(*vmafxv1.VmafxJobSpec)
		want int64
	}{
		{"raw 2160p 10-bit", func(s *vmafxv1.VmafxJobSpec) {
			s.Width, s.Height, s.PixelFormat = ptr.To[int32](3840), ptr.To[int32](2160), "yuv420p10le"
		}, workermemory.Rendition(uhd10, uhd10, psnr, nil)},
		{"1080p scored at 10 bits", func(s *vmafxv1.VmafxJobSpec) {
			s.Width, s.Height, s.PixelFormat, s.ScoringBitDepth = ptr.To[int32](1920), ptr.To[int32](1080), "yuv420p", ptr.To[int32](10)
		}, workermemory.Rendition(hd10, hd10, psnr, nil)},
		{"2160p encodes of a 1080p reference", func(s *vmafxv1.VmafxJobSpec) {
			s.Encode = &vmafxv1.EncodeParameters{Width: ptr.To[int32](3840), Height: ptr.To[int32](2160)}
		}, workermemory.Rendition(workermemory.Default1080p, vmaf.VideoInfo{Width: 3840, Height: 2160, Format: vmaf.YUV420P}, psnr, nil)},
		{"a VMAF v1 model", func(s *vmafxv1.VmafxJobSpec) { s.Model = "vmaf_v1.0.16_3d0h" },
			workermemory.Rendition(workermemory.Default1080p, workermemory.Default1080p, psnr, v1)},
	} {
		job := renditionsJob()
		tc.set(&job.Spec)
		got := buildPod(job, 1, w).Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
		if got.Value() != 2<<30+2*tc.want || tc.want <= hd {
			t.Errorf("%s: limit %s, want 2Gi + 2 x %d MiB, more than 1080p's %d MiB", tc.name, got.String(), tc.want>>20, hd>>20)
		}
	}
}

// TestRenditionsRowsMissing: a result without a row for each distorted video asked for
// is not recorded as the job's rows.
func TestRenditionsRowsMissing(t *testing.T) {
	job := renditionsJob()
	if res := renditionsResult(job, endedPod(t, job, 1, rowsResult(row(90), row(80)), 0)); res != nil {
		t.Errorf("2 rows for 3 videos read as %+v, want none", res.Renditions)
	}
}
