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

	"github.com/vmafx/vmafx/hack/release/images"
	"github.com/vmafx/vmafx/hack/release/project"
	"github.com/vmafx/vmafx/test/e2e/internal/proc"
)

// projectImages are the project's images (hack/release/project) and the pause image.
func projectImages() []project.Image { return append(project.Images(), project.Pause()) }

// ImageRef is the local image name of a binary.
func ImageRef(name string) string { return ImageRegistry + "/" + name + ":" + ImageTag }

type builtImage struct {
	ref     string
	archive string
}

// buildImage packs the binary binDir/<name>, built for this machine's architecture; the
// worker's image takes ffmpeg and the Vulkan runtime from this machine's packages, the
// node being this machine.
func (r *run) buildImage(s project.Image, binDir string) (builtImage, error) {
	bin := filepath.Join(binDir, s.Name)
	t0 := time.Now()
	ref := ImageRef(s.Name)
	spec := images.Spec{Ref: ref, Binary: bin, Files: s.LicenseFiles(r.cfg.RepoRoot)}
	if s.Worker {
		var err error
		if spec.Runtime, err = project.HostWorkerRuntime(bin); err != nil {
			return builtImage{}, fmt.Errorf("image %s: %w", s.Name, err)
		}
	}
	if s.Worker || s.CACerts {
		if _, err := os.Stat(project.CABundle); err == nil {
			spec.Files[project.CABundle] = project.CABundle
		}
	}
	img, err := images.Build(spec)
	if err != nil {
		return builtImage{}, err
	}
	archive := filepath.Join(r.cfg.ImagesDir, s.Name+".tar")
	if err := images.WriteArchive(img, ref, archive); err != nil {
		return builtImage{}, err
	}
	digest, _ := img.Digest()
	r.logf("packed %s (%s) in %.1fs", ref, digest.String()[:19], time.Since(t0).Seconds())
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
	stamp, err := project.GitStamp(ctx, cfg.RepoRoot, "")
	if err != nil {
		return err
	}
	var todo []project.Image
	for _, s := range projectImages() {
		if !s.Exists(cfg.RepoRoot) {
			r.logf("skipping %s: ./%s has no Go files yet", s.Name, s.Pkg)
			continue
		}
		todo = append(todo, s)
	}
	// Every binary in one go build (stamped with the work tree's version), then the images.
	binDir := filepath.Join(r.cfg.ImagesDir, "bin")
	t0 := time.Now()
	if err := project.BuildBinaries(ctx, cfg.RepoRoot, todo, runtime.GOARCH, binDir, stamp); err != nil {
		return err
	}
	r.logf("built %d binaries in %.1fs", len(todo), time.Since(t0).Seconds())
	var built []builtImage
	for _, s := range todo {
		img, err := r.buildImage(s, binDir)
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
