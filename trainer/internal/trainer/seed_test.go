package trainer

import (
	"context"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/modelregistry"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// redirect answers requests for one registry name from a local registry server, over
// plain HTTP: the run below names ghcr.io, which this machine cannot reach. Only the
// address is faked; the registry speaking the distribution API is a real one
// (go-containerregistry's), as in the other trainer tests.
type redirect struct {
	name, host string
}

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	orig := req
	if req.URL.Host == r.name {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host, req.Host = "http", r.host, r.host
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	// The client resolves upload locations against the request it sent, and checks them
	// against the registry's public name: give it back its own request, and the name
	// where the local server wrote its address.
	resp.Request = orig
	if loc, err := url.Parse(resp.Header.Get("Location")); err == nil && loc.Host == r.host {
		loc.Scheme, loc.Host = "https", r.name
		resp.Header.Set("Location", loc.String())
	}
	return resp, nil
}

// TestSeedTrainingExample applies the original VMAFX operator README's training.yaml
// unchanged (gpu.vendor: nvidia, minSamples 1000, interval 10m, ghcr.io/vmafx/models) and
// requires it to train: jobs scored on nodes whose VmafxNode the device plugin labelled
// gpu.vendor=nvidia count, and so do jobs of a Node an administrator labelled so; jobs
// of a cpu node do not. After ten minutes (a fake clock) and 1000 samples, a version is
// pushed.
func TestSeedTrainingExample(t *testing.T) {
	ctx := testenv.Context(t)
	c := testenv.Client()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "test", "integration", "api", "testdata", "seeds", "training.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run := &vmafxv1.VmafxModelTraining{}
	if err := yaml.UnmarshalStrict(data, run); err != nil {
		t.Fatal(err)
	}
	ns, name := run.Namespace, run.Name
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), run) })

	// Two VmafxNodes as their device plugins keep them (heartbeat_test checks that the
	// plugin sets the vendor label), and a Node labelled by hand with no VmafxNode.
	for node, vendor := range map[string]vmafxv1.GPUVendor{"gpu-1": vmafxv1.VendorNVIDIA, "cpu-1": vmafxv1.VendorCPU} {
		vn := &vmafxv1.VmafxNode{
			ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: node,
				Labels: map[string]string{vmafxv1.LabelGPUVendor: string(vendor)}},
			Spec: vmafxv1.VmafxNodeSpec{NodeName: node, GPUVendor: vendor, Capacity: 1},
		}
		if err := c.Create(ctx, vn); err != nil {
			t.Fatal(err)
		}
	}
	labelled := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-2", Labels: map[string]string{"gpu.vendor": "nvidia"}}}
	if err := c.Create(ctx, labelled); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(33, 34))
	labelledJobs(t, ctx, ns, "gpu-1", dir, "gpu1", 900, rng)
	labelledJobs(t, ctx, ns, "gpu-2", dir, "gpu2", 100, rng)
	labelledJobs(t, ctx, ns, "cpu-1", dir, "cpu1", 50, rng)

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	route := redirect{name: "ghcr.io", host: strings.TrimPrefix(srv.URL, "http://")}
	clk := testingclock.NewFakeClock(time.Now())
	tr, err := New(Config{Namespace: ns, Name: name, Poll: time.Second, OutputDir: dir, Clock: clk, RegistryTransport: route},
		c, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- tr.Run(rctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("trainer: %v", err)
		}
	}()

	waitFor(t, "1000 samples", func() bool { return tr.Status().Samples >= 1000 })
	if st := tr.Status(); st.Samples != 1000 || st.LastCheckpoint != nil || st.PublishReason != vmafxv1.ReasonWaitingForSamples && st.PublishReason != "" {
		t.Fatalf("before ten minutes: %+v; want 1000 samples (the cpu node's 50 not among them) and no checkpoint", st)
	}
	// The checkpoint interval is 10m: move the clock on once the trainer waits for it.
	waitFor(t, "the trainer to wait for its next poll", clk.HasWaiters)
	clk.Step(10*time.Minute + time.Second)
	waitFor(t, "a version pushed", func() bool { return tr.Status().LastCheckpoint != nil })
	st := tr.Status()
	t.Logf("status: %+v", st)
	if st.ModelVersion != "online-training-1-v1" || st.PublishReason != vmafxv1.ReasonPublished || st.LastCheckpoint.Samples != 1000 {
		t.Errorf("status %+v; want version online-training-1-v1 of 1000 samples, published", st)
	}
	// The version is in the registry the run names.
	ref, err := modelregistry.ParseReference(st.LastCheckpoint.Reference)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Registry != "ghcr.io" || ref.Repository != "vmafx/models" {
		t.Errorf("pushed to %s, not ghcr.io/vmafx/models", st.LastCheckpoint.Reference)
	}
	rc := &modelregistry.Client{Transport: route}
	a, err := rc.Pull(ctx, ref, true)
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest != st.LastCheckpoint.Digest {
		t.Errorf("registry has %s, status says %s", a.Digest, st.LastCheckpoint.Digest)
	}
}
