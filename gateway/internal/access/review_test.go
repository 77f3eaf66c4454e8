package access

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// reviewer returns a Reviewer whose API server knows one token, "good", and counts the
// TokenReviews it is asked; with fail set it answers every review with an error.
func reviewer(fail bool) (*Reviewer, *atomic.Int32) {
	cs := fake.NewClientset()
	var n atomic.Int32
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n.Add(1)
		if fail {
			return true, nil, errors.New("etcdserver: request timed out at 10.0.0.7:2379")
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authnv1.TokenReview)
		switch tr.Spec.Token {
		case "good":
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: "alice"}, Audiences: tr.Spec.Audiences}
		case "audience-unaware":
			// An authenticator that ignores audiences: the token is good for the API server.
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: "bob"}}
		}
		return true, tr, nil
	})
	return NewReviewer(cs.AuthenticationV1(), []string{"vmafx"}), &n
}

// A junk token repeated costs one TokenReview per failedTTL.
func TestRefusedTokensAreCached(t *testing.T) {
	r, n := reviewer(false)
	ctx := WithClient(context.Background(), "10.1.1.1")
	for range 1000 {
		if _, err := r.Authenticate(ctx, "junk"); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("junk token: %v", err)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("1000 requests with one junk token made %d TokenReviews; want 1", got)
	}
}

// A client sending fresh junk tokens gets reviewBurst reviews and then 429s, while
// another client's real token still works.
func TestJunkTokensAreRateLimitedPerClient(t *testing.T) {
	r, n := reviewer(false)
	attacker := WithClient(context.Background(), "10.6.6.6")
	limited := 0
	for i := range 10000 {
		_, err := r.Authenticate(attacker, fmt.Sprintf("junk-%d", i))
		if errors.Is(err, ErrRateLimited) {
			limited++
		}
	}
	t.Logf("10000 fresh junk tokens from one client: %d TokenReviews, %d refused with 429", n.Load(), limited)
	if got := n.Load(); got > reviewBurst+5 {
		t.Errorf("10000 fresh junk tokens from one client made %d TokenReviews; want at most %d", got, reviewBurst+5)
	}
	if u, err := r.Authenticate(WithClient(context.Background(), "10.2.2.2"), "good"); err != nil || u.Name != "alice" {
		t.Errorf("another client's good token: %v, %v", u, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.failed) > 4*cacheLimit || len(r.limiters) > 4*cacheLimit {
		t.Errorf("caches hold %d refused tokens and %d limiters", len(r.failed), len(r.limiters))
	}
}

// The API server's error text reaches the log, not the unauthenticated client.
func TestReviewErrorsAreGeneric(t *testing.T) {
	r, _ := reviewer(true)
	_, err := r.Authenticate(context.Background(), "any")
	if !errors.Is(err, ErrReviewFailed) || strings.Contains(err.Error(), "etcd") {
		t.Errorf("a failed review gave %v; want ErrReviewFailed without the API server's text", err)
	}
}

// A review that authenticates the token without naming one of the door's audiences comes
// from an authenticator that ignores audiences: the token is the API server's, and the
// door refuses it (the TokenReview API asks its clients to check status.audiences).
func TestAudienceUnawareReviewsAreRefused(t *testing.T) {
	r, _ := reviewer(false)
	ctx := WithClient(context.Background(), "10.1.1.1")
	if _, err := r.Authenticate(ctx, "audience-unaware"); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("a review without the door's audience: %v; want ErrUnauthenticated", err)
	}
	if u, err := r.Authenticate(ctx, "good"); err != nil || u.Name != "alice" {
		t.Errorf("a review naming the door's audience: %v, %v; want alice", u, err)
	}
}
