package integration

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func waitForComparison(t *testing.T, ns, name, what string, cond func(*vmafxv1.VmafxComparison) bool) *vmafxv1.VmafxComparison {
	t.Helper()
	var c *vmafxv1.VmafxComparison
	eventually(t, 20*time.Second, "comparison "+name+": "+what, func() (bool, error) {
		c = &vmafxv1.VmafxComparison{}
		if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
			return false, err
		}
		return cond(c), nil
	})
	return c
}

// TestComparison: a comparison of three distorted videos creates one VmafxJob each,
// which the job controller runs; their results land in the comparison's table, and one
// that fails makes the comparison Failed with the others' scores kept.
func TestComparison(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	out := vmafxv1.OutputURI("s3://results/cmp1")
	cmp1 := &vmafxv1.VmafxComparison{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cmp1"},
		Spec: vmafxv1.VmafxComparisonSpec{
			Reference: "https://media.example.com/ref.y4m",
			Distorted: []vmafxv1.ComparisonInput{{URI: "https://media.example.com/a.mp4"}, {URI: "https://media.example.com/b.mp4"}, {URI: "https://media.example.com/c.mp4"}},
			Output:    &out,
			ScoringSettings: vmafxv1.ScoringSettings{
				Credentials: &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "store"}},
				WorstFrames: &vmafxv1.WorstFrames{Count: ptr.To[int32](3), Pictures: true},
			},
		},
	}
	create(t, cmp1)

	// Each job carries the shared settings, its own distorted video and output, and the
	// VmafxJob defaults (the CRD's), not values of the comparison's making.
	for i, name := range []string{"cmp1-d1", "cmp1-d2", "cmp1-d3"} {
		j := waitForJob(t, ns, name, "created", func(*vmafxv1.VmafxJob) bool { return true })
		want := vmafxv1.VmafxJobSpec{
			Reference: "https://media.example.com/ref.y4m", Distorted: cmp1.Spec.Distorted[i].URI,
			Output: ptr.To(vmafxv1.OutputURI("s3://results/cmp1/d" + strconv.Itoa(i+1) + ".json")),
			Model:  vmafxv1.DefaultModel, Backend: vmafxv1.BackendAuto, PixelFormat: "yuv420p", BackoffLimit: ptr.To[int32](2), Parallelism: 1,
			Credentials: cmp1.Spec.Credentials, WorstFrames: cmp1.Spec.WorstFrames,
		}
		if diff := cmp.Diff(want, j.Spec); diff != "" {
			t.Errorf("job %s spec (-want +got):\n%s", name, diff)
		}
		if !metav1.IsControlledBy(j, getComparison(t, ns, "cmp1")) {
			t.Errorf("job %s is not controlled by its comparison", name)
		}
	}
	waitForComparison(t, ns, "cmp1", "Pending with 3 entries", func(c *vmafxv1.VmafxComparison) bool {
		return c.Status.Phase == vmafxv1.JobPending && c.Status.Total == 3 && len(c.Status.Results) == 3
	})

	kubeletFinish(t, bindAndRun(t, ns, "cmp1-d1", 1, "node-a"), 0, resultMessage(80, 24))
	kubeletFinish(t, bindAndRun(t, ns, "cmp1-d2", 1, "node-a"), 0, resultMessage(91.5, 24))
	c := waitForComparison(t, ns, "cmp1", "Running with 2 scored", func(c *vmafxv1.VmafxComparison) bool {
		return c.Status.Phase == vmafxv1.JobRunning && c.Status.Succeeded == 2
	})
	if c.Status.Best != "d2" {
		t.Errorf("best %q, want d2", c.Status.Best)
	}
	kubeletFinish(t, bindAndRun(t, ns, "cmp1-d3", 1, "node-b"), 2, errorMessage(vmafxv1.ReasonBadInput, "not a video"))
	c = waitForComparison(t, ns, "cmp1", "Failed", func(c *vmafxv1.VmafxComparison) bool { return c.Status.Phase == vmafxv1.JobFailed })
	want := []vmafxv1.ComparisonEntry{
		{Name: "d1", Job: "cmp1-d1", Phase: vmafxv1.JobSucceeded, Score: "80.000000", HarmonicMean: "79.500000", Min: "77.000000", Frames: 24,
			P5: "78.000000", WorstFrame: &vmafxv1.JobFrame{Index: 23, VMAF: "77.000000"}},
		{Name: "d2", Job: "cmp1-d2", Phase: vmafxv1.JobSucceeded, Score: "91.500000", HarmonicMean: "91.000000", Min: "88.500000", Frames: 24,
			P5: "89.500000", WorstFrame: &vmafxv1.JobFrame{Index: 23, VMAF: "88.500000"}},
		{Name: "d3", Job: "cmp1-d3", Phase: vmafxv1.JobFailed},
	}
	got := slices.Clone(c.Status.Results)
	if !strings.Contains(got[2].Message, "not a video") {
		t.Errorf("d3's message %q does not say why", got[2].Message)
	}
	got[2].Message = ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if c.Status.Succeeded != 2 || c.Status.Failed != 1 || c.Status.Best != "d2" {
		t.Errorf("counts %d/%d, best %q", c.Status.Succeeded, c.Status.Failed, c.Status.Best)
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, vmafxv1.ComparisonFailed); cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "d3") {
		t.Errorf("Failed condition %+v, want True naming d3", cond)
	}
}

// TestComparisonAllScored: named inputs, all scored, make a Succeeded comparison.
func TestComparisonAllScored(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, &vmafxv1.VmafxComparison{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "enc"},
		Spec: vmafxv1.VmafxComparisonSpec{
			Reference: "https://media.example.com/ref.y4m",
			Distorted: []vmafxv1.ComparisonInput{{Name: "old", URI: "https://media.example.com/a.mp4"}, {Name: "new", URI: "https://media.example.com/b.mp4"}},
		},
	})
	kubeletFinish(t, bindAndRun(t, ns, "enc-old", 1, "node-a"), 0, resultMessage(70, 10))
	kubeletFinish(t, bindAndRun(t, ns, "enc-new", 1, "node-a"), 0, resultMessage(75, 10))
	c := waitForComparison(t, ns, "enc", "Succeeded", func(c *vmafxv1.VmafxComparison) bool { return c.Status.Phase == vmafxv1.JobSucceeded })
	if c.Status.Best != "new" || c.Status.Succeeded != 2 || c.Status.ObservedGeneration != c.Generation {
		t.Errorf("status %+v", c.Status)
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, vmafxv1.ComparisonComplete); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Complete condition %+v", cond)
	}
}

func getComparison(t *testing.T, ns, name string) *vmafxv1.VmafxComparison {
	t.Helper()
	c := &vmafxv1.VmafxComparison{}
	if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func encodeMessage(output string, w, h, frames int, bytes int64) string {
	b, _ := json.Marshal(vmafxv1.EncodeResult{Version: vmafxv1.EncodeResultVersion, Output: output, Encoder: "libx264",
		Width: w, Height: h, Frames: frames, Seconds: float64(frames) / 25, Bytes: bytes, Bitrate: bytes * 8 * 25 / int64(frames)})
	return string(b)
}

// TestLadder drives a 2 resolutions x 2 crf ladder through its encode Pods (placed by
// vmafx-scheduler, no slot), the VmafxJobs that score the encodes, and the report
// Pod, and checks the table, the hull and the Pods' command lines.
func TestLadder(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	l := &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "title"},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:   "s3://media/title.mp4",
			Resolutions: []vmafxv1.LadderResolution{{Height: 360}, {Height: 720}},
			Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{38, 28}}},
			Output:      "s3://results/title",
			ScoringSettings: vmafxv1.ScoringSettings{
				Credentials: &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "store"}},
				S3:          &vmafxv1.S3Options{Endpoint: "http://s3.storage.svc:7070", PathStyle: true},
			},
		},
	}
	create(t, l)
	rungs := []string{"360p-x264-crf38", "360p-x264-crf28", "720p-x264-crf38", "720p-x264-crf28"}
	sizes := map[string][2]int{"360p": {640, 360}, "720p": {1280, 720}}
	bytes := map[string]int64{"360p-x264-crf38": 10000, "360p-x264-crf28": 30000, "720p-x264-crf38": 25000, "720p-x264-crf28": 80000}
	scores := map[string]float64{"360p-x264-crf38": 50, "360p-x264-crf28": 70, "720p-x264-crf38": 52, "720p-x264-crf28": 90}

	for i, rung := range rungs {
		pod := waitForPod(t, ns, "title-enc-"+rung+"-1")
		if pod.Spec.SchedulerName != vmafxv1.SchedulerName {
			t.Errorf("encode Pod scheduler %q, want %s", pod.Spec.SchedulerName, vmafxv1.SchedulerName)
		}
		if _, ok := pod.Spec.Containers[0].Resources.Limits[vmafxv1.ResourceSlot]; ok {
			t.Error("encode Pod asks for a scoring slot")
		}
		value, _ := strconv.Atoi(rung[len(rung)-2:])
		height, _ := strconv.Atoi(strings.TrimSuffix(rung[:4], "p"))
		wantEncode := vmafxv1.EncodeRequest{Reference: "s3://media/title.mp4", Output: "s3://results/title/" + rung + ".mkv",
			Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: value, Height: height}
		wantStore := vmafxv1.RequestStore{CredentialsDir: vmafxv1.CredentialsMountPath, S3Endpoint: "http://s3.storage.svc:7070", S3PathStyle: ptr.To(true)}
		if r := podRequest(t, pod); r.Encode == nil || *r.Encode != wantEncode || r.Store == nil || !reflect.DeepEqual(*r.Store, wantStore) {
			t.Errorf("encode request %+v, encode %+v, store %+v\nwant encode %+v, store %+v", r, r.Encode, r.Store, wantEncode, wantStore)
		}
		if i == 0 {
			// A failed attempt is retried with a new Pod.
			kubeletBind(t, pod, "cpu-node", true)
			kubeletFinish(t, pod, 1, `{"version":"vmafx.dev/encode/v1","error":{"reason":"FetchFailed","message":"connection reset"}}`)
			pod = waitForPod(t, ns, "title-enc-"+rung+"-2")
		}
		kubeletBind(t, pod, "cpu-node", true)
		sz := sizes[rung[:4]]
		kubeletFinish(t, pod, 0, encodeMessage("s3://results/title/"+rung+".mkv", sz[0], sz[1], 25, bytes[rung]))
	}
	for _, rung := range rungs {
		j := waitForJob(t, ns, "title-"+rung, "created", func(*vmafxv1.VmafxJob) bool { return true })
		if j.Spec.Distorted != vmafxv1.VideoURI("s3://results/title/"+rung+".mkv") || j.Spec.Reference != "s3://media/title.mp4" ||
			j.Spec.Output == nil || *j.Spec.Output != vmafxv1.OutputURI("s3://results/title/"+rung+".json") {
			t.Errorf("job %s: %+v", j.Name, j.Spec)
		}
		kubeletFinish(t, bindAndRun(t, ns, j.Name, 1, "gpu-node"), 0, resultMessage(scores[rung], 25))
	}
	report := waitForPod(t, ns, "title-report-1")
	lr := podRequest(t, report).LadderReport
	if lr == nil || lr.Output != "s3://results/title" || lr.Name != "title" || len(lr.Rungs) != 4 {
		t.Fatalf("report request %+v", lr)
	}
	table := lr.Rungs
	// The report shows each rung's worst frame.
	if w := table[0].WorstFrame; w == nil || w.Index != 24 || table[0].P5 != "48.000000" {
		t.Errorf("report table's first rung %+v, want its worst frame 24 and 5th percentile", table[0])
	}
	got := waitForLadder(t, ns, "title", "waiting for the report", func(l *vmafxv1.VmafxLadder) bool { return l.Status.Scored == 4 })
	if got.Status.Phase != vmafxv1.JobRunning {
		t.Errorf("phase %s before the report, want Running", got.Status.Phase)
	}
	kubeletBind(t, report, "cpu-node", true)
	kubeletFinish(t, report, 0, `{"version":"vmafx.dev/ladder-report/v1","files":["s3://results/title/ladder.json","s3://results/title/ladder.csv","s3://results/title/ladder.svg"]}`)
	got = waitForLadder(t, ns, "title", "Succeeded", func(l *vmafxv1.VmafxLadder) bool { return l.Status.Phase == vmafxv1.JobSucceeded })

	// 720p-crf38 (25 kB, 52) lies under the chord from 360p-crf28 to 720p-crf28.
	if diff := cmp.Diff([]string{"360p-x264-crf38", "360p-x264-crf28", "720p-x264-crf28"}, got.Status.Hull); diff != "" {
		t.Errorf("hull (-want +got):\n%s", diff)
	}
	st := got.Status
	if st.Total != 4 || st.Encoded != 4 || st.Scored != 4 || st.Failed != 0 || st.Report != "s3://results/title/ladder" {
		t.Errorf("counts %d/%d/%d/%d, report %q", st.Total, st.Encoded, st.Scored, st.Failed, st.Report)
	}
	first := st.Rungs[0]
	if first.Name != "360p-x264-crf38" || first.EncodeAttempts != 2 || first.Resolution != "640x360" || first.Bytes != 10000 ||
		first.Bitrate != 10000*8 || first.Score != "50.000000" || !first.Hull || first.Job != "title-360p-x264-crf38" ||
		first.P5 != "48.000000" || first.WorstFrame == nil || *first.WorstFrame != (vmafxv1.JobFrame{Index: 24, VMAF: "47.000000"}) {
		t.Errorf("first rung %+v", first)
	}
	for _, c := range []string{vmafxv1.LadderComplete, vmafxv1.LadderReportWritten} {
		if cond := meta.FindStatusCondition(st.Conditions, c); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("condition %s: %+v", c, cond)
		}
	}
}

// TestLadderBadReference: an encode that fails with BadInput fails its rung at once; a
// ladder whose every rung fails is Failed without a hull or a report.
func TestLadderBadReference(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:   "https://media.example.com/notavideo.mp4",
			Resolutions: []vmafxv1.LadderResolution{{Height: 360}},
			Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX265, Values: []int32{30}}},
			Output:      "s3://results/bad",
		},
	})
	pod := waitForPod(t, ns, "bad-enc-360p-x265-crf30-1")
	kubeletBind(t, pod, "cpu-node", true)
	kubeletFinish(t, pod, 2, `{"version":"vmafx.dev/encode/v1","error":{"reason":"BadInput","message":"cannot decode: no video stream"}}`)
	l := waitForLadder(t, ns, "bad", "Failed", func(l *vmafxv1.VmafxLadder) bool { return l.Status.Phase == vmafxv1.JobFailed })
	r := l.Status.Rungs[0]
	if r.Phase != vmafxv1.RungFailed || r.EncodeAttempts != 1 || !strings.Contains(r.Message, "no video stream") || len(l.Status.Hull) != 0 {
		t.Errorf("rung %+v, hull %v", r, l.Status.Hull)
	}
	var pods corev1.PodList
	if err := testenv.Client().List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Errorf("%d Pods, want the one encode Pod (no retry of BadInput, no report)", len(pods.Items))
	}
}

// TestLadderEncodesAreLostOrFailed: a ladder's encodes go through the attempt engine as a
// job's attempts do: an evicted encode Pod is lost and replaced without using
// backoffLimit (0 here), and a failure once backoffLimit is spent fails the rung.
func TestLadderEncodesAreLostOrFailed(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evict"},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:       "s3://media/title.mp4",
			Resolutions:     []vmafxv1.LadderResolution{{Height: 360}},
			Codecs:          []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{30}}},
			Output:          "s3://results/evict",
			ScoringSettings: vmafxv1.ScoringSettings{BackoffLimit: ptr.To[int32](0)},
		},
	})
	first := waitForPod(t, ns, "evict-enc-360p-x264-crf30-1")
	kubeletBind(t, first, "cpu-node", false)
	kubeletSetStatus(t, first, func(s *corev1.PodStatus) {
		s.Phase, s.Reason, s.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
	})
	second := waitForPod(t, ns, "evict-enc-360p-x264-crf30-2")
	// The loss and the next attempt's count may be two status writes: wait for both.
	l := waitForLadder(t, ns, "evict", "the eviction counted as lost, the next encode as attempt 2", func(l *vmafxv1.VmafxLadder) bool {
		return len(l.Status.Rungs) == 1 && l.Status.Rungs[0].EncodeLost == 1 && l.Status.Rungs[0].EncodeAttempts == 2
	})
	if r := l.Status.Rungs[0]; r.Phase != vmafxv1.RungEncoding || r.EncodeFailures != 0 || r.EncodeAttempts != 2 {
		t.Errorf("after the eviction: rung %+v, want encoding attempt 2, no failure", r)
	}
	kubeletBind(t, second, "cpu-node", true)
	kubeletFinish(t, second, 1, `{"version":"vmafx.dev/encode/v1","error":{"reason":"FetchFailed","message":"connection reset"}}`)
	l = waitForLadder(t, ns, "evict", "the rung failed", func(l *vmafxv1.VmafxLadder) bool { return l.Status.Rungs[0].Phase == vmafxv1.RungFailed })
	if r := l.Status.Rungs[0]; r.EncodeFailures != 1 || r.EncodeLost != 1 || r.EncodeAttempts != 2 || !strings.Contains(r.Message, "backoffLimit 0 reached") {
		t.Errorf("rung %+v, want 1 failure, 1 lost, 2 attempts and the spent backoffLimit in its message", r)
	}
	if podExists(t, ns, "evict-enc-360p-x264-crf30-3") {
		t.Error("a third encode Pod was made after backoffLimit was spent")
	}
}

func waitForLadder(t *testing.T, ns, name, what string, cond func(*vmafxv1.VmafxLadder) bool) *vmafxv1.VmafxLadder {
	t.Helper()
	var l *vmafxv1.VmafxLadder
	eventually(t, 20*time.Second, "ladder "+name+": "+what, func() (bool, error) {
		l = &vmafxv1.VmafxLadder{}
		if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, l); err != nil {
			return false, err
		}
		return cond(l), nil
	})
	return l
}

// TestLadderCSIVolumeOutsideTheAllowlist: a ladder's encode Pods mount its volume with the
// operator's rights, so an inline CSI driver the operator does not allow fails the ladder
// before any Pod or job is made, naming the driver and the setting.
func TestLadderCSIVolumeOutsideTheAllowlist(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "csi"},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:   "file:///data/title.mp4",
			Resolutions: []vmafxv1.LadderResolution{{Height: 360}},
			Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{30}}},
			Output:      "s3://results/csi",
			ScoringSettings: vmafxv1.ScoringSettings{Volume: &vmafxv1.JobVolume{CSI: &corev1.CSIVolumeSource{
				Driver: "smb.csi.k8s.io", VolumeAttributes: map[string]string{"source": "//10.1.2.3/share"}}}},
		},
	})
	l := waitForLadder(t, ns, "csi", "Failed", func(l *vmafxv1.VmafxLadder) bool { return l.Status.Phase == vmafxv1.JobFailed })
	cond := meta.FindStatusCondition(l.Status.Conditions, vmafxv1.LadderFailed)
	if cond == nil || cond.Reason != "VolumeNotAllowed" || !strings.Contains(cond.Message, "smb.csi.k8s.io") || !strings.Contains(cond.Message, "VMAFX_OPERATOR_ALLOWED_CSI_DRIVERS") {
		t.Errorf("Failed condition %+v; want VolumeNotAllowed naming the driver and the setting", cond)
	}
	var pods corev1.PodList
	if err := testenv.Client().List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var jobs vmafxv1.VmafxJobList
	if err := testenv.Client().List(context.Background(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items)+len(jobs.Items) != 0 {
		t.Errorf("%d Pods and %d jobs for a refused ladder", len(pods.Items), len(jobs.Items))
	}
}
