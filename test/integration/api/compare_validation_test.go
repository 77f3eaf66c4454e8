package api

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func validComparison(ns, name string) *vmafxv1.VmafxComparison {
	return &vmafxv1.VmafxComparison{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxComparisonSpec{
			Reference: "s3://media/ref.mp4",
			Distorted: []vmafxv1.ComparisonInput{{URI: "s3://media/a.mp4"}, {URI: "s3://media/b.mp4"}},
		},
	}
}

func validLadder(ns, name string) *vmafxv1.VmafxLadder {
	return &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:   "s3://media/title.mp4",
			Resolutions: []vmafxv1.LadderResolution{{Height: 720}, {Height: 360}},
			Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{23, 28}}},
			Output:      "s3://results/title",
		},
	}
}

func comparison(mutate func(*vmafxv1.VmafxComparisonSpec)) client.Object {
	c := validComparison("", "bad")
	mutate(&c.Spec)
	return c
}

// rl is a resource list in short: name to quantity.
type rl map[corev1.ResourceName]string

func resourceList(r rl) corev1.ResourceList {
	if r == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for k, v := range r {
		out[k] = resource.MustParse(v)
	}
	return out
}

// encode is a ladder with these encodeResources.
func encode(requests, limits rl) client.Object {
	return ladder(func(s *vmafxv1.VmafxLadderSpec) {
		s.EncodeResources = &corev1.ResourceRequirements{Requests: resourceList(requests), Limits: resourceList(limits)}
	})
}

func ladder(mutate func(*vmafxv1.VmafxLadderSpec)) client.Object {
	l := validLadder("", "bad")
	mutate(&l.Spec)
	return l
}

// TestComparisonAndLadderValidation: bad comparisons and ladders are refused by the API
// server with a cause on the offending field.
func TestComparisonAndLadderValidation(t *testing.T) {
	pvc := func() *vmafxv1.JobVolume {
		return &vmafxv1.JobVolume{PersistentVolumeClaim: &corev1PVC}
	}
	cases := []struct {
		name  string
		obj   client.Object
		field string
	}{
		{"comparison without distorted", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.Distorted = nil }), "spec.distorted"},
		{"comparison distorted over ftp", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.Distorted[1].URI = "ftp://host/b.mp4" }), "spec.distorted[1].uri"},
		{"comparison with some names", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.Distorted[0].Name = "a" }), "spec.distorted"},
		{"comparison with a name twice", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.Distorted[0].Name, s.Distorted[1].Name = "a", "a" }), "spec.distorted"},
		{"comparison name with capitals", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.Distorted[0].Name, s.Distorted[1].Name = "A", "b" }), "spec.distorted[0].name"},
		{"comparison file output without a volume", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.Output = ptr.To[vmafxv1.OutputURI]("file:///output/cmp") }), "spec.output"},
		{"comparison outputFormat without output", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.OutputFormat = vmafxv1.OutputCSV }), "spec.outputFormat"},
		{"comparison worst-frame pictures without output", comparison(func(s *vmafxv1.VmafxComparisonSpec) {
			s.WorstFrames = &vmafxv1.WorstFrames{Pictures: true}
		}), "spec.worstFrames.pictures"},
		{"ladder more worst frames than a status holds", ladder(func(s *vmafxv1.VmafxLadderSpec) {
			s.WorstFrames = &vmafxv1.WorstFrames{Count: ptr.To[int32](21)}
		}), "spec.worstFrames.count"},
		{"comparison width without height", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.Width = ptr.To[int32](176) }), "spec.width"},
		{"comparison unknown model", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.Model = "vmaf_4k" }), "spec.model"},
		{"comparison backoffLimit above 10", comparison(func(s *vmafxv1.VmafxComparisonSpec) { s.BackoffLimit = ptr.To[int32](11) }), "spec.backoffLimit"},
		{"ladder without codecs", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Codecs = nil }), "spec.codecs"},
		{"ladder without resolutions", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Resolutions = nil }), "spec.resolutions"},
		{"ladder without output", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Output = "" }), "spec.output"},
		{"ladder unknown encoder", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Codecs[0].Encoder = "libvpx" }), "spec.codecs[0].encoder"},
		{"ladder encoder twice", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Codecs = append(s.Codecs, s.Codecs[0]) }), "spec.codecs[1]"},
		{"ladder x264 crf 52", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Codecs[0].Values = []int32{52} }), "spec.codecs[0].values"},
		{"ladder negative crf", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Codecs[0].Values = []int32{-1} }), "spec.codecs[0].values[0]"},
		{"ladder value twice", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Codecs[0].Values = []int32{23, 23} }), "spec.codecs[0].values[1]"},
		{"ladder svt-av1 crf 64", ladder(func(s *vmafxv1.VmafxLadderSpec) {
			s.Codecs = []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderSVTAV1, Values: []int32{64}}}
		}), "spec.codecs[0].values"},
		{"ladder svt-av1 with qp", ladder(func(s *vmafxv1.VmafxLadderSpec) {
			s.Codecs = []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderSVTAV1, RateControl: vmafxv1.RateQP, Values: []int32{30}}}
		}), "spec.codecs[0].rateControl"},
		{"ladder x264 numeric preset", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Codecs[0].Preset = "8" }), "spec.codecs[0].preset"},
		{"ladder svt-av1 named preset", ladder(func(s *vmafxv1.VmafxLadderSpec) {
			s.Codecs = []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderSVTAV1, Values: []int32{30}, Preset: "fast"}}
		}), "spec.codecs[0].preset"},
		{"ladder unknown rate control", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Codecs[0].RateControl = "abr" }), "spec.codecs[0].rateControl"},
		{"ladder odd height", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Resolutions[0].Height = 721 }), "spec.resolutions[0].height"},
		{"ladder odd width", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Resolutions[1].Width = ptr.To[int32](641) }), "spec.resolutions[1].width"},
		{"ladder tiny height", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Resolutions[0].Height = 8 }), "spec.resolutions[0].height"},
		{"ladder output over http", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Output = "https://results.example.com/x" }), "spec.output"},
		{"ladder file output without volumes", ladder(func(s *vmafxv1.VmafxLadderSpec) {
			s.Output = "file:///output/title"
			s.OutputVolume = &vmafxv1.OutputVolume{PersistentVolumeClaim: corev1PVC}
		}), "spec.output"},
		{"ladder file output on another claim", ladder(func(s *vmafxv1.VmafxLadderSpec) {
			s.Output, s.Volume = "file:///output/title", pvc()
			other := corev1PVC
			other.ClaimName = "results"
			s.OutputVolume = &vmafxv1.OutputVolume{PersistentVolumeClaim: other}
		}), "spec.output"},
		{"ladder hostPath volume", ladder(func(s *vmafxv1.VmafxLadderSpec) { s.Volume = &vmafxv1.JobVolume{HostPath: &corev1HostPath} }), "spec.volume"},
		{"encodeResources without limits", encode(rl{"cpu": "2"}, nil), "spec.encodeResources.limits"},
		{"encodeResources without a memory limit", encode(nil, rl{"cpu": "2"}), "spec.encodeResources.limits"},
		{"encodeResources asking for a slot", encode(nil, rl{"cpu": "2", "memory": "1Gi", vmafxv1.ResourceSlot: "1"}), "spec.encodeResources.limits"},
		{"encodeResources asking for a GPU", encode(rl{"nvidia.com/gpu": "1"}, rl{"cpu": "2", "memory": "1Gi"}), "spec.encodeResources.requests"},
		{"encodeResources 65 CPUs", encode(nil, rl{"cpu": "65", "memory": "1Gi"}), "spec.encodeResources.limits"},
		{"encodeResources 1Ti memory", encode(nil, rl{"cpu": "2", "memory": "1Ti"}), "spec.encodeResources.limits"},
		{"comparison sharing the reference with 9 per Pod", comparison(func(s *vmafxv1.VmafxComparisonSpec) {
			s.SharedReference = &vmafxv1.SharedReference{MaxRenditionsPerPod: 9}
		}), "spec.sharedReference.maxRenditionsPerPod"},
		{"comparison sharing the reference with 1 per Pod", comparison(func(s *vmafxv1.VmafxComparisonSpec) {
			s.SharedReference = &vmafxv1.SharedReference{MaxRenditionsPerPod: 1}
		}), "spec.sharedReference.maxRenditionsPerPod"},
		{"comparison sharing the reference with alignment.auto", comparison(func(s *vmafxv1.VmafxComparisonSpec) {
			s.SharedReference, s.Alignment = &vmafxv1.SharedReference{}, &vmafxv1.Alignment{Auto: true}
		}), "spec.sharedReference"},
		{"encodeResources zero CPU", encode(nil, rl{"cpu": "0", "memory": "1Gi"}), "spec.encodeResources.limits"},
		{"encodeResources request above limit", encode(rl{"cpu": "4"}, rl{"cpu": "2", "memory": "1Gi"}), "spec.encodeResources.requests"},
		{"encodeResources memory request above limit", encode(rl{"memory": "2Gi"}, rl{"cpu": "2", "memory": "1Gi"}), "spec.encodeResources.requests"},
		{"encodeResources negative request", encode(rl{"cpu": "-1"}, rl{"cpu": "2", "memory": "1Gi"}), "spec.encodeResources.requests"},
		{"encodeResources claims", ladder(func(s *vmafxv1.VmafxLadderSpec) {
			s.EncodeResources = &corev1.ResourceRequirements{Limits: resourceList(rl{"cpu": "2", "memory": "1Gi"}), Claims: []corev1.ResourceClaim{{Name: "gpu"}}}
		}), "spec.encodeResources.claims"},
	}
	ns := testenv.CreateNamespace(t)
	ctx := testenv.Context(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.obj.SetNamespace(ns)
			requireInvalidOn(t, testenv.Client().Create(ctx, tc.obj), tc.field)
		})
	}

	// Valid ones pass, with the defaults of the CRD set.
	for i, r := range []*corev1.ResourceRequirements{
		{Limits: resourceList(rl{"cpu": "64", "memory": "256Gi"})},
		{Requests: resourceList(rl{"cpu": "500m", "memory": "512Mi"}), Limits: resourceList(rl{"cpu": "2", "memory": "2Gi"})},
		{Requests: resourceList(rl{"cpu": "2"}), Limits: resourceList(rl{"cpu": "2", "memory": "1G"})},
	} {
		l := validLadder(ns, "resources-"+strconv.Itoa(i))
		l.Spec.EncodeResources = r
		if err := testenv.Client().Create(ctx, l); err != nil {
			t.Errorf("valid encodeResources %v were refused: %v", r, err)
		}
	}
	l := validLadder(ns, "ok")
	l.Spec.Output, l.Spec.Volume = "file:///output/title", pvc()
	l.Spec.OutputVolume = &vmafxv1.OutputVolume{PersistentVolumeClaim: corev1PVC}
	if err := testenv.Client().Create(ctx, l); err != nil {
		t.Fatalf("a valid ladder was refused: %v", err)
	}
	if l.Spec.Codecs[0].RateControl != vmafxv1.RateCRF {
		t.Errorf("rateControl defaulted to %q, want crf", l.Spec.Codecs[0].RateControl)
	}
	c := validComparison(ns, "ok")
	c.Spec.Distorted[0].Name, c.Spec.Distorted[1].Name = "a", "b"
	if err := testenv.Client().Create(ctx, c); err != nil {
		t.Fatalf("a valid comparison was refused: %v", err)
	}
	c.Spec.Reference = "s3://media/other.mp4"
	requireInvalidOn(t, testenv.Client().Update(ctx, c), "spec")
	long := validComparison(ns, strings.Repeat("c", 201))
	if err := testenv.Client().Create(ctx, long); err == nil {
		t.Error("a comparison named with 201 characters was accepted")
	}
}
