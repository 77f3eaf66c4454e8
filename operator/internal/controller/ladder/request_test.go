package ladder

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

// TestWorkerRequests: a ladder's encodes and report become the requests of the cases
// (testutil.WorkerRequestCases) whose command lines the worker's tests run alike.
func TestWorkerRequests(t *testing.T) {
	title := &vmafxv1.VmafxLadder{ObjectMeta: metav1.ObjectMeta{Name: "title", Namespace: "ns"}, Spec: vmafxv1.VmafxLadderSpec{
		Reference: "s3://media/title.mp4", Output: "s3://results/title/",
		Codecs: []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Preset: "fast"}},
		ScoringSettings: vmafxv1.ScoringSettings{
			Credentials: &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "media-bucket"}},
		},
	}}
	raw := &vmafxv1.VmafxLadder{ObjectMeta: metav1.ObjectMeta{Name: "title", Namespace: "ns"}, Spec: vmafxv1.VmafxLadderSpec{
		Reference: "file:///data/title.yuv", Output: "file:///output/title/",
		ScoringSettings: vmafxv1.ScoringSettings{Width: ptr.To[int32](1920), Height: ptr.To[int32](1080), PixelFormat: "yuv422p"},
	}}
	report := &vmafxv1.VmafxLadder{ObjectMeta: metav1.ObjectMeta{Name: "title", Namespace: "ns"}, Spec: vmafxv1.VmafxLadderSpec{
		Output: "s3://results/title/",
		ScoringSettings: vmafxv1.ScoringSettings{
			S3: &vmafxv1.S3Options{Endpoint: "http://minio:9000", PathStyle: true},
		},
	}}
	report.Status.Rungs = []vmafxv1.LadderRung{{Name: "720p-x264-crf28", Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: 28, Height: 720,
		Phase: vmafxv1.RungSucceeded, Resolution: "1280x720", Bitrate: 1500000, Bytes: 1875000, Score: "93.100000", Hull: true,
		EncodeAttempts: 2, Job: "title-720p-x264-crf28"}} // the last two are the status's, not the report's
	reportCmd, err := reportArgs(report)
	if err != nil {
		t.Fatal(err)
	}
	testutil.RequireWorkerRequests(t, map[string][]string{
		"encode": encodeArgs(title, &vmafxv1.LadderRung{Name: "720p-x264-crf28", Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: 28, Height: 720}),
		"encode-raw": encodeArgs(raw, &vmafxv1.LadderRung{Name: "1280x720-x265-qp30", Encoder: vmafxv1.EncoderX265, RateControl: vmafxv1.RateQP,
			Value: 30, Height: 720, Width: 1280}),
		"ladder-report": reportCmd,
	}, workerpod.Request)
}
