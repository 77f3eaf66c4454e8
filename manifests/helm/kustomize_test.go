package helm_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/vmafx/vmafx/manifests/helm/render"
)

// kustomizeBuild runs `kustomize build` on dir (with the kustomize Go API, no binary) and
// decodes the objects. Generated ConfigMaps get their plain names back: kustomize appends a
// content hash (vmafx-scheduler-config-<hash>), which the chart replaces with a checksum
// annotation; the references to them in Pod templates are renamed too.
var nameHash = regexp.MustCompile(`^(.*)-[a-z0-9]{10}$`)

func kustomizeBuild(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	data, err := resources.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	// The build's output keeps no trace of the names before hashing; every ConfigMap of
	// these kustomizations comes from a generator, so each ends in -<10-character hash>.
	renamed := map[string]string{}
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" {
			if m := nameHash.FindStringSubmatch(o.GetName()); m != nil {
				renamed[o.GetName()] = m[1]
			}
		}
	}
	for _, o := range objs {
		if plain, ok := renamed[o.GetName()]; ok && o.GetKind() == "ConfigMap" {
			o.SetName(plain)
		}
		volumes, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
		for _, v := range volumes {
			if name, _, _ := unstructured.NestedString(v.(map[string]any), "configMap", "name"); renamed[name] != "" {
				_ = unstructured.SetNestedField(v.(map[string]any), renamed[name], "configMap", "name")
			}
		}
		if volumes != nil {
			_ = unstructured.SetNestedSlice(o.Object, volumes, "spec", "template", "spec", "volumes")
		}
	}
	return objs
}

// TestKustomizeEquivalence compares the chart with the kustomize install it replaces:
// default values against manifests/default, and local-values.yaml against
// manifests/overlays/local (images included). Both must create the same objects, and those
// objects must agree in everything but what the chart deliberately does otherwise:
//   - the Namespace: Helm's --create-namespace makes it (docs/install.md);
//   - labels and annotations of objects and Pod templates (Helm's own, a config checksum)
//     and the scheduler ConfigMap's name hash;
//   - against manifests/default, image names (the chart's default to its appVersion);
//   - environment variables the chart spells out at their defaults (kept if kustomize
//     sets them too: then the values must match);
//   - the device plugin's vendor tolerations (the chart tolerates only gpu.vendor's
//     taint, always among kustomize's) and discovery (kustomize discovers any vendor).
func TestKustomizeEquivalence(t *testing.T) {
	tests := []struct {
		kustomization string
		valuesFile    string
		images        bool
	}{
		{"default", "", false},
		{"overlays/local", "local-values.yaml", true},
	}
	for _, tt := range tests {
		t.Run(tt.kustomization, func(t *testing.T) {
			var values map[string]any
			if tt.valuesFile != "" {
				data, err := os.ReadFile(filepath.Join(render.ChartDir(), "..", tt.valuesFile))
				if err != nil {
					t.Fatal(err)
				}
				if err := yaml.Unmarshal(data, &values); err != nil {
					t.Fatal(err)
				}
			}
			want := kustomizeBuild(t, filepath.Join(manifestsDir(), tt.kustomization))
			res := mustRender(t, values)
			got := append(slices.Clone(res.CRDs), res.Objects...)

			wantByID := map[string]*unstructured.Unstructured{}
			for _, o := range want {
				if o.GetKind() != "Namespace" {
					wantByID[id(o)] = o
				}
			}
			gotByID := map[string]*unstructured.Unstructured{}
			for _, o := range got {
				gotByID[id(o)] = o
			}
			if diff := cmp.Diff(keys(wantByID), keys(gotByID)); diff != "" {
				t.Fatalf("objects (-kustomize +chart):\n%s", diff)
			}
			for name, k := range wantByID {
				c := gotByID[name]
				t.Run(name, func(t *testing.T) {
					kObj, cObj := normalize(t, k), normalize(t, c)
					if kd, ok := kObj.(*appsv1.Deployment); ok {
						alignPodTemplate(t, &kd.Spec.Template, &cObj.(*appsv1.Deployment).Spec.Template, tt.images)
					}
					if kd, ok := kObj.(*appsv1.DaemonSet); ok {
						alignPodTemplate(t, &kd.Spec.Template, &cObj.(*appsv1.DaemonSet).Spec.Template, tt.images)
					}
					if diff := cmp.Diff(kObj, cObj); diff != "" {
						t.Errorf("(-kustomize +chart):\n%s", diff)
					}
				})
			}
		})
	}
}

// normalize decodes o and drops what the chart does otherwise by design: labels and
// annotations.
func normalize(t testing.TB, o *unstructured.Unstructured) runtime.Object {
	t.Helper()
	o = o.DeepCopy()
	o.SetLabels(nil)
	o.SetAnnotations(nil)
	return decode(t, o)
}

// alignPodTemplate removes from the chart's Pod template (c) and the kustomize one (k) the
// differences the chart makes by design, checking on the way that they are only those.
func alignPodTemplate(t testing.TB, k, c *corev1.PodTemplateSpec, images bool) {
	t.Helper()
	k.Labels, c.Labels, k.Annotations, c.Annotations = nil, nil, nil, nil
	for i := range k.Spec.Containers {
		if i >= len(c.Spec.Containers) {
			break
		}
		kc, cc := &k.Spec.Containers[i], &c.Spec.Containers[i]
		if !images {
			kc.Image, cc.Image = "", ""
		}
		kEnv := map[string]bool{}
		for j := range kc.Env {
			kEnv[kc.Env[j].Name] = true
			// Image names may differ (see above); the rest must match.
			if !images && (kc.Env[j].Name == "VMAFX_OPERATOR_WORKER_IMAGE" || kc.Env[j].Name == "VMAFX_WORKER_IMAGE") {
				kc.Env[j].Value = ""
			}
		}
		var env []corev1.EnvVar
		for _, e := range cc.Env {
			if kEnv[e.Name] {
				if !images && (e.Name == "VMAFX_OPERATOR_WORKER_IMAGE" || e.Name == "VMAFX_WORKER_IMAGE") {
					e.Value = ""
				}
				env = append(env, e)
			}
		}
		cc.Env = env
		// Order does not matter to the container.
		byName := func(a, b corev1.EnvVar) int { return strings.Compare(a.Name, b.Name) }
		slices.SortFunc(kc.Env, byName)
		slices.SortFunc(cc.Env, byName)
	}
	// Vendor tolerations: the chart's must all be kustomize's; then compare the rest.
	vendorTaints := map[string]bool{"nvidia.com/gpu": true, "amd.com/gpu": true, "gpu.intel.com/i915": true, "gpu.intel.com/xe": true}
	filter := func(ts []corev1.Toleration) []corev1.Toleration {
		var out []corev1.Toleration
		for _, tol := range ts {
			if !vendorTaints[tol.Key] {
				out = append(out, tol)
			}
		}
		return out
	}
	for _, tol := range c.Spec.Tolerations {
		if vendorTaints[tol.Key] && !slices.Contains(k.Spec.Tolerations, tol) {
			t.Errorf("the chart tolerates %v, which the kustomize manifests do not", tol)
		}
	}
	k.Spec.Tolerations, c.Spec.Tolerations = filter(k.Spec.Tolerations), filter(c.Spec.Tolerations)
}
