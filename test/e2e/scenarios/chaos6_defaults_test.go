package scenarios

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestChaos6DefaultsAndLongNames is chaos scenario 6: a job that leaves backend out (auto:
// the node offers only CPU slots) and a job with a 70-character name both succeed.
func TestChaos6DefaultsAndLongNames(t *testing.T) {
	requireBaseline(t)
	// Quick (under half a minute): it runs in every `make e2e` as well as in `make chaos`.
	ns := createNamespace(t)
	plain := newJob(ns, "no-backend", p01)
	plain.Spec.Backend = "" // the CRD's default, auto
	long := newJob(ns, "scene-0042-take-7-"+strings.Repeat("x", 52), p01)
	if len(long.Name) != 70 {
		t.Fatalf("name of %d characters", len(long.Name))
	}
	for _, j := range []client.Object{plain, long} {
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
	}
	if string(plain.Spec.Backend) != "auto" {
		t.Errorf("backend defaulted to %q, want auto", plain.Spec.Backend)
	}
	for _, j := range []client.Object{plain, long} {
		requireScore(t, waitJobDone(t, client.ObjectKeyFromObject(j), 3*time.Minute), p01)
	}
}
