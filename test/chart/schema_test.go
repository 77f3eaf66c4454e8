package chart_test

import (
	"strings"
	"testing"

	render "github.com/vmafx/vmafx/internal/chartrender"
)

// TestSchemaRefuses gives the chart values a user could get wrong and checks that
// installing stops with a message that names the key and, where there is one, the value.
func TestSchemaRefuses(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   []string
	}{{
		name:   "unknown vendor",
		values: map[string]any{"gpu": map[string]any{"vendor": "tpu"}},
		want:   []string{"/gpu/vendor", "'tpu'", "nvidia|amd|intel|cpu"},
	}, {
		name:   "vendor in capitals",
		values: map[string]any{"gpu": map[string]any{"vendor": "NVIDIA"}},
		want:   []string{"/gpu/vendor", "'NVIDIA'"},
	}, {
		name:   "vendor not a string",
		values: map[string]any{"gpu": map[string]any{"vendor": 3}},
		want:   []string{"/gpu/vendor", "got number, want string"},
	}, {
		name:   "negative operator replicas",
		values: map[string]any{"operator": map[string]any{"replicaCount": -1}},
		want:   []string{"/operator/replicaCount", "got -1, want 0"},
	}, {
		name:   "negative scheduler replicas",
		values: map[string]any{"scheduler": map[string]any{"replicaCount": -3}},
		want:   []string{"/scheduler/replicaCount", "got -3, want 0"},
	}, {
		name:   "replicas as a word",
		values: map[string]any{"operator": map[string]any{"replicaCount": "two"}},
		want:   []string{"/operator/replicaCount", "got string, want integer"},
	}, {
		name:   "fractional replicas",
		values: map[string]any{"operator": map[string]any{"replicaCount": 1.5}},
		want:   []string{"/operator/replicaCount", "want integer"},
	}, {
		name:   "leaderElect as a string",
		values: map[string]any{"operator": map[string]any{"leaderElect": "yes"}},
		want:   []string{"/operator/leaderElect", "got string, want boolean"},
	}, {
		name:   "unknown log level",
		values: map[string]any{"operator": map[string]any{"logLevel": "verbose"}},
		want:   []string{"/operator/logLevel", "'verbose'"},
	}, {
		name:   "unknown pull policy",
		values: map[string]any{"worker": map[string]any{"image": map[string]any{"repository": "w", "pullPolicy": "Sometimes"}}},
		want:   []string{"/worker/image/pullPolicy", "'Sometimes'"},
	}, {
		name:   "misspelt key",
		values: map[string]any{"operator": map[string]any{"replicas": 2}},
		want:   []string{"/operator", "'replicas' not allowed"},
	}, {
		name:   "unknown top-level key",
		values: map[string]any{"vendor": "nvidia"},
		want:   []string{"'vendor' not allowed"},
	}, {
		name:   "zero slots per device",
		values: map[string]any{"devicePlugin": map[string]any{"slotsPerDevice": 0}},
		want:   []string{"/devicePlugin/slotsPerDevice", "got 0, want 1"},
	}, {
		name:   "too many slots per device",
		values: map[string]any{"devicePlugin": map[string]any{"slotsPerDevice": 65}},
		want:   []string{"/devicePlugin/slotsPerDevice", "got 65, want 64"},
	}, {
		name:   "duration without a unit",
		values: map[string]any{"operator": map[string]any{"nodeStaleAfter": "60"}},
		want:   []string{"/operator/nodeStaleAfter", "'60'"},
	}, {
		name:   "port out of range",
		values: map[string]any{"devicePlugin": map[string]any{"httpPort": 70000}},
		want:   []string{"/devicePlugin/httpPort", "maximum"},
	}, {
		name:   "unknown scoring strategy",
		values: map[string]any{"scheduler": map[string]any{"placement": map[string]any{"scoringStrategy": "Random"}}},
		want:   []string{"/scheduler/placement/scoringStrategy", "'Random'"},
	}, {
		name:   "bad worker quantity",
		values: map[string]any{"operator": map[string]any{"workerResources": map[string]any{"requests": map[string]any{"cpu": "lots", "memory": "1Gi"}, "limits": map[string]any{"cpu": "2", "memory": "1Gi"}}}},
		want:   []string{"/operator/workerResources/requests/cpu", "'lots'"},
	}, {
		name:   "batch without videos",
		values: map[string]any{"batch": map[string]any{"enabled": true}},
		want:   []string{"/batch/reference", "/batch/distorted"},
	}, {
		name:   "tolerations as a map",
		values: map[string]any{"devicePlugin": map[string]any{"tolerations": map[string]any{"key": "x"}}},
		want:   []string{"/devicePlugin/tolerations", "got object, want array"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderValues(t, tt.values)
			if err == nil {
				t.Fatalf("values %v were accepted", tt.values)
			}
			msg := err.Error()
			if !strings.Contains(msg, "values don't meet the specifications of the schema") {
				t.Errorf("refused, but not by the schema: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message does not contain %q:\n%s", w, msg)
				}
			}
		})
	}
}

// TestTemplateRefuses covers what the schema cannot say: combinations of values.
func TestTemplateRefuses(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{{
		name:   "operator replicas without leader election",
		values: map[string]any{"operator": map[string]any{"replicaCount": 2, "leaderElect": false}},
		want:   "operator.replicaCount 2 needs operator.leaderElect: true",
	}, {
		name:   "scheduler replicas without leader election",
		values: map[string]any{"scheduler": map[string]any{"replicaCount": 3, "leaderElect": false}},
		want:   "scheduler.replicaCount 3 needs scheduler.leaderElect: true",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderValues(t, tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestVendorTemplateRefuses renders an unknown vendor with the schema out of the way (a
// chart vendored without values.schema.json, or a --skip-schema-validation install): the
// vendor template itself refuses it by name.
func TestVendorTemplateRefuses(t *testing.T) {
	_, err := renderValues(t, map[string]any{"gpu": map[string]any{"vendor": "tpu"}}, func(o *render.Options) { o.SkipSchemaValidation = true })
	if err == nil || !strings.Contains(err.Error(), `gpu.vendor "tpu" is not a vendor the chart knows`) {
		t.Fatalf("err = %v, want the vendor template's refusal", err)
	}
}
