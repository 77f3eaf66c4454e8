// Command vmafx-device-plugin advertises a node's VMAF scoring slots (vmafx.dev/slot)
// to the kubelet and keeps the node's VmafxNode heartbeat. It parses its configuration
// (flags, environment, optional file), logs it once and runs the agent until SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/vmafx/vmafx/device-plugin/internal/agent"
	"github.com/vmafx/vmafx/device-plugin/internal/config"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/version"
)

const summary = `vmafx-device-plugin advertises a node's VMAF scoring slots (vmafx.dev/slot) to the
kubelet and keeps the node's VmafxNode heartbeat (docs/device-plugin.md). A setting comes
from its flag, else its environment variable, else the config file (--config), else the
default.`

func main() {
	version.HandleFlag(os.Args)
	os.Exit(run())
}

func run() int {
	fs := pflag.NewFlagSet("vmafx-device-plugin", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	loader := config.Bind(fs)
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			cli.PrintUsage(os.Stdout, "vmafx-device-plugin", summary, fs)
			return 0
		}
		fmt.Fprintf(os.Stderr, "vmafx-device-plugin: %v (see --help)\n", err)
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
