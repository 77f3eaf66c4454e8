package debroot

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/hack/release/images"
)

// TestELFClosureMatchesLDD resolves ffmpeg's libraries on this machine's own root (the
// Go resolver, which works for any architecture's root) and compares them with what ldd,
// which runs the real loader, resolves: the same image paths. Needs ffmpeg (Debian's
// package); VMAFX_REQUIRE_FFMPEG=1 makes its absence fail.
func TestELFClosureMatchesLDD(t *testing.T) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("VMAFX_REQUIRE_FFMPEG") == "1" {
			t.Fatal(err)
		}
		t.Skip("needs ffmpeg")
	}
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" {
		t.Skipf("no Debian multiarch folder known for %s", runtime.GOARCH)
	}
	root := &Root{Dir: "/", Arch: arch, owners: map[string]Package{}}
	got, err := root.ELFClosure(ffmpeg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := images.ELFDeps(ffmpeg)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]string) []string {
		var k []string
		for p := range m {
			k = append(k, filepath.Base(p))
		}
		slices.Sort(k)
		return k
	}
	if diff := cmp.Diff(keys(want), keys(got)); diff != "" {
		t.Errorf("libraries by name (-ldd +ELFClosure):\n%s", diff)
	}
	for img, host := range got {
		if r, _ := filepath.EvalSymlinks(host); want[img] != "" && r != want[img] {
			t.Errorf("%s: file %s, ldd found %s", img, r, want[img])
		}
	}
}

// TestUnpackOwners builds a small .deb with dpkg-deb, unpacks it into a root and checks
// the files, the symlink resolved inside the root, the owner recorded for the SBOM and the
// package's copyright file that the image must carry.
func TestUnpackOwners(t *testing.T) {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("needs dpkg-deb")
	}
	src := t.TempDir()
	for p, body := range map[string]string{"DEBIAN/control": "Package: demo\nVersion: 1:2.3-4\nArchitecture: arm64\nMaintainer: x <x@example.com>\nDescription: demo\n", "usr/lib/aarch64-linux-gnu/libdemo.so.1.0": "lib", "usr/share/doc/demo/copyright": "licence"} {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("libdemo.so.1.0", filepath.Join(src, "usr/lib/aarch64-linux-gnu/libdemo.so.1")); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(t.TempDir(), "demo.deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", src, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v\n%s", err, out)
	}
	root := &Root{Dir: t.TempDir(), Arch: "arm64", owners: map[string]Package{}}
	pkg := Package{Name: "demo", Version: "1:2.3-4", Architecture: "arm64"}
	if err := root.unpack(t.Context(), deb, pkg); err != nil {
		t.Fatal(err)
	}
	lib, err := root.FindLibrary("libdemo.so.1")
	if err != nil {
		t.Fatal(err)
	}
	host, err := root.Resolve(lib)
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := os.ReadFile(host); string(body) != "lib" {
		t.Errorf("%s resolves to %s holding %q", lib, host, body)
	}
	if diff := cmp.Diff([]Package{pkg}, root.Packages(map[string]string{lib: host})); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	copyrights, err := root.Copyrights(map[string]string{lib: host})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"/usr/share/doc/demo/copyright": filepath.Join(root.Dir, "usr/share/doc/demo/copyright")}
	if diff := cmp.Diff(want, copyrights); diff != "" {
		t.Errorf("copyright files (-want +got):\n%s", diff)
	}
	if got := debFile(pkg); got != "demo_1%3a2.3-4_arm64.deb" {
		t.Errorf("debFile = %q", got)
	}
}

func TestParseSimulation(t *testing.T) {
	out := "Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [arm64]) []\nConf libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [arm64])\nInst ffmpeg (7:5.1.9-0+deb12u1 Debian:12.15/oldstable [arm64])\n"
	got, err := parseSimulation([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{{"ffmpeg", "7:5.1.9-0+deb12u1", "arm64"}, {"libc6", "2.36-9+deb12u14", "arm64"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
