package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelp prints the flags with their environment twins, --version among them, and
// exits 0; an unknown flag is refused with exit 2, naming it.
func TestHelp(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--help"}, none, &stdout, &stderr); code != 0 {
		t.Fatalf("--help exit code %d, stderr %q", code, stderr.String())
	}
	for _, want := range []string{"Usage: vmafx-device-plugin [flags]", "VMAFX_", "--version "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, stdout.String())
		}
	}
	stderr.Reset()
	if code := run([]string{"--no-such-flag"}, none, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "no-such-flag") {
		t.Errorf("an unknown flag: exit %d, stderr %q; want 2 naming it", code, stderr.String())
	}
}
