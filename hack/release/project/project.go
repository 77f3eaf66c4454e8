// Package project knows the project's images: which main packages become images, how
// their binaries are built (static, stamped with the version, for any architecture) and
// what the worker's image holds besides its binary (ffmpeg, the Vulkan loader and Mesa's
// drivers, the C library, the CA bundle). The local cluster's `make images` and the
// release (`make push`, `make release`) both build from this list.
package project

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/vmafx/vmafx/internal/version"
)

// Image is one image to build: a main package of the repository.
type Image struct {
	// Name is the binary's and the image's name.
	Name string
	// Pkg is the main package, relative to the repository root.
	Pkg string
	// Worker says the image needs the worker's runtime (WorkerPackages).
	Worker bool
	// CACerts says the image needs the CA bundle (and, as the worker, the libvmaf models'
	// licence): the trainer reaches registries and object storage over HTTPS, and
	// embeds the models it starts from. The worker's runtime holds the bundle already.
	CACerts bool
}

// Images are the project's binaries that run in a cluster: the platform's four, the
// trainer the operator runs for each training run, and the front doors' two, as the chart
// deploys them.
func Images() []Image {
	return []Image{
		{Name: "vmafx-operator", Pkg: "operator/cmd/vmafx-operator"},
		{Name: "vmafx-scheduler", Pkg: "scheduler-plugin/cmd/vmafx-scheduler"},
		{Name: "vmafx-device-plugin", Pkg: "device-plugin/cmd/vmafx-device-plugin"},
		{Name: "vmafx-worker", Pkg: "worker/cmd/vmafx-worker", Worker: true},
		{Name: "vmafx-trainer", Pkg: "trainer/cmd/vmafx-trainer", CACerts: true},
		{Name: "vmafx-api", Pkg: "gateway/cmd/vmafx-api"},
		{Name: "vmafx-mcp", Pkg: "gateway/cmd/vmafx-mcp"},
	}
}

// Pause is the local cluster's sandbox image.
func Pause() Image { return Image{Name: "pause", Pkg: "test/e2e/images/pause"} }

// Exists reports whether the main package has Go files yet.
func (i Image) Exists(repo string) bool {
	m, _ := filepath.Glob(filepath.Join(repo, i.Pkg, "*.go"))
	for _, f := range m {
		if !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}

// Stamp is what a build stamps into every binary (package internal/version) and image
// (the org.opencontainers.image annotations).
type Stamp struct {
	// Version is the release version, or `git describe` for a development build.
	Version string
	// Commit is the full commit hash, with "-dirty" when the tree has changes.
	Commit string
	// Date is the commit's time: builds of the same commit stamp the same date.
	Date time.Time
}

// GitStamp reads the stamp of the work tree at repo; an empty version is `git describe
// --tags --always --dirty`.
func GitStamp(ctx context.Context, repo, ver string) (Stamp, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = repo
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	commit, err := git("rev-parse", "HEAD")
	if err != nil {
		return Stamp{}, err
	}
	unix, err := git("show", "-s", "--format=%ct", "HEAD")
	if err != nil {
		return Stamp{}, err
	}
	var secs int64
	if _, err := fmt.Sscan(unix, &secs); err != nil {
		return Stamp{}, fmt.Errorf("commit time %q: %w", unix, err)
	}
	if status, err := git("status", "--porcelain", "--untracked-files=no"); err != nil {
		return Stamp{}, err
	} else if status != "" {
		commit += "-dirty"
	}
	if ver == "" {
		if ver, err = git("describe", "--tags", "--always", "--dirty"); err != nil {
			return Stamp{}, err
		}
	}
	return Stamp{Version: ver, Commit: commit, Date: time.Unix(secs, 0).UTC()}, nil
}

// LDFlags are the linker flags of a stamped, stripped build.
func (s Stamp) LDFlags() string {
	flags := append([]string{"-s", "-w"}, version.LDFlags(s.Version, s.Commit, s.Date.Format(time.RFC3339))...)
	return strings.Join(flags, " ")
}

// BuildBinary builds img's binary for linux/arch into out, without cgo (every binary is
// then static, but for the worker, which dlopens the Vulkan loader through the C library)
// and with -trimpath, so that the same commit gives the same bytes on any machine with
// the same Go toolchain. GO in the environment names the go command.
func BuildBinary(ctx context.Context, repo string, img Image, arch, out string, s Stamp) error {
	return goBuild(ctx, repo, arch, out, s, "./"+img.Pkg)
}

// BuildBinaries builds the binaries of imgs for linux/arch into dir, each named as its
// image, exactly as BuildBinary builds one, but in a single go build: the packages they
// share are compiled once and their links run side by side, which on a machine with a
// cold build cache saves minutes over one go build each.
func BuildBinaries(ctx context.Context, repo string, imgs []Image, arch, dir string, s Stamp) error {
	pkgs := make([]string, 0, len(imgs))
	for _, img := range imgs {
		// go build -o dir/ names each binary after its package's folder.
		if path.Base(img.Pkg) != img.Name {
			return fmt.Errorf("image %s: its package ./%s must be in a folder of the same name", img.Name, img.Pkg)
		}
		pkgs = append(pkgs, "./"+img.Pkg)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return goBuild(ctx, repo, arch, filepath.Clean(dir)+string(filepath.Separator), s, pkgs...)
}

// goBuild runs go build for linux/arch without cgo, stamped and trimmed, writing out.
func goBuild(ctx context.Context, repo, arch, out string, s Stamp, pkgs ...string) error {
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	args := append([]string{"build", "-trimpath", "-ldflags=" + s.LDFlags(), "-o", out}, pkgs...)
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (GOARCH=%s): %w\n%s", strings.Join(pkgs, " "), arch, err, errb.String())
	}
	return nil
}
