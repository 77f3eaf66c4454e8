package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseComment(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		wantDesc string
		want     map[string]any
		wantErr  string
	}{{
		name:     "description only, lines joined",
		text:     "# The operator's\n# image.",
		wantDesc: "The operator's image.",
	}, {
		name:     "annotation on its own line",
		text:     "# Slots per GPU.\n# @schema {minimum: 1, maximum: 64}",
		wantDesc: "Slots per GPU.",
		want:     map[string]any{"minimum": 1.0, "maximum": 64.0},
	}, {
		name:     "annotation in block form",
		text:     "# Args.\n# @schema\n#   additionalProperties: false\n#   properties:\n#     mode: {enum: [a, b]}",
		wantDesc: "Args.",
		want: map[string]any{"additionalProperties": false, "properties": map[string]any{
			"mode": map[string]any{"enum": []any{"a", "b"}}}},
	}, {
		name:     "the short form of a definition reference",
		text:     "# The port.\n# @schema {$ref: port}",
		wantDesc: "The port.",
		want:     map[string]any{"$ref": "port"},
	}, {
		name:     "@schema inside a sentence is prose",
		text:     "# Write @schema {x: 1} to annotate.",
		wantDesc: "Write @schema {x: 1} to annotate.",
	}, {
		name:    "empty annotation",
		text:    "# A value.\n# @schema",
		wantErr: "@schema without keywords",
	}, {
		name:    "annotation that is not YAML",
		text:    "# @schema {minimum: [1}",
		wantErr: "@schema:",
	}, {
		name:    "annotation that is not a mapping",
		text:    "# @schema [1, 2]",
		wantErr: "@schema:",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseComment(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.description != tt.wantDesc {
				t.Errorf("description = %q, want %q", c.description, tt.wantDesc)
			}
			if diff := cmp.Diff(tt.want, c.schema); diff != "" {
				t.Errorf("annotation (-want +got):\n%s", diff)
			}
		})
	}
}

// small is a values file with each kind of key: inferred scalars, a nested mapping, a
// shared definition, an annotated empty list and map, a required key, a oneOf.
const small = `# A chart.
# @schema
#   title: Small
#   properties:
#     global: {type: object}
#   definitions:
#     port: {type: integer, minimum: 1, maximum: 65535, description: A TCP port.}

# The GPU.
# @schema {required: [vendor]}
gpu:
  # The vendor.
  # @schema {enum: [nvidia, cpu]}
  vendor: cpu
  # How many.
  count: 1 # @schema {minimum: 0}
  # A share.
  share: 0.5
  # On or off.
  enabled: true
# The port.
# @schema {$ref: port}
port: 8080
# More flags.
# @schema {items: {type: string}}
extraArgs: []
# Namespaces.
namespaces: [default]
# A free-form map.
labels: {}
# One name or a list.
# @schema
#   oneOf:
#     - {type: string}
#     - {type: array, items: {type: string}}
mode: [a]
`

func TestGenerate(t *testing.T) {
	schema, rows, err := generate([]byte(small))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"$schema":              "http://json-schema.org/draft-07/schema#",
		"title":                "Small",
		"type":                 "object",
		"additionalProperties": false,
		"definitions": map[string]any{
			"port": map[string]any{"type": "integer", "minimum": 1.0, "maximum": 65535.0, "description": "A TCP port."},
		},
		"properties": map[string]any{
			"global": map[string]any{"type": "object"},
			"gpu": map[string]any{
				"type": "object", "additionalProperties": false, "description": "The GPU.", "required": []any{"vendor"},
				"properties": map[string]any{
					"vendor":  map[string]any{"type": "string", "enum": []any{"nvidia", "cpu"}, "description": "The vendor."},
					"count":   map[string]any{"type": "integer", "minimum": 0.0, "description": "How many."},
					"share":   map[string]any{"type": "number", "description": "A share."},
					"enabled": map[string]any{"type": "boolean", "description": "On or off."},
				},
			},
			"port":       map[string]any{"$ref": "#/definitions/port", "description": "The port."},
			"extraArgs":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "More flags."},
			"namespaces": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Namespaces."},
			"labels":     map[string]any{"type": "object", "description": "A free-form map."},
			"mode": map[string]any{"description": "One name or a list.", "oneOf": []any{
				map[string]any{"type": "string"},
				map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}},
		},
	}
	// Compare as JSON documents, the form Helm reads.
	if diff := cmp.Diff(roundTrip(t, want), roundTrip(t, schema)); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	wantRows := []row{
		{"gpu.vendor", "cpu", "string, one of `nvidia`, `cpu`", "The vendor."},
		{"gpu.count", "1", "integer, at least 0", "How many."},
		{"gpu.share", "0.5", "number", "A share."},
		{"gpu.enabled", "true", "boolean", "On or off."},
		{"port", "8080", "`port`", "The port."},
		{"extraArgs", "[]", "array, of string", "More flags."},
		{"namespaces", "[default]", "array, of string", "Namespaces."},
		{"labels", "{}", "object", "A free-form map."},
		{"mode", "[a]", "string; or array, of string", "One name or a list."},
	}
	if diff := cmp.Diff(wantRows, rows, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	data, err := marshalSchema(v.(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGenerateRefuses checks that a values file the generator cannot turn into a
// complete schema and reference fails with the key named.
func TestGenerateRefuses(t *testing.T) {
	header := "# @schema\n#   definitions:\n#     port: {type: integer}\n\n"
	tests := []struct {
		name, values, want string
	}{
		{"no comment", "a:\n  b: 1\n", "a.b has no comment"},
		{"null default without a type", "# A thing.\nthing: null\n", "thing: its default (!!null) gives no type"},
		{"unknown definition", "# A port.\n# @schema {$ref: prot}\np: 1\n", `$ref "prot": no such definition`},
		{"keyword beside $ref", "# A port.\n# @schema {$ref: port, maximum: 10}\np: 1\n", `"maximum" beside $ref`},
		{"bad annotation", "# A port.\n# @schema {maximum: [}\np: 1\n", "p: @schema"},
		{"not a mapping", "- a\n", "not a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := generate([]byte(header + tt.values))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestRun writes the schema and the reference from a values file and checks the
// reference's table.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	values, schemaOut, docOut := filepath.Join(dir, "values.yaml"), filepath.Join(dir, "values.schema.json"), filepath.Join(dir, "ref.md")
	if err := os.WriteFile(values, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(values, schemaOut, docOut); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(schemaOut)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("values.schema.json is not JSON: %v", err)
	}
	doc, err := os.ReadFile(docOut)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `gpu.vendor` | `cpu` | string, one of `nvidia`, `cpu` | The vendor. |",
		"| `port` | `8080` | `port` | The port. |",
		"| `port` | integer, 1 to 65535 | A TCP port. |",
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("the reference has no line %q:\n%s", want, doc)
		}
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		schema map[string]any
		want   string
	}{
		{map[string]any{"$ref": "#/definitions/port"}, "`port`"},
		{map[string]any{"type": []any{"integer", "string"}}, "integer or string"},
		{map[string]any{"type": "string", "minLength": 1.0}, "string, not empty"},
		{map[string]any{"type": "string", "minLength": 3.0}, "string, at least 3 characters"},
		{map[string]any{"type": "number", "exclusiveMinimum": 0.0, "maximum": 1.0}, "number, over 0, at most 1"},
		{map[string]any{"type": "string", "pattern": "^/"}, "string, matching `^/`"},
		{map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"a", "b"}}}, "array, of string, one of `a`, `b`"},
	}
	for _, tt := range tests {
		if got := summary(tt.schema); got != tt.want {
			t.Errorf("summary(%v) = %q, want %q", tt.schema, got, tt.want)
		}
	}
}
