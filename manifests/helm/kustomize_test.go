package helm_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of kustomization.yaml that manifests/default uses.
type kustomization struct {
	Resources          []string `json:"resources"`
	ConfigMapGenerator []struct {
		Name      string   `json:"name"`
		Namespace string   `json:"namespace"`
		Files     []string `json:"files"`
	} `json:"configMapGenerator"`
}

// kustomizeBuild reads the objects of the kustomization in dir and of the ones it includes,
// as `kustomize build` would but without name hashes: manifests/default uses resources and
// one configMapGenerator, nothing else.
func kustomizeBuild(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k, yaml.DisallowUnknownFields); err != nil {
		// A field this reader does not know (images, patches, ...) would change the
		// objects; teach the reader before comparing against such a kustomization.
		if err := yaml.Unmarshal(data, &k); err != nil {
			t.Fatal(err)
		}
	}
	var objs []*unstructured.Unstructured
	for _, r := range k.Resources {
		path := filepath.Join(dir, r)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			objs = append(objs, kustomizeBuild(t, path)...)
			continue
		}
		objs = append(objs, readFile(t, path)...)
	}
	for _, g := range k.ConfigMapGenerator {
		cm := &corev1.ConfigMap{Data: map[string]string{}}
		cm.APIVersion, cm.Kind = "v1", "ConfigMap"
		cm.Name, cm.Namespace = g.Name, g.Namespace
		for _, f := range g.Files {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			cm.Data[filepath.Base(f)] = string(data)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: u})
	}
	return objs
}

// TestKustomizeEquivalence compares the chart with default values against
// manifests/default, the kustomize install. Both must create the same objects, and those
// objects must agree in everything but what the chart deliberately does otherwise:
//   - the Namespace: Helm's --create-namespace makes it (docs/install.md);
//   - labels and annotations of objects and Pod templates (Helm's own, a config checksum);
//   - image names (the chart's default to its appVersion);
//   - environment variables the chart spells out at their defaults (kept if kustomize
//     sets them too: then the values must match);
//   - the device plugin's vendor tolerations (the chart tolerates only gpu.vendor's
//     taint, always among kustomize's) and discovery (kustomize discovers any vendor).
func TestKustomizeEquivalence(t *testing.T) {
	want := kustomizeBuild(t, filepath.Join(manifestsDir(), "default"))
	res := mustRender(t, nil)
	got := append(slices.Clone(res.CRDs), res.Objects...)

	wantByID := map[string]*unstructured.Unstructured{}
	for _, o := range want {
		if o.GetKind() == "Namespace" {
			continue
		}
		wantByID[id(o)] = o
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
				alignPodTemplate(t, &kd.Spec.Template, &cObj.(*appsv1.Deployment).Spec.Template)
			}
			if kd, ok := kObj.(*appsv1.DaemonSet); ok {
				alignPodTemplate(t, &kd.Spec.Template, &cObj.(*appsv1.DaemonSet).Spec.Template)
			}
			if diff := cmp.Diff(kObj, cObj); diff != "" {
				t.Errorf("(-kustomize +chart):\n%s", diff)
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
func alignPodTemplate(t testing.TB, k, c *corev1.PodTemplateSpec) {
	t.Helper()
	k.Labels, c.Labels, k.Annotations, c.Annotations = nil, nil, nil, nil
	for i := range k.Spec.Containers {
		if i >= len(c.Spec.Containers) {
			break
		}
		kc, cc := &k.Spec.Containers[i], &c.Spec.Containers[i]
		kc.Image, cc.Image = "", ""
		kEnv := map[string]bool{}
		for j := range kc.Env {
			kEnv[kc.Env[j].Name] = true
			// Image names differ (see above); the rest must match.
			if kc.Env[j].Name == "VMAFX_OPERATOR_WORKER_IMAGE" || kc.Env[j].Name == "VMAFX_WORKER_IMAGE" {
				kc.Env[j].Value = ""
			}
		}
		var env []corev1.EnvVar
		for _, e := range cc.Env {
			if kEnv[e.Name] {
				if e.Name == "VMAFX_OPERATOR_WORKER_IMAGE" || e.Name == "VMAFX_WORKER_IMAGE" {
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
