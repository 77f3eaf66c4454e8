package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/mcpserver"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// applyShippedPolicies creates the admission policies and their bindings of the rendered
// install (the VmafxJob reference checks among them) until the test ends.
func applyShippedPolicies(t *testing.T) {
	t.Helper()
	const shipped = "manifests/default/vmafx-operator.yaml"
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), shipped))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	n := 0
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if k := u.GetKind(); k != "ValidatingAdmissionPolicy" && k != "ValidatingAdmissionPolicyBinding" {
			continue
		}
		n++
		if err := testenv.Client().Create(context.Background(), &u); err != nil {
			t.Fatalf("%s: creating %s %s: %v", shipped, u.GetKind(), u.GetName(), err)
		}
		t.Cleanup(func() { _ = testenv.Client().Delete(context.Background(), &u) })
	}
	if n == 0 {
		t.Fatalf("%s holds no admission policy", shipped)
	}
}

// allowSecret lets the ServiceAccount name of ns get the Secret secret.
func allowSecret(t *testing.T, ns, name, secret string) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-secret"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{secret}, Verbs: []string{"get"},
	}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-secret"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}}
	for _, o := range []client.Object{role, rb} {
		if err := testenv.Client().Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// keyedJob is a job of object-store inputs read with the Secret team-keys.
func keyedJob(name string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"reference":"s3://media/ref.y4m","distorted":"s3://media/dist.y4m","credentials":{"secretRef":{"name":"team-keys"}}}}`, name)
}

var keyedArgs = map[string]any{"reference": "s3://media/ref.y4m", "distorted": "s3://media/dist.y4m",
	"credentials": map[string]any{"secretRef": map[string]any{"name": "team-keys"}}}

// TestDoorsActAsTheirCaller: both doors, running as their ServiceAccounts with only the
// shipped RBAC (impersonation, no right on VmafxJobs), create jobs as the caller: the API
// server's RBAC refuses a reader by name, the shipped admission policy refuses a job
// naming a Secret its requester may not get (naming the requester, which it could not if
// the door created the job itself), and a user with the rights is served.
func TestDoorsActAsTheirCaller(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	applyShippedPolicies(t)
	ctx := context.Background()
	if err := testenv.Client().Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-keys"}}); err != nil {
		t.Fatal(err)
	}
	reader := tokenFor(t, ns, "reader", "get")
	mallory := tokenFor(t, ns, "mallory", "create", "get")
	alice := tokenFor(t, ns, "alice", allVerbs...)
	allowSecret(t, ns, "alice", "team-keys")
	sa := func(name string) string { return fmt.Sprintf("system:serviceaccount:%s:%s", ns, name) }

	// The doors have no right of their own on VmafxJobs: what they do, they do as the caller.
	for door := range doorRoles {
		c, err := client.New(doorConfig(t, door), client.Options{Scheme: testenv.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		j := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-" + door},
			Spec: vmafxv1.VmafxJobSpec{Reference: "https://media.example.com/ref.y4m", Distorted: "https://media.example.com/dist.y4m"}}
		if err := c.Create(ctx, j); !apierrors.IsForbidden(err) {
			t.Errorf("%s creating a job as itself: %v; want Forbidden", door, err)
		}
	}

	api := startAPI(t)
	jobsURL := api.url + "/v1/namespaces/" + ns + "/jobs"
	code, body := do(t, http.MethodPost, jobsURL, reader, jobBody("read-only"))
	if want := fmt.Sprintf(`User \"%s\" cannot create resource \"vmafxjobs\"`, sa("reader")); code != http.StatusForbidden || !strings.Contains(body, want) {
		t.Errorf("reader's job: %d %s; want 403 with %s", code, body, want)
	}
	// The policy takes effect once the API server has loaded it: dry runs until it does.
	wantRefusal := func(body string) bool {
		return strings.Contains(body, `Secret \"team-keys\"`) && strings.Contains(body, sa("mallory"))
	}
	testutil.Eventually(t, 30*time.Second, "the policy refuses mallory's job", testutil.Condition("refused", func() (bool, error) {
		code, body := do(t, http.MethodPost, jobsURL+"?dryRun=All", mallory, keyedJob("keyed"))
		if code == http.StatusForbidden && wantRefusal(body) {
			return true, nil
		}
		return false, fmt.Errorf("%d %s", code, body)
	}))
	code, body = do(t, http.MethodPost, jobsURL, mallory, keyedJob("keyed"))
	if code != http.StatusForbidden || !wantRefusal(body) {
		t.Errorf("mallory's job naming team-keys: %d %s; want 403 naming %s and the Secret", code, body, sa("mallory"))
	}
	if code, body := do(t, http.MethodPost, jobsURL, alice, keyedJob("alices")); code != http.StatusCreated {
		t.Errorf("alice's job naming team-keys: %d %s; want 201", code, body)
	}

	d := startMCP(t, ns)
	for _, tc := range []struct {
		who, token string
		args       map[string]any
		want       []string
	}{
		{"reader", reader, map[string]any{"reference": "https://media.example.com/ref.y4m", "distorted": "https://media.example.com/dist.y4m"},
			[]string{fmt.Sprintf(`User "%s" cannot create resource "vmafxjobs"`, sa("reader"))}},
		{"mallory", mallory, keyedArgs, []string{`Secret "team-keys"`, sa("mallory")}},
		{"alice", alice, keyedArgs, nil},
	} {
		s, err := connect(t, d, tc.token)
		if err != nil {
			t.Fatal(err)
		}
		res, text := call(t, s, mcpserver.ToolScore, tc.args)
		if tc.want == nil {
			if res.IsError {
				t.Errorf("%s's score: %s; want a job", tc.who, text)
			}
			continue
		}
		if !res.IsError {
			t.Errorf("%s's score: %s; want refused", tc.who, text)
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s's score: %s; want %s", tc.who, text, w)
			}
		}
	}
}
