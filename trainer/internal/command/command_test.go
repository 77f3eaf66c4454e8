package command

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestFlags checks that the trainer refuses a bad command line before it reaches for
// the API server, naming the flag.
func TestFlags(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, "--training"},
		{[]string{"--training", "just-a-name"}, nil, "--training"},
		{[]string{"--training", "ns/run", "--poll", "soon"}, nil, "--poll"},
		{nil, map[string]string{"VMAFX_TRAINING": "ns/run", "VMAFX_POLL": "-1s"}, "--poll"},
		{[]string{"--no-such-flag"}, nil, "no-such-flag"},
		{[]string{"train", "--training", "ns/run"}, nil, "unexpected arguments"},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), tc.args, func(k string) string { return tc.env[k] }, &stdout, &stderr)
		if code != ExitBadInput || !strings.Contains(stderr.String(), tc.want) || !strings.HasPrefix(stderr.String(), Name+": ") {
			t.Errorf("%v (env %v): exit %d, stderr %q; want exit %d naming %s", tc.args, tc.env, code, stderr.String(), ExitBadInput, tc.want)
		}
	}
	var stdout bytes.Buffer
	if code := Run(context.Background(), []string{"-h"}, func(string) string { return "" }, &stdout, &bytes.Buffer{}); code != ExitOK ||
		!strings.Contains(stdout.String(), "-registry-plain-http") || !strings.Contains(stdout.String(), "(env VMAFX_TRAINING)") {
		t.Errorf("-h: exit %d\n%s", code, stdout.String())
	}
}
