// Command vmafx-trainer runs one VmafxModelTraining: it learns from the run's scored jobs
// and pushes model versions to an OCI registry. The operator runs it as a Deployment per
// run; see docs/training.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/trainer/internal/command"
)

func main() {
	version.HandleFlag(os.Args)
	// SIGTERM (the kubelet stopping the Pod) and SIGINT end the run cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := command.Run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
