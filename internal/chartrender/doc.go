// Package chartrender renders the vmafx Helm chart (manifests/helm/vmafx) with the Helm Go SDK
// the way `helm install` and `helm template` do: the values schema is checked, the
// chart's kubeVersion is enforced, capabilities decide optional objects, NOTES.txt is
// rendered apart, and the objects come out in Helm's install order. It needs no helm
// binary and no cluster; the chart's tests use it.
package chartrender
