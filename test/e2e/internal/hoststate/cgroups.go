package hoststate

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// CgroupRoot is where this machine mounts its cgroup hierarchies (v1 hybrid: one per
// controller, plus name=systemd and the unified v2 tree).
const CgroupRoot = "/sys/fs/cgroup"

// CgroupDirs returns every folder named name directly below a hierarchy's root
// (/sys/fs/cgroup/<hierarchy>/<name>): the kubelet's "kubepods" in each hierarchy.
func CgroupDirs(name string) ([]string, error) {
	hs, err := os.ReadDir(CgroupRoot)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range hs {
		p := filepath.Join(CgroupRoot, h.Name(), name)
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			out = append(out, p)
		}
	}
	return out, nil
}

// CgroupPIDs returns the processes in root's cgroup tree.
func CgroupPIDs(root string) ([]int, error) {
	seen := map[int]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		f, err := os.Open(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return nil
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if pid, err := strconv.Atoi(strings.TrimSpace(s.Text())); err == nil {
				seen[pid] = true
			}
		}
		return nil
	})
	pids := make([]int, 0, len(seen))
	for pid := range seen {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	return pids, err
}

// RemoveCgroupTree removes root's cgroup and all below it, deepest first. A cgroup folder
// is removed with rmdir (its control files are not files), which fails while a process is
// still in it.
func RemoveCgroupTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	var errs []error
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
