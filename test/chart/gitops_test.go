package chart_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	render "github.com/vmafx/vmafx/internal/chartrender"
)

// TestGitOpsExamples renders the chart with the values of the Argo CD Application and the
// Flux HelmRelease in docs/examples/gitops (through values.schema.json, as both tools'
// Helm does) and checks the fields that make each point at this chart and namespace. No
// Argo CD or Flux runs here, and their CRDs are not in the module proxy's reach: the
// fields checked are the ones their controllers require (the examples are not applied).
func TestGitOpsExamples(t *testing.T) {
	dir := filepath.Join(render.ChartDir(), "..", "..", "..", "docs", "examples", "gitops")
	objects := func(name string) []*unstructured.Unstructured {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := render.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	str := func(o *unstructured.Unstructured, path ...string) string {
		v, _, _ := unstructured.NestedString(o.Object, path...)
		return v
	}
	renders := func(values map[string]any, want ...string) {
		t.Helper()
		res := mustRender(t, values)
		for _, w := range want {
			kind, name, _ := strings.Cut(w, "/")
			if find(res.Objects, kind, name) == nil {
				t.Errorf("the example's values render no %s", w)
			}
		}
	}

	app := objects("argocd-application.yaml")
	if len(app) != 1 || app[0].GetKind() != "Application" || app[0].GetAPIVersion() != "argoproj.io/v1alpha1" {
		t.Fatalf("argocd-application.yaml: %v", app)
	}
	a := app[0]
	if str(a, "spec", "source", "path") != "manifests/helm/vmafx" || str(a, "spec", "destination", "namespace") != "vmafx-system" ||
		str(a, "spec", "project") == "" || str(a, "spec", "source", "repoURL") == "" || str(a, "spec", "destination", "server") == "" {
		t.Errorf("Application source or destination: %v", a.Object["spec"])
	}
	values, _, _ := unstructured.NestedMap(a.Object, "spec", "source", "helm", "valuesObject")
	renders(values, "Deployment/vmafx-operator", "Deployment/vmafx-api", "StatefulSet/vmafx-mcp")

	flux := objects("flux-helmrelease.yaml")
	if len(flux) != 2 || flux[0].GetKind() != "GitRepository" || flux[1].GetKind() != "HelmRelease" || flux[1].GetAPIVersion() != "helm.toolkit.fluxcd.io/v2" {
		t.Fatalf("flux-helmrelease.yaml: %v", flux)
	}
	hr := flux[1]
	if str(hr, "spec", "chart", "spec", "chart") != "./manifests/helm/vmafx" || str(hr, "spec", "targetNamespace") != "vmafx-system" ||
		str(hr, "spec", "chart", "spec", "sourceRef", "name") != flux[0].GetName() || str(hr, "spec", "interval") == "" {
		t.Errorf("HelmRelease chart or namespace: %v", hr.Object["spec"])
	}
	values, _, _ = unstructured.NestedMap(hr.Object, "spec", "values")
	renders(values, "Deployment/vmafx-operator", "Deployment/vmafx-api", "Deployment/vmafx-pushgateway")
}
