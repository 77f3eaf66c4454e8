package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// emptyOnAFreshObject lists the printer columns that may print empty on an object the
// operator has just seen, each with the reason. Every other column of every kind must
// print a value (0, false, Pending) from the first status the operator writes: a new
// column lands in this list only with a reason, or is set at once.
var emptyOnAFreshObject = map[string]string{
	"VmafxJob/Score":                  "no score before the job succeeds",
	"VmafxJob/Node":                   "no node before a worker Pod is bound",
	"VmafxJob/Offset":                 "no frame offset before the worker's alignment search",
	"VmafxJob/Chunks":                 "only a chunked job has chunks",
	"VmafxComparison/Best":            "no best rendition before one scores",
	"VmafxLadder/Hull":                "no convex hull before rungs score",
	"VmafxModelTraining/ModelVersion": "no version before the first checkpoint",
	"VmafxNode/Device":                "the device plugin names the device in its first heartbeat",
}

type printerColumn struct{ name, path string }

// printerColumns reads every kind's printer columns from the generated CRDs, the ones
// kubectl get uses.
func printerColumns(t *testing.T) map[string][]printerColumn {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "manifests", "crd", "vmafx.dev_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in manifests/crd: %v", err)
	}
	out := map[string][]printerColumn{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Name != vmafxv1.GroupVersion.Version {
				continue
			}
			for _, c := range v.AdditionalPrinterColumns {
				out[crd.Spec.Names.Kind] = append(out[crd.Spec.Names.Kind], printerColumn{c.Name, c.JSONPath})
			}
		}
	}
	return out
}

// TestEveryPrinterColumnOnAFreshObject creates one object of every kind at its defaults
// (a VmafxNode with no device plugin behind it, as the original README's node.yaml) and
// requires every printer column kubectl get shows to have a value once the operator has
// written the first status, but for the columns listed in emptyOnAFreshObject.
func TestEveryPrinterColumnOnAFreshObject(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvNamespace, ns)) // VmafxNodes of ns count
	fresh := map[string]client.Object{
		"VmafxJob": newJob(ns, "fresh"),
		"VmafxComparison": &vmafxv1.VmafxComparison{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fresh"},
			Spec: vmafxv1.VmafxComparisonSpec{
				Reference: "https://media.example.com/ref.y4m",
				Distorted: []vmafxv1.ComparisonInput{{URI: "https://media.example.com/a.mp4"}},
			},
		},
		"VmafxLadder": &vmafxv1.VmafxLadder{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fresh"},
			Spec: vmafxv1.VmafxLadderSpec{
				Reference:   "s3://media/title.mp4",
				Resolutions: []vmafxv1.LadderResolution{{Height: 360}},
				Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{28}}},
				Output:      "s3://results/title",
			},
		},
		"VmafxModelTraining": &vmafxv1.VmafxModelTraining{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fresh"},
			Spec:       vmafxv1.VmafxModelTrainingSpec{BaseModel: "vmaf_v0.6.1", OutputRegistry: "registry.example.com/vmafx/models"},
		},
		"VmafxNode": &vmafxv1.VmafxNode{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fresh"},
			Spec:       vmafxv1.VmafxNodeSpec{GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 1},
		},
	}
	columns := printerColumns(t)
	for kind := range columns {
		if fresh[kind] == nil {
			t.Errorf("kind %s has printer columns and no fresh object in this test", kind)
		}
	}
	for key := range emptyOnAFreshObject {
		kind, name, _ := strings.Cut(key, "/")
		found := false
		for _, c := range columns[kind] {
			found = found || c.name == name
		}
		if !found {
			t.Errorf("emptyOnAFreshObject names %s, which is no printer column", key)
		}
	}
	for _, obj := range fresh {
		create(t, obj)
	}

	kinds := make([]string, 0, len(fresh))
	for kind := range fresh {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		// The first status the operator writes must already fill the columns: the object
		// is read once it has one, and checked once.
		stored := &unstructured.Unstructured{}
		// A new job's Pod waits for a scheduler that never runs here: its first status
		// shows after queuedShown.
		eventually(t, queuedShown, kind+" with a status", func() (bool, error) {
			stored.SetGroupVersionKind(vmafxv1.GroupVersion.WithKind(kind))
			if err := testenv.Client().Get(context.Background(), client.ObjectKeyFromObject(fresh[kind]), stored); err != nil {
				return false, err
			}
			_, seen := stored.Object["status"]
			return seen, nil
		})
		var empty []string
		for _, c := range columns[kind] {
			if _, may := emptyOnAFreshObject[kind+"/"+c.name]; may {
				continue
			}
			v, err := column(stored, c.path)
			if err != nil {
				t.Fatalf("%s column %s (%s): %v", kind, c.name, c.path, err)
			}
			if v == "" {
				empty = append(empty, c.name+" ("+c.path+")")
			}
		}
		if len(empty) > 0 {
			t.Errorf("%s prints empty columns on a fresh object: %s", kind, strings.Join(empty, ", "))
		}
	}
}

// column evaluates a printer column's JSONPath as kubectl does: a missing field is an
// empty cell.
func column(obj *unstructured.Unstructured, path string) (string, error) {
	jp := jsonpath.New("column").AllowMissingKeys(true)
	if err := jp.Parse("{" + path + "}"); err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := jp.Execute(&out, obj.Object); err != nil {
		return "", err
	}
	return out.String(), nil
}
