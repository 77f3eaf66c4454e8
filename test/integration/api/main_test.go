// Package api tests the vmafx.dev/v1 CRDs as the real kube-apiserver serves them: the
// schema keeps every field, the printer columns read, the docs are complete, and invalid
// objects are refused with the offending field named.
package api

import (
	"testing"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

func TestMain(m *testing.M) { testenv.Run(m) }
