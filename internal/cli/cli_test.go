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
	for _, want := range []string{"Usage: vmafx-test [flags]", "vmafx-test tests", "--wait duration", "(env VMAFX_TEST_WAIT) (default 1m0s)", "--on "} {
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
