package chart_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	render "github.com/vmafx/vmafx/internal/chartrender"
)

// freeForm are values whose content is the user's (Kubernetes objects, maps, lists): the
// docs table lists them as one key with their whole default.
var freeForm = map[string]bool{
	"resources": true, "workerResources": true, "nodeSelector": true, "tolerations": true,
	"affinity": true, "podAnnotations": true, "placement": true, "volume": true,
	"labels": true, "extraEnv": true, "extraArgs": true, "imagePullSecrets": true,
}

// leaves flattens values into dotted keys, down to scalars, lists and free-form maps.
func leaves(values map[string]any, prefix string, out map[string]any) {
	for k, v := range values {
		if m, ok := v.(map[string]any); ok && len(m) > 0 && !freeForm[k] {
			leaves(m, prefix+k+".", out)
			continue
		}
		out[prefix+k] = v
	}
}

// TestDocsValuesTable checks the values table of docs/install.md against values.yaml:
// every key, and only those, with its default.
func TestDocsValuesTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(render.ChartDir(), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	leaves(values, "", want)

	doc, err := os.ReadFile(filepath.Join(render.ChartDir(), "..", "..", "..", "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Values\n")
	if !ok {
		t.Fatal(`docs/install.md has no "## Values" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	got := map[string]any{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, " | ")
		if len(cells) < 3 {
			t.Errorf("a row with fewer than three cells: %s", line)
			continue
		}
		key := strings.Trim(strings.TrimPrefix(cells[0], "| "), "`")
		var def any
		if err := yaml.Unmarshal([]byte(strings.Trim(cells[1], "`")), &def); err != nil {
			t.Errorf("%s: default %s is not YAML: %v", key, cells[1], err)
			continue
		}
		got[key] = def
	}
	if diff := cmp.Diff(keys(want), keys(got)); diff != "" {
		t.Fatalf("keys of docs/install.md's values table (-values.yaml +docs):\n%s", diff)
	}
	for key, def := range want {
		if diff := cmp.Diff(def, got[key]); diff != "" {
			t.Errorf("%s: default in docs/install.md (-values.yaml +docs):\n%s", key, diff)
		}
	}
}
