package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// envPushgateway names the Pushgateway binary `make e2e` builds (hack/tools/pushgateway).
const envPushgateway = "VMAFX_PUSHGATEWAY"

// doorsRelease is the release of the front doors; the platform stays the deploy's own.
const doorsRelease = "vmafx-doors"

// TestFrontDoors is scenario 10 (issue 15): the chart's server, mcp and job workloads on
// the live cluster, beside the platform that `make deploy` installed.
//
//  1. helm installs a second release with the server and mcp workloads and the
//     Pushgateway (the images `make images` built, the Pushgateway's from module sources);
//  2. a pair scored through the HTTP API (submit, then a long poll) gets libvmaf's score;
//  3. a pair scored through the MCP server's score tool, with the SDK's client, too;
//  4. a token whose ServiceAccount may not create vmafxjobs is refused by both doors;
//  5. the batch Job pushes its result, which the Pushgateway's /metrics shows.
//
// It starts from the baseline, needs nothing from the other scenarios and uninstalls its
// release when it ends.
func TestFrontDoors(t *testing.T) {
	helmBin, pushBin := os.Getenv(envHelm), os.Getenv(envPushgateway)
	if helmBin == "" || pushBin == "" {
		t.Skipf("%s or %s is not set (`make e2e` builds helm and the Pushgateway and sets them)", envHelm, envPushgateway)
	}
	requireBaseline(t)
	h := &helmCLI{bin: helmBin, home: t.TempDir()}
	ns := createNamespace(t)

	args := append([]string{"image", pushBin, "pushgateway"}, strings.Fields(os.Getenv(envClusterFlags))...)
	if out, err := exec.CommandContext(t.Context(), os.Getenv(envCluster), append(args, "-out", t.TempDir())...).CombinedOutput(); err != nil {
		t.Fatalf("importing the Pushgateway image: %v\n%s", err, out)
	}
	base := installDoors(t, h,
		"--set", "pushgateway.enabled=true", "--set", "pushgateway.image.repository=vmafx.local/pushgateway",
		"--set", "pushgateway.image.tag=dev", "--set", "pushgateway.image.pullPolicy=Never")
	waitReady(t, &appsv1.Deployment{}, "vmafx-pushgateway")

	scorer := serviceAccountToken(t, ns, "scorer", "create", "get", "list", "watch", "delete")
	reader := serviceAccountToken(t, ns, "reader", "get", "list")
	want := libvmafMean(t, p01)
	checkScore := func(t *testing.T, via, phase, score string) {
		t.Helper()
		got, err := strconv.ParseFloat(score, 64)
		if phase != string(vmafxv1.JobSucceeded) || err != nil || math.Abs(got-want) > 1e-6 {
			t.Fatalf("%s: phase %s, score %q; want Succeeded with libvmaf's %v", via, phase, score, want)
		}
	}

	api := "http://" + serviceAddress(t, vmafxv1.SystemNamespace, "vmafx-api", 80)
	t.Run("HTTP API scores a pair", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "via-api"}, "spec": newJob(ns, "", p01).Spec})
		code, out := httpDo(t, http.MethodPost, api+"/v1/namespaces/"+ns+"/jobs", scorer, body)
		if code != http.StatusCreated {
			t.Fatalf("submit: %d %s", code, out)
		}
		code, out = httpDo(t, http.MethodGet, api+"/v1/namespaces/"+ns+"/jobs/via-api?wait=3m", scorer, nil)
		var job vmafxv1.VmafxJob
		if code != http.StatusOK || json.Unmarshal(out, &job) != nil {
			t.Fatalf("wait: %d %s", code, out)
		}
		checkScore(t, "HTTP API", string(job.Status.Phase), job.Status.Score)
	})

	// The headless Service gives each replica its own name; without cluster DNS here,
	// its Pod IP stands for vmafx-mcp-0.vmafx-mcp.vmafx-system.svc.
	mcpURL := "http://" + net.JoinHostPort(systemPodIP(t, "vmafx-mcp-0"), "8080")
	t.Run("MCP server scores a pair", func(t *testing.T) {
		s := mcpSession(t, mcpURL, scorer)
		spec, _ := json.Marshal(newJob(ns, "", p01).Spec)
		var args map[string]any
		_ = json.Unmarshal(spec, &args)
		args["namespace"], args["name"], args["waitSeconds"] = ns, "via-mcp", 180
		res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "score", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		var sum struct{ Phase, Score string }
		if res.IsError || json.Unmarshal([]byte(text), &sum) != nil {
			t.Fatalf("score tool: %s", text)
		}
		checkScore(t, "MCP", sum.Phase, sum.Score)
	})

	t.Run("a token without create vmafxjobs is refused by both doors", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{"spec": newJob(ns, "", p01).Spec})
		if code, out := httpDo(t, http.MethodPost, api+"/v1/namespaces/"+ns+"/jobs", reader, body); code != http.StatusForbidden {
			t.Errorf("HTTP API submit with a reader's token: %d %s, want 403", code, out)
		}
		s := mcpSession(t, mcpURL, reader)
		res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "score", Arguments: map[string]any{
			"namespace": ns, "reference": "file:///data/p01_ref.yuv", "distorted": "file:///data/p01_dist.yuv", "width": 176, "height": 144}})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, `cannot create resource "vmafxjobs"`) {
			t.Errorf("MCP score with a reader's token: %s, want the refusal", text)
		}
	})

	t.Run("the batch Job pushes its metrics", func(t *testing.T) {
		push := "http://" + serviceAddress(t, vmafxv1.SystemNamespace, "vmafx-pushgateway", 9091)
		clips := filepath.Join(testdata(), "clips")
		h.run(t, append(base, "--set", "workload={server,mcp,job}", "--set", "batch.pushGateway="+push,
			"--set", "batch.reference=file:///data/p01_ref.yuv", "--set", "batch.distorted=file:///data/p01_dist.yuv",
			"--set", "batch.width=176", "--set", "batch.height=144",
			"--set", "batch.volume.hostPath.path="+clips, "--set", "batch.volume.hostPath.type=Directory")...)
		var jobName string
		eventually(t, 3*time.Minute, "the batch Job completes", func(ctx context.Context) error {
			var jobs batchv1.JobList
			if err := c.List(ctx, &jobs, client.InNamespace(vmafxv1.SystemNamespace), client.MatchingLabels{"app.kubernetes.io/instance": doorsRelease, "vmafx.dev/component": "batch"}); err != nil {
				return err
			}
			if len(jobs.Items) != 1 {
				return fmt.Errorf("%d batch Jobs", len(jobs.Items))
			}
			if jobs.Items[0].Status.Succeeded != 1 {
				return fmt.Errorf("Job %s: succeeded %d, failed %d", jobs.Items[0].Name, jobs.Items[0].Status.Succeeded, jobs.Items[0].Status.Failed)
			}
			jobName = jobs.Items[0].Name
			return nil
		})
		code, out := httpDo(t, http.MethodGet, push+"/metrics", "", nil)
		if code != http.StatusOK {
			t.Fatalf("pushgateway /metrics: %d", code)
		}
		var line string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "vmafx_batch_score{") && strings.Contains(l, `job="`+jobName+`"`) {
				line = l
			}
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			t.Fatalf("pushgateway /metrics has no vmafx_batch_score of job %s", jobName)
		}
		checkScore(t, "batch Job via the Pushgateway", string(vmafxv1.JobSucceeded), fields[1])
	})
}

// installDoors installs the release doorsRelease with the server and mcp workloads (and
// set), waits for both doors and uninstalls the release when the test ends. It returns the
// arguments of its upgrade, for a later upgrade of the same release.
func installDoors(t *testing.T, h *helmCLI, set ...string) []string {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if out, err := h.command(ctx, "uninstall", doorsRelease, "--namespace", vmafxv1.SystemNamespace, "--wait", "--timeout", "2m"); err != nil {
			t.Errorf("helm uninstall %s: %v\n%s", doorsRelease, err, out)
		}
	})
	base := append([]string{"upgrade", "--install", doorsRelease, filepath.Join(repoRoot(), "manifests", "helm", "vmafx"),
		"--namespace", vmafxv1.SystemNamespace, "--values", filepath.Join(repoRoot(), "manifests", "helm", "local-values.yaml"),
		"--set", "server.replicaCount=1", "--wait", "--timeout", "3m"}, set...)
	h.run(t, append(base, "--set", "workload={server,mcp}")...)
	waitReady(t, &appsv1.Deployment{}, "vmafx-api")
	waitReady(t, &appsv1.StatefulSet{}, "vmafx-mcp")
	return base
}

// systemPodIP waits for Pod name of the system namespace to have an IP and returns it.
func systemPodIP(t *testing.T, name string) string {
	t.Helper()
	var ip string
	eventually(t, time.Minute, name+" has a Pod IP", func(ctx context.Context) error {
		var p corev1.Pod
		if err := c.Get(ctx, systemKey(name), &p); err != nil {
			return err
		}
		if p.Status.PodIP == "" {
			return fmt.Errorf("no Pod IP yet")
		}
		ip = p.Status.PodIP
		return nil
	})
	return ip
}

// waitReady waits for a Deployment or StatefulSet of the system namespace to have all its
// replicas ready.
func waitReady(t *testing.T, obj client.Object, name string) {
	t.Helper()
	eventually(t, 3*time.Minute, name+" ready", func(ctx context.Context) error {
		if err := c.Get(ctx, systemKey(name), obj); err != nil {
			return err
		}
		var want, ready int32
		switch o := obj.(type) {
		case *appsv1.Deployment:
			want, ready = *o.Spec.Replicas, o.Status.ReadyReplicas
		case *appsv1.StatefulSet:
			want, ready = *o.Spec.Replicas, o.Status.ReadyReplicas
		}
		if ready != want {
			return fmt.Errorf("%d of %d replicas ready", ready, want)
		}
		return nil
	})
}

// serviceAccountToken creates a ServiceAccount in ns allowed verbs on vmafxjobs and returns
// a token for it from the TokenRequest API, for the doors' audience (vmafx).
func serviceAccountToken(t *testing.T, ns, name string, verbs ...string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{vmafxv1.GroupVersion.Group}, Resources: []string{"vmafxjobs"}, Verbs: verbs}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}}
	for _, o := range []client.Object{sa, role, rb} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{"vmafx"}}}
	if err := c.SubResource("token").Create(t.Context(), sa, tr); err != nil {
		t.Fatalf("token for %s/%s: %v", ns, name, err)
	}
	return tr.Status.Token
}

// httpDo sends a request with a bearer token (none when empty).
func httpDo(t *testing.T, method, url, token string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession opens an MCP session with the SDK's client over streamable HTTP.
func mcpSession(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "vmafx-e2e", Version: "v0"}, nil)
	s, err := cl.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}}, nil)
	if err != nil {
		t.Fatalf("MCP session: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
