package modelregistry

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// serve runs go-containerregistry's in-memory OCI registry on 127.0.0.1 (a test
// registry: the real one, distribution, runs in the e2e scenario), optionally behind
// basic authentication, and returns its host:port.
func serve(t *testing.T, user, password string) string {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	h := reg
	if user != "" {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
				return
			}
			reg.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestPushPull(t *testing.T) {
	host := serve(t, "", "")
	c := &Client{PlainHTTP: []string{host}}
	ctx := context.Background()
	repo := Reference{Registry: host, Repository: "vmafx/models"}

	if tags, err := c.Tags(ctx, repo, "run-v"); err != nil || len(tags) != 0 {
		t.Fatalf("Tags of an empty repository = %v, %v", tags, err)
	}
	model := []byte(`{"model_dict": {}}`)
	state := []byte(`{"version": "x"}`)
	digest, err := c.Push(ctx, repo, Version{Tag: "run-v1", Model: model, State: state,
		Annotations: map[string]string{AnnotationBaseModel: "vmaf_v0.6.1", AnnotationSamples: "12"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("digest %q", digest)
	}
	if _, err := c.Push(ctx, repo, Version{Tag: "run-v2", Model: model}); err != nil {
		t.Fatal(err)
	}
	tags, err := c.Tags(ctx, repo, "run-v")
	if err != nil || !slices.Equal(tags, []string{"run-v1", "run-v2"}) {
		t.Fatalf("Tags = %v, %v", tags, err)
	}

	for _, ref := range []string{"run-v1", digest} {
		m := repo
		m.Reference = ref
		a, err := c.Pull(ctx, m, true)
		if err != nil {
			t.Fatalf("Pull %s: %v", m, err)
		}
		if !bytes.Equal(a.Model, model) || !bytes.Equal(a.State, state) || a.Digest != digest {
			t.Errorf("Pull %s = model %q state %q digest %s", m, a.Model, a.State, a.Digest)
		}
		if a.Annotations[AnnotationBaseModel] != "vmaf_v0.6.1" || a.Annotations[AnnotationSamples] != "12" {
			t.Errorf("annotations %v", a.Annotations)
		}
	}
	// Without asking for the state, none is fetched.
	a, err := c.Pull(ctx, Reference{Registry: host, Repository: "vmafx/models", Reference: "run-v1"}, false)
	if err != nil || a.State != nil {
		t.Errorf("Pull without state: %v, state %q", err, a.State)
	}
	if _, err := c.Pull(ctx, Reference{Registry: host, Repository: "vmafx/models", Reference: "missing"}, false); err == nil {
		t.Error("pulled a tag that does not exist")
	}
}

// TestPullRefusesOtherArtifacts pushes something that is not a model version.
func TestPullRefusesOtherArtifacts(t *testing.T) {
	host := serve(t, "", "")
	c := &Client{PlainHTTP: []string{host}}
	ctx := context.Background()
	repo := Reference{Registry: host, Repository: "other"}
	r, err := c.repository(repo)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := pushOther(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	repo.Reference = desc
	if _, err := c.Pull(ctx, repo, false); !errors.Is(err, ErrNotModel) {
		t.Errorf("Pull = %v, want ErrNotModel", err)
	}
}

// TestCredentials pushes to a registry that requires a login, with and without the
// Docker config of a kubernetes.io/dockerconfigjson Secret.
func TestCredentials(t *testing.T) {
	host := serve(t, "trainer", "s3cret")
	ctx := context.Background()
	repo := Reference{Registry: host, Repository: "vmafx/models"}
	anon := &Client{PlainHTTP: []string{host}}
	if _, err := anon.Push(ctx, repo, Version{Tag: "v1", Model: []byte("{}")}); err == nil {
		t.Fatal("pushed without credentials")
	}
	cfg := `{"auths": {"` + host + `": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("trainer:s3cret")) + `"}}}`
	path := filepath.Join(t.TempDir(), ".dockerconfigjson")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := LoadDockerConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{PlainHTTP: []string{host}, Credentials: store}
	if _, err := c.Push(ctx, repo, Version{Tag: "v1", Model: []byte("{}")}); err != nil {
		t.Fatalf("push with credentials: %v", err)
	}
}
