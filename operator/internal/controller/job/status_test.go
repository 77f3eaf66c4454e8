package job

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestSetSucceededOutputAndFeatures: a score whose output failed is still a success, with
// OutputWritten False and the worker's reason; features and scaling reach the result.
func TestSetSucceededOutputAndFeatures(t *testing.T) {
	result := func(outputErr string) *vmafxv1.WorkerResult {
		return &vmafxv1.WorkerResult{
			Version: vmafxv1.ResultVersion, Score: 90, Min: 80, Max: 95, HarmonicMean: 89, Frames: 10, Backend: "cpu",
			Features: map[string]float64{"psnr_y": 34.56789012}, DistortedScaledFrom: "1280x720", OutputError: outputErr,
			Device: &vmafxv1.WorkerDevice{Name: "NVIDIA H100 80GB HBM3", API: "Vulkan 1.3.280", Driver: "NVIDIA 570.86", HostFeatures: []string{"adm"}, CPUFrames: 31},
		}
	}
	cases := []struct {
		name      string
		output    *vmafxv1.OutputURI
		outputErr string
		want      metav1.ConditionStatus // "" means no condition
		reason    string
	}{
		{"no output asked for", nil, "", "", ""},
		{"output written", ptr.To[vmafxv1.OutputURI]("s3://b/k.json"), "", metav1.ConditionTrue, ReasonOutputWritten},
		{"output failed", ptr.To[vmafxv1.OutputURI]("s3://b/k.json"), "store s3://b/k.json: access denied", metav1.ConditionFalse, ReasonOutputFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := &vmafxv1.VmafxJob{Spec: vmafxv1.VmafxJobSpec{Output: tc.output}}
			setSucceeded(job, observation{Node: "n1", Result: result(tc.outputErr)}, time.Unix(100, 0))
			if job.Status.Phase != vmafxv1.JobSucceeded || job.Status.Score != "90.000000" {
				t.Fatalf("phase %s score %s: want Succeeded 90.000000", job.Status.Phase, job.Status.Score)
			}
			if got := job.Status.Result.Features["psnr_y"]; got != "34.567890" {
				t.Errorf("features psnr_y %q, want 34.567890", got)
			}
			if want := "NVIDIA H100 80GB HBM3, Vulkan 1.3.280, NVIDIA 570.86; host: adm; cpu frames: 31"; job.Status.Result.Device != want {
				t.Errorf("device %q, want %q", job.Status.Result.Device, want)
			}
			if job.Status.Result.DistortedScaledFrom != "1280x720" {
				t.Errorf("distortedScaledFrom %q", job.Status.Result.DistortedScaledFrom)
			}
			c := meta.FindStatusCondition(job.Status.Conditions, vmafxv1.JobOutputWritten)
			switch {
			case tc.want == "" && c != nil:
				t.Errorf("OutputWritten %+v without spec.output", c)
			case tc.want != "" && (c == nil || c.Status != tc.want || c.Reason != tc.reason):
				t.Errorf("OutputWritten %+v, want %s/%s", c, tc.want, tc.reason)
			case tc.outputErr != "" && c.Message != tc.outputErr:
				t.Errorf("OutputWritten message %q, want the worker's %q", c.Message, tc.outputErr)
			}
		})
	}
}

// TestSetSucceededInterval: a bootstrapped model's interval reaches the result and the
// message beside the score; a plain model's result has none.
func TestSetSucceededInterval(t *testing.T) {
	job := &vmafxv1.VmafxJob{}
	r := &vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Score: 83.1335624, Frames: 10, Backend: "cpu", Model: "vmaf_b_v0.6.3",
		Interval: &vmafxv1.WorkerInterval{Low: 80.5467981, High: 84.7569861, Bagging: 82.9, StdDev: 1.25}}
	setSucceeded(job, observation{Node: "n1", Result: r}, time.Unix(100, 0))
	ci := job.Status.Result.ConfidenceInterval
	if ci == nil || ci.Low != "80.546798" || ci.High != "84.756986" || ci.Bagging != "82.900000" || ci.StdDev != "1.250000" {
		t.Fatalf("confidenceInterval %+v", ci)
	}
	if want := "VMAF 83.133562 (95% confidence interval 80.546798 to 84.756986) over 10 frames"; !strings.HasPrefix(job.Status.Message, want) {
		t.Errorf("message %q, want it to start with %q", job.Status.Message, want)
	}
	r.Interval = nil
	setSucceeded(job, observation{Node: "n1", Result: r}, time.Unix(100, 0))
	if job.Status.Result.ConfidenceInterval != nil || strings.Contains(job.Status.Message, "interval") {
		t.Errorf("a plain model's result has an interval: %+v, %q", job.Status.Result.ConfidenceInterval, job.Status.Message)
	}
}

// TestSetSucceededAlignment: the worker's alignment reaches status.result.alignment and
// the Aligned condition: True for an auto-aligned score, False for a likely misaligned
// one (whose score is kept), absent without one.
func TestSetSucceededAlignment(t *testing.T) {
	result := func(a *vmafxv1.WorkerAlignment) *vmafxv1.WorkerResult {
		return &vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Score: 90, Frames: 10, Backend: "cpu", Alignment: a}
	}
	auto := &vmafxv1.WorkerAlignment{Auto: true, Offset: 2, DistortedStart: 2, Confidence: 0.93, Confirmed: true,
		Measure: "luma-psnr-thumbnail", BestPSNR: 41.5, BasePSNR: 12.25, Window: 30, Pairs: 60}
	misaligned := &vmafxv1.WorkerAlignment{Misaligned: true, Offset: -3, Confidence: 0.5, Confirmed: true,
		Measure: "luma-psnr-thumbnail", BestPSNR: 38, BasePSNR: 15, Window: 30, Pairs: 60}
	cases := []struct {
		name    string
		a       *vmafxv1.WorkerAlignment
		want    metav1.ConditionStatus // "" means no condition
		reason  string
		message string
		event   string
	}{
		{"none", nil, "", "", "", ""},
		{"auto", auto, metav1.ConditionTrue, ReasonAutoAligned,
			"scored at offset +2: the distorted's frame 2 shows the reference's first (2 extra frames, e.g. leader frames) (confidence 0.93, 60 frame pairs compared at each offset within 30)", ""},
		{"misaligned", misaligned, metav1.ConditionFalse, ReasonLikelyMisaligned,
			"the inputs look misaligned: the distorted's first frame shows the reference's frame 3 (the distorted lacks 3 frames) (offset -3, confidence 0.50; luma-psnr-thumbnail 38.00 dB against 15.00 dB as scored); the score is kept: give --auto-align (spec.alignment.auto: true) to score the frames that match",
			"the inputs look misaligned: the distorted's first frame shows the reference's frame 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := &vmafxv1.VmafxJob{}
			r := result(tc.a)
			setSucceeded(job, observation{Node: "n1", Result: r}, time.Unix(100, 0))
			if job.Status.Phase != vmafxv1.JobSucceeded || job.Status.Score != "90.000000" {
				t.Fatalf("phase %s score %s: the score must be kept", job.Status.Phase, job.Status.Score)
			}
			c := meta.FindStatusCondition(job.Status.Conditions, vmafxv1.JobAligned)
			switch {
			case tc.want == "":
				if c != nil || job.Status.Result.Alignment != nil {
					t.Errorf("Aligned %+v, alignment %+v without a worker alignment", c, job.Status.Result.Alignment)
				}
			case c == nil || c.Status != tc.want || c.Reason != tc.reason || c.Message != tc.message:
				t.Errorf("Aligned %+v, want %s/%s %q", c, tc.want, tc.reason, tc.message)
			}
			if got := alignmentWarning(r); !strings.HasPrefix(got, tc.event) || (tc.event == "") != (got == "") {
				t.Errorf("event %q, want it to start with %q", got, tc.event)
			}
		})
	}
	job := &vmafxv1.VmafxJob{}
	setSucceeded(job, observation{Node: "n1", Result: result(auto)}, time.Unix(100, 0))
	want := vmafxv1.JobAlignment{Auto: true, Offset: 2, DistortedStart: 2, Confidence: "0.93",
		Measure: "luma-psnr-thumbnail: 41.50 dB at offset +2, 12.25 dB at the starts given (or 0)"}
	if got := job.Status.Result.Alignment; got == nil || *got != want {
		t.Errorf("alignment %+v, want %+v", got, want)
	}
}
