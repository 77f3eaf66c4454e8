package helm

import (
	"fmt"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	render "github.com/vmafx/vmafx/internal/chartrender"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// helmConfig is the Helm SDK's configuration for the test API server, as the helm CLI
// builds it from a kubeconfig: releases stored as Secrets in vmafx-system.
func helmConfig(t *testing.T) *action.Configuration {
	t.Helper()
	rc := testenv.Config()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData, Token: rc.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: vmafxv1.SystemNamespace}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	namespace := vmafxv1.SystemNamespace
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &path, &namespace
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, namespace, "secret", func(format string, v ...any) { t.Logf("helm: "+format, v...) }); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// loadFresh loads the chart anew, as each helm command does.
func loadFresh(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := render.Load()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestInstallUpgradeUninstall drives the chart through a release's life with the Helm
// SDK's install, upgrade and uninstall, against the API server (which runs no
// controllers, so nothing is scheduled or rolled out; the Pod templates and generations
// show what a cluster would roll):
//   - install creates every object; the CRDs already installed are left alone;
//   - an upgrade with the same values changes nothing, and the finished-or-not batch Job
//     stays (its Pod template could not change in place);
//   - an upgrade with another operator log level and other batch videos changes the
//     operator's Pod template and nothing else's, and replaces the batch Job;
//   - uninstall removes every object of the release and keeps the CRDs.
func TestInstallUpgradeUninstall(t *testing.T) {
	systemNamespace(t)
	ctx, c := testenv.Context(t), testenv.Client()
	cfg := helmConfig(t)
	values := render.Case{Vendor: vmafxv1.VendorCPU, Batch: true, Operator: true}.Values()

	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = render.DefaultReleaseName, vmafxv1.SystemNamespace
	rel, err := install.Run(loadFresh(t), values)
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	installed := releaseObjects(t, rel.Manifest)
	for _, o := range installed {
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); err != nil {
			t.Errorf("after install, %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	generations := workloadGenerations(t)
	job := jobName(t, installed)

	upgrade := func(values map[string]any) []*unstructured.Unstructured {
		t.Helper()
		u := action.NewUpgrade(cfg)
		u.Namespace = vmafxv1.SystemNamespace
		rel, err := u.Run(render.DefaultReleaseName, loadFresh(t), values)
		if err != nil {
			t.Fatalf("helm upgrade: %v", err)
		}
		return releaseObjects(t, rel.Manifest)
	}

	same := upgrade(values)
	if diff := diffGenerations(generations, workloadGenerations(t)); diff != "" {
		t.Errorf("an upgrade with the same values changed workloads: %s", diff)
	}
	if got := jobName(t, same); got != job {
		t.Errorf("an upgrade with the same values replaced the batch Job %s with %s", job, got)
	}

	changed := render.Case{Vendor: vmafxv1.VendorCPU, Batch: true, Operator: true}.Values()
	changed["operator"].(map[string]any)["logLevel"] = "debug"
	changed["batch"].(map[string]any)["distorted"] = "file:///data/other.y4m"
	final := upgrade(changed)
	after := workloadGenerations(t)
	for name, gen := range generations {
		rolled := after[name] != gen
		if want := name == "Deployment vmafx-operator"; rolled != want {
			t.Errorf("%s: generation %d -> %d; want a new Pod template: %t", name, gen, after[name], want)
		}
	}
	op := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: vmafxv1.SystemNamespace, Name: "vmafx-operator"}, op); err != nil {
		t.Fatal(err)
	}
	if env := envOf(op.Spec.Template.Spec.Containers[0]); env["VMAFX_LOG_LEVEL"] != "debug" {
		t.Errorf("after the upgrade, the operator's VMAFX_LOG_LEVEL = %q, want debug", env["VMAFX_LOG_LEVEL"])
	}
	newJob := jobName(t, final)
	if newJob == job {
		t.Errorf("other batch videos kept the Job %s", job)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: vmafxv1.SystemNamespace, Name: job}, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job"}}); !apierrors.IsNotFound(err) {
		t.Errorf("the replaced batch Job %s: err = %v, want NotFound", job, err)
	}

	if _, err := action.NewUninstall(cfg).Run(render.DefaultReleaseName); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	for _, o := range final {
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); !apierrors.IsNotFound(err) {
			t.Errorf("after uninstall, %s %s: err = %v, want NotFound", o.GetKind(), o.GetName(), err)
		}
	}
	for _, crd := range loadFresh(t).CRDObjects() {
		objs, err := render.Decode(crd.File.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); err != nil {
				t.Errorf("after uninstall, CRD %s: %v (Helm keeps CRDs)", o.GetName(), err)
			}
		}
	}
}

// releaseObjects decodes a release's manifest.
func releaseObjects(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.Decode([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatal("the release has no objects")
	}
	return objs
}

// jobName is the name of the release's batch Job.
func jobName(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Job" {
			return o.GetName()
		}
	}
	t.Fatal("the release has no Job")
	return ""
}

// workloadGenerations are the generations of the Deployments and DaemonSets in
// vmafx-system: each change of a Pod template (or any spec) raises one.
func workloadGenerations(t *testing.T) map[string]int64 {
	t.Helper()
	ctx, c := testenv.Context(t), testenv.Client()
	out := map[string]int64{}
	var deploys appsv1.DeploymentList
	if err := c.List(ctx, &deploys, client.InNamespace(vmafxv1.SystemNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, d := range deploys.Items {
		out["Deployment "+d.Name] = d.Generation
	}
	var daemonSets appsv1.DaemonSetList
	if err := c.List(ctx, &daemonSets, client.InNamespace(vmafxv1.SystemNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, d := range daemonSets.Items {
		out["DaemonSet "+d.Name] = d.Generation
	}
	if len(out) != 3 {
		t.Fatalf("workloads in %s: %v, want the operator, the scheduler and the device plugin", vmafxv1.SystemNamespace, out)
	}
	return out
}

func diffGenerations(before, after map[string]int64) string {
	var diff string
	for name, gen := range before {
		if after[name] != gen {
			diff += fmt.Sprintf("%s %d -> %d; ", name, gen, after[name])
		}
	}
	return diff
}
