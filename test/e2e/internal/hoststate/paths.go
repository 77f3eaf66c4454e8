package hoststate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// HostPaths are the fixed host paths the cluster's parts create outside the state folder:
// the kubelet root (bind-mounted from the state folder, because the device plugin and
// PodResources sockets live at fixed paths below it), the kubelet's container-log links,
// libcni's result cache, containerd's shim socket folder, libmount's runtime folder
// (made when the kubelet runs mount(8) for a volume), and the default folders of network
// namespaces, CNI and CDI in case anything falls back to them.
var HostPaths = []string{
	"/var/lib/kubelet",
	"/var/log/containers",
	"/var/log/pods",
	"/var/lib/cni",
	"/run/containerd",
	"/run/mount",
	"/var/run/netns",
	"/etc/cni",
	"/opt/cni",
	"/opt/containerd",
	"/etc/cdi",
	"/var/run/cdi",
	"/run/nri",
	"/etc/nri",
	"/etc/kubernetes",
}

// Existing returns the paths of candidates that exist now.
func Existing(candidates []string) []string {
	var out []string
	for _, p := range candidates {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// RemoveTree deletes path and everything below it, but never crosses into another file
// system: it refuses when anything is mounted at or below path (a kubelet volume left
// mounted would otherwise have its contents deleted, hostPath bind mounts included), and
// it checks each folder's device again while it walks.
func RemoveTree(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ms, err := MountsUnder([]string{path})
	if err != nil {
		return err
	}
	if len(ms) > 0 {
		return fmt.Errorf("not removing %s: %s is still mounted", path, ms[len(ms)-1].Point)
	}
	if !info.IsDir() {
		return os.Remove(path)
	}
	return removeSameDevice(path, deviceOf(info))
}

func deviceOf(info os.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Dev
	}
	return 0
}

func removeSameDevice(dir string, dev uint64) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if deviceOf(info) != dev {
			return fmt.Errorf("not removing %s: another file system", p)
		}
		if err := removeSameDevice(p, dev); err != nil {
			return err
		}
	}
	return os.Remove(dir)
}
