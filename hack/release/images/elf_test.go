package images

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/internal/testutil"
)

func TestParseLDD(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n" +
		"\tlibavcodec.so.59 => /lib/x86_64-linux-gnu/libavcodec.so.59 (0x00007f)\n" +
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n" +
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n"
	got, err := parseLDD([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/lib/x86_64-linux-gnu/libavcodec.so.59", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("libraries (-want +got):\n%s", diff)
	}
	if _, err := parseLDD([]byte("\tlibgone.so.1 => not found\n")); err == nil || !strings.Contains(err.Error(), "libgone.so.1") {
		t.Errorf("a missing library gave %v, want an error naming it", err)
	}
}

// TestRuntimeLayerRunsFFmpeg packs ffmpeg with ELFDeps into an image, unpacks the image's
// layers into an empty folder and runs ffmpeg there with chroot: the layer alone must be
// enough for the program, as it is in the worker's container. Needs ffmpeg (Debian's
// package) and root, as .ci/run provides; VMAFX_REQUIRE_FFMPEG=1 makes their absence fail.
func TestRuntimeLayerRunsFFmpeg(t *testing.T) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil || os.Geteuid() != 0 {
		if os.Getenv("VMAFX_REQUIRE_FFMPEG") == "1" {
			t.Fatalf("ffmpeg (%v) and root (euid %d) are required", err, os.Geteuid())
		}
		t.Skip("needs ffmpeg and root")
	}
	deps, err := ELFDeps(ffmpeg)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "vmafx-demo")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	// The whole runtime: the program at /usr/bin and its libraries where ldd found them.
	runtime := map[string]string{"/usr/bin/ffmpeg": ffmpeg}
	for k, v := range deps {
		runtime[k] = v
	}
	img, err := Build(Spec{Ref: "vmafx.local/vmafx-demo:dev", Binary: bin, Runtime: runtime})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"PATH=/:/usr/bin"}, cf.Config.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("%d layers, want the runtime's and the binary's", len(layers))
	}
	root := t.TempDir()
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		untar(t, rc, root)
		rc.Close()
	}
	out, err := exec.Command("chroot", root, "/usr/bin/ffmpeg", "-hide_banner", "-version").CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg in the image's root: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "ffmpeg version") {
		t.Errorf("ffmpeg -version printed %q", out)
	}
}

func untar(t *testing.T, r io.Reader, root string) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, os.FileMode(h.Mode).Perm()|0o700); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
}

// TestRuntimeLayerRunsVulkan packs the worker binary with VulkanRuntime (and the C
// library the binary loads the Vulkan loader through) into an image, unpacks it into an
// empty folder and scores a clip there with chroot on the vulkan backend: the image alone
// must give the worker a Vulkan device (lavapipe here). Needs the Vulkan packages and root;
// VMAFX_REQUIRE_VULKAN=1 makes their absence fail.
func TestRuntimeLayerRunsVulkan(t *testing.T) {
	vk, err := VulkanRuntime()
	if err != nil || os.Geteuid() != 0 {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") == "1" {
			t.Fatalf("the Vulkan packages (%v) and root (euid %d) are required", err, os.Geteuid())
		}
		t.Skip("needs libvulkan1, mesa-vulkan-drivers and root")
	}
	bin := filepath.Join(t.TempDir(), "vmafx-worker")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/vmafx/vmafx/worker/cmd/vmafx-worker")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	own, err := ELFDeps(bin)
	if err != nil {
		t.Fatal(err)
	}
	delete(own, bin)
	clip, err := filepath.Abs(filepath.Join(testutil.RepoRoot(), "vmaf/testdata/clips/p02_ref.yuv"))
	if err != nil {
		t.Fatal(err)
	}
	runtime := map[string]string{"/clip.yuv": clip}
	for _, m := range []map[string]string{vk, own} {
		for k, v := range m {
			runtime[k] = v
		}
	}
	img, err := Build(Spec{Ref: "vmafx.local/vmafx-worker:dev", Binary: bin, Runtime: runtime})
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		untar(t, rc, root)
		rc.Close()
	}
	cmd := exec.Command("chroot", root, "/vmafx-worker", "score", "--backend", "vulkan", "--termination-log", "/result",
		"--reference", "/clip.yuv", "--distorted", "/clip.yuv", "--width", "176", "--height", "144", "--frames", ":3")
	cmd.Env = []string{"PATH=/:/usr/bin", "HOME=/"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the worker in the image's root: %v\n%s", err, out)
	}
	var res struct {
		Backend string `json:"backend"`
		Device  *struct {
			Name string `json:"name"`
		} `json:"device"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Backend != "vulkan" || res.Device == nil || res.Device.Name == "" {
		t.Errorf("result %s (%v): want backend vulkan with its device", out, err)
	}
}
