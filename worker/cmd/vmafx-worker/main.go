// Command vmafx-worker scores a distorted video against its reference with
// VMAF. It is what every VmafxJob Pod runs; see docs/worker.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/worker/internal/command"
	"github.com/vmafx/vmafx/worker/internal/crash"
)

func main() {
	version.HandleFlag(os.Args)
	args := os.Args[1:]
	// A score, given by flags or as a request, runs in a child process, so that
	// even a crash outside the command's own goroutine ends with a result (see
	// package crash).
	if command.Supervised(args, os.Getenv) && !crash.Supervised() {
		if exe, err := os.Executable(); err == nil {
			code, report, err := crash.Supervise(exe, args, os.Environ())
			if err == nil {
				if report != "" {
					code = command.ReportCrash(args, os.Getenv, os.Stdout, os.Stderr, report)
				}
				os.Exit(code)
			}
			fmt.Fprintf(os.Stderr, "vmafx-worker: cannot supervise the scoring process, running unsupervised: %v\n", err)
		}
	}
	if err := crash.Watch(); err != nil {
		fmt.Fprintf(os.Stderr, "vmafx-worker: crash reports disabled: %v\n", err)
	}
	// SIGTERM (the kubelet stopping the Pod) and SIGINT cancel the run, which
	// is then reported as an error result.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	stopProfile := cpuProfile(os.Getenv("VMAFX_CPU_PROFILE"))
	code := command.Run(ctx, args, os.Getenv, os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// cpuProfile writes a CPU profile of the run to path, when set, until the
// returned function is called: where a worker's time goes on a machine
// without a Go toolchain (the GPU kit's step W, docs/development.md). It is
// taken in the process that scores, the supervised child, not in its
// supervisor. A profile that cannot be written is said and skipped.
func cpuProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmafx-worker: no CPU profile: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "vmafx-worker: CPU profile: %v\n", err)
		}
	}
}
