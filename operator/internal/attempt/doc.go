// Package attempt is the one engine every worker Pod of the operator goes through: a
// single job's attempts, a chunked job's probe, chunks and merge, and a ladder's encodes.
//
// An attempt is one Pod. Given what the caller's status records of its attempts (a
// Record), the attempt's Pod as the cache or the API server shows it (or none) and the
// time, Decide says what follows: keep waiting (and until when), record a success, record
// a failure and retry after a backoff, record a loss and retry at once, start the next
// attempt, or give up with a reason and a message; with the Events that explain it.
// Create makes an attempt's Pod and turns the API server's refusal into the same kind of
// decision (Refused); Release, Delete and ForceDelete are the Pod writes the decisions
// ask for.
//
// The caller keeps what differs between kinds of Pods: where the counters live in status,
// how a Pod is built, and what a success means (a Parse of the worker's result). The
// engine writes nothing on its own but Pods; the caller records a decision in its
// status first, and only then releases, deletes or creates what the decision names, so
// that an outcome is never lost with its Pod (docs/design-attempts.md).
package attempt
