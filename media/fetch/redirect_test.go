package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestRedirects(t *testing.T) {
	// target serves the video on 127.0.0.1; its requests are counted, so that a
	// refused redirect is seen to send nothing.
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write(video)
	}))
	defer target.Close()
	tu, err := url.Parse(target.URL)
	if err != nil {
		t.Fatal(err)
	}
	// A name for the same address, to check the address dialled rather than the URL.
	byName := "http://localhost:" + tu.Port() + "/v/clip.yuv?X-Amz-Signature=secret"
	redirector := func(to string) *url.URL {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/self" {
				w.Write(video)
				return
			}
			loc := to
			if to == "self" {
				loc = "/self?token=secret"
			}
			http.Redirect(w, r, loc, http.StatusFound)
		}))
		t.Cleanup(srv.Close)
		u, err := ParseURI(srv.URL + "/start?sig=secret")
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	tests := []struct {
		name     string
		to       string
		policy   RedirectPolicy
		wantErr  string // "" for success
		wantHits int64
	}{
		{name: "loopback address refused", to: target.URL + "/v/clip.yuv?X-Amz-Signature=secret", wantErr: "is a loopback address"},
		{name: "loopback by name refused when dialled", to: byName, wantErr: "is a loopback address"},
		{name: "link-local refused without a connection", to: "http://169.254.169.254/latest/meta-data/", wantErr: "169.254.169.254 is a link-local address"},
		{name: "private refused", to: "http://10.1.2.3/x", wantErr: "10.1.2.3 is a private address"},
		{name: "shared range refused", to: "http://100.64.0.1/x", wantErr: "100.64.0.1 is a private address"},
		{name: "other scheme refused", to: "file:///etc/passwd", wantErr: "not an http(s) URL"},
		{name: "same host allowed", to: "self"},
		{name: "private allowed", to: target.URL + "/v/clip.yuv", policy: RedirectPolicy{AllowPrivate: true}, wantHits: 1},
		{name: "allowed CIDR", to: byName, policy: RedirectPolicy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}, wantHits: 1},
		{name: "other CIDR still refused", to: byName, policy: RedirectPolicy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, wantErr: "is a loopback address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			opts := testOptions
			opts.Redirects = tc.policy
			u := redirector(tc.to)
			obj, err := NewHTTP(opts).Open(context.Background(), u)
			if tc.wantErr != "" {
				var fe *Error
				if !errors.As(err, &fe) || !errors.Is(err, ErrRedirectRefused) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want an *Error wrapping ErrRedirectRefused mentioning %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("err = %q echoes a query string", err)
				}
				if hits.Load() != 0 {
					t.Errorf("the refused target got %d requests", hits.Load())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			data, err := io.ReadAll(obj)
			if err != nil || len(data) != len(video) {
				t.Fatalf("read %d bytes, %v", len(data), err)
			}
			if hits.Load() != tc.wantHits {
				t.Errorf("target got %d requests, want %d", hits.Load(), tc.wantHits)
			}
		})
	}
}

func TestCheckHop(t *testing.T) {
	parse := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	tests := []struct {
		name     string
		from, to string
		policy   RedirectPolicy
		wantErr  string
	}{
		{name: "https to https", from: "https://a.example/x", to: "https://8.8.8.8/y"},
		{name: "downgrade refused", from: "https://a.example/x", to: "http://8.8.8.8/y?sig=secret", wantErr: "downgrades to plain http"},
		{name: "downgrade allowed", from: "https://a.example/x", to: "http://8.8.8.8/y", policy: RedirectPolicy{AllowDowngrade: true}},
		{name: "downgrade refused on the same host", from: "https://a.example/x", to: "http://a.example/y", wantErr: "downgrades"},
		{name: "mapped IPv4 loopback", from: "http://a.example/", to: "http://[::ffff:127.0.0.1]/", wantErr: "loopback"},
		{name: "IPv6 link-local", from: "http://a.example/", to: "http://[fe80::1]/", wantErr: "link-local"},
		{name: "IPv6 unique local", from: "http://a.example/", to: "http://[fd00::1]/", wantErr: "private"},
		{name: "unspecified", from: "http://a.example/", to: "http://0.0.0.0/", wantErr: "unspecified"},
		{name: "public", from: "http://a.example/", to: "http://203.0.113.7/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.checkHop(context.Background(), parse(tc.from), parse(tc.to), false, false)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrRedirectRefused) || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secret") {
				t.Fatalf("err = %v, want ErrRedirectRefused mentioning %q, without the query", err, tc.wantErr)
			}
		})
	}
}

func TestParseCIDRs(t *testing.T) {
	got, err := ParseCIDRs(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8,")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "192.168.1.7/32", "fd00::/8"}
	for i, p := range got {
		if i >= len(want) || p.String() != want[i] {
			t.Fatalf("ParseCIDRs = %v, want %v", got, want)
		}
	}
	if _, err := ParseCIDRs("10.0.0.0/99"); err == nil {
		t.Error("ParseCIDRs accepted 10.0.0.0/99")
	}
}
