package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vmafx/vmafx/internal/testutil"
)

type settings struct {
	addr  string
	on    bool
	n     int
	wait  time.Duration
	items []string
}

func newSet(c *settings) *Set {
	s := New("vmafx-test", "vmafx-test tests the one configuration style.")
	s.Addr(&c.addr, "addr", "VMAFX_TEST_ADDR", ":8080", true, "listen address")
	s.Bool(&c.on, "on", "VMAFX_TEST_ON", false, "turn it on")
	s.Int(&c.n, "n", "VMAFX_TEST_N", 3, 1, 10, "how many")
	s.Duration(&c.wait, "wait", "VMAFX_TEST_WAIT", time.Minute, "how long")
	s.List(&c.items, "items", "VMAFX_TEST_ITEMS", "things")
	return s
}

var env = testutil.Env

func TestDefaultsVariablesAndFlags(t *testing.T) {
	var c settings
	if err := newSet(&c).Parse(nil, env(), io.Discard); err != nil {
		t.Fatal(err)
	}
	if c.addr != ":8080" || c.on || c.n != 3 || c.wait != time.Minute || c.items != nil {
		t.Errorf("defaults: %+v", c)
	}
	c = settings{}
	err := newSet(&c).Parse([]string{"--n=7", "--on"}, env("VMAFX_TEST_N", "2", "VMAFX_TEST_WAIT", "5s", "VMAFX_TEST_ITEMS", "a, ,b"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.n != 7 || !c.on || c.wait != 5*time.Second || strings.Join(c.items, "|") != "a|b" {
		t.Errorf("the flag must win over its variable, the variable over the default: %+v", c)
	}
}

func TestEveryInvalidSettingIsNamedByFlagAndVariable(t *testing.T) {
	var c settings
	err := newSet(&c).Parse([]string{"--n=11"}, env("VMAFX_TEST_WAIT", "soon", "VMAFX_TEST_ADDR", "8080"), io.Discard)
	if err == nil {
		t.Fatal("accepted invalid settings")
	}
	for _, want := range []string{
		`--n (or VMAFX_TEST_N)="11": must be a whole number from 1 to 10`,
		`VMAFX_TEST_WAIT (or --wait)="soon": must be a positive duration`,
		`VMAFX_TEST_ADDR (or --addr)="8080": must be host:port or :port, or 0 to disable`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestHelpAndMistakes(t *testing.T) {
	var c settings
	var out bytes.Buffer
	if err := newSet(&c).Parse([]string{"--help"}, env(), &out); !errors.Is(err, ErrHelp) {
		t.Fatalf("--help gave %v", err)
	}
	for _, want := range []string{"Usage: vmafx-test [flags]", "vmafx-test tests", "--wait duration", "(env VMAFX_TEST_WAIT) (default 1m0s)", "--on ", "--version "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, out.String())
		}
	}
	if err := newSet(&c).Parse([]string{"--nope"}, env(), io.Discard); err == nil || !strings.Contains(err.Error(), "unknown flag: --nope") {
		t.Errorf("an unknown flag gave %v", err)
	}
	if err := newSet(&c).Parse([]string{"extra"}, env(), io.Discard); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("a stray argument gave %v", err)
	}
	if opts := newSet(&c).Options(); len(opts) != 5 || opts[3].Env != "VMAFX_TEST_WAIT" || opts[3].Default != "1m0s" {
		t.Errorf("Options() = %+v", opts)
	}
}

// TestResolveAfterAnotherParser: a command parser (cobra) parses FlagSet, Resolve applies
// the variables and says which settings were given; a one-letter flag is its own
// shorthand; sizes read and print with their suffixes.
func TestResolveAfterAnotherParser(t *testing.T) {
	var c settings
	var level int
	var size int64
	var style, unset *bool
	s := newSet(&c)
	s.OptBool(&style, "style", "VMAFX_TEST_STYLE", "a style")
	s.OptBool(&unset, "unset", "VMAFX_TEST_UNSET", "not given")
	s.IntP(&level, "v", "v", "VMAFX_TEST_VERBOSITY", 0, 0, NoMax, "log verbosity")
	s.Size(&size, "size", "VMAFX_TEST_SIZE", 20<<30, "how big")
	if err := s.FlagSet().Parse([]string{"-v", "3", "--n=4", "--style"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(env("VMAFX_TEST_SIZE", "500M")); err != nil {
		t.Fatal(err)
	}
	if level != 3 || c.n != 4 || size != 500e6 || !s.Given("v") || !s.Given("size") || s.Given("wait") {
		t.Errorf("-v %d, --n %d, --size %d, given v %v size %v wait %v", level, c.n, size, s.Given("v"), s.Given("size"), s.Given("wait"))
	}
	if style == nil || !*style || unset != nil {
		t.Errorf("--style gave %v, nothing gave %v; want true and nil", style, unset)
	}
	err := newSet(&c).Parse(nil, env("VMAFX_TEST_N", "-1"), io.Discard)
	s = New("vmafx-test", "")
	s.IntP(&level, "v", "v", "VMAFX_TEST_VERBOSITY", 0, 0, NoMax, "log verbosity")
	err = errors.Join(err, s.Parse([]string{"-v=-2"}, env(), io.Discard))
	for _, want := range []string{`VMAFX_TEST_N (or --n)="-1": must be a whole number from 1 to 10`, `-v (or VMAFX_TEST_VERBOSITY)="-2": must be a whole number, 0 or more`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	var out bytes.Buffer
	s = New("vmafx-test", "")
	s.Size(&size, "size", "VMAFX_TEST_SIZE", 20<<30, "how big")
	s.PrintUsage(&out)
	for _, want := range []string{"--size size", "(env VMAFX_TEST_SIZE) (default 20Gi)", "--version"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, out.String())
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1000": 1000, "64Gi": 64 << 30, "500M": 500e6, "2k": 2000, "1.5G": 1500e6, "1e6": 1e6, "3Mi": 3 << 20} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		if got, err := ParseSize(FormatSize(want)); err != nil || got != want {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", want, FormatSize(want), got, err)
		}
	}
	// 2K: the quantity's decimal kilo is k; 1.5: a byte is whole.
	for _, in := range []string{"", "-1", "1.5", "2K", "12Q", "99999999999Ti", "10Ei"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded, want an error", in)
		}
	}
	for n, want := range map[int64]string{256 << 30: "256Gi", 500e6: "500M", 0: "0", 1000: "1k", 1536: "1536"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestUsageWithCommands(t *testing.T) {
	var out bytes.Buffer
	Usage{
		Lines:    []string{"vmafx-test COMMAND [flags]", "vmafx-test version"},
		Summary:  "vmafx-test tests.",
		Commands: [][2]string{{"score", "score a video"}, {"version", "print the version"}},
		Flags:    New("vmafx-test", "").FlagSet(),
	}.Print(&out)
	want := "Usage: vmafx-test COMMAND [flags]\n       vmafx-test version\n\nvmafx-test tests.\n\nCommands:\n  score    score a video\n  version  print the version\n\n"
	if !strings.HasPrefix(out.String(), want) || !strings.Contains(out.String(), "--version   print the version and exit") {
		t.Errorf("usage:\n%s\nwant it to start with:\n%s", out.String(), want)
	}
}
