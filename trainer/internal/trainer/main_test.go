package trainer

import (
	"testing"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestMain starts a real kube-apiserver and etcd (KUBEBUILDER_ASSETS) for the trainer to
// read runs and jobs from.
func TestMain(m *testing.M) { testenv.Run(m) }
