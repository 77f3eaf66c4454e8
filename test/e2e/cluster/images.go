package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/vmafx/vmafx/test/e2e/internal/images"
	"github.com/vmafx/vmafx/test/e2e/internal/proc"
)

// imageSpec is one image to build: a main package of the repository.
type imageSpec struct {
	name string // binary and image name
	pkg  string // package path relative to the repository root
	// files are extra files from the host, image path to host path.
	files map[string]string
	// runtime finds the programs and libraries the binary (at bin on the host) runs or
	// loads, with their libraries (image path to host path), packed into their own layer;
	// nil when there are none.
	runtime func(bin string) (map[string]string, error)
}

// hostCABundle is Debian's CA bundle (package ca-certificates); the worker fetches
// https:// inputs.
const hostCABundle = "/etc/ssl/certs/ca-certificates.crt"

// projectImages are the project's four binaries.
func projectImages() []imageSpec {
	worker := imageSpec{name: "vmafx-worker", pkg: "worker/cmd/vmafx-worker", runtime: workerRuntime}
	if _, err := os.Stat(hostCABundle); err == nil {
		worker.files = map[string]string{hostCABundle: hostCABundle}
	}
	return []imageSpec{
		{name: "vmafx-operator", pkg: "operator/cmd/vmafx-operator"},
		{name: "vmafx-scheduler", pkg: "scheduler-plugin/cmd/vmafx-scheduler"},
		{name: "vmafx-device-plugin", pkg: "device-plugin/cmd/vmafx-device-plugin"},
		worker,
	}
}

func pauseImageSpec() imageSpec {
	return imageSpec{name: "pause", pkg: "test/e2e/images/pause"}
}

// workerRuntime is what the worker runs and loads: ffmpeg (ffmpegRuntime), the Vulkan
// loader and Mesa's drivers (images.VulkanRuntime), and the C library through which the
// binary, built without cgo, dlopens the loader (purego makes it dynamically linked).
func workerRuntime(bin string) (map[string]string, error) {
	files, err := ffmpegRuntime()
	if err != nil {
		return nil, err
	}
	vk, err := images.VulkanRuntime()
	if err != nil {
		return nil, err
	}
	own, err := images.ELFDeps(bin)
	if err != nil {
		return nil, err
	}
	delete(own, bin) // the binary has its own layer
	for _, m := range []map[string]string{vk, own} {
		for k, v := range m {
			files[k] = v
		}
	}
	return files, nil
}

// ffmpegRuntime is the worker's decoder: Debian's ffmpeg and ffprobe (package ffmpeg,
// which .ci/run installs) with the shared libraries they load and the ELF interpreter,
// resolved with ldd from the installed package. The worker binary stays static; it runs
// these as child processes.
func ffmpegRuntime() (map[string]string, error) {
	var progs []string
	for _, p := range []string{"ffmpeg", "ffprobe"} {
		path, err := exec.LookPath(p)
		if err != nil {
			return nil, fmt.Errorf("%s is not installed (apt-get install ffmpeg): the worker image would not decode encoded videos", p)
		}
		progs = append(progs, path)
	}
	deps, err := images.ELFDeps(progs...)
	if err != nil {
		return nil, err
	}
	for _, p := range progs {
		deps["/usr/bin/"+filepath.Base(p)] = deps[p]
	}
	return deps, nil
}

// ImageRef is the local image name of a binary.
func ImageRef(name string) string { return ImageRegistry + "/" + name + ":" + ImageTag }

type builtImage struct {
	ref     string
	archive string
}

// exists reports whether the main package has Go files yet.
func (s imageSpec) exists(repo string) bool {
	m, _ := filepath.Glob(filepath.Join(repo, s.pkg, "*.go"))
	for _, f := range m {
		if !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}

// buildImage builds the binary without cgo and packs it. Most binaries are then static;
// the worker loads the Vulkan loader through the C library, which its runtime layer holds.
func (r *run) buildImage(ctx context.Context, s imageSpec) (builtImage, error) {
	binDir := filepath.Join(r.cfg.ImagesDir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return builtImage{}, err
	}
	bin := filepath.Join(binDir, s.name)
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./"+s.pkg)
	cmd.Dir = r.cfg.RepoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	if err := cmd.Run(); err != nil {
		return builtImage{}, fmt.Errorf("go build ./%s: %w\n%s", s.pkg, err, errb.String())
	}
	ref := ImageRef(s.name)
	spec := images.Spec{Ref: ref, Binary: bin, Files: s.files}
	if s.runtime != nil {
		var err error
		if spec.Runtime, err = s.runtime(bin); err != nil {
			return builtImage{}, fmt.Errorf("image %s: %w", s.name, err)
		}
	}
	img, err := images.Build(spec)
	if err != nil {
		return builtImage{}, err
	}
	archive := filepath.Join(r.cfg.ImagesDir, s.name+".tar")
	if err := images.WriteArchive(img, ref, archive); err != nil {
		return builtImage{}, err
	}
	digest, _ := img.Digest()
	r.logf("built %s (%s) in %.1fs", ref, digest.String()[:19], time.Since(t0).Seconds())
	return builtImage{ref: ref, archive: archive}, nil
}

// ctr runs the ctr client against the cluster's containerd, in the Kubernetes namespace.
func (r *run) ctr(ctx context.Context, args ...string) (string, error) {
	full := append([]string{"--address", r.l.ContainerdSocket(), "--namespace", "k8s.io"}, args...)
	cmd := exec.CommandContext(ctx, r.cfg.Binary(binCtr), full...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

func (r *run) importImages(ctx context.Context, imgs []builtImage) error {
	for _, img := range imgs {
		if _, err := r.ctr(ctx, "images", "import", "--platform", "linux/"+runtime.GOARCH, img.archive); err != nil {
			return err
		}
	}
	return nil
}

// imageRefs lists the image names containerd holds for Kubernetes.
func (r *run) imageRefs(ctx context.Context) ([]string, error) {
	out, err := r.ctr(ctx, "images", "list", "--quiet")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// Images builds the project's binaries that exist, packs them and the pause program into
// images, and imports them into the cluster's containerd when the cluster is up.
func Images(ctx context.Context, cfg Config, out io.Writer) error {
	r, err := newRun(cfg, out)
	if err != nil {
		return err
	}
	var built []builtImage
	for _, s := range append(projectImages(), pauseImageSpec()) {
		if !s.exists(cfg.RepoRoot) {
			r.logf("skipping %s: ./%s has no Go files yet", s.name, s.pkg)
			continue
		}
		img, err := r.buildImage(ctx, s)
		if err != nil {
			return err
		}
		built = append(built, img)
	}
	rec, found, err := proc.Load(r.l.Procs(), binContainerd)
	if err != nil {
		return err
	}
	if !found || !rec.Alive() {
		r.logf("the cluster is not up: archives are in %s; `make cluster-up images` imports them", cfg.ImagesDir)
		return nil
	}
	if err := r.importImages(ctx, built); err != nil {
		return err
	}
	for _, b := range built {
		r.logf("imported %s", b.ref)
	}
	return nil
}

// ImageFromBinary packs a prebuilt static binary, such as a third-party test server built
// in hack/tools, into the image vmafx.local/<name>:dev and imports it into the cluster.
func ImageFromBinary(ctx context.Context, cfg Config, binary, name string, out io.Writer) error {
	r, err := newRun(cfg, out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.ImagesDir, 0o755); err != nil {
		return err
	}
	ref := ImageRef(name)
	img, err := images.Build(images.Spec{Ref: ref, Binary: binary})
	if err != nil {
		return err
	}
	archive := filepath.Join(cfg.ImagesDir, name+".tar")
	if err := images.WriteArchive(img, ref, archive); err != nil {
		return err
	}
	if err := r.importImages(ctx, []builtImage{{ref: ref, archive: archive}}); err != nil {
		return err
	}
	r.logf("imported %s from %s", ref, binary)
	return nil
}
