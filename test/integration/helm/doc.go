// Package helm runs the objects the vmafx Helm chart renders through a real kube-apiserver
// (test/integration/testenv) as a server-side dry run: every vendor with the batch Job on
// and off and the operator on and off, with all of the server's validation and admission
// and nothing persisted. The API server has the project's CRDs installed; the chart's
// crds/ go through as an update of those.
package helm
