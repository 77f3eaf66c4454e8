package command

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/vmafx/vmafx/worker/internal/report"
)

// TestTrainFlags checks that the train command refuses a bad command line before it
// reaches for the API server, naming the flag.
func TestTrainFlags(t *testing.T) {
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
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"train"}, tc.args...), func(k string) string { return tc.env[k] }, &stdout, &stderr)
		if code != report.ExitBadInput || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("train %v (env %v): exit %d, stderr %q; want exit %d naming %s", tc.args, tc.env, code, stderr.String(), report.ExitBadInput, tc.want)
		}
	}
	var stdout bytes.Buffer
	if code := Run(context.Background(), []string{"train", "-h"}, func(string) string { return "" }, &stdout, &bytes.Buffer{}); code != 0 ||
		!strings.Contains(stdout.String(), "-registry-plain-http") {
		t.Errorf("train -h: exit %d\n%s", code, stdout.String())
	}
}
