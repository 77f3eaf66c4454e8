// Package access authenticates a front door's callers and authorizes their actions the
// way the API server would: a bearer token is checked with a TokenReview, and each
// action with a SubjectAccessReview on the vmafxjobs resource (or vmafxmodeltrainings)
// of the namespace, so that `kubectl auth can-i create vmafxjobs -n team-a` answers for
// the HTTP API, the MCP server and kubectl alike.
package access
