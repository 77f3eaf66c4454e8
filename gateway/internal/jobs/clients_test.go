package jobs

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/vmafx/vmafx/gateway/internal/access"
)

// The door passes on the service-account extras it may impersonate and drops the others,
// which the API server would refuse it.
func TestImpersonationKeepsTheServiceAccountExtras(t *testing.T) {
	u := access.User{Name: "system:serviceaccount:ci:builder", UID: "u-1", Groups: []string{"system:serviceaccounts", "system:authenticated"},
		Extra: map[string][]string{"authentication.kubernetes.io/pod-name": {"runner-0"}, "example.com/team": {"video"}}}
	want := transport.ImpersonationConfig{UserName: u.Name, UID: "u-1", Groups: u.Groups,
		Extra: map[string][]string{"authentication.kubernetes.io/pod-name": {"runner-0"}}}
	if diff := cmp.Diff(want, Impersonation(u)); diff != "" {
		t.Errorf("impersonation (-want,+got):\n%s", diff)
	}
}

// A door never acts as itself for a request without a caller, and reuses a caller's client.
func TestForRefusesNoCallerAndCaches(t *testing.T) {
	i, err := NewImpersonating(&rest.Config{Host: "https://127.0.0.1:1", QPS: 5, Burst: 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := i.For(access.User{}); !errors.Is(err, ErrNoCaller) {
		t.Errorf("For(no user) = %v; want ErrNoCaller", err)
	}
	a, err := i.For(access.User{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := i.For(access.User{Name: "alice"})
	c, _ := i.For(access.User{Name: "alice", Groups: []string{"admins"}})
	if a != b || a == c {
		t.Error("one client per distinct caller is reused, and only for that caller")
	}
}
