package attempt

import "time"

// Policy is the limits an attempt runs under; the caller fills it from its spec and the
// operator's configuration.
type Policy struct {
	// BackoffLimit is the number of failed attempts retried; lost ones do not count.
	BackoffLimit int32
	// MaxLost bounds the lost attempts, so that work that can never keep a Pod fails with
	// a reason instead of cycling forever; 0: DefaultMaxLost.
	MaxLost int32
	// RetryBackoff is the wait before the attempt after the first failure; it doubles for
	// each further failure up to MaxRetryBackoff.
	RetryBackoff, MaxRetryBackoff time.Duration
	// PendingDeadline bounds the time a Pod may wait to be placed, and the time its
	// creation may be refused (a used-up quota), from the first refusal; 0: none.
	PendingDeadline time.Duration
	// StartTimeout bounds the time from a Pod's binding to its container's start; 0: none.
	StartTimeout time.Duration
	// TerminatingTimeout bounds how long a deleted Pod may stay Terminating after its
	// grace period before the attempt counts as lost and the Pod is force-deleted; 0:
	// none (the Pod is waited for).
	TerminatingTimeout time.Duration
}

// DefaultMaxLost is Policy.MaxLost's default.
const DefaultMaxLost = 10

func (p Policy) maxLost() int32 {
	if p.MaxLost > 0 {
		return p.MaxLost
	}
	return DefaultMaxLost
}

// Backoff is the wait before the attempt after the failed-th failure: RetryBackoff,
// doubled for each further failure, at most MaxRetryBackoff.
func (p Policy) Backoff(failed int32) time.Duration {
	d := p.RetryBackoff
	for i := int32(1); i < failed && d < p.MaxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, p.MaxRetryBackoff)
}

// RetryAt is when the attempt after the failed-th failure may start: the backoff after
// the failed attempt ended (now, if its end is not known).
func (p Policy) RetryAt(failed int32, ended, now time.Time) time.Time {
	if ended.IsZero() {
		ended = now
	}
	return ended.Add(p.Backoff(failed))
}

// RecheckMargin lands a deadline's requeue just after it, so the reconcile that runs then
// sees it passed rather than a few microseconds short of it.
const RecheckMargin = 50 * time.Millisecond

// SchedulerSilence is how long a Pod may wait without any word from vmafx-scheduler
// before the wait says so: the scheduler answers within seconds, placed or not.
const SchedulerSilence = time.Minute
