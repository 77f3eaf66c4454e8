// Package imports checks the module's package boundaries with `go list`: each
// component's binaries link only their own packages, the shared ones (apis/, internal/)
// and third-party code, and no test double or test helper is linked into a binary.
package imports

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/vmafx/vmafx/internal/testutil"
)

const module = "github.com/vmafx/vmafx/"

// binaries maps each shipped binary to the component folder it belongs to.
var binaries = map[string]string{
	"operator/cmd/vmafx-operator":           "operator/",
	"scheduler-plugin/cmd/vmafx-scheduler":  "scheduler-plugin/",
	"device-plugin/cmd/vmafx-device-plugin": "device-plugin/",
	"worker/cmd/vmafx-worker":               "worker/",
	"gateway/cmd/vmafx-api":                 "gateway/",
	"gateway/cmd/vmafx-mcp":                 "gateway/",
	"kubectl-vmafx/cmd/kubectl-vmafx":       "kubectl-vmafx/",
}

// shared may be linked by every component.
var shared = []string{"apis/", "internal/"}

// testOnly is never linked into a binary.
var testOnly = []string{"internal/testutil", "/testing/", "test/"}

func TestBinariesLinkOnlyTheirComponentAndSharedPackages(t *testing.T) {
	goCmd, err := testutil.GoCommand()
	if err != nil {
		t.Skip(err)
	}
	for bin, component := range binaries {
		t.Run(bin, func(t *testing.T) {
			for _, dep := range deps(t, goCmd, module+bin) {
				rel, ours := strings.CutPrefix(dep, module)
				if !ours {
					continue
				}
				for _, bad := range testOnly {
					if strings.HasPrefix(rel, bad) || strings.Contains(rel, bad) {
						t.Errorf("%s links the test-only package %s", bin, rel)
					}
				}
				if !strings.HasPrefix(rel, component) && !hasAnyPrefix(rel, shared) {
					t.Errorf("%s links %s, another component's package; share it through apis/ or internal/", bin, rel)
				}
			}
		})
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// deps lists the packages pkg links, by import path.
func deps(t *testing.T, goCmd, pkg string) []string {
	t.Helper()
	cmd := exec.Command(goCmd, "list", "-deps", "-json=ImportPath", pkg)
	cmd.Dir = testutil.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var paths []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct{ ImportPath string }
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p.ImportPath)
	}
	if len(paths) == 0 {
		t.Fatalf("go list found no packages for %s", pkg)
	}
	return paths
}
