package chart_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	render "github.com/vmafx/vmafx/internal/chartrender"
)

// manifestsDir is the kustomize manifests' folder.
func manifestsDir() string { return filepath.Join(render.ChartDir(), "..", "..") }

// readObjects decodes every object of the YAML files matching pattern under manifests/,
// leaving out kustomization.yaml.
func readObjects(t testing.TB, pattern string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestsDir(), pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match manifests/%s (%v)", pattern, err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		objs = append(objs, readFile(t, f)...)
	}
	return objs
}

func readFile(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return objs
}

// byID sorts objects by id, so that two lists compare whatever their order.
func byID(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := slices.Clone(objs)
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int { return strings.Compare(id(a), id(b)) })
	return out
}

func objectsOf(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if slices.Contains(kinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}

// TestGeneratedDrift checks that what the chart installs from generated or shared sources
// is, object for object, what those sources say: the CRDs (manifests/crd), the roles
// (manifests/rbac, from the +kubebuilder:rbac markers), vmafx-scheduler's configuration
// and the device plugin's admission policy. `make verify` catches a stale copy; this
// catches a template that would change or drop what it includes.
func TestGeneratedDrift(t *testing.T) {
	res := mustRender(t, nil)
	tests := []struct {
		name string
		want []*unstructured.Unstructured
		got  []*unstructured.Unstructured
	}{
		{"CRDs", readObjects(t, "crd/*.yaml"), res.CRDs},
		{"roles", readObjects(t, "rbac/*.yaml"), objectsOf(res.Objects, "ClusterRole", "Role")},
		{"admission policy", readObjects(t, "helm/vmafx/files/device-plugin-admission-policy.yaml"), named(objectsOf(res.Objects, "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"), "vmafx-device-plugin-")},
	}
	// The scheduler's leader election Role is the chart's own, not a generated one.
	for i, o := range tests[1].got {
		if o.GetName() == "vmafx-scheduler-leader-election" {
			tests[1].got = slices.Delete(slices.Clone(tests[1].got), i, i+1)
			break
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(toMaps(byID(tt.want)), toMaps(byID(tt.got))); diff != "" {
				t.Errorf("the chart's %s differ from manifests/ (-manifests +chart):\n%s", tt.name, diff)
			}
		})
	}
	t.Run("scheduler config", func(t *testing.T) {
		want, err := os.ReadFile(filepath.Join(render.ChartDir(), "files", "scheduler-config.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		cm := mustGet[*corev1.ConfigMap](t, res.Objects, "ConfigMap", "vmafx-scheduler-config")
		// With default values the file goes in byte for byte, comments and all.
		if diff := cmp.Diff(string(want), cm.Data["config.yaml"]); diff != "" {
			t.Errorf("config.yaml differs from files/scheduler-config.yaml (-file +rendered):\n%s", diff)
		}
	})
}

// named returns the objects whose name starts with prefix.
func named(objs []*unstructured.Unstructured, prefix string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if strings.HasPrefix(o.GetName(), prefix) {
			out = append(out, o)
		}
	}
	return out
}

func toMaps(objs []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out
}

// TestRoleBindings checks that every role the chart binds exists (a generated role or one
// of the cluster's built-in roles) and that every generated role is bound: a role
// generated for a new controller fails here until the chart binds it.
func TestRoleBindings(t *testing.T) {
	builtIn := map[string]bool{
		"ClusterRole system:kube-scheduler":              true,
		"ClusterRole system:volume-scheduler":            true,
		"Role extension-apiserver-authentication-reader": true,
	}
	res := mustRender(t, nil)
	roles := map[string]bool{}
	for _, o := range objectsOf(res.Objects, "ClusterRole", "Role") {
		roles[o.GetKind()+" "+o.GetName()] = true
	}
	bound := map[string]bool{}
	for _, o := range objectsOf(res.Objects, "ClusterRoleBinding", "RoleBinding") {
		var ref rbacv1.RoleRef
		switch b := decode(t, o).(type) {
		case *rbacv1.ClusterRoleBinding:
			ref = b.RoleRef
		case *rbacv1.RoleBinding:
			ref = b.RoleRef
		}
		role := ref.Kind + " " + ref.Name
		bound[role] = true
		if !roles[role] && !builtIn[role] {
			t.Errorf("%s binds %s, which neither the chart nor the cluster has", id(o), role)
		}
	}
	for role := range roles {
		if !bound[role] {
			t.Errorf("%s is rendered but bound by no binding", role)
		}
	}
}
