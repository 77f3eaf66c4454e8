package hoststate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMountinfo(t *testing.T) {
	in := `27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
90 27 254:0 /work/main/.cluster/kubelet /var/lib/kubelet rw,relatime shared:5 - ext4 /dev/vda rw
91 90 0:50 / /var/lib/kubelet/pods/u\040id/volumes/kubernetes.io~projected/kube-api-access-x rw,relatime shared:6 - tmpfs tmpfs rw,size=100k
`
	got, err := parseMountinfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{ID: 27, Point: "/", FSType: "ext4", Source: "/dev/vda"},
		{ID: 31, Point: "/sys/fs/cgroup", FSType: "tmpfs", Source: "tmpfs"},
		{ID: 90, Point: "/var/lib/kubelet", FSType: "ext4", Source: "/dev/vda"},
		{ID: 91, Point: "/var/lib/kubelet/pods/u id/volumes/kubernetes.io~projected/kube-api-access-x", FSType: "tmpfs", Source: "tmpfs"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseMountinfo (-want +got):\n%s", diff)
	}
	if _, err := parseMountinfo(strings.NewReader("garbage line\n")); err == nil {
		t.Error("parseMountinfo accepted a malformed line")
	}
}

func TestUnder(t *testing.T) {
	tests := []struct {
		path, dir string
		want      bool
	}{
		{"/var/lib/kubelet", "/var/lib/kubelet", true},
		{"/var/lib/kubelet/pods/x", "/var/lib/kubelet/", true},
		{"/var/lib/kubelet-other", "/var/lib/kubelet", false},
		{"/var/lib", "/var/lib/kubelet", false},
	}
	for _, tt := range tests {
		if got := Under(tt.path, tt.dir); got != tt.want {
			t.Errorf("Under(%q, %q) = %v, want %v", tt.path, tt.dir, got, tt.want)
		}
	}
}

func TestRemoveTree(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "state")
	for _, p := range []string{"a/b/c", "d"} {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "a/b/c/f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "d/etc")); err != nil {
		t.Fatal(err)
	}
	if err := RemoveTree(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(root); !os.IsNotExist(err) {
		t.Errorf("%s still exists (%v)", root, err)
	}
	if _, err := os.Stat("/etc/hostname"); err != nil && !os.IsNotExist(err) {
		t.Errorf("a symlink's target was touched: %v", err)
	}
	if err := RemoveTree(root); err != nil {
		t.Errorf("RemoveTree of a missing path = %v", err)
	}
}

func TestSysctlsRoundTrip(t *testing.T) {
	got, err := ReadSysctls([]string{"kernel.panic", "no.such.key"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["no.such.key"]; ok {
		t.Error("a missing key was read")
	}
	if _, ok := got["kernel.panic"]; !ok {
		t.Skip("no /proc/sys/kernel/panic here")
	}
	// Writing back the current value is a no-op, so this is safe on any machine.
	if err := RestoreSysctls(got); err != nil {
		t.Error(err)
	}
}
