package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// maxRedirects is the longest redirect chain followed, as net/http's default.
const maxRedirects = 10

// ErrRedirectRefused reports a redirect the RedirectPolicy does not allow.
var ErrRedirectRefused = errors.New("redirect refused")

// RedirectPolicy says which HTTP redirects are followed. The URI a job names
// is the user's choice and is fetched wherever it points; a redirect is the
// server's, and by default it may neither downgrade https to http nor lead
// to a loopback, link-local (cloud metadata), private or shared (CGNAT)
// address, which would let any web server read the cluster's internal
// services through the worker.
type RedirectPolicy struct {
	// AllowPrivate follows redirects to any address.
	AllowPrivate bool
	// AllowCIDRs are ranges redirects may lead to although they are private.
	AllowCIDRs []netip.Prefix
	// AllowDowngrade follows redirects from https:// to http://.
	AllowDowngrade bool
}

// ParseCIDRs parses a comma-separated list of CIDRs (or single addresses).
func ParseCIDRs(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not a CIDR or an IP address", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// sharedRange is RFC 6598's carrier-grade NAT range, where some clusters put
// their Pods and Services.
var sharedRange = netip.MustParsePrefix("100.64.0.0/10")

// checkAddr returns why a redirect may not lead to a, or nil.
func (p RedirectPolicy) checkAddr(a netip.Addr) error {
	a = a.Unmap()
	var kind string
	switch {
	case a.IsLoopback():
		kind = "a loopback"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		kind = "a link-local"
	case a.IsPrivate() || sharedRange.Contains(a):
		kind = "a private"
	case a.IsUnspecified():
		kind = "an unspecified"
	default:
		return nil
	}
	if p.AllowPrivate {
		return nil
	}
	if p.allowedCIDR(a) {
		return nil
	}
	return &refusedError{fmt.Sprintf("%s is %s address (the worker's --http-allow-private or --http-allow-cidrs allow it)", a, kind)}
}

// refusedError is a refusal by address, which the dialer returns wrapped in
// its own errors.
type refusedError struct{ msg string }

func (e *refusedError) Error() string        { return ErrRedirectRefused.Error() + ": " + e.msg }
func (e *refusedError) Is(target error) bool { return target == ErrRedirectRefused }

// checkHop returns why the redirect from one URL to the next is refused, or
// nil. A redirect back to the URI's own host (home) needs no address check.
// Literal addresses are checked here; host names when the connection is
// made (see control), or here when a proxy makes it.
func (p RedirectPolicy) checkHop(ctx context.Context, from, to *url.URL, home, proxied bool) error {
	if to.Scheme != "http" && to.Scheme != "https" {
		return fmt.Errorf("%w: to %s, not an http(s) URL", ErrRedirectRefused, Redact(to))
	}
	if from.Scheme == "https" && to.Scheme == "http" && !p.AllowDowngrade {
		return fmt.Errorf("%w: from https to %s downgrades to plain http (the worker's --http-allow-downgrade allows it)", ErrRedirectRefused, Redact(to))
	}
	if home {
		return nil
	}
	host := to.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if err := p.checkAddr(a); err != nil {
			return fmt.Errorf("to %s: %w", Redact(to), err)
		}
		return nil
	}
	if !proxied {
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("%w: to %s: %w", ErrRedirectRefused, Redact(to), err)
	}
	for _, a := range addrs {
		if err := p.checkAddr(a); err != nil {
			return fmt.Errorf("to %s: %w", Redact(to), err)
		}
	}
	return nil
}

// control checks the address a redirect's connection goes to, after
// name resolution, so that a name that resolves to a private address is
// caught too.
func (p RedirectPolicy) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: dialing %q", ErrRedirectRefused, address)
	}
	return p.checkAddr(a)
}

// sameHost reports whether a and b name the same host and port.
func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// isRedirect reports whether an HTTP status is a redirect with a Location.
func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}
