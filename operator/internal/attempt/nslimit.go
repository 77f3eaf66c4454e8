package attempt

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// The per-namespace limit (VMAFX_OPERATOR_MAX_WORKERS_PER_NAMESPACE) keeps one namespace's
// burst from taking every slot: work whose namespace already has the limit's number of
// live worker Pods (created, not finished) creates none and waits; the first waiting by
// the scheduler's own order (spec.priority, then the oldest) takes a free place. How a
// job records and ends its wait is the job reconciler's (job/nslimit.go).

// createdGrace is how long a Pod this operator created counts as live before the cache
// shows it; past that the cache has it, or it is gone.
const createdGrace = time.Minute

// NamespaceLimit is the attempt engine's namespace cap: it counts live worker Pods per
// namespace, the VmafxJobs' worker Pods and the VmafxLadders' encode and report Pods
// alike, so that a ladder is no way around the limit.
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

// AdmitLadderPod decides whether ladder l may create its Pod pod now, as Admit does for a
// job: the ladder queues as a job of the ladder's priority created when the ladder was,
// behind the waiting jobs that go before it. c reads VmafxJobs and their Pods.
func (l *NamespaceLimit) AdmitLadderPod(ctx context.Context, c client.Reader, ladder *vmafxv1.VmafxLadder, pod string, now time.Time) (bool, error) {
	if l == nil {
		return true, nil
	}
	as := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ladder.Namespace, Name: ladderKey + ladder.Name, CreationTimestamp: ladder.CreationTimestamp}}
	as.Spec.Priority = ladder.Spec.Priority
	return l.Admit(ctx, c, as, pod, now)
}

// Admit decides whether job may create Pod pod now: the namespace has fewer live worker
// Pods than the limit, and more free places than waiting jobs that go before this one.
func (l *NamespaceLimit) Admit(ctx context.Context, c client.Reader, job *vmafxv1.VmafxJob, pod string, now time.Time) (bool, error) {
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

// Forget drops a Pod that was admitted but not created (the API server refused it).
func (l *NamespaceLimit) Forget(ns, pod string) {
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
		if o.Name == job.Name || justAdmitted[o.Name] || !WaitsForLimit(o) {
			continue
		}
		if goesBefore(o, job) {
			ahead++
		}
	}
	return ahead, nil
}

// WaitsForLimit reports whether a job's status says it waits for its namespace's limit.
func WaitsForLimit(job *vmafxv1.VmafxJob) bool {
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
