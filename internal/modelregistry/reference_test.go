package modelregistry

import (
	"strings"
	"testing"
)

func TestParseReference(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	cases := []struct {
		in   string
		want Reference
		ok   bool
	}{
		{"oci://ghcr.io/vmafx/models:v3", Reference{"ghcr.io", "vmafx/models", "v3"}, true},
		{"oci://10.96.0.12:5000/models@" + digest, Reference{"10.96.0.12:5000", "models", digest}, true},
		{"oci://registry:5000/a/b-c/d__e:run-1-v2", Reference{"registry:5000", "a/b-c/d__e", "run-1-v2"}, true},
		{"oci://ghcr.io/vmafx/models", Reference{}, false},
		{"oci://ghcr.io:v1", Reference{}, false},
		{"oci://ghcr.io/Vmafx/models:v1", Reference{}, false},
		{"vmaf_v0.6.1", Reference{}, false},
		{"oci://ghcr.io/m@sha256:abc", Reference{}, false},
	}
	for _, tc := range cases {
		got, err := ParseReference(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseReference(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && got.String() != tc.in {
			t.Errorf("String() = %q; want %q", got.String(), tc.in)
		}
	}
	repo, err := ParseRepository("ghcr.io/vmafx/models")
	if err != nil || repo != (Reference{"ghcr.io", "vmafx/models", ""}) {
		t.Errorf("ParseRepository = %+v, %v", repo, err)
	}
	if _, err := ParseRepository("ghcr.io/vmafx/models:v1"); err == nil {
		t.Error("ParseRepository accepted a tag")
	}
}
