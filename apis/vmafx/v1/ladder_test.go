package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestLadderRungs(t *testing.T) {
	spec := VmafxLadderSpec{
		Resolutions: []LadderResolution{{Height: 720}, {Height: 480, Width: ptr.To[int32](640)}},
		Codecs: []LadderCodec{
			{Encoder: EncoderX264, Values: []int32{23, 28}},
			{Encoder: EncoderSVTAV1, RateControl: RateCRF, Values: []int32{40}},
			{Encoder: EncoderX265, RateControl: RateQP, Values: []int32{30}},
		},
	}
	var names []string
	for _, r := range spec.Rungs() {
		names = append(names, r.Name)
	}
	want := []string{
		"720p-x264-crf23", "720p-x264-crf28", "720p-svtav1-crf40", "720p-x265-qp30",
		"640x480-x264-crf23", "640x480-x264-crf28", "640x480-svtav1-crf40", "640x480-x265-qp30",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("rungs (-want +got):\n%s", diff)
	}
	r := spec.Rungs()[5]
	if r.Width != 640 || r.Height != 480 || r.Encoder != EncoderX264 || r.RateControl != RateCRF || r.Value != 28 {
		t.Errorf("rung %+v", r)
	}
}

func TestJoinOutput(t *testing.T) {
	for in, want := range map[OutputURI]OutputURI{
		"s3://b/run1":          "s3://b/run1/x.json",
		"s3://b/run1/":         "s3://b/run1/x.json",
		"file:///output/run//": "file:///output/run/x.json",
	} {
		if got := JoinOutput(in, "x.json"); got != want {
			t.Errorf("JoinOutput(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScoringSettingsJobSpec(t *testing.T) {
	s := ScoringSettings{Model: "vmaf_v0.6.1neg", OutputFormat: OutputCSV, BackoffLimit: ptr.To[int32](1),
		OutputVolume: &OutputVolume{}, Features: []Feature{FeaturePSNR}}
	got := s.JobSpec("s3://m/ref.mp4", "s3://m/d.mp4", "")
	if got.Output != nil || got.OutputFormat != "" || got.OutputVolume != nil {
		t.Errorf("no output asked, got output %v, format %q, volume %v", got.Output, got.OutputFormat, got.OutputVolume)
	}
	got = s.JobSpec("s3://m/ref.mp4", "s3://m/d.mp4", "s3://r/d.csv")
	if *got.Output != "s3://r/d.csv" || got.OutputFormat != OutputCSV || got.Model != "vmaf_v0.6.1neg" || *got.BackoffLimit != 1 {
		t.Errorf("spec %+v", got)
	}
	got.Features[0] = FeatureSSIM
	if s.Features[0] != FeaturePSNR {
		t.Error("the job spec shares the settings' slices")
	}
}

func TestParseEncodeResult(t *testing.T) {
	if _, err := ParseEncodeResult([]byte(`{"version":"vmafx.dev/encode/v1","output":"s3://b/x.mkv","frames":24,"bytes":100,"bitrate":800}`)); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{`{`, `{"version":"vmafx.dev/result/v1"}`, `{"version":"vmafx.dev/encode/v1","frames":24}`} {
		if _, err := ParseEncodeResult([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	r, err := ParseEncodeResult([]byte(`{"version":"vmafx.dev/encode/v1","error":{"reason":"BadInput","message":"x"}}`))
	if err != nil || r.Error.Reason != ReasonBadInput {
		t.Errorf("%+v, %v", r, err)
	}
}
