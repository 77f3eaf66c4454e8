package push

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestResult checks the request a Pushgateway receives: PUT to /metrics/job/<job> with the
// result's gauges in the text format. The real Pushgateway is exercised in the e2e.
func TestResult(t *testing.T) {
	var method, path, body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		method, path, body = r.Method, r.URL.Path, string(b)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	r := &vmafxv1.WorkerResult{Score: 93.5, Min: 80, Max: 99, HarmonicMean: 93, Frames: 48, FPS: 120, WallSeconds: 0.4, Model: "vmaf_v0.6.1", Backend: "cpu"}
	if err := Result(context.Background(), srv.URL, "vmafx-score-1", r); err != nil {
		t.Fatal(err)
	}
	if method != http.MethodPut || path != "/metrics/job/vmafx-score-1" {
		t.Errorf("%s %s, want PUT /metrics/job/vmafx-score-1", method, path)
	}
	// The body is protobuf-delimited by default; the names and labels appear in it.
	for _, want := range []string{"vmafx_batch_score", "vmafx_batch_frames", "vmafx_batch_fps", "vmafx_batch_duration_seconds", "vmaf_v0.6.1"} {
		if !strings.Contains(body, want) {
			t.Errorf("pushed body lacks %s", want)
		}
	}
}

func TestResultReportsAFailedPush(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv.Close()
	err := Result(context.Background(), srv.URL, "j", &vmafxv1.WorkerResult{})
	if err == nil || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("err = %v, want one naming the gateway", err)
	}
}
