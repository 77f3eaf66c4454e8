// Package version is the build stamp every VMAFX binary carries: the release version,
// the commit and the build date, set at link time by the image build
// (-ldflags -X, see LDFlags) and otherwise read from the VCS information the Go tool
// records in every binary built from a git checkout. Each main makes `--version` print
// it (HandleFlag) and each component exposes it as the metric vmafx_build_info.
package version

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Set by the linker: -X github.com/vmafx/vmafx/internal/version.version=v1.2.3 etc.
var (
	version string
	commit  string
	date    string
)

// Package is this package's import path, which LDFlags names.
const Package = "github.com/vmafx/vmafx/internal/version"

// Dev is the version of a binary built without a stamped version (go build, go run).
const Dev = "dev"

// Info is one binary's build stamp.
type Info struct {
	// Version is the release version (v1.2.3) or `git describe` output; Dev when unset.
	Version string `json:"version"`
	// Commit is the full commit hash; "unknown" outside a git checkout. A "-dirty" suffix
	// says the tree had uncommitted changes.
	Commit string `json:"commit"`
	// Date is the build date in RFC 3339: the commit's time, so that a build is
	// reproducible; empty when unknown.
	Date string `json:"date,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"goVersion"`
}

// Get returns the running binary's stamp.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, date, bi)
}

// resolve prefers the linker-set values and falls back to the build info's VCS settings.
func resolve(v, c, d string, bi *debug.BuildInfo) Info {
	info := Info{Version: v, Commit: c, Date: d, GoVersion: runtime.Version()}
	if bi != nil {
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.Date == "" {
					info.Date = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if c == "" && modified && info.Commit != "" {
			info.Commit += "-dirty"
		}
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
	}
	if info.Version == "" {
		info.Version = Dev
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// String is the line `--version` prints.
func (i Info) String() string {
	s := fmt.Sprintf("%s (commit %s", i.Version, i.Commit)
	if i.Date != "" {
		s += ", built " + i.Date
	}
	return s + ", " + i.GoVersion + ")"
}

// LDFlags returns the -X linker flags that stamp v, c and d into a binary.
func LDFlags(v, c, d string) []string {
	return []string{
		"-X", Package + ".version=" + v,
		"-X", Package + ".commit=" + c,
		"-X", Package + ".date=" + d,
	}
}

// HandleFlag prints the stamp and exits 0 when args (os.Args) ask for it with --version
// or -version before any "--", so that every binary answers it the same way whatever its
// flag parser, and before that parser sees it.
func HandleFlag(args []string) {
	if Requested(args) {
		Print(os.Stdout, args[0])
		os.Exit(0)
	}
}

// Requested reports whether args (os.Args) ask for the version.
func Requested(args []string) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args[1:] {
		switch a {
		case "--":
			return false
		case "--version", "-version", "--version=true", "-version=true":
			return true
		}
	}
	return false
}

// Print writes "<program> <stamp>" to w; program is a path or a name.
func Print(w io.Writer, program string) {
	if i := strings.LastIndexByte(program, '/'); i >= 0 {
		program = program[i+1:]
	}
	fmt.Fprintf(w, "%s %s\n", program, Get())
}

// Collector returns the gauge vmafx_build_info{version,revision,goversion} = 1, the
// Prometheus convention for exposing a build's identity.
func Collector() prometheus.Collector {
	i := Get()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "vmafx_build_info",
		Help:        "Always 1; the labels name the running binary's version, commit and Go version.",
		ConstLabels: prometheus.Labels{"version": i.Version, "revision": i.Commit, "goversion": i.GoVersion},
	})
	g.Set(1)
	return g
}
