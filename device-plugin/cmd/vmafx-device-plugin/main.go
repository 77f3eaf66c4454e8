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
	os.Exit(run(os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr))
}

// run runs the device plugin with the command line args (without the program name) and
// returns the exit code: 2 for an invalid configuration, 1 for a failure, 0 after --help.
func run(args []string, lookup cli.Lookup, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("vmafx-device-plugin", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	loader := config.Bind(fs)
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	cli.AddVersionFlag(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			cli.PrintUsage(stdout, "vmafx-device-plugin", summary, fs)
			return 0
		}
		fmt.Fprintf(stderr, "vmafx-device-plugin: %v (see --help)\n", err)
		return 2
	}
	defer klog.Flush()
	logger := klog.Background().WithName("vmafx-device-plugin")
	cfg, err := loader.Resolve(lookup)
	if err != nil {
		fmt.Fprintf(stderr, "vmafx-device-plugin: %v\n", err)
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
