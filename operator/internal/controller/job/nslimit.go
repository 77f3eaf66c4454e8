package job

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

// The per-namespace limit (VMAFX_OPERATOR_MAX_WORKERS_PER_NAMESPACE) keeps one namespace's
// burst from taking every slot: a job whose namespace already has the limit's number of
// live worker Pods (created, not finished) creates none and waits, Pending, with the
// Scheduled condition's reason NamespaceLimitReached. When one of the namespace's worker
// Pods finishes or goes, the waiting jobs are reconciled, and the first of them by the
// scheduler's own order (spec.priority, then the oldest) takes the free place.

// namespaceLimitRecheck is how often a waiting job looks again without any Pod event: a
// safety net, since a finished or deleted worker Pod wakes the waiting jobs at once.
const namespaceLimitRecheck = time.Minute

// createdGrace is how long a Pod this operator created counts as live before the cache
// shows it; past that the cache has it, or it is gone.
const createdGrace = time.Minute

// NamespaceLimit counts live worker Pods per namespace: the VmafxJobs' worker Pods and the
// VmafxLadders' encode and report Pods alike, so that a ladder is no way around the limit.
// Reconciles run in parallel, and the cache shows a Pod a moment after its create: the
// Pods admitted but not yet seen in the cache are kept here, so that two reconciles (of
// the job and the ladder controllers alike) cannot both take the last place.
type NamespaceLimit struct {
	max int
	// ladderPods reads the ladders' Pods (their own cache); nil: none counted.
	ladderPods client.Reader
	mu         sync.Mutex
	// created holds, per namespace, the Pods admitted and not yet seen in the cache: Pod
	// name to the job that made it and when.
	created map[string]map[string]admitted
}

type admitted struct {
	job string
	at  time.Time
}

// NewNamespaceLimit returns the limit of maxPods live worker Pods per namespace, counting
// the ladder Pods that ladderPods reads too; nil when maxPods is 0 (no limit). The
// manager makes one and gives it to the job and ladder reconcilers.
func NewNamespaceLimit(maxPods int, ladderPods client.Reader) *NamespaceLimit {
	if maxPods <= 0 {
		return nil
	}
	return &NamespaceLimit{max: maxPods, ladderPods: ladderPods, created: map[string]map[string]admitted{}}
}

// Max is the limit: live worker Pods per namespace.
func (l *NamespaceLimit) Max() int { return l.max }

// ladderKey marks a ladder's admissions among the jobs' (":" is in no object name).
const ladderKey = "ladder:"

// AdmitLadderPod decides whether ladder l may create its Pod pod now, as admit does for a
// job: the ladder queues as a job of the ladder's priority created when the ladder was,
// behind the waiting jobs that go before it. c reads VmafxJobs and their Pods.
func (l *NamespaceLimit) AdmitLadderPod(ctx context.Context, c client.Reader, ladder *vmafxv1.VmafxLadder, pod string, now time.Time) (bool, error) {
	if l == nil {
		return true, nil
	}
	as := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ladder.Namespace, Name: ladderKey + ladder.Name, CreationTimestamp: ladder.CreationTimestamp}}
	as.Spec.Priority = ladder.Spec.Priority
	return l.admit(ctx, c, as, pod, now)
}

// Forget drops a ladder Pod that was admitted but not created.
func (l *NamespaceLimit) Forget(ns, pod string) { l.forget(ns, pod) }

// waitForNamespaceLimit reports whether s.job must wait before it creates attempt n's Pod,
// and records the wait in its status; when it may go ahead, its Pod counts against the
// namespace's limit from now on.
func (r *Reconciler) waitForNamespaceLimit(ctx context.Context, s *scope, n int32) (bool, ctrl.Result, error) {
	l := r.limit
	if l == nil {
		return false, ctrl.Result{}, nil
	}
	name := PodName(s.job, n)
	ok, err := l.admit(ctx, r.Client, s.job, name, s.now)
	if err != nil || ok {
		return false, ctrl.Result{}, err
	}
	msg := fmt.Sprintf("namespace %s is at its limit of %d live worker Pods (%s); the job starts when one finishes, after the waiting jobs of higher priority or submitted earlier",
		s.job.Namespace, l.max, config.EnvMaxWorkersPerNamespace)
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
	klog.FromContext(ctx).V(4).Info("Waiting for a place under the namespace's worker limit", "limit", l.max)
	return true, ctrl.Result{RequeueAfter: requeue}, nil
}

// admit decides whether job may create Pod pod now: the namespace has fewer live worker
// Pods than the limit, and more free places than waiting jobs that go before this one.
func (l *NamespaceLimit) admit(ctx context.Context, c client.Reader, job *vmafxv1.VmafxJob, pod string, now time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ns := job.Namespace
	var pods corev1.PodList
	// The cache's own objects, read and not kept: no copy of every Pod per admission.
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.HasLabels{vmafxv1.LabelJob}, client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("listing the worker Pods of namespace %s: %w", ns, err)
	}
	if l.ladderPods != nil {
		var ladderPods corev1.PodList
		if err := l.ladderPods.List(ctx, &ladderPods, client.InNamespace(ns), client.HasLabels{vmafxv1.LabelLadder}, client.UnsafeDisableDeepCopy); err != nil {
			return false, fmt.Errorf("listing the ladder Pods of namespace %s: %w", ns, err)
		}
		pods.Items = append(pods.Items, ladderPods.Items...)
	}
	live := 0
	seen := make(map[string]bool, len(pods.Items))
	for i := range pods.Items {
		p := &pods.Items[i]
		seen[p.Name] = true
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live++
		}
	}
	created := l.created[ns]
	for name, a := range created {
		if seen[name] || now.Sub(a.at) > createdGrace {
			delete(created, name)
			continue
		}
		live++
	}
	free := l.max - live
	if free <= 0 {
		return false, nil
	}
	ahead, err := l.waitingAhead(ctx, c, job, created)
	if err != nil {
		return false, err
	}
	if ahead >= free {
		return false, nil
	}
	if created == nil {
		created = map[string]admitted{}
		l.created[ns] = created
	}
	created[pod] = admitted{job: job.Name, at: now}
	return true, nil
}

// forget drops a Pod that was admitted but not created (the API server refused it).
func (l *NamespaceLimit) forget(ns, pod string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.created[ns], pod)
}

// waitingAhead counts the jobs of job's namespace that wait for the limit and go before
// job: higher spec.priority, or the same and created earlier. A job admitted a moment ago
// whose status does not show it yet is not waiting.
func (l *NamespaceLimit) waitingAhead(ctx context.Context, c client.Reader, job *vmafxv1.VmafxJob, created map[string]admitted) (int, error) {
	var jobs vmafxv1.VmafxJobList
	if err := c.List(ctx, &jobs, client.InNamespace(job.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return 0, fmt.Errorf("listing the jobs of namespace %s: %w", job.Namespace, err)
	}
	justAdmitted := make(map[string]bool, len(created))
	for _, a := range created {
		justAdmitted[a.job] = true
	}
	ahead := 0
	for i := range jobs.Items {
		o := &jobs.Items[i]
		if o.Name == job.Name || justAdmitted[o.Name] || !waitsForLimit(o) {
			continue
		}
		if goesBefore(o, job) {
			ahead++
		}
	}
	return ahead, nil
}

// waitsForLimit reports whether a job's status says it waits for its namespace's limit.
func waitsForLimit(job *vmafxv1.VmafxJob) bool {
	if job.Status.Phase != vmafxv1.JobPending || job.DeletionTimestamp != nil {
		return false
	}
	c := meta.FindStatusCondition(job.Status.Conditions, vmafxv1.JobScheduled)
	return c != nil && c.Reason == ReasonNamespaceLimit
}

// goesBefore is the scheduler's queue order for jobs: higher spec.priority first, then
// the older, then by name so that the order is total.
func goesBefore(a, b *vmafxv1.VmafxJob) bool {
	if a.Spec.Priority != b.Spec.Priority {
		return a.Spec.Priority > b.Spec.Priority
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// wakeWaiting maps a worker Pod that finished or is going to the jobs of its namespace
// that wait for the limit: a place may have come free.
func (r *Reconciler) wakeWaiting(ctx context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok || (pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed) {
		return nil
	}
	var jobs vmafxv1.VmafxJobList
	if err := r.Client.List(ctx, &jobs, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Listing jobs waiting for the namespace's worker limit", "namespace", pod.Namespace)
		return nil
	}
	var out []reconcile.Request
	for i := range jobs.Items {
		if waitsForLimit(&jobs.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: jobs.Items[i].Name}})
		}
	}
	return out
}
