// Package jobs is what every front door does with VmafxJobs: submit, get, list, cancel,
// wait for a result, follow a job's phases, and list models. Each call is authorized for
// the caller first (package access) and then made with the door's own client; nothing is
// scored here, so scheduling, retries and results stay with the operator.
package jobs
