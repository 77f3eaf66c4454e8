package v1

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCRDModelListsMatch keeps the model lists in the generated CRDs (the markers'
// CEL rules and messages) equal to BuiltinModels and TrainableModels, the one source.
func TestCRDModelListsMatch(t *testing.T) {
	cases := []struct {
		file string
		want []string
	}{
		{"../../../manifests/crd/vmafx.dev_vmafxjobs.yaml", BuiltinModels},
		{"../../../manifests/crd/vmafx.dev_vmafxmodeltrainings.yaml", TrainableModels},
	}
	list := regexp.MustCompile(`self in \[([^\]]*)\]`)
	for _, tc := range cases {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		m := list.FindStringSubmatch(string(data))
		if m == nil {
			t.Fatalf("%s: no model list in a CEL rule", tc.file)
		}
		var got []string
		for _, s := range strings.Split(m[1], ",") {
			got = append(got, strings.Trim(strings.TrimSpace(s), `'"`))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s lists %v; apis says %v", tc.file, got, tc.want)
		}
		// YAML folds long messages over lines: read it as one line.
		flat := strings.Join(strings.Fields(string(data)), " ")
		msg := regexp.MustCompile(`message: ([^:]*must be [^:]*` + regexp.QuoteMeta(tc.want[0]) + `.*?) rule:`).FindStringSubmatch(flat)
		if msg == nil {
			t.Fatalf("%s: no message naming the models", tc.file)
		}
		for _, name := range tc.want {
			if !regexp.MustCompile(regexp.QuoteMeta(name) + `\b[^a-z]`).MatchString(msg[1]) {
				t.Errorf("%s: the message %q does not name %s", tc.file, msg[1], name)
			}
		}
	}
}
