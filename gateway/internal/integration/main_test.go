// Package integration tests the front doors against a real kube-apiserver and etcd: real
// TokenReviews of ServiceAccount tokens, real SubjectAccessReviews against RBAC, and the
// CRD's own validation. No operator runs here: where a job must progress, the tests play
// the operator's part by writing the job's status (playOperator), as the operator's own
// tests play the kubelet's.
package integration

import (
	"testing"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

func TestMain(m *testing.M) { testenv.Run(m) }
