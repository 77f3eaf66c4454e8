// Package chart holds the tests of the vmafx Helm chart (manifests/helm/vmafx): lint, the
// rendering of every vendor with the batch Job and the operator on and off, the values
// schema, the hardening of every Pod, and the chart's agreement with the generated CRDs
// and roles, and the kustomize folders rendered from it. test/integration/helm runs the rendered
// objects through a real API server.
package chart
