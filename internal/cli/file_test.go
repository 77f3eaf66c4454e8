package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fileSettings are settings of which all but one may be set in a config file. The keys
// avoid n and on, which YAML 1.1 reads as booleans.
type fileSettings struct {
	file  string
	n     int
	wait  time.Duration
	name  string
	on    bool
	color string
}

func newFileSet(c *fileSettings) *Set {
	s := New("vmafx-test", "vmafx-test tests the config file.")
	s.File(&c.file, "config", "VMAFX_TEST_CONFIG", "config.vmafx.dev/v1", "TestConfig", "config file")
	s.Key("count").Int(&c.n, "n", "VMAFX_TEST_N", 3, 1, 10, "how many")
	s.Key("wait").Duration(&c.wait, "wait", "VMAFX_TEST_WAIT", time.Minute, "how long")
	s.Key("name").String(&c.name, "name", "VMAFX_TEST_NAME", "dflt", "a name")
	s.Key("enabled").Bool(&c.on, "on", "VMAFX_TEST_ON", false, "turn it on")
	s.String(&c.color, "color", "VMAFX_TEST_COLOR", "red", "not in the file")
	return s
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte("apiVersion: config.vmafx.dev/v1\nkind: TestConfig\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFilePrecedence: a flag wins over its variable, the variable over the file, the
// file over the default; the file is named by its flag or its variable; Source says
// which gave each value.
func TestFilePrecedence(t *testing.T) {
	file := writeConfig(t, "count: 5\nwait: 2s\nname: from-file\nenabled: true\n")
	var c fileSettings
	s := newFileSet(&c)
	err := s.Parse([]string{"--n=7"}, env("VMAFX_TEST_CONFIG", file, "VMAFX_TEST_N", "6", "VMAFX_TEST_WAIT", "4s"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := fileSettings{file: file, n: 7, wait: 4 * time.Second, name: "from-file", on: true, color: "red"}
	if c != want {
		t.Errorf("settings %+v, want %+v", c, want)
	}
	for flag, src := range map[string]Source{"n": SourceFlag, "wait": SourceEnv, "name": SourceFile, "on": SourceFile, "color": SourceDefault, "config": SourceEnv} {
		if got := s.Source(flag); got != src {
			t.Errorf("Source(%s) = %s, want %s", flag, got, src)
		}
	}
	if s.Given("color") || !s.Given("name") {
		t.Errorf("Given: color %v, name %v; want false, true", s.Given("color"), s.Given("name"))
	}

	c = fileSettings{}
	other := writeConfig(t, "count: 2\n")
	if err := newFileSet(&c).Parse([]string{"--config", other}, env("VMAFX_TEST_CONFIG", file), io.Discard); err != nil {
		t.Fatal(err)
	}
	if c.file != other || c.n != 2 || c.name != "dflt" {
		t.Errorf("--config must win over its variable: %+v", c)
	}
}

// TestFileMistakes: every bad value is named by where it came from and the other ways to
// set it; a file of another type, an unknown key or a missing file is refused.
func TestFileMistakes(t *testing.T) {
	file := writeConfig(t, "count: 11\nwait: soon\ncolour: blue\ncolor: green\nname: null\n")
	var c fileSettings
	err := newFileSet(&c).Parse(nil, env("VMAFX_TEST_CONFIG", file), io.Discard)
	if err == nil {
		t.Fatal("accepted a bad file")
	}
	for _, want := range []string{
		"config file " + file + `: unknown field "color"`, // a setting without a key is not in the file
		`unknown field "colour"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	file = writeConfig(t, "count: 11\nwait: soon\nname: null\n")
	err = newFileSet(&c).Parse([]string{"--config=" + file}, env(), io.Discard)
	for _, want := range []string{
		`field count of config file ` + file + ` (or --n, VMAFX_TEST_N)="11": must be a whole number from 1 to 10`,
		`field wait of config file ` + file + ` (or --wait, VMAFX_TEST_WAIT)="soon": must be a positive duration`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	err = newFileSet(&c).Parse([]string{"--n=0"}, env(), io.Discard)
	if want := `--n (or VMAFX_TEST_N)="0"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a bad flag gave %v; want it named with its variable, %q", err, want)
	}

	for body, want := range map[string]string{
		"apiVersion: config.vmafx.dev/v2\nkind: TestConfig\n": `unsupported apiVersion "config.vmafx.dev/v2" kind "TestConfig"`,
		"n: 2\n":     `unsupported apiVersion "" kind ""`,
		"- n\n- 2\n": "must be a mapping",
	} {
		p := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		err := newFileSet(&c).Parse([]string{"--config", p}, env(), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("file %q gave %v; want %q", body, err, want)
		}
	}

	err = newFileSet(&c).Parse([]string{"--on=maybe"}, env("VMAFX_TEST_CONFIG", "/nonexistent/config.yaml"), io.Discard)
	for _, want := range []string{"reading config file", `--on (or VMAFX_TEST_ON)="maybe": must be true or false`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q (a missing file and a bad flag, both reported):\n%v", want, err)
		}
	}
}

// TestFileHelp: --help and Options name each setting's file key.
func TestFileHelp(t *testing.T) {
	var c fileSettings
	var out strings.Builder
	s := newFileSet(&c)
	s.PrintUsage(&out)
	for _, want := range []string{"(env VMAFX_TEST_N, file key count) (default 3)", "(env VMAFX_TEST_COLOR) (default \"red\")", "(env VMAFX_TEST_CONFIG)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, out.String())
		}
	}
	if opts := s.Options(); opts[0].Key != "" || opts[1].Key != "count" || opts[5].Key != "" {
		t.Errorf("Options() = %+v", opts)
	}
}

func TestEnvNameAndGetenv(t *testing.T) {
	for flag, want := range map[string]string{"pixel-format": "VMAFX_PIXEL_FORMAT", "backend": "VMAFX_BACKEND", "v": "VMAFX_VERBOSITY"} {
		if got := EnvName("VMAFX_", flag); got != want {
			t.Errorf("EnvName(VMAFX_, %s) = %s, want %s", flag, got, want)
		}
	}
	l := Getenv(func(name string) string { return map[string]string{"SET": "x", "EMPTY": ""}[name] })
	if v, ok := l("SET"); v != "x" || !ok {
		t.Errorf("SET: %q, %v", v, ok)
	}
	if _, ok := l("EMPTY"); ok {
		t.Error("an empty variable counts as set")
	}
}
