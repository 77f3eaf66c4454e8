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

	"k8s.io/klog/v2"

	"github.com/vmafx/vmafx/device-plugin/internal/agent"
	"github.com/vmafx/vmafx/device-plugin/internal/config"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/version"
)

func main() {
	version.HandleFlag(os.Args)
	os.Exit(run(os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr))
}

// run runs the device plugin with the command line args (without the program name) and
// returns the exit code: 2 for an invalid configuration, 1 for a failure, 0 after --help.
func run(args []string, lookup cli.Lookup, stdout, stderr io.Writer) int {
	loader := config.NewLoader()
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	loader.Set().AddGoFlagSet(klogFlags)
	cfg, err := loader.Parse(args, lookup, stdout)
	if errors.Is(err, cli.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	defer klog.Flush()
	logger := klog.Background().WithName(config.Name)
	logger.Info("Effective configuration", cfg.KeysAndValues()...)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := agent.Run(klog.NewContext(ctx, logger), cfg); err != nil {
		logger.Error(err, "Device plugin failed")
		return 1
	}
	return 0
}
