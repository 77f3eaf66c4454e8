package ladder

import (
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

func TestReadURI(t *testing.T) {
	for in, want := range map[vmafxv1.OutputURI]vmafxv1.VideoURI{
		"file:///output/title/720p.mkv": "file:///data/title/720p.mkv",
		"s3://results/title/720p.mkv":   "s3://results/title/720p.mkv",
	} {
		if got := readURI(in); got != want {
			t.Errorf("readURI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEncodePod(t *testing.T) {
	claim := corev1.PersistentVolumeClaimVolumeSource{ClaimName: "media"}
	l := &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns", UID: "u"},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference: "file:///data/ref.yuv", Output: "file:///output/t",
			Resolutions: []vmafxv1.LadderResolution{{Height: 360, Width: ptr.To[int32](640)}},
			Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX265, RateControl: vmafxv1.RateQP, Values: []int32{30}, Preset: "fast"}},
			ScoringSettings: vmafxv1.ScoringSettings{
				Width: ptr.To[int32](1920), Height: ptr.To[int32](1080), PixelFormat: "yuv420p10le",
				Volume:       &vmafxv1.JobVolume{PersistentVolumeClaim: &claim},
				OutputVolume: &vmafxv1.OutputVolume{PersistentVolumeClaim: claim},
			},
		},
	}
	w := config.WorkerConfig{Image: "w:1", Resources: corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), vmafxv1.ResourceSlot: resource.MustParse("1")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), vmafxv1.ResourceSlot: resource.MustParse("1")},
	}}
	rung := l.Spec.Rungs()[0]
	pod := buildPod(l, EncodePodName(l, rung.Name, 1), stepEncode, rung.Name, 1, encodeArgs(l, &rung), w)
	// Through vmafx-scheduler, without the backend annotation that would make the
	// placement plugin treat it as a scoring Pod.
	if pod.Name != "t-enc-640x360-x265-qp30-1" || pod.Spec.SchedulerName != vmafxv1.SchedulerName {
		t.Errorf("pod %s on scheduler %q; want %s", pod.Name, pod.Spec.SchedulerName, vmafxv1.SchedulerName)
	}
	if _, ok := pod.Annotations[vmafxv1.AnnotationBackend]; ok {
		t.Errorf("encode Pod annotated with a backend: %v", pod.Annotations)
	}
	// The chart's egress NetworkPolicy (vmafx-worker-egress) selects worker Pods by this
	// label: an encode Pod must be held to it like a scoring Pod.
	if pod.Labels["app.kubernetes.io/name"] != "vmafx-worker" {
		t.Errorf("encode Pod labels %v: the worker egress policy would not select it", pod.Labels)
	}
	c := pod.Spec.Containers[0]
	if _, ok := c.Resources.Limits[vmafxv1.ResourceSlot]; ok || c.Resources.Limits.Cpu().String() != "2" {
		t.Errorf("resources %v: want the worker's CPU without the slot", c.Resources)
	}
	if _, ok := w.Resources.Limits[vmafxv1.ResourceSlot]; !ok {
		t.Error("the operator's worker resources were changed")
	}
	req, err := workerpod.Request(c.Args)
	if err != nil {
		t.Fatal(err)
	}
	want := vmafxv1.EncodeRequest{Reference: "file:///data/ref.yuv", Output: "file:///output/t/640x360-x265-qp30.mkv",
		Encoder: vmafxv1.EncoderX265, RateControl: vmafxv1.RateQP, Value: 30, Height: 360, Width: 640, Preset: "fast",
		RawWidth: 1920, RawHeight: 1080, PixelFormat: "yuv420p10le"}
	if req.Encode == nil || *req.Encode != want || req.Score != nil || req.Store != nil {
		t.Errorf("request %+v, encode %+v\nwant encode %+v", req, req.Encode, want)
	}
	mounts := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.ReadOnly
	}
	if ro, ok := mounts["/data"]; !ok || !ro {
		t.Errorf("mounts %v: want /data read-only", mounts)
	}
	if ro, ok := mounts["/output"]; !ok || ro {
		t.Errorf("mounts %v: want /output writable", mounts)
	}
	if !*c.SecurityContext.ReadOnlyRootFilesystem || !*pod.Spec.SecurityContext.RunAsNonRoot || *pod.Spec.AutomountServiceAccountToken {
		t.Error("encode Pod is not hardened like a worker Pod")
	}
	job := buildJob(l, &rung)
	if job.Spec.Distorted != "file:///data/t/640x360-x265-qp30.mkv" || *job.Spec.Output != "file:///output/t/640x360-x265-qp30.json" {
		t.Errorf("job reads %s, writes %s", job.Spec.Distorted, *job.Spec.Output)
	}
}

// TestReportOutcome: the engine reads a report Pod with parseReport: a written report
// succeeds, the worker's own reason fails it, a result that is not a report's is
// unparsable, and an evicted Pod is lost, not failed.
func TestReportOutcome(t *testing.T) {
	terminated := func(phase corev1.PodPhase, code int32, msg string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: workerpod.ContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg}}}}}}
	}
	ok := `{"version":"vmafx.dev/ladder-report/v1","files":["s3://r/t/ladder.json"]}`
	tests := []struct {
		name       string
		pod        *corev1.Pod
		want       attempt.State
		wantReason string
	}{
		{"running", &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}, attempt.Running, attempt.ReasonStarted},
		{"succeeded", terminated(corev1.PodSucceeded, 0, ok), attempt.Succeeded, ""},
		{"worker error", terminated(corev1.PodFailed, 2, `{"version":"vmafx.dev/ladder-report/v1","error":{"reason":"BadInput","message":"x"}}`), attempt.Failed, "BadInput"},
		{"succeeded without a result", terminated(corev1.PodSucceeded, 0, "hello"), attempt.Failed, attempt.ReasonUnparsableResult},
		{"killed", terminated(corev1.PodFailed, 137, ""), attempt.Failed, "Error"},
		{"evicted", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}}, attempt.Lost, attempt.ReasonPodLost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := attempt.Observe(tc.pod, parseReport)
			if o.State != tc.want || o.Reason != tc.wantReason {
				t.Errorf("state %v, reason %q; want %v, %q", o.State, o.Reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestRecordedPods: the result finalizer is released from the Pods whose outcome the
// ladder's status records, and only from those.
func TestRecordedPods(t *testing.T) {
	pod := func(name, step, rung string, n int, held bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			vmafxv1.LabelStep: step, vmafxv1.LabelRung: rung, vmafxv1.LabelAttempt: strconv.Itoa(n)}}}
		if held {
			p.Finalizers = []string{vmafxv1.FinalizerResult}
		}
		return p
	}
	pods := map[string]*corev1.Pod{}
	for _, p := range []*corev1.Pod{
		pod("a-1", stepEncode, "a", 1, true), // failed, recorded
		pod("a-2", stepEncode, "a", 2, true), // running
		pod("b-1", stepEncode, "b", 1, true), // succeeded: the rung scores
		pod("c-1", stepEncode, "c", 1, false),
		pod("r-1", stepReport, "", 1, true), // lost, recorded
		pod("r-2", stepReport, "", 2, true), // running
	} {
		pods[p.Name] = p
	}
	l := &vmafxv1.VmafxLadder{Status: vmafxv1.VmafxLadderStatus{Phase: vmafxv1.JobRunning, ReportAttempts: 2, ReportLost: 1, Rungs: []vmafxv1.LadderRung{
		{Name: "a", Phase: vmafxv1.RungEncoding, EncodeAttempts: 2, EncodeFailures: 1},
		{Name: "b", Phase: vmafxv1.RungScoring, EncodeAttempts: 1},
		{Name: "c", Phase: vmafxv1.RungSucceeded, EncodeAttempts: 1},
	}}}
	names := func() []string {
		var out []string
		for _, p := range recordedPods(l, pods) {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(), []string{"a-1", "b-1", "r-1"}; !slices.Equal(got, want) {
		t.Errorf("released %v, want %v", got, want)
	}
	l.Status.Phase = vmafxv1.JobSucceeded
	if got, want := names(), []string{"a-1", "a-2", "b-1", "r-1", "r-2"}; !slices.Equal(got, want) {
		t.Errorf("released of a finished ladder %v, want %v", got, want)
	}
}
