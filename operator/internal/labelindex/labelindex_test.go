package labelindex

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// recorder is a FieldIndexer that keeps the index Register asks for, to hand it to a
// fake client.
type recorder struct {
	field string
	fn    client.IndexerFunc
}

func (r *recorder) IndexField(_ context.Context, _ client.Object, field string, fn client.IndexerFunc) error {
	r.field, r.fn = field, fn
	return nil
}

// TestMatchingListsByLabelValue: a list through the index returns the objects of the
// namespace whose label has the value, and no object without the label is indexed.
func TestMatchingListsByLabelValue(t *testing.T) {
	const key = "vmafx.dev/job"
	var rec recorder
	if err := Register(context.Background(), &rec, &corev1.Pod{}, key); err != nil {
		t.Fatal(err)
	}
	pod := func(ns, name string, labels map[string]string) client.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	if got := rec.fn(pod("a", "x", map[string]string{"other": "j1"})); got != nil {
		t.Errorf("an object without the label is indexed under %v", got)
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithIndex(&corev1.Pod{}, rec.field, rec.fn).WithObjects(
		pod("a", "j1-1", map[string]string{key: "j1"}),
		pod("a", "j1-2", map[string]string{key: "j1"}),
		pod("a", "j2-1", map[string]string{key: "j2"}),
		pod("b", "j1-1", map[string]string{key: "j1"}),
		pod("a", "other", map[string]string{"app": "x"}),
	).Build()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace("a"), Matching(key, "j1")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	slices.Sort(names)
	if want := []string{"a/j1-1", "a/j1-2"}; !slices.Equal(names, want) {
		t.Errorf("listed %v, want %v", names, want)
	}
}
