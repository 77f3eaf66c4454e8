package mcpserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseJobURI(t *testing.T) {
	for _, tc := range []struct {
		uri, kind, ns, name string
		ok                  bool
	}{
		{"vmafx://jobs/team-a/pair/result", "result", "team-a", "pair", true},
		{"vmafx://jobs/team-a/pair/output", "result", "", "", false},
		{"vmafx://jobs/team-a/result", "result", "", "", false},
		{"vmafx://nodes/team-a/pair/result", "result", "", "", false},
		{"https://jobs/team-a/pair/result", "result", "", "", false},
	} {
		ns, name, ok := parseJobURI(tc.uri, tc.kind)
		if ns != tc.ns || name != tc.name || ok != tc.ok {
			t.Errorf("parseJobURI(%q, %q) = %q, %q, %v; want %q, %q, %v", tc.uri, tc.kind, ns, name, ok, tc.ns, tc.name, tc.ok)
		}
	}
}

func TestSortByScore(t *testing.T) {
	js := []JobSummary{{Name: "pending"}, {Name: "low", Score: "40.5"}, {Name: "high", Score: "95.1"}, {Name: "failed"}}
	sortByScore(js)
	var got []string
	for _, j := range js {
		got = append(got, j.Name)
	}
	if diff := cmp.Diff([]string{"high", "low", "pending", "failed"}, got); diff != "" {
		t.Errorf("order (-want,+got):\n%s", diff)
	}
}

func TestToolSchemaKeepsTheSpecsRulesAndDropsCEL(t *testing.T) {
	spec, err := toMap(map[string]any{
		"type":     "object",
		"required": []any{"reference", "distorted"},
		"properties": map[string]any{
			"reference": map[string]any{"type": "string", "maxLength": 2048, "x-kubernetes-validations": []any{map[string]any{"rule": "true"}}},
			"distorted": map[string]any{"type": "string", "maxLength": 2048},
		},
		"x-kubernetes-validations": []any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := toolSchema(spec, map[string]any{"namespace": map[string]any{"type": "string"}}, true)
	want := map[string]any{
		"type":     "object",
		"required": []any{"reference", "distorted"},
		"properties": map[string]any{
			"reference": map[string]any{"type": "string", "maxLength": float64(2048)},
			"distorted": map[string]any{"type": "array", "minItems": 1, "maxItems": maxCompare, "description": "the distorted videos to score against the reference, one job each",
				"items": map[string]any{"type": "string", "maxLength": float64(2048)}},
			"namespace": map[string]any{"type": "string"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want,+got):\n%s", diff)
	}
}
