// Package pki makes the local cluster's certificates: one CA that every component trusts,
// and a key pair per identity (server certificates with the names and addresses clients
// dial, client certificates whose common name and organisations are the Kubernetes user
// and groups that RBAC and the Node authorizer see).
package pki
