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
	"github.com/vmafx/vmafx/operator/internal/config"
)

// advanceEncode moves a rung's encode forward through the attempt engine: an encode that
// fails is retried after the same backoff as a score, within backoffLimit; one whose Pod
// is lost (evicted, preempted, deleted) is retried at once without using backoffLimit.
func (r *Reconciler) advanceEncode(ctx context.Context, s *scope, rung *vmafxv1.LadderRung) error {
	l := s.ladder
	n := rung.EncodeAttempts
	name := EncodePodName(l, rung.Name, n)
	var pod *corev1.Pod
	if n > 0 {
		var err error
		if pod, err = r.ownPod(ctx, s, name); err != nil {
			return err
		}
	}
	if gap := n - 1 - rung.EncodeFailures - rung.EncodeLost; gap > 0 {
		// Attempts an operator before encodeFailures retried at once, after failures.
		rung.EncodeFailures += gap
	}
	rec := attempt.Record{N: n, Failed: rung.EncodeFailures, Lost: rung.EncodeLost, Recorded: n > 0 && rung.EncodeFailures+rung.EncodeLost >= n}
	// Encode Pods carry no result finalizer and stay until the ladder goes: the recorded
	// attempt's Pod, failed, says the next waits for the backoff.
	rec.LastFailed = rec.Recorded && pod != nil && attempt.Observe(pod, parseEncode).State == attempt.Failed
	d := attempt.Decide(r.policy(l), rec, attempt.Attempt{Pod: name, Step: "the encode of rung " + rung.Name}, pod, parseEncode, s.now)
	if d.Delete {
		if err := attempt.Delete(ctx, r.Client, pod); err != nil {
			return err
		}
	}
	if d.ForceDelete {
		s.forceDelete = append(s.forceDelete, pod)
	}
	switch d.Outcome {
	case attempt.RecordFailure:
		rung.EncodeFailures++
	case attempt.RecordLoss:
		rung.EncodeLost++
	}
	// A typed nil Pod in the interface would not be nil to the recorder.
	var related runtime.Object
	if pod != nil {
		related = pod
	}
	switch d.Action {
	case attempt.Start:
		if n > 0 {
			// A retry computed from a cache that lags could repeat an attempt that ran.
			if fresh, err := r.ladderIsFresh(ctx, s); err != nil || !fresh {
				s.after(cacheLagRetry)
				return err
			}
		}
		return r.startEncode(ctx, s, rung, n+1)
	case attempt.Succeed:
		er := d.Obs.Result
		rung.Bitrate, rung.Bytes, rung.Resolution = er.Bitrate, er.Bytes, fmt.Sprintf("%dx%d", er.Width, er.Height)
		rung.URI = string(encodeURI(l, rung.Name))
		rung.Phase, rung.Message = vmafxv1.RungScoring, ""
		return r.advanceScore(ctx, s, rung)
	case attempt.Fail:
		rung.Phase, rung.Message = vmafxv1.RungFailed, oneLine(d.Message)
		r.Recorder.Eventf(l, related, corev1.EventTypeWarning, ReasonRungFailed, "Encode", "rung %s: %s", rung.Name, rung.Message)
		return nil
	case attempt.RecordFailure:
		rung.Message = oneLine(fmt.Sprintf("%s; retrying at %s", d.Message, d.RetryAt.UTC().Format(time.RFC3339)))
		r.Recorder.Eventf(l, related, corev1.EventTypeWarning, ReasonEncodeFailed, "Encode", "rung %s: %s; retrying", rung.Name, oneLine(d.Message))
	case attempt.RecordLoss:
		rung.Message = oneLine(d.Message + "; starting a new encode")
		r.Recorder.Eventf(l, related, corev1.EventTypeWarning, attempt.ReasonPodLost, "Encode", "rung %s: %s; starting a new encode", rung.Name, oneLine(d.Message))
	}
	if d.Requeue {
		s.backoff = true
	}
	s.after(d.After)
	return nil
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

// policy is the attempt engine's limits for a ladder's encodes: its backoffLimit and the
// operator's backoff and timeouts; a ladder has no pending deadline.
func (r *Reconciler) policy(l *vmafxv1.VmafxLadder) attempt.Policy {
	return attempt.Policy{BackoffLimit: backoffLimit(l), RetryBackoff: r.RetryBackoff, MaxRetryBackoff: r.MaxRetryBackoff,
		StartTimeout: r.PodStartTimeout, TerminatingTimeout: r.TerminatingTimeout}
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

func (r *Reconciler) startEncode(ctx context.Context, s *scope, rung *vmafxv1.LadderRung, n int32) error {
	l := s.ladder
	pod := buildPod(l, EncodePodName(l, rung.Name, n), stepEncode, rung.Name, n, encodeArgs(l, rung), r.Worker)
	if ok, err := r.Limit.AdmitLadderPod(ctx, r.Client, l, pod.Name, s.now); err != nil || !ok {
		if err == nil {
			s.limited = true
			rung.Message = fmt.Sprintf("waiting: namespace %s is at its limit of %d live worker Pods (%s); the encode starts when one finishes",
				l.Namespace, r.Limit.Max(), config.EnvMaxWorkersPerNamespace)
		}
		return err
	}
	err := r.Client.Create(ctx, pod)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		r.Limit.Forget(pod.Namespace, pod.Name)
	}
	if apierrors.IsAlreadyExists(err) {
		if msg, err := r.nameTaken(ctx, s, pod, &corev1.Pod{}); msg != "" || err != nil {
			if msg != "" {
				rung.Phase, rung.Message = vmafxv1.RungFailed, msg
			}
			return err
		}
	} else if err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			rung.Phase, rung.Message = vmafxv1.RungFailed, oneLine(fmt.Sprintf("the API server refused encode Pod %s: %v", pod.Name, err))
			return nil
		}
		return fmt.Errorf("creating encode Pod %s: %w", pod.Name, err)
	}
	rung.EncodeAttempts, rung.Message = n, ""
	return nil
}
