package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/access"
)

// The doors act as their caller: every API call made for a request impersonates the
// user the TokenReview returned (name, UID, groups and the extras below), so the API
// server's RBAC decides, audit logs name the user, and admission (the
// vmafx-requester-may-use-references policy) sees who asked. Users, groups and service
// accounts cannot be narrowed by name ahead of time; extras can only be named key by key
// (RBAC has no wildcard for userextras/<key>), hence the list.
// +kubebuilder:rbac:groups="",resources=users;groups;serviceaccounts,verbs=impersonate
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=uids,verbs=impersonate
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=userextras/authentication.kubernetes.io/credential-id;userextras/authentication.kubernetes.io/node-name;userextras/authentication.kubernetes.io/node-uid;userextras/authentication.kubernetes.io/pod-name;userextras/authentication.kubernetes.io/pod-uid,verbs=impersonate

// ImpersonatedExtras are the user extras a door passes on: those the API server gives
// service-account tokens. A token's other extras (an OIDC or webhook authenticator's)
// are dropped, since the door may not impersonate them; RBAC never reads extras.
var ImpersonatedExtras = []string{
	"authentication.kubernetes.io/credential-id",
	"authentication.kubernetes.io/node-name",
	"authentication.kubernetes.io/node-uid",
	"authentication.kubernetes.io/pod-name",
	"authentication.kubernetes.io/pod-uid",
}

// ErrNoCaller is returned when an impersonating door is asked to act for no one: it
// never falls back to its own identity.
var ErrNoCaller = errors.New("the request has no authenticated caller")

// Clients gives the Store its API clients.
type Clients interface {
	// For returns the client that acts as u.
	For(u access.User) (client.WithWatch, error)
	// Own returns the door's own client, for what it reads for itself.
	Own() client.WithWatch
}

// Self is the Clients of a door that talks to the API server with its caller's own
// credentials (vmafx-mcp on stdio, with the user's kubeconfig): every call is the
// kubeconfig user's.
type Self struct{ C client.WithWatch }

// For returns the kubeconfig's client.
func (s Self) For(access.User) (client.WithWatch, error) { return s.C, nil }

// Own returns the kubeconfig's client.
func (s Self) Own() client.WithWatch { return s.C }

// Per-user clients are kept for a short while, a bounded number, so a busy caller's
// requests cost no client construction; each is a few small structs over the shared
// transport, so rebuilding one is cheap too.
const (
	userClientTTL   = time.Minute
	userClientLimit = 1024
)

// Impersonating is the Clients of a door serving many users: one transport (connection
// pool, the door's own credentials), one client-side rate limit and one REST mapper are
// shared, and each user's client adds the Impersonate-* headers on top.
type Impersonating struct {
	cfg     *rest.Config
	rt      http.RoundTripper
	scheme  *k8sruntime.Scheme
	mapper  meta.RESTMapper
	own     client.WithWatch
	ownHTTP *http.Client
	now     func() time.Time

	mu    sync.Mutex
	users map[string]userClient
}

type userClient struct {
	c       client.WithWatch
	expires time.Time
}

// NewImpersonating returns Clients over cfg, the door's own credentials.
func NewImpersonating(cfg *rest.Config, scheme *k8sruntime.Scheme) (*Impersonating, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		// One budget for the door, whoever it acts for.
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	own := &http.Client{Transport: rt, Timeout: cfg.Timeout}
	// The REST mapper reads discovery as the door itself: every authenticated user may.
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, own)
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme, HTTPClient: own, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	return &Impersonating{cfg: cfg, rt: rt, scheme: scheme, mapper: mapper, own: c, ownHTTP: own, now: time.Now, users: map[string]userClient{}}, nil
}

// Own returns the door's own client.
func (i *Impersonating) Own() client.WithWatch { return i.own }

// Ready returns nil while the API server answers the door's own discovery of vmafx.dev/v1:
// a cheap request that needs no permission beyond being authenticated (the door has no
// right on VmafxJobs of its own), and fails while the CRDs are missing.
func (i *Impersonating) Ready(ctx context.Context) error {
	base, _, err := rest.DefaultServerUrlFor(i.cfg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.JoinPath("apis", vmafxv1.GroupVersion.Group, vmafxv1.GroupVersion.Version).String(), nil)
	if err != nil {
		return err
	}
	resp, err := i.ownHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("discovery of %s: %s", vmafxv1.GroupVersion, resp.Status)
	}
	return nil
}

// For returns a client that impersonates u; ErrNoCaller for a user without a name.
func (i *Impersonating) For(u access.User) (client.WithWatch, error) {
	if u.Name == "" {
		return nil, ErrNoCaller
	}
	ic := Impersonation(u)
	key := cacheKey(ic)
	now := i.now()
	i.mu.Lock()
	defer i.mu.Unlock()
	if e, ok := i.users[key]; ok && now.Before(e.expires) {
		return e.c, nil
	}
	hc := &http.Client{Transport: transport.NewImpersonatingRoundTripper(ic, i.rt), Timeout: i.cfg.Timeout}
	c, err := client.NewWithWatch(i.cfg, client.Options{Scheme: i.scheme, HTTPClient: hc, Mapper: i.mapper})
	if err != nil {
		return nil, fmt.Errorf("building a client for %s: %w", u.Name, err)
	}
	if len(i.users) >= userClientLimit {
		for k, e := range i.users {
			if !now.Before(e.expires) {
				delete(i.users, k)
			}
		}
	}
	if len(i.users) < userClientLimit {
		i.users[key] = userClient{c: c, expires: now.Add(userClientTTL)}
	}
	return c, nil
}

// Impersonation is what the API server is asked to take u for: name, UID, groups and
// the extras in ImpersonatedExtras.
func Impersonation(u access.User) transport.ImpersonationConfig {
	ic := transport.ImpersonationConfig{UserName: u.Name, UID: u.UID, Groups: slices.Clone(u.Groups)}
	for _, k := range ImpersonatedExtras {
		if v, ok := u.Extra[k]; ok {
			if ic.Extra == nil {
				ic.Extra = map[string][]string{}
			}
			ic.Extra[k] = slices.Clone(v)
		}
	}
	return ic
}

func cacheKey(ic transport.ImpersonationConfig) string {
	var b strings.Builder
	for _, s := range []string{ic.UserName, ic.UID, strings.Join(ic.Groups, "\x01")} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	for _, k := range ImpersonatedExtras {
		b.WriteString(strings.Join(ic.Extra[k], "\x01"))
		b.WriteByte(0)
	}
	return b.String()
}
