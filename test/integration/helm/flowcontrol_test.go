package helm

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	render "github.com/vmafx/vmafx/internal/chartrender"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestFlowControl installs the chart's PriorityLevelConfiguration and FlowSchemas (API
// priority and fairness) in a real API server, which accepts them, and checks how the
// server then classifies requests, by the flow schema and priority level it names in each
// response's X-Kubernetes-PF-* headers: a device plugin renewing its node's Lease and the
// operator creating a worker Pod are served in the vmafx level; the operator renewing its
// leader election Lease, and another service account writing Pods, are not.
func TestFlowControl(t *testing.T) {
	systemNamespace(t)
	ctx, c := testenv.Context(t), testenv.Client()
	ch, err := render.Load()
	if err != nil {
		t.Fatal(err)
	}
	res, err := render.Render(ch, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]string{} // kind/name -> UID
	for _, obj := range res.Objects {
		if obj.GroupVersionKind().Group != "flowcontrol.apiserver.k8s.io" {
			continue
		}
		o := obj.DeepCopy()
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
		uids[o.GetKind()+"/"+o.GetName()] = string(o.GetUID())
	}
	level := uids["PriorityLevelConfiguration/vmafx"]
	heartbeats, writes := uids["FlowSchema/vmafx-node-heartbeats"], uids["FlowSchema/vmafx-operator-writes"]
	if level == "" || heartbeats == "" || writes == "" {
		t.Fatalf("the chart renders no vmafx priority level or flow schemas: %v", uids)
	}

	ns := vmafxv1.SystemNamespace
	tenant := testenv.CreateNamespace(t)
	sa := func(name string) string { return "system:serviceaccount:" + ns + ":" + name }
	cases := []struct {
		name, user, method, path string
		node                     string // the node in the credentials, for the device plugin
		schema                   string // the flow schema's UID; "" for one that is not VMAFX's
	}{
		{"device plugin renews its Lease", sa("vmafx-device-plugin"), http.MethodPut,
			"/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/vmafx-node-node-a", "node-a", heartbeats},
		{"device plugin patches its VmafxNode's status", sa("vmafx-device-plugin"), http.MethodPatch,
			"/apis/vmafx.dev/v1/namespaces/" + ns + "/vmafxnodes/node-a/status", "node-a", heartbeats},
		{"operator creates a worker Pod", sa("vmafx-operator"), http.MethodPost, "/api/v1/namespaces/" + tenant + "/pods", "", writes},
		{"operator patches a job's status", sa("vmafx-operator"), http.MethodPatch,
			"/apis/vmafx.dev/v1/namespaces/" + tenant + "/vmafxjobs/j/status", "", writes},
		{"operator renews its leader election Lease", sa("vmafx-operator"), http.MethodPut,
			"/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/vmafx-operator.vmafx.dev", "", ""},
		{"another service account creates a Pod", "system:serviceaccount:" + tenant + ":default", http.MethodPost,
			"/api/v1/namespaces/" + tenant + "/pods", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The API server's flow control picks new objects up within seconds.
			var gotSchema, gotLevel string
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				var err error
				gotSchema, gotLevel, err = classify(ctx, tc.user, tc.node, tc.method, tc.path)
				if err != nil {
					return false, err
				}
				if tc.schema == "" {
					return gotSchema != "", nil
				}
				return gotSchema == tc.schema, nil
			})
			if err != nil {
				t.Fatalf("served by flow schema %q, priority level %q; want flow schema %q: %v", gotSchema, gotLevel, tc.schema, err)
			}
			if (gotLevel == level) != (tc.schema != "") {
				t.Errorf("served in priority level %q; the vmafx level is %q, want it: %v", gotLevel, level, tc.schema != "")
			}
		})
	}
}

// classify sends a request as user (empty bodies: whether it is allowed does not matter,
// flow control classifies it first) and returns the UIDs of the flow schema and priority
// level that the API server says served it.
func classify(ctx context.Context, user, node, method, path string) (schema, level string, err error) {
	cfg := testenv.Config()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	if node != "" {
		cfg.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", "", err
	}
	req, err := http.NewRequestWithContext(ctx, method, cfg.Host+path, http.NoBody)
	if err != nil {
		return "", "", err
	}
	if method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	_ = resp.Body.Close()
	return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"), nil
}
