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
	}, {
		name:   "relative host path",
		values: map[string]any{"operator": map[string]any{"allowedHostPaths": []any{"srv/clips"}}},
		want:   []string{"/operator/allowedHostPaths/0", "'srv/clips'"},
	}, {
		name:   "unhealthy threshold of zero",
		values: map[string]any{"operator": map[string]any{"unhealthyThreshold": 0}},
		want:   []string{"/operator/unhealthyThreshold", "exclusiveMinimum"},
	}, {
		name:   "image without a repository",
		values: map[string]any{"operator": map[string]any{"image": map[string]any{"repository": ""}}},
		want:   []string{"/operator/image/repository", "minLength"},
	}, {
		name:   "unknown key in an image",
		values: map[string]any{"server": map[string]any{"image": map[string]any{"digest": "sha256:0"}}},
		want:   []string{"/server/image", "'digest' not allowed"},
	}, {
		name:   "worker resources without a limit",
		values: map[string]any{"operator": map[string]any{"workerResources": map[string]any{"limits": nil}}},
		want:   []string{"/operator/workerResources", "limits"},
	}, {
		name:   "node selector value not a string",
		values: map[string]any{"mcp": map[string]any{"nodeSelector": map[string]any{"zone": 3}}},
		want:   []string{"/mcp/nodeSelector/zone", "got number, want string"},
	}, {
		name:   "workload twice",
		values: map[string]any{"workload": []any{"server", "server"}},
		want:   []string{"/workload", "oneOf"},
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
			// helm lint refuses the same values, naming the same key.
			err = render.Lint(tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want[0]) {
				t.Errorf("helm lint: err = %v, want one naming %s", err, tt.want[0])
			}
		})
	}
}

// TestSchemaAccepts gives values the schema must let through although the chart's
// defaults are narrower: what a shared type allows beyond its default's type (a numeric
// image tag or quantity), keys a default leaves out (a CPU limit, another resource),
// and the keys Helm or a documented option adds.
func TestSchemaAccepts(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
	}{
		{"numeric image tag", map[string]any{"operator": map[string]any{"image": map[string]any{"repository": "r", "tag": 1.2}}}},
		{"numeric quantity", map[string]any{"operator": map[string]any{"workerResources": map[string]any{"limits": map[string]any{"cpu": 4, "memory": "2Gi"}}}}},
		{"a CPU limit and another resource", map[string]any{"operator": map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "1", "ephemeral-storage": "1Gi"}}}}},
		{"minAvailable instead of maxUnavailable", map[string]any{"operator": map[string]any{"podDisruptionBudget": map[string]any{"enabled": true, "minAvailable": 1, "maxUnavailable": nil}}}},
		{"a free-form affinity", map[string]any{"scheduler": map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{}}}}},
		{"one workload as a string", map[string]any{"workload": "server"}},
		{"env with valueFrom", map[string]any{"server": map[string]any{"extraEnv": []any{map[string]any{"name": "A", "valueFrom": map[string]any{}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := renderValues(t, tt.values); err != nil && strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
				t.Fatalf("values %v were refused: %v", tt.values, err)
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
