package ladder

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
	"github.com/vmafx/vmafx/operator/internal/config"
)

// creation is what came of trying to create one of the ladder's Pods (an encode or the
// report): made, waiting (for a place under the namespace's limit, or for a refusal that
// may pass), or refused for good.
type creation struct {
	// made: the Pod exists now, made by this reconcile or an earlier one.
	made bool
	// waiting says why the Pod was not made yet and when it will be tried again.
	waiting string
	// failed says why the Pod will never be made: the step fails with it; reason is the
	// condition reason that says so.
	failed, reason string
}

// create creates pod, one of the ladder's Pods, through the attempt engine: it takes a
// place under the namespace's limit first, and a refusal by the API server is decided as
// a job's is (attempt.Refused): a used-up quota is tried again with a growing wait within
// the pending deadline, counted from the first refusal (the PodRefused condition's
// transition); a refusal that stands fails the step. A Pod of the name that is not the
// ladder's is never adopted.
func (r *Reconciler) create(ctx context.Context, s *scope, pod *corev1.Pod) (creation, error) {
	l := s.ladder
	if ok, err := r.Limit.AdmitLadderPod(ctx, r.Client, l, pod.Name, s.now); err != nil || !ok {
		if err != nil {
			return creation{}, err
		}
		s.limited = true
		return creation{waiting: fmt.Sprintf("waiting: namespace %s is at its limit of %d live worker Pods (%s); Pod %s is created when one finishes",
			l.Namespace, r.Limit.Max(), config.EnvMaxWorkersPerNamespace, pod.Name)}, nil
	}
	made, err := attempt.Create(ctx, r.Client, pod)
	if err != nil {
		r.Limit.Forget(pod.Namespace, pod.Name)
		return r.refused(s, pod.Name, err)
	}
	if !made {
		// The name is taken: by the ladder's own Pod (a cache behind) or someone else's.
		msg, err := r.nameTaken(ctx, s, pod, &corev1.Pod{})
		if msg != "" || err != nil {
			return creation{failed: msg, reason: ReasonNameTaken}, err
		}
	} else {
		klog.FromContext(ctx).V(2).Info("Created ladder Pod", "pod", klog.KObj(pod))
	}
	if c := meta.FindStatusCondition(l.Status.Conditions, vmafxv1.LadderPodRefused); c != nil && c.Status == metav1.ConditionTrue {
		setCondition(l, vmafxv1.LadderPodRefused, false, attempt.ReasonPodCreated, fmt.Sprintf("Pod %s was created", pod.Name))
	}
	return creation{made: true}, nil
}

// refused decides on the API server's refusal to create the ladder's Pod called pod and
// records it in the PodRefused condition and a Warning event.
func (r *Reconciler) refused(s *scope, pod string, err error) (creation, error) {
	l := s.ladder
	var since time.Time
	if c := meta.FindStatusCondition(l.Status.Conditions, vmafxv1.LadderPodRefused); c != nil && c.Status == metav1.ConditionTrue {
		since = c.LastTransitionTime.Time
	}
	rf := attempt.Refused(r.policy(l), pod, err, s.now.Sub(l.CreationTimestamp.Time), since, s.now)
	switch {
	case rf.Gone:
		return creation{}, nil
	case rf.Err != nil:
		return creation{}, rf.Err
	}
	setCondition(l, vmafxv1.LadderPodRefused, true, rf.Reason, rf.Condition)
	for _, e := range rf.Events {
		r.Recorder.Eventf(l, nil, corev1.EventTypeWarning, e.Reason, e.Action, "%s", e.Note)
	}
	if rf.Fail {
		return creation{failed: oneLine(rf.Message), reason: rf.FailReason}, nil
	}
	s.after(rf.After)
	return creation{waiting: oneLine(rf.Message)}, nil
}

// policy is the attempt engine's limits for a ladder's encodes and report: its
// backoffLimit and pendingDeadlineSeconds, and the operator's backoff and timeouts.
func (r *Reconciler) policy(l *vmafxv1.VmafxLadder) attempt.Policy {
	pending := r.PendingDeadline
	if d := l.Spec.PendingDeadlineSeconds; d != nil {
		pending = time.Duration(*d) * time.Second
	}
	return attempt.Policy{BackoffLimit: backoffLimit(l), RetryBackoff: r.RetryBackoff, MaxRetryBackoff: r.MaxRetryBackoff,
		PendingDeadline: pending, StartTimeout: r.PodStartTimeout, TerminatingTimeout: r.TerminatingTimeout}
}
