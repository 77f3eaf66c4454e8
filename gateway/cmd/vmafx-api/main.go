// Command vmafx-api is the HTTP scoring API: it creates and reads VmafxJobs for callers
// who present a Kubernetes bearer token (docs/gateway.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/vmafx/vmafx/gateway/internal/config"
	"github.com/vmafx/vmafx/gateway/internal/httpapi"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
	"github.com/vmafx/vmafx/internal/version"
)

func main() {
	version.HandleFlag(os.Args)
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("vmafx-api", flag.ContinueOnError)
	klog.InitFlags(fs)
	cfg, resolve := config.Bind(fs, "VMAFX_API_", os.LookupEnv)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := resolve(); err != nil {
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
	api := httpapi.New(store, httpapi.NewMetrics(reg))
	door, probe, err := serve.Listen(cfg.Serve)
	if err != nil {
		logger.Error(err, "Listening")
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx = klog.NewContext(ctx, logger)
	if err := serve.Serve(ctx, cfg.Serve, door, probe, api.Handler(), reg, store.Ready); err != nil {
		logger.Error(err, "Server failed")
		return 1
	}
	return 0
}
