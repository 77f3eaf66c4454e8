package scale

import (
	"flag"
	"os"
	"testing"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestMain starts the control plane only for the benchmark: the package's tests check the
// harness's own arithmetic and need none, so `go test ./...` does not pay for one.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	testenv.Run(m)
}
