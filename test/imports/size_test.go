package imports

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vmafx/vmafx/internal/testutil"
)

// maxWorkerBytes bounds the stripped worker binary, which every scoring Pod pulls: it
// was 76 MB while it linked the trainer's Kubernetes client and Google's storage client
// with gRPC (docs/worker.md, "Object storage"); a dependency that brings either back
// fails here.
const maxWorkerBytes = 35_000_000

func TestWorkerBinarySize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker")
	}
	goCmd, err := testutil.GoCommand()
	if err != nil {
		t.Skip(err)
	}
	bin := filepath.Join(t.TempDir(), "vmafx-worker")
	// As the images build it (hack/release/project.BuildBinary): static, trimmed, stripped.
	cmd := exec.Command(goCmd, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./"+scoring)
	cmd.Dir = testutil.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", scoring, err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > maxWorkerBytes {
		t.Errorf("the stripped worker binary is %d bytes, more than %d: see what it links with `go list -deps ./%s`", fi.Size(), maxWorkerBytes, scoring)
	}
}
