// Package cli is the one configuration style of the VMAFX binaries: every setting is a
// flag with an environment variable twin (a flag given on the command line wins, then
// the variable, then the default), parsed with pflag, validated at start with every
// error reported at once and each naming both the flag and the variable, and `--help`
// printed in the same shape by every binary. A binary may also read a versioned config
// file (File), each setting under its key, between the variable and the default. The
// option list also feeds the generated configuration tables of docs/.
package cli

import (
	"errors"
	goflag "flag"
	"fmt"
	"io"
	"math"
	"net"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Lookup returns an environment variable and whether it is set (os.LookupEnv).
type Lookup func(name string) (string, bool)

// Option is one setting as the reference documents it.
type Option struct {
	Flag, Env, Default, Usage string
	// Key is the setting's key in the config file (File); "" for none.
	Key string
}

type option struct {
	Option
	raw   rawValue
	parse func(string) error
	// source is set by Resolve: where the value came from.
	source Source
}

// Source is where a setting's value came from.
type Source string

// The sources, in increasing precedence.
const (
	SourceDefault Source = "default"
	SourceFile    Source = "file"
	SourceEnv     Source = "env"
	SourceFlag    Source = "flag"
)

// Set is one binary's settings.
type Set struct {
	name, summary string
	// shorthand is the next flag's one-letter shorthand (IntP), key its file key (Key).
	shorthand, key string
	fs             *pflag.FlagSet
	opts           []*option
	// file is the config file's setting and type, nil without one (File).
	file *configFile
}

// New starts the settings of the binary name; summary is the first paragraph of --help.
func New(name, summary string) *Set {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	s := &Set{name: name, summary: summary, fs: fs}
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	return s
}

// AddVersionFlag adds --version to fs, so that --help lists it. Every main answers it
// before parsing (version.HandleFlag), so its value is never read.
func AddVersionFlag(fs *pflag.FlagSet) {
	fs.Bool("version", false, "print the version and exit")
}

// FlagSet is the settings' flags, for a command parser that parses the command line
// itself (cobra); Resolve then applies the variables and validates. Add no setting after.
func (s *Set) FlagSet() *pflag.FlagSet {
	if s.fs.Lookup("version") == nil { // last in --help
		AddVersionFlag(s.fs)
	}
	return s.fs
}

// Options lists the settings in the order they were added.
func (s *Set) Options() []Option {
	out := make([]Option, len(s.opts))
	for i, o := range s.opts {
		out[i] = o.Option
	}
	return out
}

// Func adds a setting read by parse, which stores the value and returns an error that
// says what a valid value is (the flag, variable and value are added to it).
func (s *Set) Func(flag, env, def, usage string, parse func(string) error) {
	s.TypedFunc("string", flag, env, def, usage, parse)
}

// TypedFunc is Func for a value that --help names by typ ("int", "quantity"), unless
// usage names it between back quotes.
func (s *Set) TypedFunc(typ, flag, env, def, usage string, parse func(string) error) {
	s.typed(typ, flag, env, def, usage, parse)
}

// Key gives the next setting added a key in the config file (File): Key("slotsPerDevice").Int(...).
func (s *Set) Key(key string) *Set {
	s.key = key
	return s
}

func (s *Set) typed(typ, flag, env, def, usage string, parse func(string) error) *pflag.Flag {
	o := &option{Option: Option{Flag: flag, Env: env, Default: def, Usage: usage, Key: s.key}, raw: rawValue{typ: typ}, parse: parse}
	s.key = ""
	s.opts = append(s.opts, o)
	names := "env " + env
	if o.Key != "" {
		names += ", file key " + o.Key
	}
	f := &pflag.Flag{Name: flag, Usage: usage + " (" + names + ")", Value: &o.raw, DefValue: def}
	// A one-letter flag marked as its own shorthand (IntP) is -v and --v alike.
	if s.shorthand != "" {
		f.Shorthand, s.shorthand = s.shorthand, ""
	}
	s.fs.AddFlag(f)
	return f
}

// AddGoFlagSet adds flags of libraries that register on the standard library's flag
// package (klog's -v and friends); they have no environment twins.
func (s *Set) AddGoFlagSet(fs *goflag.FlagSet) { s.fs.AddGoFlagSet(fs) }

// ErrHelp is what Parse returns for -h or --help, after writing the usage.
var ErrHelp = pflag.ErrHelp

// Parse reads args (without the program name) and the environment through lookup, and
// calls every setting's parse with its value. It returns every invalid setting at once,
// or ErrHelp after writing the usage to help.
func (s *Set) Parse(args []string, lookup Lookup, help io.Writer) error {
	if err := s.FlagSet().Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			s.PrintUsage(help)
			return ErrHelp
		}
		return fmt.Errorf("%s: %w (see --help)", s.name, err)
	}
	if rest := s.fs.Args(); len(rest) > 0 {
		return fmt.Errorf("%s: unexpected arguments %q (see --help)", s.name, rest)
	}
	return s.Resolve(lookup)
}

// Resolve takes each setting from its flag when the command line gave it, else from its
// variable, else from the config file (File), else from the default, and calls its
// parse; it returns every invalid setting at once. Parse calls it; a command parser that
// parsed FlagSet calls it after.
func (s *Set) Resolve(lookup Lookup) error {
	var errs []error
	var file map[string]string
	for _, o := range s.opts {
		if s.file != nil && o == s.file.opt {
			// The file is named by its flag or variable only; every later setting may
			// come from it.
			errs = append(errs, s.resolve(o, lookup, nil, ""))
			var err error
			file, err = s.readFile()
			errs = append(errs, err)
			continue
		}
		errs = append(errs, s.resolve(o, lookup, file, s.fileName()))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid %s configuration: %w", s.name, err)
	}
	return nil
}

// resolve takes o's value from the first source that has it and parses it.
func (s *Set) resolve(o *option, lookup Lookup, file map[string]string, fileName string) error {
	f := s.fs.Lookup(o.Flag)
	v, from, src := o.Default, "", SourceDefault
	fv, inFile := file[o.Key]
	switch e, inEnv := lookup(o.Env); {
	case f.Changed:
		v, from, src = o.raw.v, dashed(f)+" (or "+o.Env+")", SourceFlag
	case inEnv:
		v, from, src = strings.TrimSpace(e), o.Env+" (or "+dashed(f)+")", SourceEnv
	case inFile && o.Key != "":
		v, from, src = fv, "field "+o.Key+" of "+fileName+" (or "+dashed(f)+", "+o.Env+")", SourceFile
	}
	o.source = src
	if err := o.parse(v); err != nil {
		if from == "" {
			from = "the default of " + dashed(f)
		}
		return fmt.Errorf("%s=%q: %w", from, v, err)
	}
	return nil
}

// dashed is f as a command line writes it: -v for a one-letter flag that is its own
// shorthand, else --flag.
func dashed(f *pflag.Flag) string {
	if f.Shorthand == f.Name {
		return "-" + f.Name
	}
	return "--" + f.Name
}

// Given reports whether the flag, its variable or the config file gave the setting's
// value rather than the default; Resolve decides it.
func (s *Set) Given(flag string) bool { return s.Source(flag) != SourceDefault }

// Source is where Resolve took the setting's value from.
func (s *Set) Source(flag string) Source {
	for _, o := range s.opts {
		if o.Flag == flag && o.source != "" {
			return o.source
		}
	}
	return SourceDefault
}

// PrintUsage writes --help: the summary, then every flag with its variable and default.
func (s *Set) PrintUsage(w io.Writer) { PrintUsage(w, s.name, s.summary, s.FlagSet()) }

// PrintUsage writes the --help of a VMAFX binary without subcommands (see Usage).
func PrintUsage(w io.Writer, name, summary string, fs *pflag.FlagSet) {
	Usage{Lines: []string{name + " [flags]"}, Summary: summary, Flags: fs}.Print(w)
}

// Usage is the --help of every VMAFX binary and subcommand: usage lines, summary, the
// subcommands, the rule of flags and their environment twins, then the flags.
type Usage struct {
	// Lines are the ways to call it, e.g. "vmafx-worker score REFERENCE DISTORTED [flags]".
	Lines   []string
	Summary string
	// Commands are the subcommands, each name with one line.
	Commands [][2]string
	Flags    *pflag.FlagSet
}

// Print writes u.
func (u Usage) Print(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n", strings.Join(u.Lines, "\n       "))
	fmt.Fprintf(w, "\n%s\n\n", strings.TrimSuffix(u.Summary, "\n"))
	if len(u.Commands) > 0 {
		width := 0
		for _, c := range u.Commands {
			width = max(width, len(c[0]))
		}
		fmt.Fprintf(w, "Commands:\n")
		for _, c := range u.Commands {
			fmt.Fprintf(w, "  %-*s  %s\n", width, c[0], c[1])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Every flag can also be set by the environment variable named beside it;\na flag on the command line wins over the variable.\n\nFlags:\n")
	fmt.Fprint(w, u.Flags.FlagUsages())
}

// rawValue keeps a flag's text; parsing waits until Parse knows which source wins.
type rawValue struct{ v, typ string }

func (r *rawValue) String() string     { return r.v }
func (r *rawValue) Set(v string) error { r.v = strings.TrimSpace(v); return nil }
func (r *rawValue) Type() string       { return r.typ }

// String adds a setting taken as it is.
func (s *Set) String(p *string, flag, env, def, usage string) {
	s.Func(flag, env, def, usage, func(v string) error { *p = v; return nil })
}

// NonEmpty adds a string setting that must not be empty.
func (s *Set) NonEmpty(p *string, flag, env, def, usage string) {
	s.Func(flag, env, def, usage, func(v string) error {
		if v == "" {
			return errors.New("must not be empty")
		}
		*p = v
		return nil
	})
}

// OneOf adds a string setting limited to allowed.
func (s *Set) OneOf(p *string, flag, env, def, usage string, allowed ...string) {
	s.Func(flag, env, def, usage+" ("+strings.Join(allowed, ", ")+")", func(v string) error {
		for _, a := range allowed {
			if v == a {
				*p = v
				return nil
			}
		}
		return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
	})
}

// Bool adds a true/false setting.
func (s *Set) Bool(p *bool, flag, env string, def bool, usage string) {
	f := s.typed("bool", flag, env, strconv.FormatBool(def), usage, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		*p = b
		return nil
	})
	f.NoOptDefVal = "true" // --leader-election alone turns it on
}

// NoMax is the hi of an Int with no upper bound.
const NoMax = math.MaxInt

// OptBool adds a true/false setting that stays nil unless given: one that overrides
// another source only when set.
func (s *Set) OptBool(p **bool, flag, env, usage string) {
	f := s.typed("bool", flag, env, "", usage, func(v string) error {
		*p = nil
		if v == "" {
			return nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		*p = &b
		return nil
	})
	f.NoOptDefVal = "true"
}

// Int adds a whole number from lo to hi (NoMax: no upper bound).
func (s *Set) Int(p *int, flag, env string, def, lo, hi int, usage string) {
	s.typed("int", flag, env, strconv.Itoa(def), usage, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			if hi == NoMax {
				return fmt.Errorf("must be a whole number, %d or more", lo)
			}
			return fmt.Errorf("must be a whole number from %d to %d", lo, hi)
		}
		*p = n
		return nil
	})
}

// IntP is Int with a one-letter shorthand: IntP(p, "v", "v", ...) takes -v 2 and --v=2.
func (s *Set) IntP(p *int, flag, short, env string, def, lo, hi int, usage string) {
	s.shorthand = short
	s.Int(p, flag, env, def, lo, hi, usage)
}

// Size adds a number of bytes, written as a Kubernetes quantity, the one size syntax of
// every VMAFX setting and resource: 1000000, 500M or 64Gi (see ParseSize).
func (s *Set) Size(p *int64, flag, env string, def int64, usage string) {
	s.typed("size", flag, env, FormatSize(def), usage, func(v string) error {
		n, err := ParseSize(v)
		if err != nil {
			return err
		}
		*p = n
		return nil
	})
}

// maxSize bounds a size, far beyond any file, so that sums and products of sizes stay
// within int64.
const maxSize = 1 << 62

// ParseSize reads a size as a Kubernetes quantity (resource.Quantity, as a Pod's memory
// or ephemeral storage is written): bytes, or with a k, M, G, T, P (powers of 1000) or
// Ki, Mi, Gi, Ti, Pi (powers of 1024) suffix; a whole number of bytes, 0 or more.
func ParseSize(v string) (int64, error) {
	const want = "must be a size such as 1000000, 500M or 64Gi (a Kubernetes quantity)"
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, errors.New(want)
	}
	n, ok := q.AsInt64()
	if !ok || n < 0 || n > maxSize {
		return 0, errors.New(want + ", a whole number of bytes from 0 to 2^62")
	}
	return n, nil
}

// FormatSize writes n as a quantity: with a binary suffix when n is a whole number of
// KiB (20Gi), else a decimal one (500M).
func FormatSize(n int64) string {
	format := resource.DecimalSI
	if n != 0 && n%1024 == 0 {
		format = resource.BinarySI
	}
	return resource.NewQuantity(n, format).String()
}

// Duration adds a positive duration.
func (s *Set) Duration(p *time.Duration, flag, env string, def time.Duration, usage string) {
	s.typed("duration", flag, env, def.String(), usage, func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errors.New("must be a positive duration such as 30s or 2m")
		}
		*p = d
		return nil
	})
}

// DurationOrZero adds a duration where 0 means off.
func (s *Set) DurationOrZero(p *time.Duration, flag, env string, def time.Duration, usage string) {
	s.typed("duration", flag, env, def.String(), usage, func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return errors.New("must be 0 (off) or a positive duration such as 30s or 2m")
		}
		*p = d
		return nil
	})
}

// Fraction adds a number above 0 and at most 1.
func (s *Set) Fraction(p *float64, flag, env string, def float64, usage string) {
	s.typed("float", flag, env, strconv.FormatFloat(def, 'g', -1, 64), usage, func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1 {
			return errors.New("must be a number above 0 and at most 1, such as 0.55")
		}
		*p = f
		return nil
	})
}

// List adds a comma-separated list; empty items are dropped.
func (s *Set) List(p *[]string, flag, env, usage string) {
	s.typed("strings", flag, env, "", usage+" (comma-separated)", func(v string) error {
		*p = SplitList(v)
		return nil
	})
}

// AbsPaths adds a comma-separated list of absolute paths, cleaned.
func (s *Set) AbsPaths(p *[]string, flag, env, usage string) {
	s.typed("strings", flag, env, "", usage+" (comma-separated absolute paths)", func(v string) error {
		var out []string
		for _, item := range SplitList(v) {
			if !path.IsAbs(item) {
				return fmt.Errorf("%q is not an absolute path", item)
			}
			out = append(out, path.Clean(item))
		}
		*p = out
		return nil
	})
}

// Addr adds a listen address, host:port or :port; with mayDisable, "0" turns it off.
func (s *Set) Addr(p *string, flag, env, def string, mayDisable bool, usage string) {
	hint := "host:port or :port"
	if mayDisable {
		hint += ", or 0 to disable"
	}
	s.Func(flag, env, def, usage+" ("+hint+")", func(v string) error {
		if v == "0" && mayDisable {
			*p = v
			return nil
		}
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			return errors.New("must be " + hint)
		}
		*p = v
		return nil
	})
}

// EnvName is the environment twin of a flag: prefix and the flag's name in upper case
// with dashes as underscores (VMAFX_ and --pixel-format: VMAFX_PIXEL_FORMAT); -v, a name
// too short to stand alone, is prefix and VERBOSITY.
func EnvName(prefix, flag string) string {
	if flag == "v" {
		return prefix + "VERBOSITY"
	}
	return prefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// Getenv is an environment read by getenv as a Lookup in which an empty variable counts
// as unset, as the kubelet passes a variable whose source is empty.
func Getenv(getenv func(string) string) Lookup {
	return func(name string) (string, bool) {
		v := getenv(name)
		return v, v != ""
	}
}

// SplitList splits a comma-separated list and drops empty items.
func SplitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// MarkdownTable is the docs' table of opts: flag, variable, default and meaning.
func MarkdownTable(opts []Option) string {
	return markdownTable(opts, func(o Option) string { return "--" + o.Flag })
}

// MarkdownTable is the docs' table of the settings (-v for a flag that is its own shorthand).
func (s *Set) MarkdownTable() string {
	return markdownTable(s.Options(), func(o Option) string { return dashed(s.fs.Lookup(o.Flag)) })
}

func markdownTable(opts []Option, dashed func(Option) string) string {
	var b strings.Builder
	b.WriteString("| Flag | Variable | Default | Meaning |\n|---|---|---|---|\n")
	for _, o := range opts {
		def := "`" + o.Default + "`"
		if o.Default == "" {
			def = "none"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", dashed(o), o.Env, def, strings.ReplaceAll(o.Usage, "|", `\|`))
	}
	return b.String()
}
