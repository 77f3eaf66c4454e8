package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "vmafx.dev", Version: "v1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = newSchemeBuilder()

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// schemeBuilder is controller-runtime's scheme.Builder (Register, AddToScheme) on
// apimachinery's alone: the worker imports this package for its result type and must not
// link a Kubernetes client library for it.
type schemeBuilder struct{ runtime.SchemeBuilder }

func newSchemeBuilder() *schemeBuilder {
	b := &schemeBuilder{}
	b.SchemeBuilder.Register(func(s *runtime.Scheme) error {
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})
	return b
}

// Register adds objs, the kinds of this package, to the schemes the builder fills.
func (b *schemeBuilder) Register(objs ...runtime.Object) {
	b.SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, objs...)
		return nil
	})
}
