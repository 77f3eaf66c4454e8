package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestInventedMethodsAddNoSeries floods the API with methods it does not serve, each
// request its own invented method, at a served route, at the catch-all route and with
// no token, as an unauthenticated attacker would: the metrics must keep a fixed number
// of series, or every request would add series for the life of the process.
func TestInventedMethodsAddNoSeries(t *testing.T) {
	reg := prometheusRegistry()
	h := New(testStore, NewMetrics(reg)).Handler()
	for i := range 500 {
		method := fmt.Sprintf("X%dINVENTED%s", i, strings.Repeat("A", i%50))
		for _, path := range []string{"/v1/namespaces/ns/jobs", "/nowhere/" + method} {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, path, nil))
		}
	}
	// The known methods, to show that they are still told apart.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m, "/v1/namespaces/ns/jobs", nil))
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{}
	series := 0
	for _, f := range families {
		series += len(f.GetMetric())
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" {
					methods[l.GetValue()] = true
				}
			}
		}
	}
	for m := range methods {
		if methodLabel(m) != m {
			t.Errorf("a series has the method label %.40q, outside the fixed set", m)
		}
	}
	if !methods["other"] || !methods[http.MethodGet] {
		t.Errorf("method labels %v; want other and GET among them", methods)
	}
	// 1000 invented requests and 3 known ones: a handful of routes x methods x codes.
	if series > 40 {
		t.Errorf("%d series after 1000 requests with invented methods; want at most 40", series)
	}
}
