package ladder

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
)

// advanceEncode moves a rung's encode forward through the attempt engine: an encode that
// fails is retried after the same backoff as a score, within backoffLimit; one whose Pod
// is lost (evicted, preempted, deleted) is retried at once without using backoffLimit.
func (r *Reconciler) advanceEncode(ctx context.Context, s *scope, rung *vmafxv1.LadderRung) error {
	l := s.ladder
	st := step{attempts: &rung.EncodeAttempts, failures: &rung.EncodeFailures, lost: &rung.EncodeLost,
		pod: func(n int32) string { return EncodePodName(l, rung.Name, n) }, what: "the encode of rung " + rung.Name}
	d, related, err := decideStep(ctx, r, s, st, parseEncode)
	if err != nil {
		return err
	}
	switch d.Action {
	case attempt.Start:
		c, err := r.start(ctx, s, st, func(n int32) *corev1.Pod {
			return buildPod(l, EncodePodName(l, rung.Name, n), stepEncode, rung.Name, n, encodeArgs(l, rung), r.Worker)
		})
		switch {
		case c.failed != "":
			rung.Phase, rung.Message = vmafxv1.RungFailed, c.failed
		case c.waiting != "":
			rung.Message = c.waiting
		case c.made:
			rung.Message = ""
		}
		return err
	case attempt.Succeed:
		er := d.Obs.Result
		rung.Bitrate, rung.Bytes, rung.Resolution = er.Bitrate, er.Bytes, fmt.Sprintf("%dx%d", er.Width, er.Height)
		rung.URI = string(encodeURI(l, rung.Name))
		rung.Phase, rung.Message = vmafxv1.RungScoring, ""
		return r.advanceScore(ctx, s, rung)
	case attempt.Fail:
		rung.Phase, rung.Message = vmafxv1.RungFailed, oneLine(d.Message)
		r.Recorder.Eventf(l, related, corev1.EventTypeWarning, ReasonRungFailed, "Encode", "rung %s: %s", rung.Name, rung.Message)
	case attempt.RecordFailure:
		rung.Message = oneLine(fmt.Sprintf("%s; retrying at %s", d.Message, d.RetryAt.UTC().Format(time.RFC3339)))
		r.Recorder.Eventf(l, related, corev1.EventTypeWarning, ReasonEncodeFailed, "Encode", "rung %s: %s; retrying", rung.Name, oneLine(d.Message))
	case attempt.RecordLoss:
		rung.Message = oneLine(d.Message + "; starting a new encode")
		r.Recorder.Eventf(l, related, corev1.EventTypeWarning, attempt.ReasonPodLost, "Encode", "rung %s: %s; starting a new encode", rung.Name, oneLine(d.Message))
	}
	return nil
}

// step is one of a ladder's steps that runs as attempts, one Pod each: a rung's encode
// or the report; its counters are where the ladder's status keeps them.
type step struct {
	attempts, failures, lost *int32
	// pod names attempt n's Pod.
	pod func(n int32) string
	// what names the step for people ("the report").
	what string
}

// decideStep reads the step's current attempt and asks the attempt engine what follows;
// it makes the Pod writes the decision asks for (a delete now, a force delete once the
// status is stored), counts a failure or a loss in the step's counters, and sets when to
// look again. related is the attempt's Pod for Events (nil when there is none).
func decideStep[R any](ctx context.Context, r *Reconciler, s *scope, st step, parse attempt.Parse[R]) (attempt.Decision[R], runtime.Object, error) {
	n := *st.attempts
	name := st.pod(n)
	var pod *corev1.Pod
	if n > 0 {
		var err error
		if pod, err = r.ownPod(ctx, s, name); err != nil {
			return attempt.Decision[R]{}, nil, err
		}
	}
	if gap := n - 1 - *st.failures - *st.lost; gap > 0 {
		// Attempts an operator before these counters retried at once, after failures.
		*st.failures += gap
	}
	rec := attempt.Record{N: n, Failed: *st.failures, Lost: *st.lost, Recorded: n > 0 && *st.failures+*st.lost >= n}
	// A ladder's Pods stay until the ladder goes (their result finalizer only until their
	// outcome is recorded): the recorded attempt's Pod, failed, says the next waits for
	// the backoff.
	rec.LastFailed = rec.Recorded && pod != nil && attempt.Observe(pod, parse).State == attempt.Failed
	d := attempt.Decide(r.policy(s.ladder), rec, attempt.Attempt{Pod: name, Step: st.what}, pod, parse, s.now)
	if d.Delete {
		if err := attempt.Delete(ctx, r.Client, pod); err != nil {
			return d, nil, err
		}
	}
	if d.ForceDelete {
		s.forceDelete = append(s.forceDelete, pod)
	}
	switch d.Outcome {
	case attempt.RecordFailure:
		*st.failures++
	case attempt.RecordLoss:
		*st.lost++
	}
	if d.Requeue {
		s.backoff = true
	}
	s.after(d.After)
	if pod == nil {
		// A typed nil Pod in the interface would not be nil to the recorder.
		return d, nil, nil
	}
	return d, pod, nil
}

// start creates the step's next attempt's Pod, built by build; the step counts it once
// it exists.
func (r *Reconciler) start(ctx context.Context, s *scope, st step, build func(n int32) *corev1.Pod) (creation, error) {
	n := *st.attempts
	if n > 0 {
		// A retry computed from a cache that lags could repeat an attempt that ran.
		if fresh, err := r.ladderIsFresh(ctx, s); err != nil || !fresh {
			s.after(cacheLagRetry)
			return creation{}, err
		}
	}
	c, err := r.create(ctx, s, build(n+1))
	if c.made {
		*st.attempts = n + 1
	}
	return c, err
}

// parseEncode is what a success means for an encode Pod: a valid encode result.
func parseEncode(b []byte) (*vmafxv1.EncodeResult, string, string, error) {
	er, err := vmafxv1.ParseEncodeResult(b)
	if err != nil {
		return nil, "", "", err
	}
	if er.Error != nil {
		return er, er.Error.Reason, er.Error.Message, nil
	}
	return er, "", "", nil
}

// ownPod returns the ladder's Pod called name, or nil when it no longer exists. A Pod
// missing from the cache is looked up on the API server before it is declared gone,
// because the cache may not have seen a Pod created moments ago.
func (r *Reconciler) ownPod(ctx context.Context, s *scope, name string) (*corev1.Pod, error) {
	if p := s.pods[name]; p != nil {
		return p, nil
	}
	pod := &corev1.Pod{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.ladder.Namespace, Name: name}, pod)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Pod %s: %w", name, err)
	}
	if !metav1.IsControlledBy(pod, s.ladder) {
		return nil, fmt.Errorf("pod %s exists but is not owned by ladder %s; delete it or rename the ladder", name, s.ladder.Name)
	}
	s.pods[name] = pod
	return pod, nil
}

// ladderIsFresh says whether the cached ladder is the API server's (asked once per
// reconcile).
func (r *Reconciler) ladderIsFresh(ctx context.Context, s *scope) (bool, error) {
	if s.fresh == nil {
		live := &vmafxv1.VmafxLadder{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.ladder), live); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		fresh := live.ResourceVersion == s.ladder.ResourceVersion
		s.fresh = &fresh
	}
	return *s.fresh, nil
}

// cacheLagRetry is how soon a reconcile that found the cache behind runs again.
const cacheLagRetry = 200 * time.Millisecond
