package job

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

// The per-namespace limit (VMAFX_OPERATOR_MAX_WORKERS_PER_NAMESPACE, attempt.NamespaceLimit)
// keeps one namespace's burst from taking every slot: a job whose namespace already has
// the limit's number of live worker Pods creates none and waits, Pending, with the
// Scheduled condition's reason NamespaceLimitReached. When one of the namespace's worker
// Pods finishes or goes, the waiting jobs are reconciled, and the first of them by the
// scheduler's own order (spec.priority, then the oldest) takes the free place.

// namespaceLimitRecheck is how often a waiting job looks again without any Pod event: a
// safety net, since a finished or deleted worker Pod wakes the waiting jobs at once.
const namespaceLimitRecheck = time.Minute

// waitForNamespaceLimit reports whether s.job must wait before it creates attempt n's Pod,
// and records the wait in its status; when it may go ahead, its Pod counts against the
// namespace's limit from now on.
func (r *Reconciler) waitForNamespaceLimit(ctx context.Context, s *scope, n int32) (bool, ctrl.Result, error) {
	l := r.limit
	if l == nil {
		return false, ctrl.Result{}, nil
	}
	name := PodName(s.job, n)
	ok, err := l.Admit(ctx, r.Client, s.job, name, s.now)
	if err != nil || ok {
		return false, ctrl.Result{}, err
	}
	msg := fmt.Sprintf("namespace %s is at its limit of %d live worker Pods (%s); the job starts when one finishes, after the waiting jobs of higher priority or submitted earlier",
		s.job.Namespace, l.Max(), config.EnvMaxWorkersPerNamespace)
	since := s.now
	if c := meta.FindStatusCondition(s.job.Status.Conditions, vmafxv1.JobScheduled); c != nil && c.Reason == ReasonNamespaceLimit {
		since = c.LastTransitionTime.Time
	} else {
		s.emit(false, ReasonNamespaceLimit, "Wait", msg, nil)
	}
	requeue := namespaceLimitRecheck
	if d := r.pendingDeadline(s.job); d > 0 {
		left := since.Add(d).Sub(s.now)
		if left <= 0 {
			msg = fmt.Sprintf("the job waited the pending deadline (%s) for a place among its namespace's worker Pods: %s", d, msg)
			setFailed(s.job, ReasonPendingDeadline, msg, s.now)
			s.emit(true, ReasonPendingDeadline, "Fail", msg, nil)
			return true, ctrl.Result{}, nil
		}
		requeue = min(requeue, left+recheckMargin)
	}
	setPending(s.job, observation{Reason: ReasonNamespaceLimit, Message: msg})
	klog.FromContext(ctx).V(4).Info("Waiting for a place under the namespace's worker limit", "limit", l.Max())
	return true, ctrl.Result{RequeueAfter: requeue}, nil
}

// wakeWaiting maps a worker Pod that finished or is going to the jobs of its namespace
// that wait for the limit and come first (NamespaceLimit.Waking): a place may have come
// free.
func (r *Reconciler) wakeWaiting(ctx context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok || (pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed) {
		return nil
	}
	names, err := r.limit.Waking(ctx, r.Client, pod.Namespace, r.Clock.Now())
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing jobs waiting for the namespace's worker limit", "namespace", pod.Namespace)
		return nil
	}
	out := make([]reconcile.Request, len(names))
	for i, name := range names {
		out[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: name}}
	}
	return out
}
