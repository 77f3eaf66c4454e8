// Package httpapi is the HTTP scoring API: JSON over HTTP to submit, get, list, cancel
// and wait for VmafxJobs, a Server-Sent Events stream of a job's phases, and the model
// list, described by the OpenAPI 3 document it serves at /openapi.json. Errors are the
// API server's own Status objects with their HTTP code (a refused spec is a 422 with the
// CEL rule's message per field).
package httpapi
