// Package report turns the outcome of a scoring run into the worker's
// answer: the compact vmafxv1.WorkerResult, the process exit code, and the
// termination message the operator reads.
//
// Classify is the one place where errors map to a reason and an exit code:
//
//	0  success
//	1  Internal     anything else, including a cancelled run (SIGTERM)
//	2  BadInput     unusable videos or request (size or frame count mismatch,
//	                truncated file, unknown pixel format, no frames, bad flags)
//	3  FetchFailed  an input could not be fetched (missing file, HTTP 404,
//	                timeout, size limit, unsupported scheme such as s3://)
//	4  BadModel     unknown or corrupt model
package report
