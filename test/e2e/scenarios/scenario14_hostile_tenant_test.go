package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

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
		if done.Status.Phase != vmafxv1.JobFailed {
			t.Errorf("phase %s; want Failed", done.Status.Phase)
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
