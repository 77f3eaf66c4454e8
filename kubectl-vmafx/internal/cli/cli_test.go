package cli

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestModelCompletion: the shell completion of score --model offers every built-in
// model, VMAF v1's included, and no files.
func TestModelCompletion(t *testing.T) {
	var out bytes.Buffer
	cmd := New(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &bytes.Buffer{}})
	cmd.SetArgs([]string{"__complete", "score", "--model", ""})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(got) != len(vmafxv1.BuiltinModels)+1 || !strings.HasPrefix(got[len(got)-1], ":4") {
		t.Fatalf("completion:\n%s\nwant the %d built-in models and :4 (no files)", out.String(), len(vmafxv1.BuiltinModels))
	}
	for i, m := range vmafxv1.BuiltinModels {
		if got[i] != m {
			t.Errorf("completion %d = %q, want %q", i, got[i], m)
		}
	}
}
