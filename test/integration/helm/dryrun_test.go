package helm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	render "github.com/vmafx/vmafx/internal/chartrender"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func TestMain(m *testing.M) { testenv.Run(m) }

// systemNamespace creates vmafx-system, which `helm install --create-namespace` would.
func systemNamespace(t *testing.T) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: vmafxv1.SystemNamespace}}
	if err := testenv.Client().Create(testenv.Context(t), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// dryRun sends every object of res to the API server as `helm install` would create it,
// with dryRun=All, and the chart's CRDs as an update of the installed ones.
func dryRun(t *testing.T, res *render.Result) {
	t.Helper()
	ctx, c := testenv.Context(t), testenv.Client()
	for _, obj := range res.Objects {
		o := obj.DeepCopy()
		if err := c.Create(ctx, o, client.DryRunAll); err != nil {
			t.Errorf("%s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	for _, crd := range res.CRDs {
		installed := &unstructured.Unstructured{}
		installed.SetGroupVersionKind(crd.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), installed); err != nil {
			t.Errorf("CRD %s: %v", crd.GetName(), err)
			continue
		}
		o := crd.DeepCopy()
		o.SetResourceVersion(installed.GetResourceVersion())
		if err := c.Update(ctx, o, client.DryRunAll); err != nil {
			t.Errorf("CRD %s: %v", o.GetName(), err)
		}
	}
}

// TestDryRun renders every vendor with the batch Job on and off and the operator on and
// off, and has the API server accept every object.
func TestDryRun(t *testing.T) {
	systemNamespace(t)
	ch, err := render.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range render.Cases() {
		t.Run(tc.Name(), func(t *testing.T) {
			res, err := render.Render(ch, render.Options{Values: tc.Values()})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Objects) == 0 || len(res.CRDs) == 0 {
				t.Fatalf("rendered %d objects and %d CRDs", len(res.Objects), len(res.CRDs))
			}
			dryRun(t, res)
		})
	}
}

// TestDryRunValues has the API server accept renderings that use many values at once:
// the local cluster's values and a production-like set (two replicas of each Deployment,
// a disruption budget, scheduling constraints, extra environment, other kubelet paths).
func TestDryRunValues(t *testing.T) {
	systemNamespace(t)
	ch, err := render.Load()
	if err != nil {
		t.Fatal(err)
	}
	local, err := render.ReadValues(render.LocalValuesFile())
	if err != nil {
		t.Fatal(err)
	}
	constraints := map[string]any{
		"nodeSelector": map[string]any{"node-role.kubernetes.io/control-plane": ""},
		"tolerations":  []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}},
		"affinity": map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
			"weight": 100, "podAffinityTerm": map[string]any{"topologyKey": "kubernetes.io/hostname"},
		}}}},
		"podAnnotations": map[string]any{"example.com/team": "video"},
	}
	production := map[string]any{
		"gpu":              map[string]any{"vendor": "nvidia"},
		"imagePullSecrets": []any{map[string]any{"name": "registry"}},
		"operator": merge(constraints, map[string]any{
			"replicaCount": 2, "logLevel": "warn",
			"podDisruptionBudget":  map[string]any{"enabled": true},
			"extraEnv":             []any{map[string]any{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}},
			"workerServiceAccount": "scorer",
		}),
		"scheduler": merge(constraints, map[string]any{
			"replicaCount": 2,
			"placement":    map[string]any{"scoringStrategy": "BinPack", "weights": map[string]any{"vendor": 0}},
			"extraArgs":    []any{"--kube-api-qps=200"},
		}),
		"devicePlugin": map[string]any{
			"slotsPerDevice": 2, "cdi": true, "kubeletRootDir": "/var/snap/k8s/kubelet",
			"nodeSelector": map[string]any{"vmafx.dev/pool": "scoring"},
			"tolerations":  []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "video", "effect": "NoExecute"}},
		},
		"batch": map[string]any{
			"enabled": true, "reference": "https://media.example.com/ref.y4m", "distorted": "https://media.example.com/dist.y4m",
			"gpus": 2, "extraArgs": []any{"--threads", "8"},
		},
	}
	for name, values := range map[string]map[string]any{"local": local, "production": production} {
		t.Run(name, func(t *testing.T) {
			res, err := render.Render(ch, render.Options{Values: values})
			if err != nil {
				t.Fatal(err)
			}
			dryRun(t, res)
		})
	}
}

// TestNotesJob has the API server accept the VmafxJob that NOTES.txt tells users to
// submit first, for each vendor's backend.
func TestNotesJob(t *testing.T) {
	ch, err := render.Load()
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.CreateNamespace(t)
	for _, vendor := range append(append([]vmafxv1.GPUVendor{}, vmafxv1.GPUVendors...), vmafxv1.VendorCPU) {
		t.Run(string(vendor), func(t *testing.T) {
			res, err := render.Render(ch, render.Options{Values: render.Case{Vendor: vendor, Operator: true}.Values()})
			if err != nil {
				t.Fatal(err)
			}
			job, err := render.NotesJob(res.Notes)
			if err != nil {
				t.Fatal(err)
			}
			job.Namespace = ns
			if err := testenv.Client().Create(testenv.Context(t), job, client.DryRunAll); err != nil {
				t.Errorf("the NOTES.txt VmafxJob is refused: %v", err)
			}
		})
	}
}

// merge returns a copy of a with the keys of b added.
func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// envOf returns a container's plain environment variables.
func envOf(c corev1.Container) map[string]string { return render.ContainerEnv(c) }
