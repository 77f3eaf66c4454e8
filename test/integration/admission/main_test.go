// Package admission tests the admission policies the install ships against a real
// kube-apiserver with RBAC authorization (envtest runs it with --authorization-mode=RBAC):
// the policy is applied as manifests/default renders it from the chart, and the requests
// are made as users and service accounts (impersonated) holding only the roles a test
// gives them.
package admission

import (
	"testing"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

func TestMain(m *testing.M) { testenv.Run(m) }
