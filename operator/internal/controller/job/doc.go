// Package job reconciles VmafxJobs: it runs one worker Pod per attempt, follows it,
// retries failed and lost attempts, and records the outcome in the job's status.
//
// A job's Pods are named <job>-<attempt>, so the API server's AlreadyExists makes Pod
// creation idempotent: an operator that restarts, or two reconciles that race, find the
// Pod that exists instead of making another. Status is written with a merge patch that
// carries the resourceVersion it was computed from, so a stale write fails instead of
// overwriting a newer one.
package job
