package hoststate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Mount is one line of /proc/self/mountinfo.
type Mount struct {
	ID     int
	Point  string
	FSType string
	Source string
}

// Mounts lists the mounts of this mount namespace, in mountinfo's order (a mount comes
// after the one it sits on).
func Mounts() ([]Mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountinfo(f)
}

func parseMountinfo(r io.Reader) ([]Mount, error) {
	var out []Mount
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		fields := strings.Fields(s.Text())
		sep := slices.Index(fields, "-")
		if len(fields) < 5 || sep < 0 || sep+2 >= len(fields) {
			return nil, fmt.Errorf("malformed mountinfo line %q", s.Text())
		}
		id, err := strconv.Atoi(fields[0])
		if err != nil {
			return nil, fmt.Errorf("malformed mountinfo line %q", s.Text())
		}
		out = append(out, Mount{ID: id, Point: unescapeMount(fields[4]), FSType: fields[sep+1], Source: fields[sep+2]})
	}
	return out, s.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Under reports whether path is dir or below it.
func Under(path, dir string) bool {
	dir = filepath.Clean(dir)
	path = filepath.Clean(path)
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// MountsUnder returns the mounts at or below any of dirs, in mountinfo order.
func MountsUnder(dirs []string) ([]Mount, error) {
	all, err := Mounts()
	if err != nil {
		return nil, err
	}
	var out []Mount
	for _, m := range all {
		for _, d := range dirs {
			if Under(m.Point, d) {
				out = append(out, m)
				break
			}
		}
	}
	return out, nil
}

// UnmountUnder unmounts everything at or below dirs, the most recent mount first so that
// stacked mounts come off top-down. A busy mount is detached (MNT_DETACH): it disappears
// from the tree at once and the kernel frees it when its last user is gone.
func UnmountUnder(dirs []string) ([]string, error) {
	var done []string
	// Three passes: unmounting a shared mount can propagate and reveal mounts below it.
	for range 3 {
		ms, err := MountsUnder(dirs)
		if err != nil {
			return done, err
		}
		if len(ms) == 0 {
			return done, nil
		}
		var errs []error
		for i := len(ms) - 1; i >= 0; i-- {
			err := unix.Unmount(ms[i].Point, unix.MNT_DETACH)
			if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", ms[i].Point, err))
				continue
			}
			done = append(done, ms[i].Point)
		}
		if len(errs) > 0 {
			return done, errors.Join(errs...)
		}
	}
	ms, err := MountsUnder(dirs)
	if err == nil && len(ms) > 0 {
		err = fmt.Errorf("%d mounts remain under %v, first %s", len(ms), dirs, ms[0].Point)
	}
	return done, err
}

// BindShared bind-mounts src onto dst and makes the mount shared, as the kubelet wants its
// root folder (volumes it mounts below must propagate into containers that ask for it).
func BindShared(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s on %s: %w", src, dst, err)
	}
	if err := unix.Mount("", dst, "", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make %s shared: %w", dst, err)
	}
	return nil
}

// IsMountPoint reports whether a mount sits exactly at path.
func IsMountPoint(path string) (bool, error) {
	ms, err := Mounts()
	if err != nil {
		return false, err
	}
	for _, m := range ms {
		if m.Point == filepath.Clean(path) {
			return true, nil
		}
	}
	return false, nil
}
