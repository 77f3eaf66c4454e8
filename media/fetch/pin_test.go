package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMetadataAddressIsRefused: a URI the job names at the link-local metadata address
// is refused before any connection, by name or by address; --http-allow-cidrs allows it.
func TestMetadataAddressIsRefused(t *testing.T) {
	var dials atomic.Int32
	dial := func(context.Context, string, string) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("no network in this test")
	}
	lookup := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
	}
	for _, uri := range []string{"http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal/computeMetadata/v1/", "http://[fe80::a9fe:a9fe%25eth0]/"} {
		h := NewHTTP(HTTPOptions{Attempts: 1, dial: dial, lookup: lookup})
		u, _ := url.Parse(uri)
		_, err := h.Open(t.Context(), u)
		if !errors.Is(err, ErrRedirectRefused) || !strings.Contains(err.Error(), "link-local") {
			t.Errorf("%s: %v; want a refusal naming the link-local address", uri, err)
		}
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d dials; want none", n)
	}
	h := NewHTTP(HTTPOptions{Attempts: 1, dial: dial, lookup: lookup,
		Redirects: RedirectPolicy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}}})
	u, _ := url.Parse("http://169.254.169.254/")
	if _, err := h.Open(t.Context(), u); errors.Is(err, ErrRedirectRefused) || dials.Load() != 1 {
		t.Errorf("allowed by --http-allow-cidrs: %v after %d dials; want the dial made", err, dials.Load())
	}
}

// TestRebindingIsRefused: a host first reached at a public address that resolves to a
// private one for the next connection (a redirect back to itself, or a retry) is
// refused; a host that was private from the start stays reachable.
func TestRebindingIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		first   string // the response that makes the worker connect again
		initial string // the host's address for the first connection
		wantErr bool
	}{
		{"a redirect to the same host", "redirect", "203.0.113.10", true},
		{"a retry", "retry", "203.0.113.10", true},
		{"a private host from the start", "redirect", "10.1.2.3", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// Each response closes its connection, so each request dials anew.
				w.Header().Set("Connection", "close")
				if requests.Add(1) == 1 {
					if tc.first == "redirect" {
						http.Redirect(w, r, "/again", http.StatusFound)
					} else {
						w.WriteHeader(http.StatusServiceUnavailable)
					}
					return
				}
				_, _ = w.Write([]byte("video"))
			}))
			defer srv.Close()
			var lookups atomic.Int32
			lookup := func(context.Context, string) ([]netip.Addr, error) {
				if lookups.Add(1) == 1 {
					return []netip.Addr{netip.MustParseAddr(tc.initial)}, nil
				}
				return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
			}
			// Every address the guard lets through reaches the test server.
			dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, srv.Listener.Addr().String())
			}
			h := NewHTTP(HTTPOptions{Attempts: 3, Backoff: time.Millisecond, dial: dial, lookup: lookup})
			u, _ := url.Parse("http://media.example/clip.y4m")
			obj, err := h.Open(t.Context(), u)
			if tc.wantErr {
				if !errors.Is(err, ErrRedirectRefused) || !strings.Contains(err.Error(), "10.0.0.5") || !strings.Contains(err.Error(), "rebinding") {
					t.Fatalf("Open: %v; want a refusal naming 10.0.0.5 and DNS rebinding", err)
				}
				if n := requests.Load(); n != 1 {
					t.Errorf("%d requests reached the server; want only the first", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			obj.Close()
		})
	}
}
