// Package v1 is the versioned form of vmafx-scheduler's plugin args, as written in a
// KubeSchedulerConfiguration file under apiVersion kubescheduler.config.k8s.io/v1: pointer
// fields so that defaulting can tell "unset" from "zero", JSON names, defaults
// (defaults.go) and conversions to the internal types (conversion.go).
//
// +kubebuilder:object:generate=true
package v1
