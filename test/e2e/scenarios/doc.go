// Package scenarios holds the end-to-end scenarios of VMAFX, run against the local
// cluster (test/e2e/cluster) with the project deployed on it from its own manifests, as
// `make e2e` does: cluster-up, images, deploy, then these tests with VMAFX_E2E=1. Without
// VMAFX_E2E the package skips, so `go test ./...` never needs a cluster.
//
// Each scenario reads as the user's story it proves: what is applied, what the cluster
// must show, within which time. Nothing here runs a component outside the cluster. The
// files are numbered in the order the tests run (Go runs a package's tests file by file):
// the cluster's own smoke test, then issue 7's scenarios 1 to 6, then issue 8's Helm
// scenario 7, last because it replaces the kustomize deploy (and puts it back).
package scenarios
