package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestHostileTenant is scenario 14 (issue 29): a ServiceAccount that may only create and
// read VmafxJobs in its namespace tries, through kubectl, each way the platform could be
// made to act for it beyond its rights, and each is refused with a clear message while
// the same tenant's legitimate job in the same namespace scores:
//
//  1. a job that names a Secret of the namespace it may not read is refused by the API
//     server (the admission policy vmafx-requester-may-use-references), naming the
//     Secret and the verb;
//  2. a job that writes to a PersistentVolumeClaim it may not update, likewise;
//  3. a job that mounts an NFS share through an inline CSI volume fails with
//     VolumeNotAllowed before any Pod exists: no CSI driver is allowed by default;
//  4. an s3:// job with no Secret reaches its endpoint unsigned: the worker does not
//     fall back to the node's credentials (environment, instance metadata);
//  5. an http:// input that redirects to the cloud metadata address fails, naming it,
//     and so does one that names the metadata address itself.
//
// The front doors' half (the same attacks through vmafx-api and vmafx-mcp, and floods
// of invented methods, tool names, junk tokens, slow bodies and sessions) is
// TestHostileTenantAtTheDoors.
func TestHostileTenant(t *testing.T) {
	requireBaseline(t)
	ns := createNamespace(t)
	tenant := "system:serviceaccount:" + ns + ":tenant"
	serviceAccountToken(t, ns, "tenant", "create", "get", "list", "watch")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod-keys"},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": "prod", "AWS_SECRET_ACCESS_KEY": "prod-secret"}}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-b-results"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	for _, o := range []client.Object{secret, claim} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}

	// asTenant applies job with kubectl as the tenant and returns kubectl's output and error.
	asTenant := func(t *testing.T, job *vmafxv1.VmafxJob) (string, error) {
		t.Helper()
		job.TypeMeta = metav1.TypeMeta{APIVersion: vmafxv1.GroupVersion.String(), Kind: "VmafxJob"}
		data, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		return kubectlInput(t, string(data), "--as", tenant, "create", "-f", "-")
	}

	legit := newJob(ns, "legit", p01)
	if out, err := asTenant(t, legit); err != nil {
		t.Fatalf("the tenant's own job: %v\n%s", err, out)
	}

	t.Run("a Secret the tenant may not read", func(t *testing.T) {
		job := newJob(ns, "steal-keys", p01)
		job.Spec.Credentials = &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: secret.Name}}
		out, err := asTenant(t, job)
		requireRefused(t, out, err, `the Secret "prod-keys"`, tenant, "may not get")
	})
	t.Run("a PersistentVolumeClaim the tenant may not write", func(t *testing.T) {
		job := newJob(ns, "overwrite", p01)
		job.Spec.Output = ptr.To[vmafxv1.OutputURI]("file:///output/p01.json")
		job.Spec.OutputVolume = &vmafxv1.OutputVolume{PersistentVolumeClaim: corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}
		out, err := asTenant(t, job)
		requireRefused(t, out, err, `"team-b-results"`, tenant, "may not update")
	})
	t.Run("an NFS share through an inline CSI volume", func(t *testing.T) {
		job := newJob(ns, "csi-nfs", p01)
		job.Spec.Volume = &vmafxv1.JobVolume{CSI: &corev1.CSIVolumeSource{Driver: "nfs.csi.k8s.io",
			VolumeAttributes: map[string]string{"server": "10.0.0.1", "share": "/exports/team-b"}}}
		if out, err := asTenant(t, job); err != nil {
			t.Fatalf("creating the job: %v\n%s", err, out)
		}
		done := waitJobDone(t, client.ObjectKeyFromObject(job), 2*time.Minute)
		if done.Status.Phase != vmafxv1.JobFailed || !strings.Contains(done.Status.Message, "nfs.csi.k8s.io") {
			t.Errorf("phase %s, message %q; want Failed naming the driver", done.Status.Phase, done.Status.Message)
		}
		if !hasCondition(done, vmafxv1.JobFailedCondition, "VolumeNotAllowed") {
			t.Errorf("conditions %v; want Failed=True with reason VolumeNotAllowed", done.Status.Conditions)
		}
		if pods, err := jobPods(t.Context(), ns, job.Name); err != nil || len(pods) != 0 {
			t.Errorf("%d worker Pods (%v); want none", len(pods), err)
		}
	})
	t.Run("an s3 job with no Secret gets no node credentials", func(t *testing.T) {
		store := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			_, _ = fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
		})
		job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-secret"}, Spec: vmafxv1.VmafxJobSpec{
			Reference: "s3://clips/p01/ref.mkv", Distorted: "s3://clips/p01/dist.mp4",
			S3: &vmafxv1.S3Options{Endpoint: store.url, Region: "us-east-1", PathStyle: true},
		}}
		if out, err := asTenant(t, job); err != nil {
			t.Fatalf("creating the job: %v\n%s", err, out)
		}
		done := waitJobDone(t, client.ObjectKeyFromObject(job), 3*time.Minute)
		if done.Status.Phase != vmafxv1.JobFailed || !strings.Contains(done.Status.Message, "anonymous request") {
			t.Errorf("phase %s, message %q; want Failed, saying the request was anonymous", done.Status.Phase, done.Status.Message)
		}
		seen := store.requests()
		if len(seen) == 0 {
			t.Fatalf("the endpoint saw no request; the job failed with %q", done.Status.Message)
		}
		for _, r := range seen {
			if r.Header.Get("Authorization") != "" || r.URL.Query().Get("X-Amz-Credential") != "" {
				t.Errorf("%s %s was signed (%q): the worker used credentials it was not given", r.Method, r.URL, r.Header.Get("Authorization"))
			}
		}
	})
	t.Run("a redirect to the metadata address", func(t *testing.T) {
		srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/security-credentials/", http.StatusFound)
		})
		job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "metadata"}, Spec: vmafxv1.VmafxJobSpec{
			Reference: vmafxv1.VideoURI(srv.url + "/ref.y4m"), Distorted: vmafxv1.VideoURI(srv.url + "/dist.y4m")}}
		if out, err := asTenant(t, job); err != nil {
			t.Fatalf("creating the job: %v\n%s", err, out)
		}
		requireFailedOnce(t, waitJobDone(t, client.ObjectKeyFromObject(job), 3*time.Minute), "169.254.169.254", "link-local")
	})
	t.Run("the metadata address named as an input", func(t *testing.T) {
		job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "metadata-direct"}, Spec: vmafxv1.VmafxJobSpec{
			Reference: "http://169.254.169.254/latest/meta-data/ref.y4m", Distorted: "http://169.254.169.254/latest/meta-data/dist.y4m"}}
		if out, err := asTenant(t, job); err != nil {
			t.Fatalf("creating the job: %v\n%s", err, out)
		}
		requireFailedOnce(t, waitJobDone(t, client.ObjectKeyFromObject(job), 3*time.Minute), "169.254.169.254", "link-local")
	})

	t.Run("the tenant's legitimate job scores", func(t *testing.T) {
		requireScore(t, waitJobDone(t, client.ObjectKeyFromObject(legit), 3*time.Minute), p01)
	})
}

// requireRefused checks that kubectl failed and said each of want.
func requireRefused(t *testing.T, out string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("admitted; want a refusal:\n%s", out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the refusal does not say %q:\n%s", w, out)
		}
	}
}

// hasCondition reports whether job has condition typ True with reason.
func hasCondition(job *vmafxv1.VmafxJob, typ, reason string) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == typ && c.Status == metav1.ConditionTrue && c.Reason == reason {
			return true
		}
	}
	return false
}

// recorder is an HTTP server on the node's address (the worker Pods reach this machine
// there) that keeps every request it answers.
type recorder struct {
	url  string
	mu   sync.Mutex
	seen []*http.Request
}

func (r *recorder) requests() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.seen...)
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	t.Helper()
	var node corev1.Node
	if err := c.Get(t.Context(), types.NamespacedName{Name: nodeName}, &node); err != nil {
		t.Fatal(err)
	}
	ip := ""
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip = a.Address
		}
	}
	if ip == "" {
		t.Fatal("the node has no InternalIP")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Clone(context.Background()))
		rec.mu.Unlock()
		h(w, r)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("recorder: %v", err)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return rec
}

// TestHostileTenantAtTheDoors is scenario 14's second half (issue 29): the same tenant
// through the front doors, and anyone who can reach them without a token.
//
//  1. a job naming a Secret the tenant may not read is refused through the HTTP API and
//     through MCP with the admission policy's message: the doors act as their caller;
//  2. a Pod's own ServiceAccount token (the API server's audience) is refused;
//  3. floods of invented HTTP methods and MCP tool names leave the metrics at a fixed
//     number of series;
//  4. junk tokens are answered without stalling the tenant, whose token still works;
//  5. a body dripped after a 401 does not hold the connection;
//  6. 10 000 MCP sessions opened by the tenant stop at its cap, and the doors' heap stays
//     under 64 MiB after all of it;
//  7. the tenant's own job scores through the HTTP API.
//
// It installs the doors as scenario 10 does and uninstalls them when it ends.
func TestHostileTenantAtTheDoors(t *testing.T) {
	helmBin := os.Getenv(envHelm)
	if helmBin == "" {
		t.Skipf("%s is not set (`make e2e` builds helm and sets it)", envHelm)
	}
	requireBaseline(t)
	installDoors(t, &helmCLI{bin: helmBin, home: t.TempDir()})

	ns := createNamespace(t)
	tenantUser := "system:serviceaccount:" + ns + ":tenant"
	tenant := serviceAccountToken(t, ns, "tenant", "create", "get", "list", "watch")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod-keys"}, StringData: map[string]string{"AWS_ACCESS_KEY_ID": "prod"}}
	if err := c.Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	api := "http://" + serviceAddress(t, vmafxv1.SystemNamespace, "vmafx-api", 80)
	apiMetrics := "http://" + net.JoinHostPort(doorPodIP(t, "vmafx-api"), "8081") + "/metrics"
	mcpIP := systemPodIP(t, "vmafx-mcp-0")
	mcpURL, mcpMetrics := "http://"+net.JoinHostPort(mcpIP, "8080"), "http://"+net.JoinHostPort(mcpIP, "8081")+"/metrics"
	jobs := api + "/v1/namespaces/" + ns + "/jobs"

	submit := func(t *testing.T, token string, job *vmafxv1.VmafxJob) (int, []byte) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": job.Name}, "spec": job.Spec})
		return httpDo(t, http.MethodPost, jobs, token, body)
	}
	if code, out := submit(t, tenant, newJob(ns, "legit", p01)); code != http.StatusCreated {
		t.Fatalf("the tenant's own job: %d %s", code, out)
	}

	t.Run("a Secret the tenant may not read, through the HTTP API", func(t *testing.T) {
		job := newJob(ns, "steal-keys", p01)
		job.Spec.Credentials = &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: secret.Name}}
		code, out := submit(t, tenant, job)
		if code < 400 || !strings.Contains(string(out), `the Secret \"prod-keys\"`) || !strings.Contains(string(out), tenantUser) {
			t.Errorf("%d %s; want the admission policy's refusal naming the Secret and %s", code, out, tenantUser)
		}
	})
	t.Run("a Secret the tenant may not read, through MCP", func(t *testing.T) {
		s := mcpSession(t, mcpURL, tenant)
		spec, _ := json.Marshal(newJob(ns, "", p01).Spec)
		var args map[string]any
		_ = json.Unmarshal(spec, &args)
		args["namespace"], args["name"] = ns, "steal-keys-mcp"
		args["credentials"] = map[string]any{"secretRef": map[string]any{"name": secret.Name}}
		res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "score", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, `"prod-keys"`) || !strings.Contains(text, tenantUser) {
			t.Errorf("score tool: %s; want the admission policy's refusal naming the Secret and %s", text, tenantUser)
		}
	})
	t.Run("a Pod's own token is refused", func(t *testing.T) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}}
		tr := &authnv1.TokenRequest{} // the API server's audience, as a Pod's projected token
		if err := c.SubResource("token").Create(t.Context(), sa, tr); err != nil {
			t.Fatal(err)
		}
		if code, out := httpDo(t, http.MethodGet, jobs, tr.Status.Token, nil); code != http.StatusUnauthorized {
			t.Errorf("a token for the API server's audience: %d %s, want 401", code, out)
		}
	})
	t.Run("invented HTTP methods add no series", func(t *testing.T) {
		for i := range 500 {
			method := fmt.Sprintf("INVENTED%d%s", i, strings.Repeat("X", i%64))
			httpDo(t, method, api+"/v1/namespaces/"+ns+"/jobs/x"+strconv.Itoa(i), "", nil)
		}
		series, text := scrape(t, apiMetrics, "vmafx_api_requests_total")
		if series > 40 || strings.Contains(text, "INVENTED") {
			t.Errorf("%d series of vmafx_api_requests_total after 500 invented methods; want at most 40, none named by the client", series)
		}
	})
	t.Run("invented MCP tool names add no series", func(t *testing.T) {
		s := mcpSession(t, mcpURL, tenant)
		for i := range 300 {
			_, _ = s.CallTool(t.Context(), &mcp.CallToolParams{Name: fmt.Sprintf("invented-%d", i)})
		}
		series, text := scrape(t, mcpMetrics, "vmafx_mcp_requests_total")
		if series > 30 || strings.Contains(text, "invented-") {
			t.Errorf("%d series of vmafx_mcp_requests_total after 300 invented tools; want at most 30, none named by the client", series)
		}
	})
	t.Run("junk tokens do not stall the tenant", func(t *testing.T) {
		limited := 0
		for i := range 300 {
			code, _ := httpDo(t, http.MethodGet, jobs, fmt.Sprintf("junk-%d", i), nil)
			switch code {
			case http.StatusUnauthorized:
			case http.StatusTooManyRequests:
				limited++
			default:
				t.Fatalf("junk token %d: %d, want 401 or 429", i, code)
			}
		}
		if limited == 0 {
			t.Errorf("300 junk tokens from one client were all reviewed; want the per-client limit to answer 429")
		}
		start := time.Now()
		if code, out := httpDo(t, http.MethodGet, jobs, tenant, nil); code != http.StatusOK || time.Since(start) > 5*time.Second {
			t.Errorf("the tenant after the junk: %d after %v %s; want 200 at once", code, time.Since(start), out)
		}
	})
	t.Run("a body dripped after a 401 does not hold the connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(api, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = fmt.Fprintf(conn, "POST /v1/namespaces/%s/jobs HTTP/1.1\r\nHost: vmafx-api\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{", ns)
		closed := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, conn); closed <- err }()
		deadline := time.After(10 * time.Second)
		for tick := time.NewTicker(200 * time.Millisecond); ; {
			select {
			case err := <-closed:
				t.Logf("the door closed the connection (%v)", err)
				return
			case <-deadline:
				t.Fatal("the door still holds a connection whose body drips after its 401, 10 s on")
			case <-tick.C:
				_, _ = conn.Write([]byte(" "))
			}
		}
	})
	t.Run("10 000 MCP sessions", func(t *testing.T) {
		initialize := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"0"}}}`)
		opened, capped := 0, 0
		for range 10000 {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, mcpURL, bytes.NewReader(initialize))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tenant)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusOK && resp.Header.Get("Mcp-Session-Id") != "":
				opened++
			case resp.StatusCode == http.StatusTooManyRequests:
				capped++
			default:
				t.Fatalf("initialize: %d; want 200 or 429", resp.StatusCode)
			}
		}
		open := gauge(t, mcpMetrics, "vmafx_mcp_sessions")
		t.Logf("10 000 attempts: %d sessions opened, %d refused at the user's cap; %v open", opened, capped, open)
		if opened > 10 || open > 10 || capped < 9990 {
			t.Errorf("%d opened, %v open, %d refused; want at most 10 (mcp.sessions.maxPerUser) and the rest refused", opened, open, capped)
		}
	})
	t.Run("the doors' memory stays bounded", func(t *testing.T) {
		for door, url := range map[string]string{"vmafx-api": apiMetrics, "vmafx-mcp": mcpMetrics} {
			heap := gauge(t, url, "go_memstats_heap_inuse_bytes")
			t.Logf("%s: %.1f MiB of heap in use after the floods", door, heap/(1<<20))
			if heap > 64<<20 {
				t.Errorf("%s: %.1f MiB of heap in use after the floods; want at most 64", door, heap/(1<<20))
			}
		}
	})
	t.Run("the tenant's own job scores", func(t *testing.T) {
		code, out := httpDo(t, http.MethodGet, jobs+"/legit?wait=3m", tenant, nil)
		var job vmafxv1.VmafxJob
		if code != http.StatusOK || json.Unmarshal(out, &job) != nil {
			t.Fatalf("wait: %d %s", code, out)
		}
		requireScore(t, &job, p01)
	})
}

// doorPodIP is the Pod IP of the one Pod of a door's Deployment.
func doorPodIP(t *testing.T, name string) string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(t.Context(), &pods, client.InNamespace(vmafxv1.SystemNamespace), client.MatchingLabels{"app.kubernetes.io/name": name}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" {
			return p.Status.PodIP
		}
	}
	t.Fatalf("no running Pod of %s", name)
	return ""
}

// gauge is the value of an unlabelled metric on a Prometheus /metrics page.
func gauge(t *testing.T, url, name string) float64 {
	t.Helper()
	_, text := scrape(t, url, name)
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("%s: %q", name, l)
			}
			return v
		}
	}
	t.Fatalf("%s has no %s", url, name)
	return 0
}

// scrape fetches a Prometheus /metrics page and counts the series of family.
func scrape(t *testing.T, url, family string) (int, string) {
	t.Helper()
	code, out := httpDo(t, http.MethodGet, url, "", nil)
	if code != http.StatusOK {
		t.Fatalf("%s: %d", url, code)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, family+"{") || strings.HasPrefix(l, family+" ") {
			n++
		}
	}
	return n, string(out)
}
