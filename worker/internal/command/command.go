package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/vmafx/vmafx/worker/internal/backend"
	"github.com/vmafx/vmafx/worker/internal/report"
	"github.com/vmafx/vmafx/worker/vmaf"
)

const usageText = `vmafx-worker computes VMAF scores.

Usage:
  vmafx-worker score --reference URI --distorted URI [flags]
  vmafx-worker score [flags] REFERENCE DISTORTED
  vmafx-worker encode --reference URI --output URI --encoder E --value N --height H [flags]
  vmafx-worker ladder-report --output URI --table JSON
  vmafx-worker train --training NAMESPACE/NAME [flags]
  vmafx-worker version

Inputs are file:// URIs, bare paths, http(s):// URLs or object storage URIs
(s3://bucket/key, gs://bucket/object, azure://container/blob). The content
decides the format, never the name: a YUV4MPEG2 stream carries its geometry,
an encoded video (MP4, MOV, Matroska, WebM, MPEG-TS...; H.264, HEVC, AV1, VP9,
FFV1...) is decoded by ffmpeg (on PATH or at VMAFX_FFMPEG), and anything else
is raw planar YUV and needs --width and --height. A distorted video of another
size is scaled to the reference's. "vmafx-worker score -h" lists the flags;
each has an environment twin, e.g. --threads and VMAFX_THREADS.

Exit codes: 0 success, 1 internal error, 2 bad input, 3 fetch failed,
4 unknown or corrupt model.
`

// Run runs the vmafx-worker command line args (without the program name)
// and returns the process exit code. env looks up environment variables.
func Run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	tty := isTerminal(stderr, env)
	stderr = &lockedWriter{w: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return usageFailure(env, badRequest("no command"))
	}
	switch args[0] {
	case "score":
		return score(ctx, args[1:], env, stdout, stderr, tty)
	case "encode":
		return runEncode(ctx, args[1:], env, stdout, stderr)
	case "ladder-report":
		return runLadderReport(ctx, args[1:], env, stdout, stderr)
	case "train":
		return train(ctx, args[1:], env, stdout, stderr)
	case "version", "--version":
		printVersion(stdout)
		return report.ExitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return report.ExitOK
	}
	fmt.Fprintf(stderr, "vmafx-worker: unknown command %q\n\n%s", args[0], usageText)
	return usageFailure(env, badRequest("unknown command %q", args[0]))
}

// usageFailure writes err's result to the termination message, so that a Pod
// started with a wrong command line still says why, and returns its exit code.
func usageFailure(env func(string) string, err error) int {
	r, code := report.Failure(err, report.Provenance{}, 0)
	path, create := defaultTerminationLog, false
	if p := env(envName("termination-log")); p != "" {
		path, create = p, true
	}
	_ = report.WriteTermination(path, create, report.Encode(r)) // best effort: the exit code says it too
	return code
}

// score runs the score command.
func score(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer, tty bool) int {
	start := time.Now()
	cfg, err := parseScore(args, env)
	if errors.Is(err, flag.ErrHelp) {
		fs, _ := newScoreFlags()
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, "Usage of vmafx-worker score:\n")
		fs.PrintDefaults()
		return report.ExitOK
	}
	if err != nil {
		if !cfg.desk {
			fmt.Fprintf(stderr, "vmafx-worker: %v (see vmafx-worker score -h)\n", err)
		}
		s := &scorer{cfg: cfg, env: env, stdout: stdout, stderr: stderr, log: newLogger(stderr, 0, cfg.desk), start: start}
		return s.fail(err)
	}
	s := &scorer{cfg: cfg, env: env, stdout: stdout, stderr: stderr, tty: tty,
		log: newLogger(stderr, cfg.verbosity, cfg.desk && !cfg.verbositySet), start: start}
	return s.run(ctx)
}

// printVersion prints the worker's build, the kernel, backends and models.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "vmafx-worker %s\nkernel %s\nbackends %s\nmodels %s\n",
		buildVersion(), vmaf.Version, strings.Join(backend.Names(), " "), strings.Join(vmaf.BuiltinModels(), " "))
}

// buildVersion is the module version and VCS revision from the build
// information, e.g. "(devel) 1a2b3c4d5e6f+dirty go1.26.8".
func buildVersion() string {
	v := "(unknown)"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v + " " + runtime.Version()
	}
	v = bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(len(s.Value), 12)]
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v + " " + bi.GoVersion
}

// lockedWriter serialises writes from the logger and the progress line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// ReportCrash reports a "score" run, given by args, whose process crashed
// with report (the first line of the Go runtime's crash report) as an
// Internal failure, where the run itself would have reported, and returns
// the exit code.
func ReportCrash(args []string, env func(string) string, stdout, stderr io.Writer, report string) int {
	if len(args) > 0 && args[0] == "score" {
		args = args[1:]
	}
	cfg, _ := parseScore(args, env)
	s := &scorer{cfg: cfg, env: env, stdout: stdout, stderr: &lockedWriter{w: stderr}, log: newLogger(stderr, 0, cfg.desk), start: time.Now()}
	return s.fail(fmt.Errorf("worker crashed: %s", report))
}
