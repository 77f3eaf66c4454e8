// Package mcpserver is the Model Context Protocol server of VMAFX, built on the official
// Go SDK: tools to score a pair, compare several distorted videos against one reference,
// get, list and wait for jobs and list models, and resources for a job's result and its
// per-frame output. Like the HTTP API it only creates and reads VmafxJobs (package jobs).
//
// The tools' input schemas are the VmafxJob CRD's own spec schema, read from the API
// server, and every job is checked by the API server before anything is created (a
// server-side dry run), so a tool refuses exactly what `kubectl apply` refuses, with the
// same messages: no rule is repeated here.
package mcpserver
