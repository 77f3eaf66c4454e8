package owned

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestCheck(t *testing.T) {
	parent := &metav1.ObjectMeta{Name: "cmp", UID: "u1"}
	ref := func(kind, name string, uid types.UID, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "vmafx.dev/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(controller)}
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		obj  *metav1.ObjectMeta
		want Verdict
	}{
		{"its own", &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{ref("VmafxComparison", "cmp", "u1", true)}}, Ours},
		{"no owner", &metav1.ObjectMeta{}, Foreign},
		{"an owner, not the controller", &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{ref("VmafxComparison", "cmp", "u1", false)}}, Foreign},
		{"another parent's", &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{ref("VmafxComparison", "other", "u2", true)}}, Foreign},
		{"another kind's of that name", &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{ref("VmafxLadder", "cmp", "u3", true)}}, Foreign},
		{"an earlier parent's", &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{ref("VmafxComparison", "cmp", "u0", true)}}, Going},
		{"being deleted", &metav1.ObjectMeta{DeletionTimestamp: &now}, Going},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Check(tc.obj, parent, "VmafxComparison")
			if got != tc.want || (got != Ours) != (why != "") {
				t.Errorf("Check = %v, %q; want %v", got, why, tc.want)
			}
		})
	}
}
