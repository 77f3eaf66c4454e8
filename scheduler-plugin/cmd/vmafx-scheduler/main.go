// Command vmafx-scheduler is kube-scheduler with the VMAFX plugins registered: every
// kube-scheduler flag, the KubeSchedulerConfiguration file, leader election and the metrics
// and health endpoints work as they do upstream. Deploy it with the configuration in
// the chart's files/scheduler-config.yaml, whose profile vmafx-scheduler enables the VmafxPlacement plugin.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/scheduler-plugin/plugins"
)

func main() {
	// Ours, not kube-scheduler's own --version (the Kubernetes version it is built from).
	version.HandleFlag(os.Args)
	legacyregistry.RawMustRegister(version.Collector())
	command := app.NewSchedulerCommand(plugins.Options()...)
	command.Use = "vmafx-scheduler"
	os.Exit(cli.Run(command))
}
