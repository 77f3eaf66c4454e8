// Command vmafx-device-plugin advertises a node's VMAF scoring slots (vmafx.dev/slot)
// to the kubelet and keeps the node's VmafxNode heartbeat. It parses its configuration
// (flags, environment, optional file), logs it once and runs the agent until SIGTERM.
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

	"github.com/vmafx/vmafx/device-plugin/internal/agent"
	"github.com/vmafx/vmafx/device-plugin/internal/config"
	"github.com/vmafx/vmafx/internal/version"
)

func main() {
	version.HandleFlag(os.Args)
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("vmafx-device-plugin", flag.ContinueOnError)
	klog.InitFlags(fs)
	loader := config.Bind(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	defer klog.Flush()
	logger := klog.Background().WithName("vmafx-device-plugin")
	cfg, err := loader.Resolve(os.LookupEnv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmafx-device-plugin: %v\n", err)
		return 2
	}
	logger.Info("Effective configuration", cfg.KeysAndValues()...)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := agent.Run(klog.NewContext(ctx, logger), cfg); err != nil {
		logger.Error(err, "Device plugin failed")
		return 1
	}
	return 0
}
