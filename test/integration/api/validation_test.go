package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func job(mutate func(*vmafxv1.VmafxJobSpec)) client.Object {
	j := validJob("", "bad")
	mutate(&j.Spec)
	return j
}

func node(mutate func(*vmafxv1.VmafxNodeSpec)) client.Object {
	n := validNode("", "bad")
	mutate(&n.Spec)
	return n
}

// labelled gives s a subjective score and the JSON output a sample needs.
func labelled(s *vmafxv1.VmafxJobSpec, score string) {
	q := resource.MustParse(score)
	s.SubjectiveScore = &q
	s.Output = ptr.To[vmafxv1.OutputURI]("s3://results/p01.json")
}

func training(mutate func(*vmafxv1.VmafxModelTrainingSpec)) client.Object {
	tr := validTraining("", "bad")
	mutate(&tr.Spec)
	return tr
}

// TestInvalidObjectsRefused sends invalid objects to the real API server and checks that
// each is refused as Invalid with a cause on the offending field.
func TestInvalidObjectsRefused(t *testing.T) {
	y4m := func(s *vmafxv1.VmafxJobSpec) {
		s.Reference, s.Distorted, s.Width, s.Height = "file:///data/ref.y4m", "file:///data/dist.y4m", nil, nil
	}
	cases := []struct {
		name  string
		obj   client.Object
		field string
	}{
		{"reference with an unsupported scheme", job(func(s *vmafxv1.VmafxJobSpec) { s.Reference = "ftp://host/ref.yuv" }), "spec.reference"},
		{"renditions with parallelism", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Renditions, s.Parallelism = []vmafxv1.JobRendition{{Distorted: "s3://media/b.mp4"}}, 4
			s.Output = ptr.To[vmafxv1.OutputURI]("s3://results/o.json")
		}), "spec.renditions"},
		{"renditions with alignment.auto", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Renditions, s.Alignment = []vmafxv1.JobRendition{{Distorted: "s3://media/b.mp4"}}, &vmafxv1.Alignment{Auto: true}
		}), "spec.renditions"},
		{"more than 7 renditions", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Renditions = slices.Repeat([]vmafxv1.JobRendition{{Distorted: "s3://media/b.mp4"}}, 8)
		}), "spec.renditions"},
		{"rendition over ftp", job(func(s *vmafxv1.VmafxJobSpec) { s.Renditions = []vmafxv1.JobRendition{{Distorted: "ftp://host/b.mp4"}} }), "spec.renditions[0].distorted"},
		{"rendition file output without a volume", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Renditions = []vmafxv1.JobRendition{{Distorted: "s3://media/b.mp4", Output: ptr.To[vmafxv1.OutputURI]("file:///output/b.json")}}
		}), "spec.renditions"},
		{"reference without a scheme", job(func(s *vmafxv1.VmafxJobSpec) { s.Reference = "ref.yuv" }), "spec.reference"},
		{"reference empty", job(func(s *vmafxv1.VmafxJobSpec) { s.Reference = "" }), "spec.reference"},
		{"file URI with a relative path", job(func(s *vmafxv1.VmafxJobSpec) { s.Reference = "file://data/ref.yuv" }), "spec.reference"},
		{"file URI with an empty path", job(func(s *vmafxv1.VmafxJobSpec) { s.Distorted = "file:///" }), "spec.distorted"},
		{"http URI without a path", job(func(s *vmafxv1.VmafxJobSpec) { s.Distorted = "http://media.example.com" }), "spec.distorted"},
		{"s3 URI without a key", job(func(s *vmafxv1.VmafxJobSpec) { s.Distorted = "s3://bucket/" }), "spec.distorted"},
		{"reference with a scheme the worker cannot read", job(func(s *vmafxv1.VmafxJobSpec) { s.Reference = "rclone://remote/ref.mp4" }), "spec.reference"},
		{"credentials in an http URI", job(func(s *vmafxv1.VmafxJobSpec) { s.Reference = "https://user:secret@media.example.com/ref.mp4" }), "spec.reference"},
		{"credentials in an s3 URI", job(func(s *vmafxv1.VmafxJobSpec) { s.Distorted = "s3://AKIA:secret@bucket/dist.mp4" }), "spec.distorted"},
		{"presigned URL", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Distorted = "https://bucket.s3.amazonaws.com/dist.mp4?X-Amz-Credential=AKIA&X-Amz-Signature=abc"
		}), "spec.distorted"},
		{"gs URI without an object", job(func(s *vmafxv1.VmafxJobSpec) { s.Reference = "gs://bucket" }), "spec.reference"},
		{"output over http", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Output = ptr.To[vmafxv1.OutputURI]("https://results.example.com/out.json")
		}), "spec.output"},
		{"output on the read-only input volume", job(func(s *vmafxv1.VmafxJobSpec) { s.Output = ptr.To[vmafxv1.OutputURI]("file:///data/out.json") }), "spec.output"},
		{"file output without an output volume", job(func(s *vmafxv1.VmafxJobSpec) { s.Output = ptr.To[vmafxv1.OutputURI]("file:///output/out.json") }), "spec.output"},
		{"outputFormat without an output", job(func(s *vmafxv1.VmafxJobSpec) { s.OutputFormat = vmafxv1.OutputCSV }), "spec.outputFormat"},
		{"unknown output format", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Output, s.OutputFormat = ptr.To[vmafxv1.OutputURI]("s3://results/out.xml"), "xml"
		}), "spec.outputFormat"},
		{"unknown feature", job(func(s *vmafxv1.VmafxJobSpec) { s.Features = []vmafxv1.Feature{"vif"} }), "spec.features[0]"},
		{"s3 endpoint with a path", job(func(s *vmafxv1.VmafxJobSpec) { s.S3 = &vmafxv1.S3Options{Endpoint: "http://minio:9000/bucket"} }), "spec.s3.endpoint"},
		{"credentials without a Secret name", job(func(s *vmafxv1.VmafxJobSpec) { s.Credentials = &vmafxv1.Credentials{} }), "spec.credentials.secretRef.name"},
		{"negative alignment start", job(func(s *vmafxv1.VmafxJobSpec) { s.Alignment = &vmafxv1.Alignment{DistortedStart: -1} }), "spec.alignment.distortedStart"},
		{"auto alignment with a start", job(func(s *vmafxv1.VmafxJobSpec) { s.Alignment = &vmafxv1.Alignment{Auto: true, DistortedStart: 2} }), "spec.alignment"},
		{"alignment window without auto", job(func(s *vmafxv1.VmafxJobSpec) { s.Alignment = &vmafxv1.Alignment{Window: 5} }), "spec.alignment"},
		{"alignment window above 300", job(func(s *vmafxv1.VmafxJobSpec) { s.Alignment = &vmafxv1.Alignment{Auto: true, Window: 301} }), "spec.alignment.window"},
		{"width without height", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Reference, s.Distorted, s.Height = "s3://media/ref.mp4", "s3://media/dist.mp4", nil
		}), "spec.width"},
		{"unknown backend", job(func(s *vmafxv1.VmafxJobSpec) { s.Backend = "opencl" }), "spec.backend"},
		{"raw yuv without width", job(func(s *vmafxv1.VmafxJobSpec) { s.Width = nil }), "spec.width"},
		{"raw yuv without height", job(func(s *vmafxv1.VmafxJobSpec) { s.Height = nil }), "spec.height"},
		{"one y4m input without geometry", job(func(s *vmafxv1.VmafxJobSpec) { y4m(s); s.Distorted = "file:///data/dist.yuv" }), "spec.width"},
		{"odd width with 4:2:0", job(func(s *vmafxv1.VmafxJobSpec) { s.Width = ptr.To[int32](177) }), "spec.width"},
		{"odd height with 4:2:0", job(func(s *vmafxv1.VmafxJobSpec) { s.Height = ptr.To[int32](145) }), "spec.height"},
		{"odd width with 4:2:2", job(func(s *vmafxv1.VmafxJobSpec) { s.PixelFormat = "yuv422p10le"; s.Width = ptr.To[int32](177) }), "spec.width"},
		{"width below 16", job(func(s *vmafxv1.VmafxJobSpec) { s.Width = ptr.To[int32](8) }), "spec.width"},
		{"height above 16384", job(func(s *vmafxv1.VmafxJobSpec) { s.Height = ptr.To[int32](20000) }), "spec.height"},
		{"unknown pixel format", job(func(s *vmafxv1.VmafxJobSpec) { s.PixelFormat = "rgb24" }), "spec.pixelFormat"},
		{"negative priority", job(func(s *vmafxv1.VmafxJobSpec) { s.Priority = -1 }), "spec.priority"},
		{"parallelism without an output", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Parallelism, s.Output, s.OutputFormat, s.SubjectiveScore = 2, nil, "", nil
		}), "spec.parallelism"},
		{"negative parallelism", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Parallelism = -1
			s.Output = ptr.To[vmafxv1.OutputURI]("s3://results/out.json")
		}), "spec.parallelism"},
		{"parallelism above 256", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Parallelism = 257
			s.Output = ptr.To[vmafxv1.OutputURI]("s3://results/out.json")
		}), "spec.parallelism"},
		{"priority above 1000", job(func(s *vmafxv1.VmafxJobSpec) { s.Priority = 5000 }), "spec.priority"},
		{"backoffLimit above 10", job(func(s *vmafxv1.VmafxJobSpec) { s.BackoffLimit = ptr.To[int32](11) }), "spec.backoffLimit"},
		{"zero activeDeadlineSeconds", job(func(s *vmafxv1.VmafxJobSpec) { s.ActiveDeadlineSeconds = ptr.To[int64](0) }), "spec.activeDeadlineSeconds"},
		{"model name with a path", job(func(s *vmafxv1.VmafxJobSpec) { s.Model = "../etc/passwd" }), "spec.model"},
		{"encode width without height", job(func(s *vmafxv1.VmafxJobSpec) { s.Encode = &vmafxv1.EncodeParameters{Width: ptr.To[int32](1280)} }), "spec.encode"},
		{"encode without a field", job(func(s *vmafxv1.VmafxJobSpec) { s.Encode = &vmafxv1.EncodeParameters{} }), "spec.encode"},
		{"encode at 9 bits", job(func(s *vmafxv1.VmafxJobSpec) { s.Encode = &vmafxv1.EncodeParameters{BitDepth: ptr.To[int32](9)} }), "spec.encode.bitDepth"},
		{"scoring at 9 bits", job(func(s *vmafxv1.VmafxJobSpec) { s.ScoringBitDepth = ptr.To[int32](9) }), "spec.scoringBitDepth"},
		{"model not built in", job(func(s *vmafxv1.VmafxJobSpec) { s.Model = "vmaf_8k_v0.6.1" }), "spec.model"},
		{"model from a registry without a tag", job(func(s *vmafxv1.VmafxJobSpec) { s.Model = "oci://ghcr.io/vmafx/models" }), "spec.model"},
		{"model from a registry with a short digest", job(func(s *vmafxv1.VmafxJobSpec) { s.Model = "oci://ghcr.io/vmafx/models@sha256:abc" }), "spec.model"},
		{"model over https", job(func(s *vmafxv1.VmafxJobSpec) { s.Model = "https://ghcr.io/vmafx/models:v1" }), "spec.model"},
		{"subjectiveScore above 100", job(func(s *vmafxv1.VmafxJobSpec) { labelled(s, "101") }), "spec.subjectiveScore"},
		{"subjectiveScore negative", job(func(s *vmafxv1.VmafxJobSpec) { labelled(s, "-0.5") }), "spec.subjectiveScore"},
		{"subjectiveScore as a MOS word", job(func(s *vmafxv1.VmafxJobSpec) { labelled(s, "1k") }), "spec.subjectiveScore"},
		{"subjectiveScore without an output", job(func(s *vmafxv1.VmafxJobSpec) { labelled(s, "70"); s.Output = nil }), "spec.subjectiveScore"},
		{"subjectiveScore with a CSV output", job(func(s *vmafxv1.VmafxJobSpec) { labelled(s, "70"); s.OutputFormat = vmafxv1.OutputCSV }), "spec.subjectiveScore"},
		{"volume with two sources", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Volume = &vmafxv1.JobVolume{HostPath: &corev1HostPath, PersistentVolumeClaim: &corev1PVC}
		}), "spec.volume"},
		{"volume with no source", job(func(s *vmafxv1.VmafxJobSpec) { s.Volume = &vmafxv1.JobVolume{} }), "spec.volume"},
		{"node vendor misspelt", node(func(s *vmafxv1.VmafxNodeSpec) { s.GPUVendor = "nvdia" }), "spec.gpuVendor"},
		{"node negative capacity", node(func(s *vmafxv1.VmafxNodeSpec) { s.Capacity = -1 }), "spec.capacity"},
		{"training interval not a duration", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.Checkpoint.Interval = "5 minutes" }), "spec.checkpoint.interval"},
		{"training interval below 1s", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.Checkpoint.Interval = "500ms" }), "spec.checkpoint.interval"},
		{"training minSamples below 1", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.Checkpoint.MinSamples = -3 }), "spec.checkpoint.minSamples"},
		{"training unknown algorithm", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.Algorithm = "adam" }), "spec.algorithm"},
		{"training registry over http", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.OutputRegistry = "http://models/x" }), "spec.outputRegistry"},
		{"worst-frame pictures without an output", job(func(s *vmafxv1.VmafxJobSpec) {
			s.WorstFrames = &vmafxv1.WorstFrames{Pictures: true}
		}), "spec.worstFrames.pictures"},
		{"worst-frame pictures of a chunked job", job(func(s *vmafxv1.VmafxJobSpec) {
			s.Output, s.Parallelism = ptr.To[vmafxv1.OutputURI]("s3://b/out.json"), 4
			s.WorstFrames = &vmafxv1.WorstFrames{Pictures: true}
		}), "spec.worstFrames.pictures"},
		{"more worst frames than the status holds", job(func(s *vmafxv1.VmafxJobSpec) {
			s.WorstFrames = &vmafxv1.WorstFrames{Count: ptr.To[int32](21)}
		}), "spec.worstFrames.count"},
		{"training registry with a tag", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.OutputRegistry = "ghcr.io/vmafx/models:v1" }), "spec.outputRegistry"},
		{"training registry without a repository", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.OutputRegistry = "ghcr.io" }), "spec.outputRegistry"},
		{"training registry in an s3 bucket", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.OutputRegistry = "s3://models/x" }), "spec.outputRegistry"},
		{"training without outputRegistry", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.OutputRegistry = "" }), "spec.outputRegistry"},
		{"training from a phone model", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.BaseModel = "vmaf_v0.6.1phone" }), "spec.baseModel"},
		{"training from an unknown model", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.BaseModel = "vmaf_4k_v0.6.1" }), "spec.baseModel"},
		{"training learningRate above 1", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.LearningRate = "1.5" }), "spec.learningRate"},
		{"training learningRate zero", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.LearningRate = "0" }), "spec.learningRate"},
		{"training emaDecay of 1", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.EMADecay = "1" }), "spec.emaDecay"},
		{"training heldOutPercent above 50", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.HeldOutPercent = ptr.To[int32](80) }), "spec.heldOutPercent"},
		{"training without baseModel", training(func(s *vmafxv1.VmafxModelTrainingSpec) { s.BaseModel = "" }), "spec.baseModel"},
	}
	ns := testenv.CreateNamespace(t)
	ctx := testenv.Context(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.obj.SetNamespace(ns)
			err := testenv.Client().Create(ctx, tc.obj)
			requireInvalidOn(t, err, tc.field)
		})
	}

	// Changes after creation.
	updates := []struct {
		name   string
		obj    client.Object
		mutate func(client.Object)
		field  string
	}{
		{"job spec edited after creation", validJob(ns, "immutable"), func(o client.Object) {
			o.(*vmafxv1.VmafxJob).Spec.Distorted = "file:///data/other.yuv"
		}, "spec"},
		{"node moved to another Kubernetes node", validNode(ns, "moved"), func(o client.Object) {
			o.(*vmafxv1.VmafxNode).Spec.NodeName = "elsewhere"
		}, "spec.nodeName"},
		{"nodeName added after creation", defaultedNode(ns, "added"), func(o client.Object) {
			o.(*vmafxv1.VmafxNode).Spec.NodeName = "elsewhere"
		}, "spec.nodeName"},
		{"nodeName removed after creation", validNode(ns, "removed"), func(o client.Object) {
			o.(*vmafxv1.VmafxNode).Spec.NodeName = ""
		}, "spec.nodeName"},
	}
	for _, tc := range updates {
		t.Run(tc.name, func(t *testing.T) {
			if err := testenv.Client().Create(ctx, tc.obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			tc.mutate(tc.obj)
			requireInvalidOn(t, testenv.Client().Update(ctx, tc.obj), tc.field)
		})
	}
}

// requireInvalidOn checks that err is an Invalid error whose causes include field and
// whose message, as kubectl prints it, names the field.
func requireInvalidOn(t *testing.T, err error, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want refused on %s", field)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("refused with %v; want an Invalid error on %s", err, field)
	}
	t.Logf("refused: %v", err)
	status := err.(apierrors.APIStatus).Status()
	var fields []string
	for _, c := range status.Details.Causes {
		fields = append(fields, c.Field)
		if c.Field == field {
			if !strings.Contains(err.Error(), field) {
				t.Errorf("message %q does not name %s", err.Error(), field)
			}
			return
		}
	}
	t.Errorf("refused on %v; want a cause on %s (message: %s)", fields, field, err)
}

func defaultedNode(ns, name string) *vmafxv1.VmafxNode {
	n := validNode(ns, name)
	n.Spec.NodeName = ""
	return n
}

// TestReadmeNodeAccepted applies the original operator README's node.yaml as it is
// written (no nodeName, a node image), as users coming from that README will.
func TestReadmeNodeAccepted(t *testing.T) {
	obj := createAsWritten(t, filepath.Join("testdata", "readme-node.yaml"))
	ctx := testenv.Context(t)
	got := &vmafxv1.VmafxNode{}
	if err := testenv.Client().Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	if got.KubernetesNodeName() != "gpu-node-0" || got.Spec.Image != "ghcr.io/vmafx/vmafx-node:latest" {
		t.Errorf("stored as node %q, image %q", got.KubernetesNodeName(), got.Spec.Image)
	}
}

// TestExamplesAccepted applies every documented example, as a user following the docs would.
func TestExamplesAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "docs", "examples", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v (found %d)", err, len(files))
	}
	ns := testenv.CreateNamespace(t)
	ctx := testenv.Context(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(data, &obj.Object); err != nil {
				t.Fatal(err)
			}
			obj.SetNamespace(ns)
			if err := testenv.Client().Create(ctx, obj); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// TestSeedJob applies the operator README's job.yaml as a user would: raw .yuv inputs
// without a geometry are refused naming width, and with width and height added the
// same job is accepted (its s3:// inputs then need only a Secret).
func TestSeedJob(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "seeds", "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.CreateNamespace(t)
	ctx := testenv.Context(t)
	load := func() *unstructured.Unstructured {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			t.Fatal(err)
		}
		obj.SetNamespace(ns)
		return obj
	}
	requireInvalidOn(t, testenv.Client().Create(ctx, load()), "spec.width")

	obj := load()
	if err := unstructured.SetNestedField(obj.Object, int64(1920), "spec", "width"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(obj.Object, int64(1080), "spec", "height"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Client().Create(ctx, obj); err != nil {
		t.Fatalf("the seed job with width and height was refused: %v", err)
	}
}

// TestSeedTraining applies the operator README's training.yaml exactly as it is written:
// accepted, with outputRegistry an OCI repository and the defaults filled in.
func TestSeedTraining(t *testing.T) {
	obj := createAsWritten(t, filepath.Join("testdata", "seeds", "training.yaml"))
	ctx := testenv.Context(t)
	got := &vmafxv1.VmafxModelTraining{}
	if err := testenv.Client().Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	s := got.Spec
	if s.OutputRegistry != "ghcr.io/vmafx/models" || s.Checkpoint.Interval != "10m" || s.Checkpoint.MinSamples != 1000 ||
		s.DataSource.NodeSelector["gpu.vendor"] != "nvidia" {
		t.Errorf("stored as %+v", s)
	}
	if s.LearningRate != "0.05" || s.EMADecay != "0.9" || s.HeldOutPercent == nil || *s.HeldOutPercent != 20 {
		t.Errorf("defaults: learningRate %q, emaDecay %q, heldOutPercent %v", s.LearningRate, s.EMADecay, s.HeldOutPercent)
	}
}

// TestModelReferencesAccepted creates jobs with every built-in model and with registry
// references by tag and by digest, and a labelled job, as users write them.
func TestModelReferencesAccepted(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	ctx := testenv.Context(t)
	models := append([]string{}, vmafxv1.BuiltinModels...)
	models = append(models, "oci://ghcr.io/vmafx/models:online-training-1-v3",
		"oci://10.96.12.7:5000/vmafx/models@sha256:"+strings.Repeat("0f", 32),
		"oci://registry.example:5000/a/b_c/d-e:V1.2")
	for i, m := range models {
		j := validJob(ns, fmt.Sprintf("model-%d", i))
		j.Spec.Model = vmafxv1.ModelReference(m)
		if err := testenv.Client().Create(ctx, j); err != nil {
			t.Errorf("model %q refused: %v", m, err)
		}
	}
	for i, score := range []string{"0", "100", "72.5", "20"} {
		j := validJob(ns, fmt.Sprintf("labelled-%d", i))
		labelled(&j.Spec, score)
		if err := testenv.Client().Create(ctx, j); err != nil {
			t.Errorf("subjectiveScore %s refused: %v", score, err)
		}
	}
}

// createAsWritten creates the object of a manifest file as it is written, in the
// namespace it names (created if missing), as `kubectl apply -f` would, and deletes it when
// the test ends.
func createAsWritten(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Context(t)
	if err := testenv.Client().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: obj.GetNamespace()}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := testenv.Client().Create(ctx, obj); err != nil {
		t.Fatalf("%s refused: %v", filepath.Base(path), err)
	}
	t.Cleanup(func() { _ = testenv.Client().Delete(context.Background(), obj) })
	return obj
}
