package debroot

import (
	"debug/elf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// triplets are Debian's multiarch library folder names.
var triplets = map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}

// libDirs are the folders the dynamic loader searches, in its order (Debian's
// ld.so.conf.d for the architecture, then the defaults).
func (r *Root) libDirs() []string {
	t := triplets[r.Arch]
	return []string{"/lib/" + t, "/usr/lib/" + t, "/lib", "/usr/lib"}
}

// ELFClosure returns what the programs (image paths in the root) need in an image that
// holds nothing else: each program, every shared library they load, transitively, and
// the ELF interpreter, as image path to host path. Like the loader, it finds a library
// by its soname in the library folders; a library that only an alternative (a symlink
// made by a maintainer script, which unpacking does not run, e.g. libblas.so.3) would
// put there is taken from a subfolder and placed under its soname.
func (r *Root) ELFClosure(programs ...string) (map[string]string, error) {
	return r.closure(map[string]string{}, programs)
}

// Libraries returns the libraries (and interpreter) that the ELF file at host path
// hostELF, built for the root's architecture, loads from the root: its image's runtime.
func (r *Root) Libraries(hostELF string) (map[string]string, error) {
	needed, interp, err := elfNeeds(hostELF)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", hostELF, err)
	}
	var queue []string
	if interp != "" {
		queue = append(queue, interp)
	}
	for _, so := range needed {
		lib, err := r.FindLibrary(so)
		if err != nil {
			return nil, fmt.Errorf("%s needs %s: %w", hostELF, so, err)
		}
		queue = append(queue, lib)
	}
	return r.closure(map[string]string{}, queue)
}

func (r *Root) closure(out map[string]string, queue []string) (map[string]string, error) {
	for len(queue) > 0 {
		img := queue[0]
		queue = queue[1:]
		if _, done := out[img]; done {
			continue
		}
		host, err := r.Resolve(img)
		if err != nil {
			return nil, err
		}
		out[img] = host
		needed, interp, err := elfNeeds(host)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", img, err)
		}
		if interp != "" {
			queue = append(queue, interp)
		}
		for _, so := range needed {
			if isInterpreter(so) {
				continue // the loader itself, already the interpreter
			}
			lib, err := r.FindLibrary(so)
			if err != nil {
				return nil, fmt.Errorf("%s needs %s: %w", img, so, err)
			}
			queue = append(queue, lib)
		}
	}
	return out, nil
}

// elfNeeds reads a shared object's DT_NEEDED entries and its interpreter.
func elfNeeds(host string) (needed []string, interp string, err error) {
	f, err := elf.Open(host)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	needed, err = f.ImportedLibraries()
	if err != nil {
		return nil, "", err
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return nil, "", err
			}
			interp = string(b[:len(b)-1]) // NUL-terminated
		}
	}
	return needed, interp, nil
}

// FindLibrary returns the image path under which the loader finds soname.
func (r *Root) FindLibrary(soname string) (string, error) {
	for _, d := range r.libDirs() {
		p := path.Join(d, soname)
		if _, err := r.Resolve(p); err == nil {
			return p, nil
		}
	}
	// An alternative: /usr/lib/<triplet>/<name>/<soname>, placed at /usr/lib/<triplet>/<soname>.
	dir := r.libDirs()[1]
	m, _ := filepath.Glob(filepath.Join(r.Dir, dir, "*", soname))
	sort.Strings(m)
	if len(m) > 0 {
		target := path.Join(dir, soname)
		rel, _ := filepath.Rel(filepath.Join(r.Dir, dir), m[0])
		if err := os.Symlink(rel, filepath.Join(r.Dir, target)); err != nil && !os.IsExist(err) {
			return "", err
		}
		return target, nil
	}
	return "", fmt.Errorf("not found in %v", r.libDirs())
}

// isInterpreter reports whether soname is a dynamic loader's (ld-linux-x86-64.so.2,
// ld-linux-aarch64.so.1), which libc names as a dependency: the loader is already
// there as the program's interpreter.
func isInterpreter(soname string) bool { return strings.HasPrefix(soname, "ld-linux") }
