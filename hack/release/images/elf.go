package images

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// ELFDeps returns what dynamically linked programs need in an image that holds nothing
// else: each program, every shared library ldd resolves, and the ELF interpreter, as image
// path to host path. A library sits at the path ldd printed (the path the loader finds
// it under, e.g. /lib/x86_64-linux-gnu/libc.so.6), holding the file that path resolves to
// on the host, so symlinks and Debian's alternatives need nothing in the image.
func ELFDeps(programs ...string) (map[string]string, error) {
	deps := map[string]string{}
	for _, prog := range programs {
		real, err := filepath.EvalSymlinks(prog)
		if err != nil {
			return nil, err
		}
		deps[prog] = real
		out, err := exec.Command("ldd", prog).Output()
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", prog, err)
		}
		libs, err := parseLDD(out)
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", prog, err)
		}
		for _, lib := range libs {
			real, err := filepath.EvalSymlinks(lib)
			if err != nil {
				return nil, err
			}
			deps[lib] = real
		}
	}
	return deps, nil
}

// parseLDD returns the library paths in ldd's output: "libx.so.1 => /path (0x...)" and
// the interpreter's "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vDSO has no file.
func parseLDD(out []byte) ([]string, error) {
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if name, target, ok := strings.Cut(line, " => "); ok {
			if strings.HasPrefix(target, "not found") {
				return nil, fmt.Errorf("library %s not found", name)
			}
			if p, _, _ := strings.Cut(target, " "); strings.HasPrefix(p, "/") {
				libs = append(libs, p)
			}
			continue
		}
		if p, _, _ := strings.Cut(line, " "); strings.HasPrefix(p, "/") {
			libs = append(libs, p)
		}
	}
	return libs, sc.Err()
}
