package httpapi

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmafx/vmafx/gateway/internal/jobs"
)

// Any body decodes to a VmafxJob or to a BadRequest, never a panic or another error.
func FuzzDecodeJob(f *testing.F) {
	f.Add(`{"metadata":{"name":"a"},"spec":{"reference":"s3://b/r.y4m","distorted":"s3://b/d.mp4"}}`)
	f.Add(`{"kind":"Secret","metadata":{"name":"a"}}`)
	f.Add(`{"spec":{"width":-1,"features":[{"name":"psnr","options":{"a":"b"}}]},"unknown":1}`)
	f.Add(`[1,2,3]`)
	f.Add(`{"metadata":{"labels":{"a":` + strings.Repeat("[", 1000))
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		job, err := decodeJob(strings.NewReader(body))
		if err != nil {
			if !apierrors.IsBadRequest(err) {
				t.Fatalf("decodeJob(%q): %v, not a BadRequest", body, err)
			}
			return
		}
		if job == nil || (job.Kind != "" && job.Kind != "VmafxJob") {
			t.Fatalf("decodeJob(%q) = %+v", body, job)
		}
	})
}

// Any ?wait= is a duration between 0 and the longest wait, or an error.
func FuzzParseWait(f *testing.F) {
	for _, s := range []string{"60", "60s", "2m", "10m", "11m", "601", "9223372036", "-1", "1e9", "99999999999999999999", "1h2m3s4ms", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := parseWait(v)
		if err == nil && (d < 0 || d > jobs.MaxWait) {
			t.Fatalf("parseWait(%q) = %s: outside 0..%s", v, d, jobs.MaxWait)
		}
	})
}
