package chart_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	render "github.com/vmafx/vmafx/internal/chartrender"
)

// scheme knows every built-in kind and the CRD kind, to decode rendered objects strictly.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// knownKinds are the kinds the chart may render. A new kind is a decision, and lands here.
var knownKinds = map[string]bool{
	// The worker Pods' egress policy, in the namespaces where jobs run.
	"NetworkPolicy":      true,
	"ServiceAccount":     true,
	"ConfigMap":          true,
	"Service":            true,
	"ClusterRole":        true,
	"ClusterRoleBinding": true,
	"Role":               true,
	"RoleBinding":        true,
	"Deployment":         true,
	"DaemonSet":          true,
	"StatefulSet":        true,
	// API priority and fairness: VMAFX's heartbeats and operator writes in a level of
	// their own (docs/operator.md, "API priority and fairness").
	"FlowSchema":                       true,
	"PriorityLevelConfiguration":       true,
	"Job":                              true,
	"PodDisruptionBudget":              true,
	"ValidatingAdmissionPolicy":        true,
	"ValidatingAdmissionPolicyBinding": true,
	"ServiceMonitor":                   true,
	// VMAFX's alerts, with monitoring.prometheusRule.enabled.
	"PrometheusRule": true,
}

var (
	chartOnce   sync.Once
	loadedChart *chart.Chart
	loadErr     error
)

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	chartOnce.Do(func() { loadedChart, loadErr = render.Load() })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loadedChart
}

// mustRender renders the chart with values (and opts, if given) and fails the test on error.
func mustRender(t testing.TB, values map[string]any, opts ...func(*render.Options)) *render.Result {
	t.Helper()
	res, err := renderValues(t, values, opts...)
	if err != nil {
		t.Fatalf("rendering with %v: %v", values, err)
	}
	return res
}

func renderValues(t testing.TB, values map[string]any, opts ...func(*render.Options)) (*render.Result, error) {
	t.Helper()
	o := render.Options{Values: values}
	for _, f := range opts {
		f(&o)
	}
	return render.Render(loadChart(t), o)
}

// withServiceMonitors renders for a cluster that serves the Prometheus Operator's API.
func withServiceMonitors(o *render.Options) {
	o.APIVersions = append(o.APIVersions, render.ServiceMonitorAPI)
}

// find returns the object of kind and name, or nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// ofKind returns the objects of kind.
func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// id names an object as kubectl would: Kind namespace/name.
func id(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetKind() + " " + o.GetName()
	}
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// decode converts o into its Go type, refusing unknown fields (a misspelt or misplaced
// key in a template).
func decode(t testing.TB, o *unstructured.Unstructured) runtime.Object {
	t.Helper()
	typed, err := scheme.New(o.GroupVersionKind())
	if err != nil {
		t.Fatalf("%s: %v", id(o), err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, typed, true); err != nil {
		t.Fatalf("%s: %v", id(o), err)
	}
	return typed
}

// mustGet returns the object of kind and name converted into T.
func mustGet[T runtime.Object](t testing.TB, objs []*unstructured.Unstructured, kind, name string) T {
	t.Helper()
	o := find(objs, kind, name)
	if o == nil {
		t.Fatalf("no %s %s rendered", kind, name)
	}
	typed, ok := decode(t, o).(T)
	if !ok {
		t.Fatalf("%s is a %T", id(o), typed)
	}
	return typed
}

// podTemplates returns the Pod template of every workload, keyed by id.
func podTemplates(t testing.TB, objs []*unstructured.Unstructured) map[string]corev1.PodTemplateSpec {
	t.Helper()
	out := map[string]corev1.PodTemplateSpec{}
	for _, o := range objs {
		switch typed := decodeKnown(t, o).(type) {
		case *appsv1.Deployment:
			out[id(o)] = typed.Spec.Template
		case *appsv1.DaemonSet:
			out[id(o)] = typed.Spec.Template
		case *appsv1.StatefulSet:
			out[id(o)] = typed.Spec.Template
		case *batchv1.Job:
			out[id(o)] = typed.Spec.Template
		}
	}
	return out
}

// decodeKnown is decode for the kinds the scheme knows, and nil for the others
// (ServiceMonitor).
func decodeKnown(t testing.TB, o *unstructured.Unstructured) runtime.Object {
	t.Helper()
	if !scheme.Recognizes(o.GroupVersionKind()) {
		return nil
	}
	return decode(t, o)
}

// envOf returns a container's plain environment variables.
func envOf(c corev1.Container) map[string]string { return render.ContainerEnv(c) }

// allVendors are the vendors gpu.vendor takes.
func allVendors() []vmafxv1.GPUVendor {
	return append(append([]vmafxv1.GPUVendor{}, vmafxv1.GPUVendors...), vmafxv1.VendorCPU)
}

func TestLint(t *testing.T) {
	kubeVersion, err := chartutil.ParseKubeVersion(render.DefaultKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range render.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			linter := lint.AllWithKubeVersionAndSchemaValidation(render.ChartDir(), c.Values(), vmafxv1.SystemNamespace, kubeVersion, false)
			for _, m := range linter.Messages {
				// INFO is advice (such as "icon is recommended"); warnings and errors fail.
				if m.Severity > support.InfoSev {
					t.Errorf("lint: %s", m)
				}
			}
		})
	}
}

// TestRender renders every vendor with the batch Job on and off and the operator on and
// off: each rendering is objects of known kinds that decode strictly into their Go types,
// named once each, and holds exactly the workloads the values ask for.
func TestRender(t *testing.T) {
	for _, c := range render.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			res := mustRender(t, c.Values())
			seen := map[string]bool{}
			for _, o := range res.Objects {
				if !knownKinds[o.GetKind()] {
					t.Errorf("%s: a kind the chart is not known to render", id(o))
				}
				decodeKnown(t, o)
				if seen[id(o)] {
					t.Errorf("%s rendered twice", id(o))
				}
				seen[id(o)] = true
				if ns := o.GetNamespace(); ns != "" && ns != vmafxv1.SystemNamespace && ns != "kube-system" && o.GetKind() != "NetworkPolicy" {
					t.Errorf("%s: in namespace %s", id(o), ns)
				}
			}
			for _, crd := range res.CRDs {
				if _, ok := decode(t, crd).(*apiextensionsv1.CustomResourceDefinition); !ok {
					t.Errorf("crds/: %s is not a CustomResourceDefinition", id(crd))
				}
			}

			var workloads []string
			for name := range podTemplates(t, res.Objects) {
				workloads = append(workloads, name)
			}
			var want []string
			if c.Has("platform") {
				want = append(want, "DaemonSet vmafx-system/vmafx-device-plugin", "Deployment vmafx-system/vmafx-scheduler")
				if c.Operator {
					want = append(want, "Deployment vmafx-system/vmafx-operator")
				}
			}
			if c.Has("server") {
				want = append(want, "Deployment vmafx-system/vmafx-api")
			}
			if c.Has("mcp") {
				want = append(want, "StatefulSet vmafx-system/vmafx-mcp")
			}
			if c.Pushgateway {
				want = append(want, "Deployment vmafx-system/vmafx-pushgateway")
			}
			if c.Has("job") {
				job := ofKind(res.Objects, "Job")
				if len(job) != 1 {
					t.Fatalf("%d Jobs rendered, want 1", len(job))
				}
				want = append(want, id(job[0]))
			}
			slices.Sort(want)
			slices.Sort(workloads)
			if diff := cmp.Diff(want, workloads); diff != "" {
				t.Errorf("workloads (-want +got):\n%s", diff)
			}
			// The operator's roles and bindings come and go with it.
			for _, kind := range []string{"ClusterRole", "ClusterRoleBinding"} {
				if got, want := find(res.Objects, kind, "vmafx-operator-job") != nil, c.Operator && c.Has("platform"); got != want {
					t.Errorf("%s vmafx-operator-job rendered: %t, want %t", kind, got, want)
				}
			}
			if !strings.Contains(res.Notes, "vmafx-system") {
				t.Errorf("NOTES.txt does not name the namespace:\n%s", res.Notes)
			}
		})
	}
}

// TestVendor checks the two vendor templates against the API's own mapping: the device
// plugin discovers gpu.vendor's devices on the nodes of that vendor, and the batch Job asks
// for the vendor's extended resource and names the vendor's native backend.
func TestVendor(t *testing.T) {
	type vendorWant struct {
		resource     corev1.ResourceName
		nodeSelector map[string]string
		tolerations  []string
	}
	wants := map[vmafxv1.GPUVendor]vendorWant{
		vmafxv1.VendorNVIDIA: {"nvidia.com/gpu", map[string]string{"nvidia.com/gpu.present": "true"}, []string{"nvidia.com/gpu"}},
		vmafxv1.VendorAMD:    {"amd.com/gpu", map[string]string{"feature.node.kubernetes.io/amd-gpu": "true"}, []string{"amd.com/gpu"}},
		vmafxv1.VendorIntel:  {"gpu.intel.com/i915", map[string]string{"intel.feature.node.kubernetes.io/gpu": "true"}, []string{"gpu.intel.com/i915", "gpu.intel.com/xe"}},
		vmafxv1.VendorCPU:    {"", map[string]string{}, nil},
	}
	for _, vendor := range allVendors() {
		t.Run(string(vendor), func(t *testing.T) {
			want := wants[vendor]
			res := mustRender(t, render.Case{Vendor: vendor, Batch: true, Operator: true}.Values())

			ds := mustGet[*appsv1.DaemonSet](t, res.Objects, "DaemonSet", "vmafx-device-plugin")
			pod := ds.Spec.Template.Spec
			if got := envOf(pod.Containers[0])["VMAFX_VENDOR"]; got != string(vendor) {
				t.Errorf("device plugin VMAFX_VENDOR = %q, want %q", got, vendor)
			}
			wantSelector := map[string]string{"kubernetes.io/os": "linux"}
			for k, v := range want.nodeSelector {
				wantSelector[k] = v
			}
			if diff := cmp.Diff(wantSelector, pod.NodeSelector); diff != "" {
				t.Errorf("device plugin nodeSelector (-want +got):\n%s", diff)
			}
			var taints []string
			for _, tol := range pod.Tolerations {
				taints = append(taints, tol.Key)
			}
			if diff := cmp.Diff(append(want.tolerations, "vmafx.dev/dedicated", "CriticalAddonsOnly"), taints); diff != "" {
				t.Errorf("device plugin tolerations (-want +got):\n%s", diff)
			}

			jobs := ofKind(res.Objects, "Job")
			if len(jobs) != 1 {
				t.Fatalf("%d Jobs rendered, want 1", len(jobs))
			}
			job := decode(t, jobs[0]).(*batchv1.Job)
			worker := job.Spec.Template.Spec.Containers[0]
			if got, want := envOf(worker)[vmafxv1.EnvBackend], string(vendor.NativeBackend()); got != want {
				t.Errorf("batch Job %s = %q, want %q", vmafxv1.EnvBackend, got, want)
			}
			var gpuResources []corev1.ResourceName
			for name := range worker.Resources.Limits {
				if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
					gpuResources = append(gpuResources, name)
				}
			}
			var wantResources []corev1.ResourceName
			if want.resource != "" {
				wantResources = []corev1.ResourceName{want.resource}
				// Extended resources are requested and limited alike.
				if got := worker.Resources.Requests[want.resource]; got.Cmp(worker.Resources.Limits[want.resource]) != 0 || got.Value() != 1 {
					t.Errorf("batch Job requests %s: %s, limits %s; want 1 and 1", want.resource, got.String(), worker.Resources.Limits.Name(want.resource, "").String())
				}
			}
			if diff := cmp.Diff(wantResources, gpuResources); diff != "" {
				t.Errorf("batch Job GPU resources (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSelector, job.Spec.Template.Spec.NodeSelector); diff != "" {
				t.Errorf("batch Job nodeSelector (-want +got):\n%s", diff)
			}
			if args := strings.Join(worker.Args, " "); !strings.HasPrefix(args, "score --reference file:///data/ref.y4m --distorted file:///data/dist.y4m") {
				t.Errorf("batch Job args = %q", args)
			}
		})
	}
}

// TestNamespace refuses a release outside vmafx-system, which the components and the
// generated roles are tied to.
func TestNamespace(t *testing.T) {
	_, err := renderValues(t, nil, func(o *render.Options) { o.Namespace = "default" })
	if err == nil || !strings.Contains(err.Error(), `not "default"`) || !strings.Contains(err.Error(), vmafxv1.SystemNamespace) {
		t.Fatalf("rendering into namespace default: err = %v, want a refusal naming both namespaces", err)
	}
}

// TestKubeVersion refuses clusters older than 1.30, which lack ValidatingAdmissionPolicy
// v1, and accepts API servers built without a version stamp (v0.0.0), as the test and
// local clusters' are.
func TestKubeVersion(t *testing.T) {
	tests := []struct {
		version string
		ok      bool
	}{
		{"v1.29.9", false},
		{"v1.30.0", true},
		{"v1.37.1", true},
		{"v0.0.0-master+$Format:%H$", true},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			_, err := renderValues(t, nil, func(o *render.Options) { o.KubeVersion = tt.version })
			if tt.ok && err != nil {
				t.Errorf("refused: %v", err)
			}
			if !tt.ok && (err == nil || !strings.Contains(err.Error(), "needs Kubernetes 1.30 or later") || !strings.Contains(err.Error(), tt.version)) {
				t.Errorf("err = %v, want a refusal naming 1.30 and %s", err, tt.version)
			}
		})
	}
}
