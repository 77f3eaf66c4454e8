package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRoot is the user and group every image runs as, distroless's "nonroot".
const NonRoot = "65532:65532"

// Spec describes one image.
type Spec struct {
	// Ref is the image's name, e.g. vmafx.local/vmafx-operator:dev.
	Ref string
	// Binary is the host path of the static binary, installed as /<base name> and used as
	// the entrypoint.
	Binary string
	// Files maps image paths to host paths of extra read-only files (e.g.
	// /etc/ssl/certs/ca-certificates.crt).
	Files map[string]string
	// Args are the default arguments (the image config's Cmd).
	Args []string
	// Runtime maps image paths to host paths of files packed into a layer below the
	// binary's: programs the binary runs and the shared libraries they load (see
	// ELFDeps), e.g. the worker's ffmpeg. They keep the host file's permission bits, and
	// /usr/bin joins the image's PATH.
	Runtime map[string]string
	// Platform is the image's OS and architecture; empty means linux on the host's.
	Platform v1.Platform
	// Annotations are the manifest's annotations (org.opencontainers.image.*).
	Annotations map[string]string
	// Created is the config's creation time; zero leaves it unset, as for a local build.
	// A release sets the commit's time, so that the same commit gives the same digest.
	Created time.Time
}

// platform is spec's platform with the defaults filled in.
func (spec Spec) platform() v1.Platform {
	p := spec.Platform
	if p.OS == "" {
		p.OS = "linux"
	}
	if p.Architecture == "" {
		p.Architecture = runtime.GOARCH
	}
	return p
}

// Build returns the image of spec.
func Build(spec Spec) (v1.Image, error) {
	if _, err := name.NewTag(spec.Ref, name.StrictValidation); err != nil {
		return nil, fmt.Errorf("image name %q: %w", spec.Ref, err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	envPath := "PATH=/"
	if len(spec.Runtime) > 0 {
		// Below the binary's layer: it changes only when the host's packages do.
		files, modes, err := runtimeFiles(spec.Runtime)
		if err != nil {
			return nil, err
		}
		if img, err = appendLayer(img, files, modes, "runtime files ("+strconv.Itoa(len(files))+")"); err != nil {
			return nil, err
		}
		envPath = "PATH=/:/usr/bin"
	}
	files := map[string]string{"/" + filepath.Base(spec.Binary): spec.Binary}
	for k, v := range spec.Files {
		files[path.Clean("/"+k)] = v
	}
	modes := map[string]int64{"/" + filepath.Base(spec.Binary): 0o755}
	img, err := appendLayer(img, files, modes, filepath.Base(spec.Binary))
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	plat := spec.platform()
	cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, plat.Variant
	if !spec.Created.IsZero() {
		cf.Created = v1.Time{Time: spec.Created.UTC()}
	}
	cf.Config.Entrypoint = []string{"/" + filepath.Base(spec.Binary)}
	cf.Config.Cmd = spec.Args
	cf.Config.User = NonRoot
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{envPath}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	if len(spec.Annotations) > 0 {
		img = mutate.Annotations(img, spec.Annotations).(v1.Image)
	}
	return img, nil
}

// WriteArchive writes img as an OCI image layout archived into one tar file at out, with
// the annotations that make `ctr images import` name it ref.
func WriteArchive(img v1.Image, ref, out string) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(filepath.Dir(out), ".layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	err = p.AppendImage(img,
		layout.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}),
		layout.WithAnnotations(map[string]string{
			// containerd names the imported image after this annotation.
			"io.containerd.image.name":          tag.Name(),
			"org.opencontainers.image.ref.name": tag.TagStr(),
		}))
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := tarDir(dir, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// appendLayer adds a layer holding files (image path to host path) to img.
func appendLayer(img v1.Image, files map[string]string, modes map[string]int64, what string) (v1.Image, error) {
	data, err := layerTar(files, modes)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		History:   v1.History{CreatedBy: "vmafx hack/release/images: " + what},
		MediaType: types.OCILayer,
	})
}

// runtimeFiles cleans the image paths of m and reads each host file's permission bits.
func runtimeFiles(m map[string]string) (map[string]string, map[string]int64, error) {
	files, modes := map[string]string{}, map[string]int64{}
	for k, v := range m {
		fi, err := os.Stat(v)
		if err != nil {
			return nil, nil, err
		}
		k = path.Clean("/" + k)
		files[k], modes[k] = v, int64(fi.Mode().Perm())
	}
	return files, modes, nil
}

// layerTar is a layer's content: /tmp and the files (image path to host path), each with
// the parent folders it needs, owned by root, mode 0644 unless modes says otherwise, with
// zero timestamps, so that the same files give the same digest.
func layerTar(files map[string]string, modes map[string]int64) ([]byte, error) {
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	addDir := func(d string, mode int64) error {
		if d == "/" || dirs[d] {
			return nil
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d[1:] + "/", Mode: mode, ModTime: time.Unix(0, 0), Format: tar.FormatPAX})
	}
	// World-writable with the sticky bit, like any /tmp: Go's os.TempDir points there.
	if err := addDir("/tmp", 0o1777); err != nil {
		return nil, err
	}
	for _, n := range names {
		var parents []string
		for d := path.Dir(n); d != "/"; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if err := addDir(d, 0o755); err != nil {
				return nil, err
			}
		}
		data, err := os.ReadFile(files[n])
		if err != nil {
			return nil, err
		}
		mode, ok := modes[n]
		if !ok {
			mode = 0o644
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: n[1:], Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarDir archives the regular files and folders below dir into out, names relative to dir.
func tarDir(dir, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			hdr.Name += "/"
		}
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = time.Unix(0, 0), time.Time{}, time.Time{}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
