// Package integration tests the operator's reconcilers against a real kube-apiserver and
// etcd. No kubelet runs here: the tests play its part by binding Pods and writing their
// status (kubelet stand-in functions are named as such), and play the device plugin's part
// by writing VmafxNode heartbeats.
package integration

import (
	"testing"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

func TestMain(m *testing.M) { testenv.Run(m) }
