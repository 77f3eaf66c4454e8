// Package integration tests the front doors against a real kube-apiserver and etcd: real
// TokenReviews of ServiceAccount tokens, real SubjectAccessReviews against RBAC, and the
// CRD's own validation. No operator runs here: where a job must progress, the tests play
// the operator's part by writing the job's status (playOperator), as the operator's own
// tests play the kubelet's.
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
	logger := zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	testenv.Run(m)
}
