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
	code := run(context.Background(), nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &bytes.Buffer{}, &stderr)
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "VMAFX_OPERATOR_NODE_STALE_AFTER") {
		t.Errorf("stderr %q does not name the variable", stderr.String())
	}
}

// TestHelp prints the flags with their environment twins and exits 0.
func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, func(string) (string, bool) { return "", false }, &stdout, &stderr); code != 0 {
		t.Fatalf("--help exit code %d, stderr %q", code, stderr.String())
	}
	for _, want := range []string{"Usage: vmafx-operator [flags]", "--node-stale-after", "VMAFX_OPERATOR_NODE_STALE_AFTER", `(default 1m0s)`, "--kube-api-qps int ", "--version "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestFlagWinsOverItsVariable gives both; the flag's invalid value is the one refused.
func TestFlagWinsOverItsVariable(t *testing.T) {
	env := map[string]string{"VMAFX_OPERATOR_NODE_STALE_AFTER": "90s", "KUBECONFIG": "/nonexistent"}
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--node-stale-after=soon"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &bytes.Buffer{}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), `--node-stale-after (or VMAFX_OPERATOR_NODE_STALE_AFTER)="soon"`) {
		t.Errorf("exit %d, stderr %q; want 2 naming the flag, its variable and the value", code, stderr.String())
	}
}

// TestOldSettingsAreNamed: a variable of the original operator README, set, is named at
// start with what replaces it, instead of being ignored without a word.
func TestOldSettingsAreNamed(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent/kubeconfig") // stop right after the start lines
	env := map[string]string{"VMAFX_OPERATOR_LEADER_ELECT": "true", "VMAFX_CONTROLLER_GRPC_ADDR": ":9090"}
	var stderr bytes.Buffer
	run(context.Background(), nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &bytes.Buffer{}, &stderr)
	for _, want := range []string{`"variable":"VMAFX_OPERATOR_LEADER_ELECT","instead":"renamed VMAFX_OPERATOR_LEADER_ELECTION"`, `"variable":"VMAFX_CONTROLLER_GRPC_ADDR"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the start log lacks %s:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "VMAFX_OPERATOR_WEBHOOKS_ENABLED") {
		t.Error("a setting that was not set is named")
	}
}
