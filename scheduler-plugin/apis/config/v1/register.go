package v1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// SchemeGroupVersion is the version in which a KubeSchedulerConfiguration file writes the
// plugin args: kubescheduler.config.k8s.io/v1, kube-scheduler's own.
var SchemeGroupVersion = schema.GroupVersion{Group: configv1.GroupName, Version: "v1"}

var (
	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes, addDefaultingFuncs, addConversionFuncs)
	// AddToScheme adds the versioned args types, their defaults and their conversions to a
	// scheme that already knows the internal types.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &VmafxPlacementArgs{})
	return nil
}

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	scheme.AddTypeDefaultingFunc(&VmafxPlacementArgs{}, func(obj any) {
		SetDefaults_VmafxPlacementArgs(obj.(*VmafxPlacementArgs))
	})
	return nil
}
