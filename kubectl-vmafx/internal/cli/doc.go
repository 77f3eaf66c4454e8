// Package cli is the kubectl-vmafx command tree: score, get, wait, logs, cancel and nodes,
// each a thin client of the API server through cli-runtime's kubeconfig flags (-n,
// --context, --kubeconfig, ...) with kubectl's output conventions (-o json|yaml|wide).
package cli
