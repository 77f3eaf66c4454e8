// Command vmafx-operator runs the VMAFX operator: the VmafxJob, VmafxNode,
// VmafxModelTraining, VmafxComparison and VmafxLadder reconcilers. Every setting is a flag
// with an environment variable twin (VMAFX_OPERATOR_*, VMAFX_LOG_LEVEL; `vmafx-operator
// --help`, docs/operator.md#configuration).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/manager"
)

func main() {
	version.HandleFlag(os.Args)
	os.Exit(run(ctrl.SetupSignalHandler(), os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr))
}

// run starts the operator and returns the process exit code: 2 for an invalid
// configuration, 1 for a failure to start or run, 0 after --help.
func run(ctx context.Context, args []string, lookup config.Lookup, stdout, stderr io.Writer) int {
	cfg, err := config.Parse(args, lookup, stdout)
	if errors.Is(err, cli.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "vmafx-operator: %v\n", err)
		return 2
	}
	logger := zap.New(zap.WriteTo(stderr), zap.Level(zapLevel(cfg.LogLevel)), zap.JSONEncoder())
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	log := logger.WithName("setup")
	for _, o := range config.OldSettingsSet(lookup) {
		log.Info("Warning: ignoring a setting of the original VMAFX operator README", "variable", o.Name, "instead", o.Instead)
	}
	log.Info("Starting vmafx-operator", "metricsAddr", cfg.MetricsAddr, "healthProbeAddr", cfg.HealthProbeAddr,
		"leaderElection", cfg.LeaderElection, "workerImage", cfg.Worker.Image, "nodeStaleAfter", cfg.NodeStaleAfter,
		"maxConcurrentReconciles", cfg.MaxConcurrentReconciles, "kubeAPIQPS", cfg.KubeAPIQPS, "kubeAPIBurst", cfg.KubeAPIBurst,
		"namespace", cfg.Namespace, "allowedHostPaths", cfg.Volumes.HostPaths, "allowedNFSServers", cfg.Volumes.NFSServers, "allowedCSIDrivers", cfg.Volumes.CSIDrivers,
		"pendingDeadline", cfg.PendingDeadline, "podStartTimeout", cfg.PodStartTimeout, "terminatingTimeout", cfg.TerminatingTimeout,
		"ttlAfterFinished", cfg.TTLAfterFinished)
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "No Kubernetes API configuration")
		return 1
	}
	mgr, err := manager.New(restConfig, cfg, manager.Options{})
	if err != nil {
		log.Error(err, "Setting up the operator")
		return 1
	}
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "Operator stopped with an error")
		return 1
	}
	log.Info("Stopped")
	return 0
}

// zapLevel maps VMAFX_LOG_LEVEL to zap; debug also shows the reconcilers' V(4) lines.
func zapLevel(level string) zapcore.Level {
	switch level {
	case "debug":
		return zapcore.Level(-4)
	case "warn":
		return zapcore.WarnLevel
	case "error":
		return zapcore.ErrorLevel
	}
	return zapcore.InfoLevel
}
