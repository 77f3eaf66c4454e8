package attempt

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestClassifyRefusal(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	forbidden := func(msg string) error { return apierrors.NewForbidden(pods, "j-1", errors.New(msg)) }
	terminating := apierrors.NewForbidden(pods, "j-1", errors.New("unable to create new content in namespace ns because it is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	cases := []struct {
		name   string
		err    error
		age    time.Duration
		kind   refusal
		reason string
	}{
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "j-1", field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "x", "too long")}),
			0, refusalPermanent, "Invalid"},
		{"pod security", forbidden(`violates PodSecurity "restricted:latest": hostPath volumes (volume "data")`), 0, refusalPermanent, "Forbidden"},
		{"quota used up", forbidden("exceeded quota: workers, requested: pods=1, used: pods=2, limited: pods=2"), 0, refusalRetry, ReasonExceededQuota},
		{"quota not computed yet", forbidden("status unknown for quota: workers, resources: pods"), 0, refusalRetry, ReasonExceededQuota},
		{"service account not made yet", forbidden(`error looking up service account ns/default: serviceaccount "default" not found`), 5 * time.Second, refusalRetry, ReasonServiceAccountNotFound},
		{"service account missing", forbidden(`error looking up service account ns/scorer: serviceaccount "scorer" not found`), 2 * time.Minute, refusalPermanent, ReasonServiceAccountNotFound},
		{"namespace terminating", terminating, 0, refusalNamespaceGone, "Forbidden"},
		{"server timeout", apierrors.NewServerTimeout(pods, "create", 1), 0, refusalError, "ServerTimeout"},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), 0, refusalError, "TooManyRequests"},
		{"no answer", errors.New("dial tcp 10.96.0.1:443: connect: connection refused"), 0, refusalError, ReasonFailedCreate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kind, reason := classifyRefusal(tc.err, tc.age)
			if diff := cmp.Diff([]any{tc.kind, tc.reason}, []any{kind, reason}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
