package release

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/vmafx/vmafx/hack/release/project"
	"github.com/vmafx/vmafx/hack/release/sbom"
	"github.com/vmafx/vmafx/internal/testutil"
)

// stampedImage is a small program that answers --version through internal/version, so
// the test builds in seconds what the release builds for every binary.
var stampedImage = project.Image{Name: "printversion", Pkg: "internal/version/testdata/printversion"}

func testOptions(t *testing.T) Options {
	stamp := project.Stamp{Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567", Date: time.Date(2026, 11, 24, 1, 2, 3, 0, time.UTC)}
	return Options{
		Repo: testutil.RepoRoot(), Stamp: stamp, Arches: []string{"amd64", "arm64"},
		Images: []project.Image{stampedImage}, WorkDir: t.TempDir(), License: project.License,
	}
}

// TestBuildReproducible builds the release twice into different folders: every index
// and per-architecture image has the same digest, the index has both platforms and the
// annotations, and the amd64 binary prints the stamped version.
func TestBuildReproducible(t *testing.T) {
	o1, o2 := testOptions(t), testOptions(t)
	b1, err := Build(t.Context(), o1)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := Build(t.Context(), o2)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := b1[0].Index.Digest()
	d2, _ := b2[0].Index.Digest()
	if d1 != d2 {
		t.Errorf("index digests differ between two builds of the same commit: %s, %s", d1, d2)
	}
	for i := range b1[0].Arches {
		a1, _ := b1[0].Arches[i].Image.Digest()
		a2, _ := b2[0].Arches[i].Image.Digest()
		if a1 != a2 {
			t.Errorf("%s image digests differ: %s, %s", b1[0].Arches[i].Platform.Architecture, a1, a2)
		}
	}
	m, err := b1[0].Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, d := range m.Manifests {
		plats = append(plats, d.Platform.String())
	}
	if !slices.Equal(plats, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("index platforms %v, want linux/amd64 and linux/arm64", plats)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version": "v1.2.3", "org.opencontainers.image.revision": o1.Stamp.Commit,
		"org.opencontainers.image.source": Source, "org.opencontainers.image.created": "2026-11-24T01:02:03Z",
		"org.opencontainers.image.licenses": project.License,
	} {
		if m.Annotations[k] != want {
			t.Errorf("index annotation %s = %q, want %q", k, m.Annotations[k], want)
		}
	}
	cf, err := b1[0].Arches[1].Image.ConfigFile()
	if err != nil || cf.Architecture != "arm64" || !cf.Created.Equal(o1.Stamp.Date) {
		t.Errorf("arm64 config: %+v (%v), want architecture arm64 created at the commit time", cf, err)
	}
	for _, f := range []string{"licenses/LICENSE", "licenses/NOTICE"} {
		if !imageHas(t, b1[0].Arches[1].Image, f) {
			t.Errorf("the arm64 image has no /%s", f)
		}
	}
	out, err := exec.Command(b1[0].Arches[0].Binary, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "printversion v1.2.3 (commit " + o1.Stamp.Commit + ", built 2026-11-24T01:02:03Z, "; !strings.HasPrefix(string(out), want) {
		t.Errorf("--version printed %q, want the prefix %q", out, want)
	}
}

// startRegistry runs the distribution registry (`make registry`, VMAFX_REGISTRY) on a
// free 127.0.0.1 port with its storage in a temporary folder and returns its address.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("VMAFX_REGISTRY")
	if bin == "" {
		if os.Getenv("VMAFX_REQUIRE_INTEGRATION") == "1" {
			t.Fatal("VMAFX_REGISTRY is not set (make registry prints it)")
		}
		t.Skip("VMAFX_REGISTRY is not set (make registry prints it)")
	}
	addr, err := testutil.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), addr)
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfgPath)
	// The registry logs every request: kept in a file, not the test output.
	log, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	testutil.Eventually(t, 30*time.Second, "the registry serving /v2/", func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v2/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
	return addr
}

// TestPush pushes a two-architecture release to a local registry and reads it back: the
// index by its version tag, each image's SBOM through the referrers of the image, and
// the chart with the version, appVersion and imageRegistry the release set.
func TestPush(t *testing.T) {
	addr := startRegistry(t)
	o := testOptions(t)
	o.Registry, o.PlainHTTP = addr+"/vmafx", true
	built, err := Build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	chart, err := Push(t.Context(), o, built)
	if err != nil {
		t.Fatal(err)
	}
	opts := []remote.Option{remote.WithContext(t.Context())}

	tag, _ := name.NewTag(addr+"/vmafx/printversion:v1.2.3", name.Insecure)
	idx, err := remote.Index(tag, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustDigest(t, idx), mustDigest(t, built[0].Index); got != want {
		t.Errorf("pushed index %s, built %s", got, want)
	}
	for _, a := range built[0].Arches {
		d, _ := a.Image.Digest()
		refs, err := remote.Referrers(tag.Context().Digest(d.String()), opts...)
		if err != nil {
			t.Fatal(err)
		}
		rm, err := refs.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(rm.Manifests) != 1 || rm.Manifests[0].ArtifactType != sbom.MediaType {
			t.Fatalf("referrers of the %s image: %+v, want one %s", a.Platform.Architecture, rm.Manifests, sbom.MediaType)
		}
		doc := readSBOM(t, tag.Context().Digest(rm.Manifests[0].Digest.String()), opts)
		var names []string
		for _, p := range doc.Packages {
			names = append(names, p.Name+"@"+p.VersionInfo)
		}
		for _, want := range []string{"printversion@v1.2.3", "github.com/vmafx/vmafx@v1.2.3", "golang@" + runtimeGoVersion(t, a.Binary)} {
			if !slices.Contains(names, want) {
				t.Errorf("%s SBOM packages %v lack %s", a.Platform.Architecture, names, want)
			}
		}
	}

	if chart != "oci://"+addr+"/vmafx/charts/vmafx" {
		t.Errorf("chart reference %q", chart)
	}
	ctag, _ := name.NewTag(addr+"/vmafx/charts/vmafx:1.2.3", name.Insecure)
	img, err := remote.Image(ctag, opts...)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Name, Version, AppVersion string }
	if err := json.Unmarshal(raw, &meta); err != nil || meta.Name != "vmafx" || meta.Version != "1.2.3" || meta.AppVersion != "v1.2.3" {
		t.Errorf("chart config %s (%v), want vmafx 1.2.3 with appVersion v1.2.3", raw, err)
	}
	helmShowValues(t, chart, "1.2.3", o.Registry)
}

// helmShowValues reads the pushed chart back with Helm itself, when `make helm` built it
// (VMAFX_HELM): its values carry the release's registry.
func helmShowValues(t *testing.T, chart, version, registry string) {
	bin := os.Getenv("VMAFX_HELM")
	if bin == "" {
		t.Log("VMAFX_HELM is not set: the chart is not read back with helm")
		return
	}
	cmd := exec.Command(bin, "show", "values", chart, "--version", version, "--plain-http")
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm show values: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("imageRegistry: %q", registry); !strings.Contains(string(out), want) {
		t.Errorf("helm show values lacks %q:\n%s", want, out)
	}
}

func readSBOM(t *testing.T, ref name.Digest, opts []remote.Option) sbom.Document {
	t.Helper()
	img, err := remote.Image(ref, opts...)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("SBOM artifact layers %d (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var doc sbom.Document
	if err := json.NewDecoder(rc).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.SPDXVersion != "SPDX-2.3" {
		t.Errorf("spdxVersion %q", doc.SPDXVersion)
	}
	return doc
}

func mustDigest(t *testing.T, d interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func runtimeGoVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command("go", "version", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	return f[len(f)-1]
}

// imageHas reports whether img's file system holds the file at path p (no leading slash).
func imageHas(t *testing.T, img v1.Image, p string) bool {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			return false
		}
		if strings.TrimPrefix(h.Name, "/") == p {
			return true
		}
	}
}
