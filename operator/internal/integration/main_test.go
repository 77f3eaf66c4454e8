// Package integration tests the operator's reconcilers against a real kube-apiserver and
// etcd. No kubelet runs here: the tests play its part by binding Pods and writing their
// status (kubelet stand-in functions are named as such), and play the device plugin's part
// by writing VmafxNode heartbeats.
package integration

import (
	"os"
	"testing"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

func TestMain(m *testing.M) {
	// go test shows this only for a failing package (or with -v).
	logger := zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	testenv.Run(m)
}
