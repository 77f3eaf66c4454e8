package render

import (
	"fmt"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Case is one combination of the values that change what the chart installs: the GPU
// vendor, the batch Job on or off, and the operator on or off.
type Case struct {
	Vendor   vmafxv1.GPUVendor
	Batch    bool
	Operator bool
}

// Name names the case for t.Run, e.g. "nvidia/batch/no-operator".
func (c Case) Name() string {
	batch, operator := "no-batch", "operator"
	if c.Batch {
		batch = "batch"
	}
	if !c.Operator {
		operator = "no-operator"
	}
	return fmt.Sprintf("%s/%s/%s", c.Vendor, batch, operator)
}

// Values are the case's values, as --set would give them. The batch Job scores a clip
// pair from a PersistentVolumeClaim mounted at /data.
func (c Case) Values() map[string]any {
	values := map[string]any{
		"gpu":      map[string]any{"vendor": string(c.Vendor)},
		"operator": map[string]any{"enabled": c.Operator},
	}
	if c.Batch {
		values["batch"] = map[string]any{
			"enabled":   true,
			"reference": "file://" + vmafxv1.DataMountPath + "/ref.y4m",
			"distorted": "file://" + vmafxv1.DataMountPath + "/dist.y4m",
			"volume": map[string]any{
				"persistentVolumeClaim": map[string]any{"claimName": "vmafx-clips", "readOnly": true},
			},
		}
	}
	return values
}

// Cases are every vendor with the batch Job on and off and the operator on and off.
func Cases() []Case {
	var cases []Case
	for _, vendor := range append(append([]vmafxv1.GPUVendor{}, vmafxv1.GPUVendors...), vmafxv1.VendorCPU) {
		for _, batch := range []bool{false, true} {
			for _, operator := range []bool{true, false} {
				cases = append(cases, Case{Vendor: vendor, Batch: batch, Operator: operator})
			}
		}
	}
	return cases
}
