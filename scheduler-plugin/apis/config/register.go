package config

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// SchemeGroupVersion is kube-scheduler's internal config version, where the plugins
// receive their args.
var SchemeGroupVersion = schema.GroupVersion{Group: configv1.GroupName, Version: runtime.APIVersionInternal}

var (
	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the internal args types to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &VmafxPlacementArgs{})
	return nil
}
