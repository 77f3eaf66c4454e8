// Package labelindex indexes the operator's caches by the value of a label. The cache
// answers a label selector by reading every object of the namespace, so a reconcile that
// lists a job's Pods (or a parent's jobs) that way costs as much as the namespace holds:
// with 10 000 jobs, a job's reconciles cost three times what they cost with 1000
// (docs/benchmarks.md, cluster scale). A field index on the label answers in the number
// of matches.
package labelindex

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// name is the field index of label key.
func name(key string) string { return "label:" + key }

// Register indexes obj's kind in idx by the value of label key.
func Register(ctx context.Context, idx client.FieldIndexer, obj client.Object, key string) error {
	return idx.IndexField(ctx, obj, name(key), func(o client.Object) []string {
		if v, ok := o.GetLabels()[key]; ok {
			return []string{v}
		}
		return nil
	})
}

// Matching selects, through the index Register made, the objects whose label key is value.
func Matching(key, value string) client.MatchingFields {
	return client.MatchingFields{name(key): value}
}
