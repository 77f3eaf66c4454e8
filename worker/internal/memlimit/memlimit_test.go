package memlimit

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v2 := write("memory.max", "1073741824\n")
	v2max := write("memory.max.unlimited", "max\n")
	v1unlimited := write("limit_in_bytes", "9223372036854771712\n")
	missing := filepath.Join(dir, "missing")
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvLimit {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name  string
		env   string
		files []string
		want  int64
	}{
		{"downward API wins", "536870912", []string{v2}, 512 << 20},
		{"cgroup v2 limit", "", []string{v2}, 1 << 30},
		{"cgroup v2 without a limit", "", []string{v2max, v2}, 0},
		{"cgroup v1 without a limit", "", []string{missing, v1unlimited}, 0},
		{"no cgroup files", "", []string{missing}, 0},
		{"garbage in the variable falls back to the cgroup", "lots", []string{v2}, 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := cgroupFiles
			t.Cleanup(func() { cgroupFiles = saved })
			cgroupFiles = tc.files
			if got := Detect(env(tc.env)); got != tc.want {
				t.Errorf("Detect = %d, want %d", got, tc.want)
			}
		})
	}
}
