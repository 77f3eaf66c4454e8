package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
)

// The connections to a URI's own host are the user's choice wherever its name points,
// with two exceptions checked on every dial, first request, retries, resumes and
// redirects back to the same host alike:
//   - a link-local address (169.254.0.0/16, fe80::/10: the cloud's instance metadata
//     service) is never a video source, and would hand the node's credentials to any
//     job that names it, so it is refused unless --http-allow-cidrs names it;
//   - a name that first reached a public address may not later reach a private,
//     loopback or link-local one (DNS rebinding: the server answers the first
//     request, then points its name inside the cluster for the retry or the
//     redirect back to itself).

// hostGuard remembers, for one Open, whether the URI's host was first reached at a
// public address.
type hostGuard struct {
	mu     sync.Mutex
	first  netip.Addr // the first address dialled; invalid until then
	public bool
}

type hostGuardKey struct{}

// withHostGuard returns ctx carrying a new guard for the dials of one Open.
func withHostGuard(ctx context.Context) context.Context {
	return context.WithValue(ctx, hostGuardKey{}, &hostGuard{})
}

// admit says whether a connection to a may be made under p for the guard in ctx (a
// context without one only gets the link-local check).
func (p RedirectPolicy) admit(ctx context.Context, a netip.Addr) error {
	a = a.Unmap()
	if (a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast()) && !p.allowedCIDR(a) {
		return &refusedError{fmt.Sprintf("%s is a link-local address, where clouds serve instance metadata (the worker's --http-allow-cidrs allows it)", a)}
	}
	g, _ := ctx.Value(hostGuardKey{}).(*hostGuard)
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.first.IsValid() {
		// Public as such, whatever the policy allows.
		g.first, g.public = a, (RedirectPolicy{}).checkAddr(a) == nil
		return nil
	}
	if g.public {
		if err := p.checkAddr(a); err != nil {
			return &refusedError{fmt.Sprintf("the host first reached at %s now resolves to %s, which is not public (DNS rebinding; the worker's --http-allow-private or --http-allow-cidrs allow it)", g.first, a)}
		}
	}
	return nil
}

// allowedCIDR reports whether one of p.AllowCIDRs holds a.
func (p RedirectPolicy) allowedCIDR(a netip.Addr) bool {
	for _, c := range p.AllowCIDRs {
		if c.Contains(a) {
			return true
		}
	}
	return false
}

// guardedDial returns a DialContext that resolves the host with lookup and dials only
// the addresses admit allows, so that the check applies to the address actually
// dialled. dial and lookup are a net.Dialer's and net.DefaultResolver's unless a test
// sets others.
func (p RedirectPolicy) guardedDial(dial func(context.Context, string, string) (net.Conn, error), lookup func(context.Context, string) ([]netip.Addr, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else if addrs, err = lookup(ctx, host); err != nil {
			return nil, err
		}
		var errs []error
		for _, a := range addrs {
			if err := p.admit(ctx, a); err != nil {
				errs = append(errs, err)
				continue
			}
			c, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		if len(errs) == 0 {
			return nil, fmt.Errorf("%s: no address", host)
		}
		return nil, errors.Join(errs...)
	}
}

// defaultLookup resolves host with the system's resolver.
func defaultLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}
