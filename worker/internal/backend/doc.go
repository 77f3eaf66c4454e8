// Package backend chooses the compute backend that scores a job.
//
// The device plugin tells the worker which backend its slot offers through
// VMAFX_BACKEND (cuda, hip, sycl or cpu). This build has only the CPU
// backend, the Go kernel in worker/vmaf; GPU backends (TODO(GPU backend
// issue)) will register here with a probe that says whether their device is
// usable, and Select falls back to the CPU, with a reason, when the one asked
// for is missing, so a result always names the backend that really ran.
package backend
