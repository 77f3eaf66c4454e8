package fetch

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestNoDefaultCredentialChain runs an s3:// read with no credentials of its own while
// the environment holds AWS keys, as a node or a worker ServiceAccount with workload
// identity would: without DefaultCredentials the request reaching the endpoint must be
// unsigned, with it the SDK's default chain signs it with the environment's key.
func TestNoDefaultCredentialChain(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDNODEKEY")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "node-secret")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
	}))
	defer srv.Close()
	u, _ := url.Parse("s3://clips/ref.mkv")
	for _, tc := range []struct {
		name     string
		defaults bool
		signed   bool
	}{
		{"off (the default)", false, false},
		{"on", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			auth = nil
			mu.Unlock()
			pathStyle := true
			s := NewStores(StoreOptions{S3Endpoint: srv.URL, S3Region: "us-east-1", S3PathStyle: &pathStyle,
				DefaultCredentials: tc.defaults, Limits: HTTPOptions{Attempts: 1}})
			defer s.Close()
			_, err := s.Open(t.Context(), u)
			if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
				t.Fatalf("Open: %v; want the endpoint's AccessDenied", err)
			}
			if anonymous := strings.Contains(err.Error(), "anonymous request"); anonymous == tc.signed {
				t.Errorf("Open: %v; want it to say the request was anonymous: %v", err, !tc.signed)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(auth) == 0 {
				t.Fatal("no request reached the endpoint")
			}
			for _, a := range auth {
				if signed := strings.Contains(a, "AKIDNODEKEY"); signed != tc.signed {
					t.Errorf("Authorization %q: signed with the environment's key %v, want %v", a, signed, tc.signed)
				}
				if !tc.signed && a != "" {
					t.Errorf("Authorization %q; want an unsigned request", a)
				}
			}
		})
	}
}
