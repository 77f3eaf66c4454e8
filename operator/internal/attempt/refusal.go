package attempt

import (
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// refusal is how the operator treats an API server's refusal to create a worker Pod.
type refusal int

const (
	// refusalRetry: the same request may pass later (a quota frees up).
	refusalRetry refusal = iota
	// refusalPermanent: the same request will be refused again (it is invalid, or policy
	// forbids it); the job fails.
	refusalPermanent
	// refusalNamespaceGone: the namespace is being deleted, and the job with it.
	refusalNamespaceGone
	// refusalError: no answer on the request itself (timeout, server error, throttling).
	refusalError
)

// serviceAccountGrace is how long after a job's creation a missing service account is
// taken for one still being made: a namespace's default ServiceAccount appears within
// seconds of the namespace, and a Pod created in between is refused.
const serviceAccountGrace = time.Minute

// classifyRefusal says how to treat err, the API server's answer to a Pod create, for a
// job created jobAge ago, and the reason to show for it (the API server's, or
// ExceededQuota for a quota). Quota refusals are Forbidden too, so they are told apart
// by the quota admission plugin's words.
func classifyRefusal(err error, jobAge time.Duration) (refusal, string) {
	reason := string(apierrors.ReasonForError(err))
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return refusalNamespaceGone, reason
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return refusalPermanent, reason
	case apierrors.IsForbidden(err):
		msg := apiMessage(err)
		switch {
		case strings.Contains(msg, "exceeded quota") || strings.Contains(msg, "status unknown for quota"):
			return refusalRetry, ReasonExceededQuota
		case strings.Contains(msg, "service account") && strings.Contains(msg, "not found"):
			if jobAge < serviceAccountGrace {
				return refusalRetry, ReasonServiceAccountNotFound
			}
			return refusalPermanent, ReasonServiceAccountNotFound
		}
		return refusalPermanent, reason
	}
	if reason == "" {
		reason = ReasonFailedCreate
	}
	return refusalError, reason
}

// apiMessage is the API server's own words in err, without client-side wrapping.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if m := status.Status().Message; m != "" {
			return m
		}
	}
	return err.Error()
}
