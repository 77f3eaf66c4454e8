// Package scheduler tests vmafx-scheduler against a real kube-apiserver and etcd: the real
// kube-scheduler, built in-process exactly as the vmafx-scheduler command builds it (app.Setup
// with the VMAFX plugin options), configured by the KubeSchedulerConfiguration shipped in
// the chart (files/scheduler-config.yaml), and running as its ServiceAccount under the RBAC
// the chart installs (manifests/default/vmafx-scheduler.yaml).
// No kubelet runs: the tests create Node objects with vmafx.dev/slot capacity and
// VmafxNodes with heartbeats, and check where the scheduler binds worker Pods.
package scheduler

import (
	"testing"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

func TestMain(m *testing.M) { testenv.Run(m) }
