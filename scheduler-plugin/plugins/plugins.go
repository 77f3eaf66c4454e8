// Package plugins lists the scheduler plugins that vmafx-scheduler adds to kube-scheduler, as
// kube-scheduler command options. The vmafx-scheduler command and the integration tests build
// the scheduler from this one list, so the tests run what the binary runs.
//
// Importing the package also registers the plugins' args types with kube-scheduler's
// schemes, so a KubeSchedulerConfiguration that configures them decodes.
package plugins

import (
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	// Register VmafxPlacementArgs with kube-scheduler's config schemes.
	_ "github.com/vmafx/vmafx/scheduler-plugin/apis/config/scheme"
	"github.com/vmafx/vmafx/scheduler-plugin/internal/placement"
	"github.com/vmafx/vmafx/scheduler-plugin/internal/priority"
)

// Options returns the kube-scheduler options that register every VMAFX plugin.
func Options() []app.Option {
	return []app.Option{
		app.WithPlugin(placement.Name, placement.New),
		app.WithPlugin(priority.Name, priority.New),
	}
}
