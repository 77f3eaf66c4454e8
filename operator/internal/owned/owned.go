// Package owned tells whether an object found under the name a parent gives its child is
// that parent's own. VmafxComparisons and VmafxLadders name their VmafxJobs and Pods
// after themselves, so anyone who may create a VmafxJob or a Pod can create one of that
// name first: a parent adopts only what names it as controller, with its UID.
package owned

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Verdict is what a parent makes of an object that holds its child's name.
type Verdict int

const (
	// Ours: the object names the parent, by UID, as its controller.
	Ours Verdict = iota
	// Going: not the parent's, but on its way out: being deleted, or the child of an
	// earlier parent of the same kind and name, which the garbage collector removes. The
	// parent waits for the name to come free.
	Going
	// Foreign: someone else's; the parent must not use it.
	Foreign
)

// Check judges obj, found under the name parent (of kind) gives its child, and says
// whose it is.
func Check(obj, parent metav1.Object, kind string) (Verdict, string) {
	ref := metav1.GetControllerOf(obj)
	switch {
	case ref != nil && ref.UID == parent.GetUID():
		return Ours, ""
	case obj.GetDeletionTimestamp() != nil:
		return Going, "it is being deleted"
	case ref == nil:
		return Foreign, "it has no controller"
	case ref.Kind == kind && ref.Name == parent.GetName():
		return Going, fmt.Sprintf("it belongs to an earlier %s %s (uid %s) that the garbage collector is removing", kind, ref.Name, ref.UID)
	}
	return Foreign, fmt.Sprintf("its controller is %s %s", ref.Kind, ref.Name)
}
