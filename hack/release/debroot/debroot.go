// Package debroot gives an image build Debian's packages for any architecture without
// installing them: apt, with its own state and cache folders (never the host's), resolves
// and downloads the packages and their dependencies for one architecture, and each .deb's
// file tree is unpacked into one folder, the root, without running maintainer scripts.
// ELFClosure then picks from the root the programs and libraries a program needs, and
// Owners names the package each file came from, for the image's SBOM.
package debroot

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Package is one unpacked Debian package, from its control data.
type Package struct {
	Name, Version, Architecture string
}

// Root is a folder holding the unpacked file trees of a set of packages.
type Root struct {
	// Dir is the folder; a file's image path p lies at Dir+p.
	Dir string
	// Arch is the Debian architecture (amd64, arm64).
	Arch string
	// owners maps image paths to the package that shipped them.
	owners map[string]Package
}

// Sources are the Debian archives packages come from: bookworm with its updates and
// security fixes, as on the build machine.
var Sources = []string{
	"http://deb.debian.org/debian bookworm main",
	"http://deb.debian.org/debian bookworm-updates main",
	"http://deb.debian.org/debian-security bookworm-security main",
}

// keyring verifies the archives' signatures (package debian-archive-keyring).
const keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// Fetch downloads pkgs and their dependencies (no recommends) for arch into cache/<arch>,
// whose apt state it keeps between runs, and unpacks them into a fresh root below cache.
func Fetch(ctx context.Context, cache, arch string, pkgs ...string) (*Root, error) {
	dir := filepath.Join(cache, arch)
	for _, d := range []string{"lists/partial", "archives/partial"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	var sources strings.Builder
	for _, s := range Sources {
		fmt.Fprintf(&sources, "deb [arch=%s signed-by=%s] %s\n", arch, keyring, s)
	}
	if err := os.WriteFile(filepath.Join(dir, "sources.list"), []byte(sources.String()), 0o644); err != nil {
		return nil, err
	}
	// An empty dpkg status: apt resolves every dependency, as for an empty system.
	if err := os.WriteFile(filepath.Join(dir, "status"), nil, 0o644); err != nil {
		return nil, err
	}
	opts := []string{
		"-o", "Dir::State::Lists=" + filepath.Join(dir, "lists"),
		"-o", "Dir::State::status=" + filepath.Join(dir, "status"),
		"-o", "Dir::Cache::archives=" + filepath.Join(dir, "archives"),
		"-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache=",
		"-o", "Dir::Etc::SourceList=" + filepath.Join(dir, "sources.list"),
		"-o", "Dir::Etc::SourceParts=/nonexistent",
		"-o", "APT::Architecture=" + arch, "-o", "APT::Architectures::=" + arch,
		"-o", "APT::Install-Recommends=false", "-qq",
	}
	apt := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "apt-get", append(opts, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("apt-get %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	if _, err := apt("update"); err != nil {
		return nil, err
	}
	sim, err := apt(append([]string{"--simulate", "install"}, pkgs...)...)
	if err != nil {
		return nil, err
	}
	want, err := parseSimulation(sim)
	if err != nil {
		return nil, err
	}
	if _, err := apt(append([]string{"--download-only", "--yes", "install"}, pkgs...)...); err != nil {
		return nil, err
	}
	root := &Root{Dir: filepath.Join(dir, "root"), Arch: arch, owners: map[string]Package{}}
	if err := os.RemoveAll(root.Dir); err != nil {
		return nil, err
	}
	for _, p := range want {
		deb := filepath.Join(dir, "archives", debFile(p))
		if err := root.unpack(ctx, deb, p); err != nil {
			return nil, err
		}
	}
	return root, nil
}

// instLine is apt's simulation line "Inst name (version origin [arch]) ...".
var instLine = regexp.MustCompile(`^Inst (\S+) \((\S+) .*\[(\S+)\]\)`)

// parseSimulation lists the packages an install simulation would unpack, sorted by name.
func parseSimulation(out []byte) ([]Package, error) {
	var pkgs []Package
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := instLine.FindStringSubmatch(sc.Text()); m != nil {
			pkgs = append(pkgs, Package{Name: m[1], Version: m[2], Architecture: m[3]})
		}
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("apt would install nothing: %q", out)
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Name < pkgs[j].Name })
	return pkgs, sc.Err()
}

// debFile is the name apt saves a package under: name_version_arch.deb, with the
// version's epoch colon escaped.
func debFile(p Package) string {
	return p.Name + "_" + strings.ReplaceAll(p.Version, ":", "%3a") + "_" + p.Architecture + ".deb"
}

// unpack writes the file tree of deb (dpkg-deb --fsys-tarfile) into the root and records
// p as the owner of each regular file and symlink.
func (r *Root) unpack(ctx context.Context, deb string, p Package) error {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	uerr := r.untar(out, p)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w: %s", filepath.Base(deb), err, strings.TrimSpace(stderr.String()))
	}
	if uerr != nil {
		return fmt.Errorf("unpacking %s: %w", filepath.Base(deb), uerr)
	}
	return nil
}

func (r *Root) untar(in io.Reader, p Package) error {
	tr := tar.NewReader(in)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)
		dst := filepath.Join(r.Dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(dst, 0o755)
		case tar.TypeReg:
			err = writeFile(dst, tr, os.FileMode(h.Mode).Perm())
		case tar.TypeSymlink:
			_ = os.Remove(dst)
			if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
				err = os.Symlink(h.Linkname, dst)
			}
		case tar.TypeLink:
			src := filepath.Join(r.Dir, path.Clean("/"+h.Linkname))
			_ = os.Remove(dst)
			err = os.Link(src, dst)
		default:
			continue
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeDir {
			r.owners[name] = p
		}
	}
}

func writeFile(dst string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	_ = os.Remove(dst)
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Owner returns the package that shipped the file at image path p (the path itself or,
// for a symlink, the file it resolves to).
func (r *Root) Owner(p string) (Package, bool) {
	pkg, ok := r.owners[p]
	return pkg, ok
}

// Packages returns the packages owning any of files (image paths), sorted by name.
func (r *Root) Packages(files map[string]string) []Package {
	seen := map[string]Package{}
	for img, host := range files {
		for _, p := range []string{img, r.imagePath(host)} {
			if pkg, ok := r.owners[p]; ok {
				seen[pkg.Name] = pkg
			}
		}
	}
	out := make([]Package, 0, len(seen))
	for _, p := range seen {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Copyrights returns the copyright file (image path to host path) of every package
// owning any of files: redistributing a package's files means carrying its licence, which
// Debian keeps in /usr/share/doc/PACKAGE/copyright.
func (r *Root) Copyrights(files map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range r.Packages(files) {
		doc := "/usr/share/doc/" + p.Name + "/copyright"
		host, err := r.Resolve(doc)
		if err != nil {
			return nil, fmt.Errorf("the licence of Debian package %s: %w", p.Name, err)
		}
		out[doc] = host
	}
	return out, nil
}

// imagePath turns a host path below Dir into its image path.
func (r *Root) imagePath(host string) string {
	rel, err := filepath.Rel(r.Dir, host)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	return "/" + filepath.ToSlash(rel)
}

// Resolve follows the symlinks of image path p inside the root (an absolute link target
// means the root's, not the host's) and returns the host path of the file it names.
func (r *Root) Resolve(p string) (string, error) {
	p = path.Clean("/" + p)
	for range 40 {
		host := filepath.Join(r.Dir, p)
		fi, err := os.Lstat(host)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return host, nil
		}
		target, err := os.Readlink(host)
		if err != nil {
			return "", err
		}
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(p), target)
		}
		p = path.Clean(target)
	}
	return "", fmt.Errorf("%s: too many levels of symlinks", p)
}

// CABundle writes the CA bundle that ca-certificates' maintainer script would make (every
// certificate of /usr/share/ca-certificates/mozilla, in name order) to image path p in the
// root and returns its host path.
func (r *Root) CABundle(p string) (string, error) {
	certs, err := filepath.Glob(filepath.Join(r.Dir, "usr/share/ca-certificates/mozilla/*.crt"))
	if err != nil {
		return "", err
	}
	if len(certs) == 0 {
		return "", errors.New("no certificates in /usr/share/ca-certificates/mozilla (package ca-certificates)")
	}
	sort.Strings(certs)
	var bundle bytes.Buffer
	for _, c := range certs {
		data, err := os.ReadFile(c)
		if err != nil {
			return "", err
		}
		bundle.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			bundle.WriteByte('\n')
		}
	}
	host := filepath.Join(r.Dir, p)
	if err := writeFile(host, &bundle, 0o644); err != nil {
		return "", err
	}
	r.owners[path.Clean(p)] = r.owners[r.imagePath(certs[0])]
	return host, nil
}
