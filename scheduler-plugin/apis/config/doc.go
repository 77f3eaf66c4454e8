// Package config holds the internal form of the arguments of vmafx-scheduler's plugins. The
// types are registered in kube-scheduler's own config group (kubescheduler.config.k8s.io), so
// the pluginConfig args of a KubeSchedulerConfiguration file are decoded strictly, defaulted
// and converted to these types exactly as the in-tree plugins' args are; a plugin's New
// receives them already defaulted.
//
// Versioned (file) forms live in package v1, defaults only in v1/defaults.go, validation in
// package validation, and package scheme adds everything to kube-scheduler's schemes.
//
// +kubebuilder:object:generate=true
package config
