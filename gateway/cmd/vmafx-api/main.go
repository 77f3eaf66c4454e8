// Command vmafx-api is the HTTP scoring API: it creates and reads VmafxJobs for callers
// who present a Kubernetes bearer token (docs/gateway.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/vmafx/vmafx/gateway/internal/config"
	"github.com/vmafx/vmafx/gateway/internal/console"
	"github.com/vmafx/vmafx/gateway/internal/httpapi"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/version"
)

const summary = `vmafx-api is the HTTP scoring API: it creates and reads VmafxJobs for callers who
present a Kubernetes bearer token (docs/gateway.md).`

// readyPeriod is how often the door checks that the API server answers (/readyz reports
// the last check).
const readyPeriod = 10 * time.Second

func main() {
	version.HandleFlag(os.Args)
	os.Exit(run())
}

func run() int {
	var consoleOpts console.Options
	consoleOn := true
	cfg, err := config.Parse("vmafx-api", "VMAFX_API_", summary, os.Args[1:], os.LookupEnv, os.Stdout, func(s *cli.Set, env func(string) string) {
		s.Bool(&consoleOn, "console", env("console"), true, "serve the web console at /console/ (docs/console.md)")
		s.Bool(&consoleOpts.ReadOutputs, "console-read-outputs", env("console-read-outputs"), false,
			"let the console read jobs' per-frame outputs from object storage with the keys of the Secret each job names, read as the caller, to draw their curves (the API's Pod then reaches the jobs' stores)")
	})
	if errors.Is(err, cli.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmafx-api: %v\n", err)
		return 2
	}
	defer klog.Flush()
	logger := klog.Background().WithName("vmafx-api")
	logger.Info("Effective configuration", cfg.KeysAndValues()...)

	c, reviewer, err := cfg.Connect()
	if err != nil {
		logger.Error(err, "Creating API clients")
		return 1
	}
	reg := serve.NewRegistry()
	store := jobs.New(c, reviewer)
	metrics := httpapi.NewMetrics(reg)
	// One reader for the console and the pictures route: one bound on the reads at once.
	reader := outputs.New(store)
	var pictures *outputs.Reader
	if consoleOpts.ReadOutputs {
		pictures = reader
	}
	handler := httpapi.New(store, metrics, pictures).Handler()
	if consoleOn {
		handler = console.Mount(handler, console.New(store, metrics, reader, consoleOpts))
	}
	door, probe, err := serve.Listen(cfg.Serve)
	if err != nil {
		logger.Error(err, "Listening")
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx = klog.NewContext(ctx, logger)
	if err := serve.Serve(ctx, cfg.Serve, door, probe, handler, reg, serve.Readiness(ctx, c.Ready, readyPeriod)); err != nil {
		logger.Error(err, "Server failed")
		return 1
	}
	return 0
}
