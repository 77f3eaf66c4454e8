// Package release builds the project's images for several architectures, each as one
// multi-architecture OCI index with the org.opencontainers.image annotations and an SPDX
// SBOM per architecture, and pushes them, the SBOMs (as OCI referrers of their images)
// and the Helm chart (version, appVersion and imageRegistry set) to an OCI registry:
// what `make push` and `make release` run (cmd/vmafx-release). The same commit, Go
// toolchain and Debian packages give the same digests.
package release

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/vmafx/vmafx/hack/release/debroot"
	"github.com/vmafx/vmafx/hack/release/images"
	"github.com/vmafx/vmafx/hack/release/project"
	"github.com/vmafx/vmafx/hack/release/publish"
	"github.com/vmafx/vmafx/hack/release/sbom"
)

// Source is the project's source repository, the images' org.opencontainers.image.source.
const Source = "https://github.com/vmafx/vmafx"

// Options say what to build and where to push it.
type Options struct {
	// Repo is the repository root; Chart the chart folder (default manifests/helm/vmafx).
	Repo, Chart string
	// Registry is the host and path the images are pushed under (<Registry>/vmafx-worker)
	// and the chart (<Registry>/charts/vmafx); empty builds without pushing.
	Registry string
	// PlainHTTP talks to the registry over HTTP (a local or in-cluster registry).
	PlainHTTP bool
	// Stamp is the version, commit and date stamped into binaries and images.
	Stamp project.Stamp
	// Arches are the Linux architectures (amd64, arm64).
	Arches []string
	// Images are the images to build; default project.Images().
	Images []project.Image
	// Cache holds the Debian packages by architecture; WorkDir the built binaries.
	Cache, WorkDir string
	// License is the SPDX licence expression of the annotations and SBOMs.
	License string
	// HostRuntime takes the worker's runtime from this machine's installed packages
	// (project.HostWorkerRuntime) rather than from Debian's archive, for a build that must
	// not reach the network (the e2e); only for this machine's architecture, and the
	// SBOM then lists no Debian packages.
	HostRuntime bool
	// Log receives progress lines.
	Log io.Writer
}

// Built is one image of the release.
type Built struct {
	Name  string
	Index v1.ImageIndex
	// Arches are the per-architecture images, their binaries and SBOMs.
	Arches []Arch
}

// Arch is one architecture's image.
type Arch struct {
	Platform v1.Platform
	Image    v1.Image
	Binary   string
	SBOM     *sbom.Document
}

// semver is a release version: v1.2.3 or 1.2.3 with an optional pre-release; no build
// metadata, which OCI tags cannot carry.
var semver = regexp.MustCompile(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

// ValidVersion says why v cannot be a release version, or nil.
func ValidVersion(v string) error {
	if !semver.MatchString(v) {
		return fmt.Errorf("version %q is not a semantic version such as v1.2.3 or v1.2.3-rc.1", v)
	}
	return nil
}

// ChartVersion is the chart version for a build stamped version v: v without its
// leading "v" for a release, 0.0.0-dev.<v> for a development build (`git describe`).
func ChartVersion(v string) string {
	if semver.MatchString(v) {
		return strings.TrimPrefix(v, "v")
	}
	return "0.0.0-dev." + regexp.MustCompile(`[^0-9A-Za-z-]+`).ReplaceAllString(v, "-")
}

// annotations are the OCI annotations of every index and image of the release.
func (o Options) annotations(title string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    title,
		"org.opencontainers.image.version":  o.Stamp.Version,
		"org.opencontainers.image.revision": o.Stamp.Commit,
		"org.opencontainers.image.source":   Source,
		"org.opencontainers.image.licenses": o.License,
		"org.opencontainers.image.created":  o.Stamp.Date.UTC().Format(time.RFC3339),
	}
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// Build builds every image for every architecture.
func Build(ctx context.Context, o Options) ([]Built, error) {
	if o.Images == nil {
		o.Images = project.Images()
	}
	var out []Built
	roots := map[string]*debroot.Root{}
	for _, img := range o.Images {
		b := Built{Name: img.Name}
		var plats []publish.Platform
		for _, arch := range o.Arches {
			t0 := time.Now()
			a, err := o.buildArch(ctx, img, arch, roots)
			if err != nil {
				return nil, err
			}
			b.Arches = append(b.Arches, a)
			plats = append(plats, publish.Platform{Platform: a.Platform, Image: a.Image})
			d, _ := a.Image.Digest()
			o.logf("built %s for linux/%s (%s) in %.1fs", img.Name, arch, d, time.Since(t0).Seconds())
		}
		b.Index = publish.Index(plats, o.annotations(img.Name))
		out = append(out, b)
	}
	return out, nil
}

func (o Options) buildArch(ctx context.Context, img project.Image, arch string, roots map[string]*debroot.Root) (Arch, error) {
	bin := filepath.Join(o.WorkDir, arch, img.Name)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return Arch{}, err
	}
	if err := project.BuildBinary(ctx, o.Repo, img, arch, bin, o.Stamp); err != nil {
		return Arch{}, err
	}
	plat := v1.Platform{OS: "linux", Architecture: arch}
	spec := images.Spec{
		Ref: "vmafx.local/" + img.Name + ":release", Binary: bin, Platform: plat,
		Files: img.LicenseFiles(o.Repo), Annotations: o.annotations(img.Name), Created: o.Stamp.Date,
	}
	var debs []debroot.Package
	switch {
	case (img.Worker || img.CACerts) && o.HostRuntime:
		if arch != runtime.GOARCH {
			return Arch{}, fmt.Errorf("the worker's runtime from this machine's packages is for %s only, not %s", runtime.GOARCH, arch)
		}
		files := map[string]string{}
		if img.Worker {
			var err error
			if files, err = project.HostWorkerRuntime(bin); err != nil {
				return Arch{}, err
			}
		}
		files[project.CABundle] = project.CABundle
		spec.Runtime = files
	case img.Worker || img.CACerts:
		root := roots[arch]
		if root == nil {
			var err error
			o.logf("fetching the worker's Debian packages for %s", arch)
			if root, err = debroot.Fetch(ctx, filepath.Join(o.Cache, "debian"), arch, project.WorkerPackages...); err != nil {
				return Arch{}, err
			}
			roots[arch] = root
		}
		var files map[string]string
		var err error
		if img.Worker {
			files, err = project.WorkerRuntime(root, bin)
		} else {
			files, err = project.CARuntime(root)
		}
		if err != nil {
			return Arch{}, fmt.Errorf("the runtime of %s for %s: %w", img.Name, arch, err)
		}
		spec.Runtime, debs = files, root.Packages(files)
	}
	image, err := images.Build(spec)
	if err != nil {
		return Arch{}, err
	}
	doc, err := sbom.New(sbom.Image{
		Name: img.Name, Version: o.Stamp.Version, OS: plat.OS, Arch: arch, Binary: bin,
		Debian: debs, Created: o.Stamp.Date, License: o.License,
	})
	if err != nil {
		return Arch{}, err
	}
	return Arch{Platform: plat, Image: image, Binary: bin, SBOM: doc}, nil
}

// nameOpts are the reference options: plain HTTP when asked.
func (o Options) nameOpts() []name.Option {
	if o.PlainHTTP {
		return []name.Option{name.Insecure}
	}
	return nil
}

// Push pushes the built images as <Registry>/<name>:<version>, each architecture's SBOM
// as a referrer of its image, and the chart as <Registry>/charts/vmafx:<chart version>.
// It returns the chart's reference.
func Push(ctx context.Context, o Options, built []Built) (string, error) {
	opts := publish.Options(ctx)
	for _, b := range built {
		tag, err := name.NewTag(o.Registry+"/"+b.Name+":"+o.Stamp.Version, o.nameOpts()...)
		if err != nil {
			return "", err
		}
		if err := remote.WriteIndex(tag, b.Index, opts...); err != nil {
			return "", fmt.Errorf("pushing %s: %w", tag, err)
		}
		d, _ := b.Index.Digest()
		o.logf("pushed %s@%s", tag, d)
		for _, a := range b.Arches {
			if _, err := PushSBOM(tag.Context(), a, o.Stamp.Date, opts...); err != nil {
				return "", err
			}
		}
	}
	chartDir := o.Chart
	if chartDir == "" {
		chartDir = filepath.Join(o.Repo, "manifests", "helm", "vmafx")
	}
	chartVersion := ChartVersion(o.Stamp.Version)
	art, err := publish.Chart(chartDir, publish.ChartValues{
		Version: chartVersion, AppVersion: o.Stamp.Version, ImageRegistry: o.Registry, Created: o.Stamp.Date,
	})
	if err != nil {
		return "", err
	}
	repo, err := name.NewRepository(o.Registry+"/charts/vmafx", o.nameOpts()...)
	if err != nil {
		return "", err
	}
	desc, err := publish.PushArtifact(repo, chartVersion, art, opts...)
	if err != nil {
		return "", err
	}
	ref := "oci://" + repo.String()
	o.logf("pushed the chart %s --version %s (%s)", ref, chartVersion, desc.Digest)
	return ref, nil
}

// PushSBOM pushes a's SBOM to repo as an artifact whose subject is a's image, so that
// the registry's referrers of the image list it.
func PushSBOM(repo name.Repository, a Arch, created time.Time, opts ...remote.Option) (v1.Descriptor, error) {
	data, err := a.SBOM.JSON()
	if err != nil {
		return v1.Descriptor{}, err
	}
	raw, err := a.Image.RawManifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	h, n, err := v1.SHA256(strings.NewReader(string(raw)))
	if err != nil {
		return v1.Descriptor{}, err
	}
	subject := &v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: n}
	return publish.PushArtifact(repo, "", publish.Artifact{
		ArtifactType: sbom.MediaType,
		Layers:       []publish.Blob{{MediaType: sbom.MediaType, Data: data}},
		Subject:      subject,
		Annotations:  map[string]string{"org.opencontainers.image.created": created.UTC().Format(time.RFC3339)},
	}, opts...)
}
