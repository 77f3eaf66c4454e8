package images

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestBuild packs a small file as the "binary" with a CA bundle next to it and checks the
// layer's content, the config, and that the same input gives the same digest.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "vmafx-demo")
	certs := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certs, []byte("certs"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Ref: "vmafx.local/vmafx-demo:dev", Binary: bin, Files: map[string]string{"etc/ssl/certs/ca-certificates.crt": certs}, Args: []string{"--v=2"}}
	img, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}

	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	type entry struct {
		Name string
		Mode int64
		Body string
	}
	var got []entry
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		got = append(got, entry{h.Name, h.Mode, string(body)})
	}
	want := []entry{
		{"tmp/", 0o1777, ""},
		{"etc/", 0o755, ""},
		{"etc/ssl/", 0o755, ""},
		{"etc/ssl/certs/", 0o755, ""},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, "certs"},
		{"vmafx-demo", 0o755, "#!binary"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer (-want +got):\n%s", diff)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	gotCfg := []any{cf.OS, cf.Architecture, cf.Config.User, cf.Config.Entrypoint, cf.Config.Cmd}
	wantCfg := []any{"linux", runtime.GOARCH, "65532:65532", []string{"/vmafx-demo"}, []string{"--v=2"}}
	if diff := cmp.Diff(wantCfg, gotCfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}

	again, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("digests differ for the same input: %s, %s", d1, d2)
	}
}

// TestWriteArchive checks that the archive is an OCI layout whose one manifest carries the
// name containerd imports it under.
func TestWriteArchive(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := Build(Spec{Ref: "vmafx.local/pause:dev", Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pause.tar")
	if err := WriteArchive(img, "vmafx.local/pause:dev", out); err != nil {
		t.Fatal(err)
	}

	// Unpack and read it back as a layout.
	unpacked := filepath.Join(dir, "unpacked")
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(unpacked, h.Name)
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		body, _ := io.ReadAll(tr)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(unpacked)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("%d manifests, want 1", len(m.Manifests))
	}
	if got := m.Manifests[0].Annotations["io.containerd.image.name"]; got != "vmafx.local/pause:dev" {
		raw, _ := json.Marshal(m)
		t.Errorf("image name annotation = %q; index %s", got, raw)
	}
	want, _ := img.Digest()
	if m.Manifests[0].Digest != want {
		t.Errorf("manifest digest = %s, want %s", m.Manifests[0].Digest, want)
	}
}

func TestBuildRejectsBadName(t *testing.T) {
	if _, err := Build(Spec{Ref: "Not A Name", Binary: "/bin/true"}); err == nil {
		t.Error("Build accepted an invalid image name")
	}
}
