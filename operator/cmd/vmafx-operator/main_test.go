package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestInvalidEnvironmentStopsAtStart runs the operator's entry point with an invalid
// setting: it must exit 2 before contacting any API server, naming the variable.
func TestInvalidEnvironmentStopsAtStart(t *testing.T) {
	env := map[string]string{"VMAFX_OPERATOR_NODE_STALE_AFTER": "soon", "KUBECONFIG": "/nonexistent"}
	var stderr bytes.Buffer
	code := run(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &stderr)
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "VMAFX_OPERATOR_NODE_STALE_AFTER") {
		t.Errorf("stderr %q does not name the variable", stderr.String())
	}
}
