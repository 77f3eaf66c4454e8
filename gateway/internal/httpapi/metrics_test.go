package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func seriesCount(t *testing.T, reg prometheus.Gatherer) int {
	t.Helper()
	n, err := testutil.GatherAndCount(reg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A flood of invented methods and paths, authenticated or not, adds no series beyond the
// fixed sets: the routes, the standard methods and "other", and the codes the API answers.
func TestInventedMethodsAddNoSeries(t *testing.T) {
	reg := prometheusRegistry()
	srv := httptest.NewServer(New(testStore, NewMetrics(reg), nil).Handler())
	defer srv.Close()
	do := func(method, path string) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	for _, m := range []string{"GET", "POST", "DELETE", "INVENTED0"} {
		do(m, "/v1/namespaces/a/jobs")
		do(m, "/nowhere")
	}
	before := seriesCount(t, reg)
	for i := range 2000 {
		do(fmt.Sprintf("INVENTED%d", i), fmt.Sprintf("/v1/namespaces/a/jobs/%d", i))
		do(fmt.Sprintf("X%dY", i), fmt.Sprintf("/junk/%d", i))
	}
	after := seriesCount(t, reg)
	t.Logf("series: %d before the flood, %d after 4000 requests with invented methods", before, after)
	if after > before {
		t.Errorf("invented methods added %d series (before %d, after %d)", after-before, before, after)
	}
	if after > 100 {
		t.Errorf("%d series; want at most 100", after)
	}
}

func TestMethodLabel(t *testing.T) {
	for in, want := range map[string]string{"GET": "GET", "OPTIONS": "OPTIONS", "get": "other", "PROPFIND": "other", "": "other"} {
		if got := MethodLabel(in); got != want {
			t.Errorf("MethodLabel(%q) = %q; want %q", in, got, want)
		}
	}
}
