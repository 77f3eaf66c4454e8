// Command vmafx-worker scores a distorted video against its reference with
// VMAF. It is what every VmafxJob Pod runs; see docs/worker.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/vmafx/vmafx/worker/internal/command"
)

func main() {
	// SIGTERM (the kubelet stopping the Pod) and SIGINT cancel the run, which
	// is then reported as an error result.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := command.Run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
