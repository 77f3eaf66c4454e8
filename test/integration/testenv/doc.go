// Package testenv runs the real kube-apiserver and etcd that the integration tests talk
// to: controller-runtime's envtest, pointed through KUBEBUILDER_ASSETS at binaries that
// `make test-bins` built from the Go module sources, with the project's generated CRDs
// from manifests/crd installed.
//
// One control plane serves a whole test package: call Run from TestMain, then give each
// test a namespace of its own with CreateNamespace.
package testenv
