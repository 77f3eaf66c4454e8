package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/config"
	"github.com/vmafx/vmafx/gateway/internal/httpapi"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// door is a front door running in the test process on 127.0.0.1.
type door struct {
	url, probeURL string
	store         *jobs.Store
	reg           *prometheus.Registry
	cancel        context.CancelFunc
	done          chan error
}

// newStore returns a Store that acts as the door named name (vmafx-api or vmafx-mcp)
// does in a cluster: as its ServiceAccount with the shipped RBAC, impersonating each
// caller.
func newStore(t testing.TB, name string) (*jobs.Store, *jobs.Impersonating) {
	t.Helper()
	c, r, err := config.Clients(doorConfig(t, name), []string{config.DefaultAudience})
	if err != nil {
		t.Fatal(err)
	}
	return jobs.New(c, r), c
}

// doorRoles are the generated ClusterRoles the chart binds each door's ServiceAccount to
// (manifests/helm/vmafx/templates/gateway-rbac.yaml).
var doorRoles = map[string][]string{
	"vmafx-api": {"vmafx-gateway-access", "vmafx-gateway-jobs"},
	"vmafx-mcp": {"vmafx-gateway-access", "vmafx-gateway-jobs", "vmafx-gateway-mcp"},
}

var doorConfigs sync.Map

// doorConfig returns credentials of the door's ServiceAccount in the system namespace,
// bound to exactly the roles the chart ships for it (files/rbac, generated from the
// +kubebuilder:rbac markers): a token from the TokenRequest API, no client certificate.
func doorConfig(t testing.TB, name string) *rest.Config {
	t.Helper()
	if cfg, ok := doorConfigs.Load(name); ok {
		return rest.CopyConfig(cfg.(*rest.Config))
	}
	ctx := context.Background()
	c := testenv.Client()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: vmafxv1.SystemNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, role := range doorRoles[name] {
		if err := testenv.ApplyFile(ctx, filepath.Join(testenv.RepoRoot(), "manifests", "helm", "vmafx", "files", "rbac", role+".yaml")); err != nil {
			t.Fatal(err)
		}
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + strings.TrimPrefix(role, "vmafx-gateway-")},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: vmafxv1.SystemNamespace}}}
		if err := c.Create(ctx, crb); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	cs := kubernetes.NewForConfigOrDie(testenv.Config())
	tr, err := cs.CoreV1().ServiceAccounts(vmafxv1.SystemNamespace).CreateToken(ctx, name, &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(testenv.Config())
	cfg.BearerToken = tr.Status.Token
	cfg.QPS, cfg.Burst = 500, 1000
	doorConfigs.Store(name, cfg)
	return rest.CopyConfig(cfg)
}

func (d *door) stop(t testing.TB) {
	if d.cancel == nil {
		return
	}
	d.cancel()
	d.cancel = nil
	if err := <-d.done; err != nil {
		t.Errorf("door shut down with %v", err)
	}
}

// startAPI runs the HTTP scoring API with its metrics on the probe listener.
func startAPI(t testing.TB) *door {
	t.Helper()
	return startAPIDoor(t, false)
}

// startAPIDoor is startAPI, serving jobs' pictures when readOutputs is set (vmafx-api
// --console-read-outputs).
func startAPIDoor(t testing.TB, readOutputs bool) *door {
	t.Helper()
	opts := serve.Options{Addr: "127.0.0.1:0", ProbeAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second}
	ln, probe, err := serve.Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := newStore(t, "vmafx-api")
	reg := serve.NewRegistry()
	var pictures *outputs.Reader
	if readOutputs {
		pictures = outputs.New(store)
	}
	api := httpapi.New(store, httpapi.NewMetrics(reg), pictures)
	ctx, cancel := context.WithCancel(context.Background())
	d := &door{url: "http://" + ln.Addr().String(), probeURL: "http://" + probe.Addr().String(), store: store, reg: reg, cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- serve.Serve(ctx, opts, ln, probe, api.Handler(), reg, nil) }()
	t.Cleanup(func() { d.stop(t) })
	waitServing(t, d.probeURL+"/healthz")
	return d
}

func waitServing(t testing.TB, url string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		resp, err := http.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("%s did not answer: %v", url, err)
	}
}

// tokenFor creates a ServiceAccount in ns bound to a Role allowing verbs on vmafxjobs (none:
// no binding) and returns a token for it from the TokenRequest API, for the doors'
// audience.
func tokenFor(t testing.TB, ns, name string, verbs ...string) string {
	return tokenForAudience(t, ns, name, []string{config.DefaultAudience}, verbs...)
}

// tokenForAudience is tokenFor with the token's audiences; none: the API server's.
func tokenForAudience(t testing.TB, ns, name string, audiences []string, verbs ...string) string {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	if len(verbs) > 0 {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{vmafxv1.GroupVersion.Group}, Resources: []string{"vmafxjobs"}, Verbs: verbs,
		}}}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}}
		for _, o := range []client.Object{role, rb} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	cs := kubernetes.NewForConfigOrDie(testenv.Config())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: audiences}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// allVerbs is what a pipeline that submits and follows jobs is given.
var allVerbs = []string{"create", "get", "list", "watch", "delete"}

// playOperator writes what the operator would into the job's status: phase, and for a
// finished job its score and result.
func playOperator(t testing.TB, ns, name string, phase vmafxv1.JobPhase, score string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		j := &vmafxv1.VmafxJob{}
		if err := testenv.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, nil
		}
		j.Status.Phase = phase
		j.Status.Attempts = 1
		j.Status.Node = "node-a"
		if score != "" {
			j.Status.Score = score
			j.Status.Result = &vmafxv1.JobResult{Mean: score, Frames: 48, FPS: "120.000000", Backend: "cpu", Model: vmafxv1.DefaultModel}
		}
		return testenv.Client().Status().Update(ctx, j) == nil, nil
	})
	if err != nil {
		t.Fatalf("playing the operator on %s/%s: %v", ns, name, err)
	}
}

// do sends an HTTP request with token (none when empty) and returns the status and body.
func do(t testing.TB, method, url, token, body string) (int, string) {
	t.Helper()
	code, b, err := send(method, url, token, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, b
}

// send is do for goroutines other than the test's.
func send(method, url, token, body string) (int, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// waitFor waits, at most 10 s, until cond holds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "waiting for "+what, testutil.Condition(what, func() (bool, error) { return cond(), nil }))
}

// jobBody is a job with every field at its default but its inputs.
func jobBody(name string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"labels":{"pipeline":"nightly"}},"spec":{"reference":"https://media.example.com/ref.y4m","distorted":"https://media.example.com/dist.y4m"}}`, name)
}
