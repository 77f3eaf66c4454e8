// Package crash makes sure a crashing worker still reports a result.
//
// The score command recovers panics in its own goroutine, but a panic in any
// other goroutine (the kernel scores frames on a pool of them) or a fatal
// runtime error ends the process with only a stack trace, which the operator
// cannot parse. So vmafx-worker runs "score" in a child process: Supervise
// starts the same executable again, forwards SIGTERM and SIGINT to it and
// waits; the child calls Watch, which hands the Go runtime's crash report
// (debug.SetCrashOutput) to the parent through a pipe. When the child dies
// of a crash, Supervise returns the report's first line ("panic: ..." or
// "fatal error: ...") for the caller to write as an Internal result. A child
// killed by a signal (e.g. the OOM killer's SIGKILL) writes no report, and
// its exit status passes through unchanged, so the kubelet still says
// OOMKilled.
package crash
