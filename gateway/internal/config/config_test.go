package config

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vmafx/vmafx/internal/cli"

	"github.com/vmafx/vmafx/internal/testutil"
)

var lookup = testutil.Env

// TestParse reads the shared settings from flags and their VMAFX_API_ twins, a door's own
// setting through extra, and klog's -v as the chart passes it.
func TestParse(t *testing.T) {
	var transport string
	c, err := Parse("vmafx-test", "VMAFX_API_", "test", []string{"-v=4", "--shutdown-timeout=5s"},
		lookup("VMAFX_API_ADDR", ":9443", "VMAFX_API_TOKEN_AUDIENCES", "a,b", "VMAFX_API_TRANSPORT", "stdio"), io.Discard,
		func(s *cli.Set, env func(string) string) {
			s.OneOf(&transport, "transport", env("transport"), "http", "transport", "http", "stdio")
		})
	if err != nil {
		t.Fatal(err)
	}
	if c.Serve.Addr != ":9443" || c.Serve.ProbeAddr != DefaultProbeAddr || c.Serve.ShutdownTimeout != 5*time.Second ||
		strings.Join(c.Audiences, ",") != "a,b" || transport != "stdio" {
		t.Errorf("config %+v, transport %q", c, transport)
	}
}

// Without a setting the doors accept tokens for their own audience only.
func TestParseDefaultAudience(t *testing.T) {
	c, err := Parse("vmafx-test", "VMAFX_API_", "test", nil, lookup(), io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Audiences, ",") != DefaultAudience {
		t.Errorf("audiences %q; want %q", c.Audiences, DefaultAudience)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, env := range map[string][]string{
		"VMAFX_API_SHUTDOWN_TIMEOUT": {"VMAFX_API_SHUTDOWN_TIMEOUT", "soon"},
		"VMAFX_API_ADDR":             {"VMAFX_API_ADDR", "8443"},
		"VMAFX_API_TLS_KEY_FILE":     {"VMAFX_API_TLS_CERT_FILE", "/tls/cert.pem"},
	} {
		_, err := Parse("vmafx-test", "VMAFX_API_", "test", nil, lookup(env...), io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v gave %v; want an error naming %s", env, err, name)
		}
	}
	var help strings.Builder
	if _, err := Parse("vmafx-test", "VMAFX_API_", "test", []string{"--help"}, lookup(), &help, nil); !errors.Is(err, cli.ErrHelp) || !strings.Contains(help.String(), "--version ") {
		t.Errorf("--help gave %v, without --version in:\n%s", err, help.String())
	}
}
