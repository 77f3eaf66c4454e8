package command

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/modelregistry"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/report"
)

// TestOCIModel pushes a model version (vmaf_v0.6.1 with other coefficients, as a trainer
// writes it) to an OCI registry (go-containerregistry's, on 127.0.0.1) and scores the
// test pair with model oci://... by tag and by digest: the same score as the same JSON
// from a file, named by its reference. A missing tag is BadModel; an unreachable
// registry FetchFailed.
func TestOCIModel(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")

	doc, err := vmaf.BuiltinModelJSON("vmaf_v0.6.1")
	if err != nil {
		t.Fatal(err)
	}
	base, err := vmaf.ParseModel(doc, "base")
	if err != nil {
		t.Fatal(err)
	}
	p := base.SVR()
	p.Rho -= 0.1 // about 8 VMAF points higher
	trained, err := vmaf.WithSVR(doc, p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trained.json")
	if err := os.WriteFile(path, trained, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &modelregistry.Client{PlainHTTP: []string{host}}
	digest, err := c.Push(context.Background(), modelregistry.Reference{Registry: host, Repository: "vmafx/models"},
		modelregistry.Version{Tag: "run-v1", Model: trained})
	if err != nil {
		t.Fatal(err)
	}

	args := func(model string) []string {
		return []string{"score", "--reference", refClip, "--distorted", distClip, "--width", strconv.Itoa(pairW),
			"--height", strconv.Itoa(pairH), "--model", model}
	}
	env := map[string]string{"VMAFX_REGISTRY_PLAIN_HTTP": host}
	fromFile := runWorker(t, context.Background(), env, args(path)...).result(t)
	builtin := runWorker(t, context.Background(), env, args("vmaf_v0.6.1")...).result(t)
	if fromFile.Score == builtin.Score {
		t.Fatalf("the trained model scores as the built-in one (%v)", builtin.Score)
	}
	for _, ref := range []string{"oci://" + host + "/vmafx/models:run-v1", "oci://" + host + "/vmafx/models@" + digest} {
		r := runWorker(t, context.Background(), env, args(ref)...)
		got := r.result(t)
		if r.code != report.ExitOK || got.Score != fromFile.Score || got.Model != ref || got.ModelSHA256 != fromFile.ModelSHA256 {
			t.Errorf("%s: exit %d, score %v model %q sha %s; from the file %v sha %s\n%s", ref, r.code, got.Score, got.Model,
				got.ModelSHA256, fromFile.Score, fromFile.ModelSHA256, r.stderr)
		}
	}

	missing := runWorker(t, context.Background(), env, args("oci://"+host+"/vmafx/models:run-v9")...)
	if res := missing.result(t); missing.code != report.ExitBadModel || res.Error == nil || res.Error.Reason != vmafxv1.ReasonBadModel {
		t.Errorf("missing tag: exit %d, %+v", missing.code, res.Error)
	}
	srv.Close()
	gone := runWorker(t, context.Background(), env, append(args("oci://"+host+"/vmafx/models:run-v1"), "--http-retries", "0")...)
	if res := gone.result(t); gone.code != report.ExitFetchFailed || res.Error == nil || res.Error.Reason != vmafxv1.ReasonFetchFailed {
		t.Errorf("unreachable registry: exit %d, %+v", gone.code, res.Error)
	}
}

// TestBuiltinModelsAreTheAPIs keeps the kernel's embedded models and the API's list (the
// one the CRD validates spec.model against) the same.
func TestBuiltinModelsAreTheAPIs(t *testing.T) {
	if got, want := strings.Join(vmaf.BuiltinModels(), ","), strings.Join(vmafxv1.BuiltinModels, ","); got != want {
		t.Errorf("the kernel embeds %s; apis/vmafx/v1 lists %s", got, want)
	}
	if vmaf.DefaultModel != vmafxv1.DefaultModel {
		t.Errorf("default model %s in the kernel, %s in the API", vmaf.DefaultModel, vmafxv1.DefaultModel)
	}
	for _, m := range vmafxv1.TrainableModels {
		if _, err := vmaf.BuiltinModelJSON(m); err != nil {
			t.Errorf("trainable model %s: %v", m, err)
		}
	}
}
