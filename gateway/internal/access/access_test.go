package access

import (
	"net/http"
	"testing"
)

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		header, want string
		ok           bool
	}{
		{"Bearer abc.def", "abc.def", true},
		{"bearer abc", "abc", true},
		{"Basic dXNlcjpwYXNz", "", false},
		{"Bearer", "", false},
		{"Bearer a b", "", false},
		{"", "", false},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Authorization", tc.header)
		}
		got, ok := BearerToken(h)
		if got != tc.want || ok != tc.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tc.header, got, ok, tc.want, tc.ok)
		}
	}
}
