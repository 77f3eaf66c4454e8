// Package outputs reads what a job wrote beside its spec.output, its per-frame scores and
// its report's pictures, from object storage (s3://, gs://, azure://) for the doors: with
// the keys of the Secret the job names, that Secret read as the caller, so a door shows
// nothing of a store its caller could not fetch with kubectl. The console draws curves
// from it, and the HTTP API and the MCP server hand out the pictures.
package outputs
