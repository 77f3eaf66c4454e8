package v1

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestJobLabelValue(t *testing.T) {
	long := strings.Repeat("a", 200) + "." + strings.Repeat("b", 52)
	cases := []struct {
		name string
		same bool // the label is the name itself
	}{
		{"p01", true},
		{strings.Repeat("x", 63), true},
		{strings.Repeat("x", 64), false},
		{strings.Repeat("a", 51) + "." + strings.Repeat("c", 30), false}, // cut right after the dot
		{long, false},
	}
	seen := map[string]string{}
	for _, tc := range cases {
		got := JobLabelValue(tc.name)
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("JobLabelValue(%d chars) = %q is not a label value: %v", len(tc.name), got, errs)
		}
		if (got == tc.name) != tc.same {
			t.Errorf("JobLabelValue(%q) = %q; want the name itself: %v", tc.name, got, tc.same)
		}
		if JobLabelValue(tc.name) != got {
			t.Errorf("JobLabelValue(%q) is not deterministic", tc.name)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%q and %q share the label %q", other, tc.name, got)
		}
		seen[got] = tc.name
	}
}
