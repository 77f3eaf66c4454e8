package access

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/klog/v2"
)

// The door asks the API server who a token belongs to; what that user may do is the API
// server's to decide when the door acts as the user (jobs.Impersonating).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create

// The resources the front doors act on.
const (
	ResourceJobs      = "vmafxjobs"
	ResourceTrainings = "vmafxmodeltrainings"
)

// ErrUnauthenticated is returned for a missing, invalid or expired bearer token.
var ErrUnauthenticated = errors.New("a valid Kubernetes bearer token is required (Authorization: Bearer <token>)")

// ErrRateLimited is returned when a client has had too many tokens reviewed of late.
var ErrRateLimited = errors.New("too many unrecognized bearer tokens from this client; try again in a few seconds")

// ErrReviewFailed is what a caller whose token could not be reviewed learns: the API
// server's own error is logged, not shown to an unauthenticated client.
var ErrReviewFailed = errors.New("the bearer token could not be checked just now; try again")

type clientKey struct{}

// WithClient returns ctx for a request from client (its remote host): the rate limit of
// token reviews is per client.
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

func clientOf(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

// User is a caller as the API server's TokenReview knows it.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Checker authenticates tokens.
type Checker interface {
	Authenticate(ctx context.Context, token string) (User, error)
}

// BearerToken returns the token of an "Authorization: Bearer <token>" header.
func BearerToken(h http.Header) (string, bool) {
	f := strings.Fields(h.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}

// cacheTTL bounds how long a TokenReview is reused: the API server's own webhook
// authenticator caches for 2 minutes; 10 s keeps a deleted ServiceAccount's token refused
// within seconds while saving an API call on most requests of a busy client.
const cacheTTL = 10 * time.Second

// failedTTL is how long a refused token stays refused without asking again: a client
// repeating a junk token costs the API server one review per failedTTL.
const failedTTL = 30 * time.Second

// Per client, the token reviews the door asks for (cache misses only: a known token,
// good or bad, costs nothing): a burst for a client's first tokens, then a few a second.
// A client sending fresh junk tokens is refused (429) beyond that, and the door's shared
// API client stays free for everyone else.
const (
	reviewRate  = rate.Limit(5)
	reviewBurst = 20
)

// cacheLimit is the size above which the caches drop expired entries; the negative cache
// and the limiters stop growing beyond four times it.
const cacheLimit = 4096

// Reviewer asks the API server. It caches positive answers for cacheTTL.
type Reviewer struct {
	tokens authnclient.TokenReviewInterface
	// audiences, when set, are the token audiences the door accepts.
	audiences []string
	now       func() time.Time

	mu       sync.Mutex
	users    map[string]cachedUser
	failed   map[[sha256.Size]byte]time.Time
	limiters map[string]*rate.Limiter
}

type cachedUser struct {
	user    User
	expires time.Time
}

// NewReviewer returns a Reviewer using the given API client.
func NewReviewer(authn authnclient.AuthenticationV1Interface, audiences []string) *Reviewer {
	return &Reviewer{
		tokens:    authn.TokenReviews(),
		audiences: audiences,
		now:       time.Now,
		users:     map[string]cachedUser{},
		failed:    map[[sha256.Size]byte]time.Time{},
		limiters:  map[string]*rate.Limiter{},
	}
}

// Authenticate returns the token's user, or ErrUnauthenticated (also for a token refused
// within failedTTL), ErrRateLimited (the client has had too many tokens reviewed of late)
// or ErrReviewFailed (the API server did not answer; its error is logged).
func (r *Reviewer) Authenticate(ctx context.Context, token string) (User, error) {
	if token == "" {
		return User{}, ErrUnauthenticated
	}
	now := r.now()
	sum := sha256.Sum256([]byte(token))
	r.mu.Lock()
	c, ok := r.users[token]
	failedUntil, failed := r.failed[sum]
	r.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.user, nil
	}
	if failed && now.Before(failedUntil) {
		return User{}, ErrUnauthenticated
	}
	if !r.limiter(clientOf(ctx), now).AllowN(now, 1) {
		return User{}, ErrRateLimited
	}
	tr, err := r.tokens.Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token, Audiences: r.audiences}}, metav1.CreateOptions{})
	if err != nil {
		klog.FromContext(ctx).Error(err, "Reviewing a bearer token", "client", clientOf(ctx))
		return User{}, ErrReviewFailed
	}
	if tr.Status.Authenticated && len(r.audiences) > 0 && !slices.ContainsFunc(tr.Status.Audiences, func(a string) bool { return slices.Contains(r.audiences, a) }) {
		// The TokenReview API: a review that names none of the audiences asked for comes
		// from an authenticator that ignores audiences, so the token is valid for the API
		// server, not for the door.
		klog.FromContext(ctx).Info("Refusing a token reviewed without the door's audience", "client", clientOf(ctx), "audiences", tr.Status.Audiences)
		tr.Status.Authenticated = false
	}
	if !tr.Status.Authenticated {
		r.mu.Lock()
		r.prune(now)
		if len(r.failed) < 4*cacheLimit {
			r.failed[sum] = now.Add(failedTTL)
		}
		r.mu.Unlock()
		return User{}, ErrUnauthenticated
	}
	u := User{Name: tr.Status.User.Username, UID: tr.Status.User.UID, Groups: tr.Status.User.Groups}
	if len(tr.Status.User.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range tr.Status.User.Extra {
			u.Extra[k] = v
		}
	}
	r.mu.Lock()
	r.prune(now)
	r.users[token] = cachedUser{user: u, expires: now.Add(cacheTTL)}
	r.mu.Unlock()
	return u, nil
}

// limiter is client's token-review limiter.
func (r *Reviewer) limiter(client string, now time.Time) *rate.Limiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.limiters[client]
	if !ok {
		if len(r.limiters) >= cacheLimit {
			// Drop the limiters that are full again: their clients have been quiet.
			for k, l := range r.limiters {
				if l.TokensAt(now) >= reviewBurst {
					delete(r.limiters, k)
				}
			}
		}
		if len(r.limiters) >= 4*cacheLimit {
			// Many clients at once, all busy: they share one limiter until some go quiet.
			client = ""
			if l, ok = r.limiters[client]; ok {
				return l
			}
		}
		l = rate.NewLimiter(reviewRate, reviewBurst)
		r.limiters[client] = l
	}
	return l
}

// prune drops expired entries; the caller holds mu. It runs only when a map has grown,
// so a steady set of callers costs nothing.
func (r *Reviewer) prune(now time.Time) {
	const limit = cacheLimit
	if len(r.users) > limit {
		for k, c := range r.users {
			if !now.Before(c.expires) {
				delete(r.users, k)
			}
		}
	}
	if len(r.failed) > limit {
		for k, exp := range r.failed {
			if !now.Before(exp) {
				delete(r.failed, k)
			}
		}
	}
}

// Direct is the Checker of a door that talks to the API server with the caller's own
// credentials (the MCP server on stdio with the user's kubeconfig, jobs.Self): there is no
// token to review, and the API server checks each call.
type Direct struct{}

// Authenticate returns the kubeconfig's user, unnamed.
func (Direct) Authenticate(context.Context, string) (User, error) { return User{}, nil }
