package version

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-24T00:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	gov := runtime.Version()
	cases := map[string]struct {
		v, c, d string
		bi      *debug.BuildInfo
		want    Info
	}{
		"linker flags win": {"v1.2.3", "def456", "2026-01-02T03:04:05Z", vcs, Info{"v1.2.3", "def456", "2026-01-02T03:04:05Z", gov}},
		"vcs fallback":     {"", "", "", vcs, Info{Dev, "abc123-dirty", "2026-11-24T00:00:00Z", gov}},
		"module version":   {"", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, Info{"v0.3.0", "unknown", "", gov}},
		"nothing":          {"", "", "", nil, Info{Dev, "unknown", "", gov}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resolve(tc.v, tc.c, tc.d, tc.bi)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequested(t *testing.T) {
	cases := map[string]struct {
		args []string
		want bool
	}{
		"double dash":       {[]string{"x", "--version"}, true},
		"single dash":       {[]string{"x", "-v=2", "-version"}, true},
		"after subcommand":  {[]string{"x", "score", "--version"}, true},
		"after terminator":  {[]string{"x", "--", "--version"}, false},
		"absent":            {[]string{"x", "--v=2"}, false},
		"no args":           {nil, false},
		"explicitly false":  {[]string{"x", "--version=false"}, false},
		"program name only": {[]string{"--version"}, false},
	}
	for name, tc := range cases {
		if got := Requested(tc.args); got != tc.want {
			t.Errorf("%s: Requested(%q) = %v, want %v", name, tc.args, got, tc.want)
		}
	}
}

func TestPrint(t *testing.T) {
	var b bytes.Buffer
	Print(&b, "/usr/bin/vmafx-worker")
	if !strings.HasPrefix(b.String(), "vmafx-worker "+Get().Version+" (commit ") {
		t.Errorf("Print wrote %q", b.String())
	}
}

func TestCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(Collector())
	i := Get()
	want := `# HELP vmafx_build_info Always 1; the labels name the running binary's version, commit and Go version.
# TYPE vmafx_build_info gauge
vmafx_build_info{goversion="` + i.GoVersion + `",revision="` + i.Commit + `",version="` + i.Version + `"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "vmafx_build_info"); err != nil {
		t.Error(err)
	}
}
