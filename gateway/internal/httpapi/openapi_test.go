package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOpenAPIMatchesRoutes fails when a route is served that the document does not
// describe, or described and not served, or when the document is not OpenAPI 3.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi = %q, want 3.x", doc.OpenAPI)
	}
	var documented, served []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if method == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
			var o struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
				Security    *[]any                     `json:"security"`
			}
			if err := json.Unmarshal(op, &o); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			if o.OperationID == "" || len(o.Responses) == 0 {
				t.Errorf("%s %s: no operationId or responses", method, path)
			}
			public := o.Security != nil && len(*o.Security) == 0
			for _, rt := range Routes {
				if rt.Path == path && strings.EqualFold(rt.Method, method) && rt.Public != public {
					t.Errorf("%s %s: public %v in the document, %v in Routes", method, path, public, rt.Public)
				}
			}
		}
	}
	for _, rt := range Routes {
		served = append(served, rt.Method+" "+rt.Path)
	}
	sort.Strings(documented)
	sort.Strings(served)
	if diff := cmp.Diff(documented, served); diff != "" {
		t.Errorf("documented vs served routes (-document,+routes):\n%s", diff)
	}
}

// TestRoutesAreServed checks that every route reaches a handler: a request without a
// token gets the door's 401, not the mux's 404 or 405.
func TestRoutesAreServed(t *testing.T) {
	api := New(testStore, NewMetrics(prometheusRegistry()), nil)
	h := api.Handler()
	for _, rt := range Routes {
		if rt.Public {
			continue
		}
		path := strings.NewReplacer("{namespace}", "team-a", "{name}", "job-1").Replace(rt.Path)
		req, _ := http.NewRequest(rt.Method, path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s %s: %d, want 401", rt.Method, path, rec.Code)
		}
	}
}
