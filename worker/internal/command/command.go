package command

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/backend"
	"github.com/vmafx/vmafx/worker/internal/report"
)

// summary is the first paragraph of "vmafx-worker --help".
const summary = `vmafx-worker computes VMAF scores; "vmafx-worker COMMAND --help" lists a command's
flags (docs/worker.md).

Inputs are file:// URIs, bare paths, http(s):// URLs or object storage URIs
(s3://bucket/key, gs://bucket/object, azure://container/blob). The content
decides the format, never the name: a YUV4MPEG2 stream carries its geometry,
an encoded video (MP4, MOV, Matroska, WebM, MPEG-TS...; H.264, HEVC, AV1, VP9,
FFV1...) is decoded by ffmpeg (on PATH or at VMAFX_FFMPEG), and anything else
is raw planar YUV and needs --width and --height. A distorted video of another
size is scaled to the reference's.

Exit codes: 0 success, 1 internal error, 2 bad input, 3 fetch failed,
4 unknown or corrupt model, 5 backend unavailable.`

// usageAnnotation holds a command's usage lines in its cobra annotations.
const usageAnnotation = "vmafx.dev/usage"

// errReported is what a command's flag error handler returns once it has reported the
// error its own way (a result in the termination message) and set the exit code.
var errReported = errors.New("reported")

// Run runs the vmafx-worker command line args (without the program name)
// and returns the process exit code. env looks up environment variables.
func Run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	if version.Requested(append([]string{"vmafx-worker"}, args...)) {
		version.Print(stdout, "vmafx-worker")
		return report.ExitOK
	}
	w := &worker{ctx: ctx, env: env, stdout: stdout, stderr: &lockedWriter{w: stderr}, tty: isTerminal(stderr, env)}
	root := w.commands()
	root.SetArgs(append([]string{}, args...)) // never nil: cobra reads os.Args for nil
	root.SetOut(stdout)
	root.SetErr(w.stderr)
	if err := root.Execute(); err != nil && !errors.Is(err, errReported) {
		fmt.Fprintf(w.stderr, "vmafx-worker: %v (see vmafx-worker --help)\n", err)
		return usageFailure(env, badRequest("%v", err))
	}
	return w.code
}

// The commands are listed in the order they are added: score first.
func init() { cobra.EnableCommandSorting = false }

// worker is one run of the command line: what the commands need and the exit code.
type worker struct {
	ctx            context.Context
	env            func(string) string
	stdout, stderr io.Writer
	tty            bool // stderr is a terminal
	code           int
}

// commands is the command tree, with one --help shape (cli.Usage) for all.
func (w *worker) commands() *cobra.Command {
	root := &cobra.Command{
		Use:               "vmafx-worker",
		Long:              summary,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		RunE: func(cmd *cobra.Command, _ []string) error {
			usage(cmd).Print(w.stderr)
			w.code = usageFailure(w.env, badRequest("no command"))
			return nil
		},
	}
	cli.AddVersionFlag(root.Flags())
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) { usage(cmd).Print(cmd.OutOrStdout()) })
	root.SetUsageFunc(func(cmd *cobra.Command) error { usage(cmd).Print(cmd.OutOrStderr()); return nil })
	help := &cobra.Command{
		Use:         "help [COMMAND]",
		Short:       "print the help of vmafx-worker or of a command",
		Long:        "help prints the help of vmafx-worker, or of COMMAND as COMMAND --help does.",
		Annotations: map[string]string{usageAnnotation: "vmafx-worker help [COMMAND]"},
		Args:        cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, _, err := root.Find(args)
			if err != nil {
				return err
			}
			return target.Help()
		},
	}
	root.SetHelpCommand(help)
	root.AddCommand(w.scoreCommand(), w.runCommand(), w.encodeCommand(), w.ladderReportCommand(), movedTrainCommand(), &cobra.Command{
		Use:         "version",
		Short:       "print the build, the kernel, the backends and the built-in models",
		Long:        "version prints the worker's build, the kernel version, the backends and the built-in models.",
		Annotations: map[string]string{usageAnnotation: "vmafx-worker version"},
		Args:        cobra.NoArgs,
		Run:         func(*cobra.Command, []string) { printVersion(w.stdout) },
	})
	for _, c := range append(root.Commands(), root, help) {
		c.Flags().SortFlags = false
		// -h and --help work everywhere without being listed, as in the other binaries.
		c.Flags().BoolP("help", "h", false, "print this help")
		_ = c.Flags().MarkHidden("help")
	}
	return root
}

// movedTrainCommand answers "vmafx-worker train", which ran the trainer until the
// trainer became its own program and image (vmafx-trainer): a clear error rather than
// "unknown command" for a Deployment or script written for the old form.
func movedTrainCommand() *cobra.Command {
	return &cobra.Command{
		Use:                "train",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("train is no longer a worker command: the trainer is the program vmafx-trainer, in its own image (docs/training.md)")
		},
	}
}

// command is the subcommand name with the flags of set and its usage lines: run runs
// it with the positional arguments once pflag has parsed the flags, fail reports a
// command line pflag refused; both return the exit code. It takes no positional
// arguments unless its Args say otherwise.
func (w *worker) command(set *cli.Set, name, short, long string, lines []string, run func(positional []string) int, fail func(error) int) *cobra.Command {
	cmd := &cobra.Command{
		Use:         name,
		Short:       short,
		Long:        long,
		Annotations: map[string]string{usageAnnotation: strings.Join(lines, "\n")},
		Args:        cobra.NoArgs,
		RunE: func(_ *cobra.Command, positional []string) error {
			w.code = run(positional)
			return nil
		},
	}
	cmd.Flags().AddFlagSet(set.FlagSet())
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		w.code = fail(flagError(err))
		return errReported
	})
	return cmd
}

// usage is cmd's --help.
func usage(cmd *cobra.Command) cli.Usage {
	u := cli.Usage{Summary: cmd.Long, Flags: cmd.Flags()}
	if lines := cmd.Annotations[usageAnnotation]; lines != "" {
		u.Lines = strings.Split(lines, "\n")
	}
	if !cmd.HasParent() { // the root: every command's lines, and the list of commands
		for _, c := range cmd.Commands() {
			if lines := c.Annotations[usageAnnotation]; lines != "" {
				u.Lines = append(u.Lines, strings.Split(lines, "\n")...)
			}
			if c.IsAvailableCommand() || c.Name() == "help" {
				u.Commands = append(u.Commands, [2]string{c.Name(), c.Short})
			}
		}
	}
	return u
}

func (w *worker) scoreCommand() *cobra.Command {
	f := newScoreFlags()
	cmd := w.command(f.set, "score", "score a distorted video against its reference", scoreSummary,
		[]string{"vmafx-worker score --reference URI --distorted URI [flags]", "vmafx-worker score [flags] REFERENCE DISTORTED",
			"vmafx-worker score --reference URI --distorted URI --distorted URI ... [--output URI --output URI ...] [flags]"},
		func(positional []string) int { return w.score(f.config(positional, w.env)) },
		func(err error) int { return w.score(f.failed(w.env, false), err) })
	cmd.Args = cobra.ArbitraryArgs // checked with the flags: the desk form
	return cmd
}

// singleDash finds a long flag given with one dash in pflag's error.
var singleDash = regexp.MustCompile(`unknown shorthand flag: .* in -([a-z][a-z0-9-]+)`)

// flagError is a command line pflag refused, as a bad request; a long flag with one dash
// (-reference, which the worker's parser took before it used pflag) gets a hint.
func flagError(err error) error {
	if m := singleDash.FindStringSubmatch(err.Error()); m != nil {
		return badRequest("%v (long flags take two dashes: --%s)", err, m[1])
	}
	return badRequest("%v", err)
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

// score runs the score command with the parsed command line cfg, or reports err.
func (w *worker) score(cfg *scoreConfig, err error) int {
	start := time.Now()
	if err != nil {
		if !cfg.desk {
			fmt.Fprintf(w.stderr, "vmafx-worker: %v (see vmafx-worker %s --help)\n", err, cmp.Or(cfg.command, "score"))
		}
		s := &scorer{cfg: cfg, env: w.env, stdout: w.stdout, stderr: w.stderr, log: newLogger(w.stderr, 0, cfg.desk), start: start}
		return s.fail(err)
	}
	s := &scorer{cfg: cfg, env: w.env, stdout: w.stdout, stderr: w.stderr, tty: w.tty,
		log: newLogger(w.stderr, cfg.verbosity, cfg.desk && !cfg.verbositySet), start: start}
	if len(cfg.renditions) > 0 {
		return s.runRenditions(w.ctx)
	}
	return s.run(w.ctx)
}

// emitResult prints r, a command's result, as one JSON line and writes it to the
// termination message at path (created only when the path was named).
func (w *worker) emitResult(log klog.Logger, path string, create bool, r any) {
	line, _ := json.Marshal(r)
	line = append(line, '\n')
	if err := report.WriteTermination(path, create, line); err != nil && create {
		log.Error(err, "Cannot write the termination message", "path", path)
	}
	_, _ = w.stdout.Write(line)
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

// ReportCrash reports a "score" run, or a "run" of a score request, given by args, whose
// process crashed with report (the first line of the Go runtime's crash report) as an
// Internal failure, where the run itself would have reported, and returns the exit code.
func ReportCrash(args []string, env func(string) string, stdout, stderr io.Writer, report string) int {
	var cfg *scoreConfig
	if len(args) > 0 && args[0] == "run" {
		f := newRunFlags()
		err := f.set.FlagSet().Parse(args[1:])
		_, cfg, _ = f.config(env, err)
	} else {
		if len(args) > 0 && args[0] == "score" {
			args = args[1:]
		}
		cfg, _ = parseScore(args, env)
	}
	s := &scorer{cfg: cfg, env: env, stdout: stdout, stderr: &lockedWriter{w: stderr}, log: newLogger(stderr, 0, cfg.desk), start: time.Now()}
	return s.fail(fmt.Errorf("worker crashed: %s", report))
}

// Supervised says whether args run in a child process that the parent watches for a
// crash (package crash): a score, on the command line or as a request (run), whose crash
// ReportCrash reports as a score's result. env looks up environment variables.
func Supervised(args []string, env func(string) string) bool {
	switch {
	case len(args) == 0:
		return false
	case args[0] == "score":
		return true
	case args[0] != "run":
		return false
	}
	f := newRunFlags()
	if f.set.FlagSet().Parse(args[1:]) != nil {
		return false // reported without scoring
	}
	req, _, err := f.config(env, nil)
	return err == nil && req.Score != nil
}
