// Package e2e holds nothing but this comment: the end-to-end tests of VMAFX live below it.
//
// cluster runs a real single-node Kubernetes cluster on this machine (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, containerd, kubelet and kube-proxy, all built
// from Go module sources), images/pause is the sandbox image's program, and scenarios
// holds the end-to-end tests that run against that cluster once the project is deployed
// on it. docs/local-cluster.md describes the cluster for its users.
package e2e
