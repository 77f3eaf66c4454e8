// Package v1 holds the vmafx.dev/v1 API: the VmafxJob, VmafxNode and VmafxModelTraining
// custom resources, the names (labels, annotations, resources, environment variables)
// that the operator, scheduler plugin, device plugin and worker share, and the versioned
// request that the operator gives a worker and result that the worker reports back.
//
// Every component imports this package and none imports another component, so a name
// defined here is the only spelling of it in the project.
//
// +kubebuilder:object:generate=true
// +groupName=vmafx.dev
package v1
