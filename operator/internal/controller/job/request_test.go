package job

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

// TestWorkerRequests: a job's spec, and each step of a chunked job, becomes the request
// of the case (testutil.WorkerRequestCases) of the command line it used to become, and
// the Pod carries it whole.
func TestWorkerRequests(t *testing.T) {
	spec := func(s vmafxv1.VmafxJobSpec) *vmafxv1.VmafxJob {
		s.Reference, s.Distorted = "s3://media/ref.y4m", "s3://media/dist.mp4"
		return &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Name: "split", Namespace: "ns"}, Spec: s}
	}
	every := spec(vmafxv1.VmafxJobSpec{
		Width: ptr.To[int32](1920), Height: ptr.To[int32](1080), PixelFormat: "yuv420p10le", Model: "vmaf_4k_v0.6.1",
		Output: ptr.To[vmafxv1.OutputURI]("s3://results/out.csv"), OutputFormat: vmafxv1.OutputCSV,
		Features:        []vmafxv1.Feature{vmafxv1.FeaturePSNR, vmafxv1.FeatureCAMBI},
		Deinterlace:     true,
		Encode:          &vmafxv1.EncodeParameters{Width: ptr.To[int32](1280), Height: ptr.To[int32](720), BitDepth: ptr.To[int32](8)},
		ScoringBitDepth: ptr.To[int32](10),
		Alignment:       &vmafxv1.Alignment{ReferenceStart: 2, Frames: 100},
		WorstFrames:     &vmafxv1.WorstFrames{Count: ptr.To[int32](3), Pictures: true},
		Credentials:     &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "media-bucket"}},
		S3:              &vmafxv1.S3Options{Endpoint: "http://minio:9000", Region: "us-east-1", PathStyle: true},
	})
	every.Spec.Reference, every.Spec.Distorted = "file:///data/ref.yuv", "file:///data/dist.yuv"
	// A chunked job whose probe found the distorted video 3 frames late, split into
	// 3 chunks of its 10 frames.
	split := spec(vmafxv1.VmafxJobSpec{Parallelism: 3, Output: ptr.To[vmafxv1.OutputURI]("s3://results/split.json"),
		Alignment: &vmafxv1.Alignment{Auto: true}})
	split.Status.Chunks = &vmafxv1.JobChunks{Frames: 10, Total: 3, Alignment: &vmafxv1.JobAlignment{Auto: true, ReferenceStart: 3}}
	ss := loadSteps(split)
	aligned := ss.alignedJob(split)

	w := config.WorkerConfig{Image: "w:dev"}
	testutil.RequireWorkerRequests(t, map[string][]string{
		"score":             buildPod(spec(vmafxv1.VmafxJobSpec{}), 1, w).Spec.Containers[0].Args,
		"score-every-field": buildPod(every, 1, w).Spec.Containers[0].Args,
		"score-renditions":  buildPod(renditionsJob(), 1, w).Spec.Containers[0].Args,
		"score-auto-align":  buildPod(spec(vmafxv1.VmafxJobSpec{Alignment: &vmafxv1.Alignment{Auto: true, Window: 12}}), 1, w).Spec.Containers[0].Args,
		"probe":             stepArgs(split, &ss.probe),
		"chunk":             stepArgs(aligned, &ss.chunks[1]),
		"merge":             stepArgs(aligned, &ss.merge),
	}, workerpod.Request)
}
