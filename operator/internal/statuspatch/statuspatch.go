// Package statuspatch makes status merge patches that always name the fields a printer
// column shows.
//
// A merge patch computed from typed objects (client.MergeFrom) leaves out a false or a 0
// that the stored object never had, since both sides decode to the same zero value. A
// printer column of such a field then prints empty on a fresh object (a node without a
// heartbeat: HEALTHY and JOBS; a new training run: SAMPLES) instead of false or 0. The
// patch made here writes those fields with the first status patch; it adds no write of
// its own.
package statuspatch

import (
	"encoding/json"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Naming returns p with status.<name> set to value for every entry of fields.
func Naming(p client.Patch, fields map[string]any) client.Patch {
	return naming{Patch: p, fields: fields}
}

type naming struct {
	client.Patch
	fields map[string]any
}

func (p naming) Data(obj client.Object) ([]byte, error) {
	data, err := p.Patch.Data(obj)
	if err != nil {
		return nil, err
	}
	var patch map[string]any
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, err
	}
	status, _ := patch["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		patch["status"] = status
	}
	for k, v := range p.fields {
		status[k] = v
	}
	return json.Marshal(patch)
}
