package chartrender

import (
	"fmt"
	"slices"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Workloads are the chart's workloads (values.workload).
var Workloads = []string{"platform", "server", "mcp", "job"}

// Case is one combination of the values that change what the chart installs: the GPU
// vendor, the workloads, and the operator on or off.
type Case struct {
	Vendor vmafxv1.GPUVendor
	// Workloads default to the platform alone.
	Workloads []string
	// Batch adds the job workload.
	Batch    bool
	Operator bool
	// Pushgateway installs the Pushgateway subchart, which the batch Job pushes to.
	Pushgateway bool
}

// workloads are the case's workloads with their defaults.
func (c Case) workloads() []string {
	ws := append([]string{}, c.Workloads...)
	if len(ws) == 0 {
		ws = []string{"platform"}
	}
	if c.Batch && !slices.Contains(ws, "job") {
		ws = append(ws, "job")
	}
	return ws
}

// Has reports whether the case runs workload w.
func (c Case) Has(w string) bool { return slices.Contains(c.workloads(), w) }

// Name names the case for t.Run, e.g. "nvidia/platform+job/no-operator".
func (c Case) Name() string {
	operator := "operator"
	if !c.Operator {
		operator = "no-operator"
	}
	name := fmt.Sprintf("%s/%s/%s", c.Vendor, strings.Join(c.workloads(), "+"), operator)
	if c.Pushgateway {
		name += "/pushgateway"
	}
	return name
}

// Values are the case's values, as --set would give them. The batch Job scores a clip
// pair from a PersistentVolumeClaim mounted at /data.
func (c Case) Values() map[string]any {
	workloads := make([]any, len(c.workloads()))
	for i, w := range c.workloads() {
		workloads[i] = w
	}
	values := map[string]any{
		"gpu":      map[string]any{"vendor": string(c.Vendor)},
		"operator": map[string]any{"enabled": c.Operator},
		"workload": workloads,
	}
	if c.Pushgateway {
		values["pushgateway"] = map[string]any{"enabled": true}
	}
	if c.Has("job") {
		values["batch"] = map[string]any{
			"reference": "file://" + vmafxv1.DataMountPath + "/ref.y4m",
			"distorted": "file://" + vmafxv1.DataMountPath + "/dist.y4m",
			"volume": map[string]any{
				"persistentVolumeClaim": map[string]any{"claimName": "vmafx-clips", "readOnly": true},
			},
		}
	}
	return values
}

// Cases are every vendor with every non-empty set of workloads (the operator on), the
// platform alone and with the batch Job with the operator off, and the batch Job with
// the Pushgateway.
func Cases() []Case {
	var cases []Case
	for _, vendor := range append(append([]vmafxv1.GPUVendor{}, vmafxv1.GPUVendors...), vmafxv1.VendorCPU) {
		for set := 1; set < 1<<len(Workloads); set++ {
			var ws []string
			for i, w := range Workloads {
				if set&(1<<i) != 0 {
					ws = append(ws, w)
				}
			}
			cases = append(cases, Case{Vendor: vendor, Workloads: ws, Operator: true})
		}
		cases = append(cases,
			Case{Vendor: vendor, Workloads: []string{"platform"}, Operator: false},
			Case{Vendor: vendor, Workloads: []string{"platform", "job"}, Operator: false},
			Case{Vendor: vendor, Workloads: []string{"job"}, Operator: true, Pushgateway: true})
	}
	return cases
}
