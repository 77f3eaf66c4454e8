package chart_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	render "github.com/vmafx/vmafx/internal/chartrender"
)

// TestRenderedKustomizations builds manifests/default and manifests/overlays/local with
// kustomize (its Go API, no binary) and checks that they install what the chart installs
// with the same values, plus the namespace: hack/render-manifests writes them from the
// chart and `make verify` keeps them current; this catches a folder kustomize cannot build.
func TestRenderedKustomizations(t *testing.T) {
	for dir, valuesFile := range map[string]string{"default": "", "overlays/local": render.LocalValuesFile()} {
		t.Run(dir, func(t *testing.T) {
			var values map[string]any
			if valuesFile != "" {
				var err error
				if values, err = render.ReadValues(valuesFile); err != nil {
					t.Fatal(err)
				}
			}
			resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(manifestsDir(), dir))
			if err != nil {
				t.Fatalf("kustomize build manifests/%s: %v", dir, err)
			}
			data, err := resources.AsYaml()
			if err != nil {
				t.Fatal(err)
			}
			built, err := render.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			res := mustRender(t, values)
			want := []string{"Namespace vmafx-system"}
			for _, o := range append(slices.Clone(res.CRDs), res.Objects...) {
				want = append(want, id(o))
			}
			var got []string
			for _, o := range built {
				got = append(got, id(o))
			}
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("objects (-chart +kustomize); run `make generate`:\n%s", diff)
			}
		})
	}
}
