package backend

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSelect(t *testing.T) {
	tests := []struct {
		requested string
		want      string
		fellBack  bool
	}{
		{requested: "", want: "cpu"},
		{requested: "cpu", want: "cpu"},
		{requested: "auto", want: "cpu"},
		{requested: "cuda", want: "cpu", fellBack: true},
		{requested: "hip", want: "cpu", fellBack: true},
		{requested: "sycl", want: "cpu", fellBack: true},
		{requested: "vulkan", want: "cpu", fellBack: true},
		{requested: "tpu", want: "cpu", fellBack: true},
	}
	for _, tc := range tests {
		t.Run(tc.requested, func(t *testing.T) {
			b, reason := Select(tc.requested)
			if diff := cmp.Diff(tc.want, b.Name()); diff != "" {
				t.Errorf("backend (-want +got):\n%s", diff)
			}
			if got := reason != ""; got != tc.fellBack {
				t.Errorf("reason = %q, want a reason: %v", reason, tc.fellBack)
			}
		})
	}
}
