// Package imports checks the module's package boundaries with `go list`: each
// component's binaries link only their own packages, the shared ones (apis/, internal/),
// the libraries (vmaf/, media/) and third-party code, no test double or test helper is linked
// into a binary, and the libraries link nothing of Kubernetes or of the components; and
// that the scoring binary stays small (size_test.go).
package imports

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
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
	"trainer/cmd/vmafx-trainer":             "trainer/",
	"gateway/cmd/vmafx-api":                 "gateway/",
	"gateway/cmd/vmafx-mcp":                 "gateway/",
	"kubectl-vmafx/cmd/kubectl-vmafx":       "kubectl-vmafx/",
}

// shared may be linked by every component: the API types, the shared helpers, the VMAF
// library and the media input and output (fetch, decode, encode).
var shared = []string{"apis/", "internal/", "vmaf/", "media/"}

// libraries are Kubernetes-free Go libraries another program could import: they link
// only their own packages and third-party code that is not Kubernetes.
var libraries = []string{"vmaf/"}

// kubernetes are the module prefixes a library may not link.
var kubernetes = []string{"k8s.io/", "sigs.k8s.io/"}

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
				if !within(rel, component) && !slices.ContainsFunc(shared, func(dir string) bool { return within(rel, dir) }) {
					t.Errorf("%s links %s, another component's package; share it through apis/ or internal/", bin, rel)
				}
			}
		})
	}
}

// scoring is the binary of every worker Pod: it reads and writes files, HTTP and object
// storage, never the API server, so it links no Kubernetes client (the trainer, which
// needs one, is its own binary). The one controller-runtime package it may link is
// pkg/scheme, the SchemeBuilder of apis/vmafx/v1, which holds no client.
const scoring = "worker/cmd/vmafx-worker"

// kubeClients are the module prefixes of the Kubernetes clients.
var kubeClients = []string{"k8s.io/client-go/", "sigs.k8s.io/controller-runtime/"}

func TestWorkerLinksNoKubernetesClient(t *testing.T) {
	goCmd, err := testutil.GoCommand()
	if err != nil {
		t.Skip(err)
	}
	for _, dep := range deps(t, goCmd, module+scoring) {
		if hasAnyPrefix(dep, kubeClients) {
			t.Errorf("%s links %s: the scoring binary needs no Kubernetes client", scoring, dep)
		}
	}
}

func TestLibrariesLinkNoKubernetesAndNoComponent(t *testing.T) {
	goCmd, err := testutil.GoCommand()
	if err != nil {
		t.Skip(err)
	}
	for _, lib := range libraries {
		t.Run(lib, func(t *testing.T) {
			for _, dep := range deps(t, goCmd, module+lib+"...") {
				if hasAnyPrefix(dep, kubernetes) {
					t.Errorf("%s links %s: the library must stay usable without Kubernetes", lib, dep)
				}
				if rel, ours := strings.CutPrefix(dep, module); ours && !within(rel, lib) {
					t.Errorf("%s links %s, a package outside the library", lib, rel)
				}
			}
		})
	}
}

// within reports whether the package rel is the folder dir ("vmaf/") or below it.
func within(rel, dir string) bool {
	return rel == strings.TrimSuffix(dir, "/") || strings.HasPrefix(rel, dir)
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
