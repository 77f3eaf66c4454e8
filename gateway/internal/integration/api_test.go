package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/httpapi"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decoding %q: %v", body, err)
	}
	return v
}

func TestAPISubmitGetListCancel(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startAPI(t)
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	base := d.url + "/v1/namespaces/" + ns + "/jobs"

	code, body := do(t, http.MethodPost, base, token, jobBody("first"))
	if code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, body)
	}
	job := decode[vmafxv1.VmafxJob](t, body)
	if job.Spec.Model != vmafxv1.DefaultModel || job.Namespace != ns || job.Kind != "VmafxJob" {
		t.Errorf("submitted job = %+v, want the API server's defaults (model %s) in %s", job, vmafxv1.DefaultModel, ns)
	}
	// Without a name the API server generates one.
	code, body = do(t, http.MethodPost, base, token, `{"spec":{"reference":"https://media.example.com/a.y4m","distorted":"https://media.example.com/b.y4m"}}`)
	if code != http.StatusCreated {
		t.Fatalf("submit without a name: %d %s", code, body)
	}
	if gen := decode[vmafxv1.VmafxJob](t, body); !strings.HasPrefix(gen.Name, "vmafx-") {
		t.Errorf("generated name %q, want the vmafx- prefix", gen.Name)
	}
	// The same name again: the API server's 409.
	if code, body = do(t, http.MethodPost, base, token, jobBody("first")); code != http.StatusConflict {
		t.Errorf("second submit of one name: %d %s, want 409", code, body)
	}

	code, body = do(t, http.MethodGet, base+"/first", token, "")
	if code != http.StatusOK || decode[vmafxv1.VmafxJob](t, body).Name != "first" {
		t.Fatalf("get: %d %s", code, body)
	}
	if code, body = do(t, http.MethodGet, base+"/absent", token, ""); code != http.StatusNotFound {
		t.Errorf("get of a missing job: %d %s, want 404", code, body)
	}

	// Selector and paging.
	code, body = do(t, http.MethodGet, base+"?labelSelector=pipeline%3Dnightly", token, "")
	if list := decode[vmafxv1.VmafxJobList](t, body); code != http.StatusOK || len(list.Items) != 1 || list.Items[0].Name != "first" {
		t.Errorf("list by selector: %d %s, want the one labelled job", code, body)
	}
	code, body = do(t, http.MethodGet, base+"?limit=1", token, "")
	page := decode[vmafxv1.VmafxJobList](t, body)
	if code != http.StatusOK || len(page.Items) != 1 || page.Continue == "" {
		t.Fatalf("first page: %d %s, want one item and a continue token", code, body)
	}
	code, body = do(t, http.MethodGet, base+"?limit=1&continue="+page.Continue, token, "")
	page2 := decode[vmafxv1.VmafxJobList](t, body)
	if code != http.StatusOK || len(page2.Items) != 1 || page2.Items[0].Name == page.Items[0].Name || page2.Continue != "" {
		t.Errorf("second page: %d %s, want the other job and no continue token", code, body)
	}
	if code, body = do(t, http.MethodGet, base+"?labelSelector=%3D%3D", token, ""); code != http.StatusBadRequest {
		t.Errorf("bad selector: %d %s, want 400", code, body)
	}

	code, body = do(t, http.MethodDelete, base+"/first", token, "")
	if code != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", code, body)
	}
	if code, _ = do(t, http.MethodGet, base+"/first", token, ""); code != http.StatusNotFound {
		t.Errorf("get after cancel: %d, want 404", code)
	}
}

func TestAPIPassesThroughTheAPIServersRefusal(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startAPI(t)
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	// Raw YUV without its geometry: the CRD's CEL rule refuses it, naming spec.width.
	code, body := do(t, http.MethodPost, d.url+"/v1/namespaces/"+ns+"/jobs", token,
		`{"metadata":{"name":"raw"},"spec":{"reference":"s3://bucket/ref.yuv","distorted":"s3://bucket/dist.yuv"}}`)
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("raw YUV without width: %d %s, want 422", code, body)
	}
	st := decode[metav1.Status](t, body)
	if st.Reason != metav1.StatusReasonInvalid || st.Details == nil {
		t.Fatalf("status = %+v, want Invalid with details", st)
	}
	found := false
	for _, c := range st.Details.Causes {
		if c.Field == "spec.width" && strings.Contains(c.Message, "width is required for raw YUV inputs") {
			found = true
		}
	}
	if !found {
		t.Errorf("causes %+v name no spec.width with the CEL message", st.Details.Causes)
	}
	// An unknown field is the door's own 400, naming it.
	code, body = do(t, http.MethodPost, d.url+"/v1/namespaces/"+ns+"/jobs", token, `{"spec":{"reference":"s3://b/r.y4m","distorted":"s3://b/d.y4m","colour":"red"}}`)
	if code != http.StatusBadRequest || !strings.Contains(body, "colour") {
		t.Errorf("unknown field: %d %s, want 400 naming it", code, body)
	}
	// dryRun validates without creating.
	code, body = do(t, http.MethodPost, d.url+"/v1/namespaces/"+ns+"/jobs?dryRun=All", token, jobBody("dry"))
	if code != http.StatusCreated {
		t.Fatalf("dry run: %d %s", code, body)
	}
	if code, _ = do(t, http.MethodGet, d.url+"/v1/namespaces/"+ns+"/jobs/dry", token, ""); code != http.StatusNotFound {
		t.Errorf("a dry-run job exists (get: %d)", code)
	}
}

func TestAPIRefusesWithoutPermission(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startAPI(t)
	reader := tokenFor(t, ns, "reader", "get", "list")
	// A token for the API server's audience, as every Pod has, even one allowed everything.
	podToken := tokenForAudience(t, ns, "pod", nil, allVerbs...)
	base := d.url + "/v1/namespaces/" + ns + "/jobs"
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a token the API server does not know", "not-a-token", http.StatusUnauthorized},
		{"a token without create vmafxjobs", reader, http.StatusForbidden},
		{"a token for the API server's audience", podToken, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, http.MethodPost, base, tc.token, jobBody("refused"))
			if code != tc.want {
				t.Fatalf("submit: %d %s, want %d", code, body, tc.want)
			}
			if st := decode[metav1.Status](t, body); st.Code != int32(tc.want) {
				t.Errorf("status %+v, want code %d", st, tc.want)
			}
		})
	}
	// The reader may list, but not in another namespace.
	if code, body := do(t, http.MethodGet, base, reader, ""); code != http.StatusOK {
		t.Errorf("list with get/list: %d %s", code, body)
	}
	other := testenv.CreateNamespace(t)
	code, body := do(t, http.MethodGet, d.url+"/v1/namespaces/"+other+"/jobs", reader, "")
	if code != http.StatusForbidden || !strings.Contains(body, "cannot list resource") {
		t.Errorf("list in another namespace: %d %s, want 403", code, body)
	}
	// The public document needs no token.
	if code, _ := do(t, http.MethodGet, d.url+"/openapi.json", "", ""); code != http.StatusOK {
		t.Errorf("openapi.json: %d", code)
	}
}

func TestAPIWaitLongPoll(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startAPI(t)
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	base := d.url + "/v1/namespaces/" + ns + "/jobs"
	if code, body := do(t, http.MethodPost, base, token, jobBody("waited")); code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, body)
	}
	// A short wait answers with the job as it is.
	code, body := do(t, http.MethodGet, base+"/waited?wait=200ms", token, "")
	if j := decode[vmafxv1.VmafxJob](t, body); code != http.StatusOK || j.Status.Phase != "" {
		t.Fatalf("short wait: %d %s, want the unfinished job", code, body)
	}
	type answer struct {
		code int
		body string
	}
	got := make(chan answer, 1)
	go func() {
		c, b, err := send(http.MethodGet, base+"/waited?wait=60s", token, "")
		if err != nil {
			b = err.Error()
		}
		got <- answer{c, b}
	}()
	playOperator(t, ns, "waited", vmafxv1.JobRunning, "")
	playOperator(t, ns, "waited", vmafxv1.JobSucceeded, "93.123456")
	select {
	case a := <-got:
		j := decode[vmafxv1.VmafxJob](t, a.body)
		if a.code != http.StatusOK || j.Status.Phase != vmafxv1.JobSucceeded || j.Status.Score != "93.123456" {
			t.Fatalf("long poll: %d %s, want the Succeeded job with its score", a.code, a.body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the long poll did not answer once the job succeeded")
	}
	if code, body = do(t, http.MethodGet, base+"/waited?wait=forever", token, ""); code != http.StatusBadRequest {
		t.Errorf("bad wait: %d %s, want 400", code, body)
	}
}

func TestAPIEventStream(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startAPI(t)
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	base := d.url + "/v1/namespaces/" + ns + "/jobs"
	if code, body := do(t, http.MethodPost, base, token, jobBody("streamed")); code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/streamed/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req) //nolint:bodyclose // closed by the defer below; the scanner goroutine reads it until then
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	type event struct {
		name  string
		phase vmafxv1.JobPhase
	}
	events := make(chan event, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				var j vmafxv1.VmafxJob
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &j)
				events <- event{name, j.Status.Phase}
			}
		}
	}()
	next := func() event {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("the stream ended early")
			}
			return e
		case <-ctx.Done():
			t.Fatal("no event in time")
		}
		return event{}
	}
	if e := next(); e != (event{"status", ""}) {
		t.Fatalf("first event %+v, want the job as it is", e)
	}
	playOperator(t, ns, "streamed", vmafxv1.JobRunning, "")
	if e := next(); e != (event{"status", vmafxv1.JobRunning}) {
		t.Fatalf("event %+v, want Running", e)
	}
	playOperator(t, ns, "streamed", vmafxv1.JobSucceeded, "88.000000")
	if e := next(); e != (event{"status", vmafxv1.JobSucceeded}) {
		t.Fatalf("event %+v, want Succeeded", e)
	}
	if e := next(); e.name != "end" {
		t.Fatalf("event %+v, want end", e)
	}
}

func TestAPIModelsMetricsAndShutdown(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startAPI(t)
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	code, body := do(t, http.MethodGet, d.url+"/v1/namespaces/"+ns+"/models", token, "")
	if code != http.StatusOK {
		t.Fatalf("models: %d %s", code, body)
	}
	models := decode[httpapi.ModelList](t, body)
	if len(models.Items) != len(vmafxv1.BuiltinModels) || models.Items[0].Source != "builtin" {
		t.Errorf("models %s, want the %d built-in ones (this caller may not list trainings)", body, len(vmafxv1.BuiltinModels))
	}

	_, metrics := do(t, http.MethodGet, d.probeURL+"/metrics", "", "")
	for _, want := range []string{
		`vmafx_api_requests_total{code="200",method="GET",route="/v1/namespaces/{namespace}/models"} 1`,
		`vmafx_api_request_duration_seconds_count{method="GET",route="/v1/namespaces/{namespace}/models"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if code, _ := do(t, http.MethodGet, d.probeURL+"/readyz", "", ""); code != http.StatusOK {
		t.Errorf("readyz: %d", code)
	}

	// SIGTERM (the context's end) answers an open long poll at once, then stops.
	if code, body := do(t, http.MethodPost, d.url+"/v1/namespaces/"+ns+"/jobs", token, jobBody("pending")); code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, body)
	}
	got := make(chan int, 1)
	go func() {
		c, b, _ := send(http.MethodGet, d.url+"/v1/namespaces/"+ns+"/jobs/pending?wait=5m", token, "")
		if c != http.StatusOK {
			t.Logf("long poll: %s", b)
		}
		got <- c
	}()
	waitFor(t, "the long poll to be in flight", func() bool {
		_, m := do(t, http.MethodGet, d.probeURL+"/metrics", "", "")
		return strings.Contains(m, `vmafx_api_requests_in_flight{route="/v1/namespaces/{namespace}/jobs/{name}"} 1`)
	})
	start := time.Now()
	d.stop(t)
	select {
	case c := <-got:
		if c != http.StatusOK {
			t.Errorf("long poll at shutdown answered %d, want 200 with the job as it is", c)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the long poll was not answered at shutdown")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("shutdown took %s", el)
	}
}

// TestAPIModelsListsTrainedOnesToThoseWhoMayReadTrainings: a training with a version is a
// model for callers who may list vmafxmodeltrainings, and invisible to the others.
func TestAPIModelsListsTrainedOnesToThoseWhoMayReadTrainings(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startAPI(t)
	ctx := context.Background()
	tr := &vmafxv1.VmafxModelTraining{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refine"},
		Spec: vmafxv1.VmafxModelTrainingSpec{BaseModel: vmafxv1.DefaultModel, OutputRegistry: "registry.example.com/vmafx/models"}}
	if err := testenv.Client().Create(ctx, tr); err != nil {
		t.Fatal(err)
	}
	digest := "sha256:" + strings.Repeat("ab", 32)
	tr.Status.ModelVersion = "refine-v3"
	tr.Status.LastCheckpoint = &vmafxv1.Checkpoint{Reference: "oci://registry.example.com/vmafx/models:refine-v3", Digest: digest}
	if err := testenv.Client().Status().Update(ctx, tr); err != nil {
		t.Fatal(err)
	}
	untrained := &vmafxv1.VmafxModelTraining{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fresh"},
		Spec: vmafxv1.VmafxModelTrainingSpec{BaseModel: vmafxv1.DefaultModel, OutputRegistry: "registry.example.com/vmafx/models"}}
	if err := testenv.Client().Create(ctx, untrained); err != nil {
		t.Fatal(err)
	}
	plain := tokenFor(t, ns, "plain", "get")
	trainer := tokenFor(t, ns, "trainer", "get")
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainings"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{vmafxv1.GroupVersion.Group}, Resources: []string{"vmafxmodeltrainings"}, Verbs: []string{"list"}}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainings"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "trainings"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "trainer", Namespace: ns}}}
	for _, o := range []client.Object{role, rb} {
		if err := testenv.Client().Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	models := func(token string) []jobs.Model {
		code, body := do(t, http.MethodGet, d.url+"/v1/namespaces/"+ns+"/models", token, "")
		if code != http.StatusOK {
			t.Fatalf("models: %d %s", code, body)
		}
		return decode[httpapi.ModelList](t, body).Items
	}
	if got := models(plain); len(got) != len(vmafxv1.BuiltinModels) {
		t.Errorf("without list on trainings: %+v, want the built-in models only", got)
	}
	got := models(trainer)
	want := jobs.Model{Name: "oci://registry.example.com/vmafx/models:refine-v3", Pinned: "oci://registry.example.com/vmafx/models@" + digest,
		Source: "trained", Training: "refine", Version: "refine-v3", Registry: "registry.example.com/vmafx/models"}
	if len(got) != len(vmafxv1.BuiltinModels)+1 || got[len(got)-1] != want {
		t.Errorf("with list on trainings: %+v, want the built-in models and %+v", got, want)
	}
}
