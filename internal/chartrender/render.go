package chartrender

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Defaults of Options.
const (
	// DefaultReleaseName is the release name the docs install with.
	DefaultReleaseName = "vmafx"
	// DefaultKubeVersion is the Kubernetes version the project pins (go.mod).
	DefaultKubeVersion = "v1.37.1"
)

// ServiceMonitorAPI is the capability that turns the chart's ServiceMonitors on: the
// Prometheus Operator's API, as `helm --api-versions` names it.
const ServiceMonitorAPI = "monitoring.coreos.com/v1/ServiceMonitor"

// ChartDir is the chart's folder in the work tree.
func ChartDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "manifests", "helm", "vmafx")
}

// LocalValuesFile is the local cluster's values file (docs/local-cluster.md).
func LocalValuesFile() string { return filepath.Join(ChartDir(), "..", "local-values.yaml") }

// ReadValues reads a values file as `helm -f` does.
func ReadValues(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return values, nil
}

// ContainerEnv returns a container's plain environment variables (not those from the
// downward API or a Secret).
func ContainerEnv(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	return env
}

// Load loads the chart from ChartDir.
func Load() (*chart.Chart, error) {
	ch, err := loader.Load(ChartDir())
	if err != nil {
		return nil, fmt.Errorf("loading the chart from %s: %w", ChartDir(), err)
	}
	return ch, nil
}

// Options are what `helm install` takes besides the chart.
type Options struct {
	// Values are the user's values (what -f and --set give), laid over values.yaml.
	Values map[string]any
	// ReleaseName defaults to DefaultReleaseName.
	ReleaseName string
	// Namespace is the release namespace; it defaults to vmafx-system.
	Namespace string
	// KubeVersion defaults to DefaultKubeVersion.
	KubeVersion string
	// APIVersions are API versions the cluster serves beyond the built-in ones, in the
	// form of `helm --api-versions` (group/version or group/version/Kind).
	APIVersions []string
	// IsUpgrade renders as `helm upgrade` would (.Release.IsUpgrade).
	IsUpgrade bool
	// SkipSchemaValidation leaves values.schema.json out, as --skip-schema-validation does.
	SkipSchemaValidation bool
}

// Result is a rendered release.
type Result struct {
	// Objects are the templates' objects in Helm's install order.
	Objects []*unstructured.Unstructured
	// CRDs are the objects of the chart's crds/ folder, which Helm installs first and
	// never upgrades.
	CRDs []*unstructured.Unstructured
	// Notes is the rendered NOTES.txt.
	Notes string
}

// Render renders ch with opts. An error means `helm install` would refuse the values or
// the chart: a schema violation, a template's fail, or a manifest that does not parse.
func Render(ch *chart.Chart, opts Options) (*Result, error) {
	if opts.ReleaseName == "" {
		opts.ReleaseName = DefaultReleaseName
	}
	if opts.Namespace == "" {
		opts.Namespace = vmafxv1.SystemNamespace
	}
	if opts.KubeVersion == "" {
		opts.KubeVersion = DefaultKubeVersion
	}
	kubeVersion, err := chartutil.ParseKubeVersion(opts.KubeVersion)
	if err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kubeVersion
	caps.APIVersions = append(caps.APIVersions, opts.APIVersions...)
	if v := ch.Metadata.KubeVersion; v != "" && !chartutil.IsCompatibleRange(v, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", v, caps.KubeVersion.String())
	}

	values := opts.Values
	if values == nil {
		values = map[string]any{}
	}
	// ToRenderValues changes the chart's values while coalescing: render a copy, as each
	// `helm install` loads the chart afresh.
	ch, err = loader.LoadFiles(chartFiles(ch))
	if err != nil {
		return nil, err
	}
	if err := chartutil.ProcessDependenciesWithMerge(ch, values); err != nil {
		return nil, err
	}
	renderValues, err := chartutil.ToRenderValuesWithSchemaValidation(ch, values, chartutil.ReleaseOptions{
		Name:      opts.ReleaseName,
		Namespace: opts.Namespace,
		Revision:  1,
		IsInstall: !opts.IsUpgrade,
		IsUpgrade: opts.IsUpgrade,
	}, caps, opts.SkipSchemaValidation)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, renderValues)
	if err != nil {
		return nil, err
	}

	res := &Result{}
	notesFile := path.Join(ch.Name(), "templates", "NOTES.txt")
	res.Notes = files[notesFile]
	delete(files, notesFile)
	hooks, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	if len(hooks) > 0 {
		// The chart has no hooks; one appearing is a mistake worth a failing test.
		return nil, fmt.Errorf("the chart renders %d hooks, first in %s", len(hooks), hooks[0].Path)
	}
	for _, m := range manifests {
		objs, err := Decode([]byte(m.Content))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		res.Objects = append(res.Objects, objs...)
	}
	for _, crd := range ch.CRDObjects() {
		objs, err := Decode(crd.File.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", crd.Filename, err)
		}
		res.CRDs = append(res.CRDs, objs...)
	}
	return res, nil
}

// chartFiles are the files ch was loaded from.
func chartFiles(ch *chart.Chart) []*loader.BufferedFile {
	var files []*loader.BufferedFile
	for _, f := range ch.Raw {
		files = append(files, &loader.BufferedFile{Name: f.Name, Data: f.Data})
	}
	return files
}

// Decode reads every object of a YAML stream (documents separated by ---), skipping empty
// documents. Each object must have an apiVersion, a kind and a name.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for i := 0; ; i++ {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(raw) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{Object: raw}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("document %d has no apiVersion, kind or metadata.name: %s", i, strings.TrimSpace(string(mustJSON(raw))))
		}
		objs = append(objs, obj)
	}
}

func mustJSON(v map[string]any) []byte {
	b, err := (&unstructured.Unstructured{Object: v}).MarshalJSON()
	if err != nil {
		return []byte(fmt.Sprint(v))
	}
	return b
}
