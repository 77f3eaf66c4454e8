package attempt

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// The limit reads the caches through two field indexes, which answer in the number of
// matches: the cache answers a label selector by reading every object of the namespace,
// and a burst of 10 000 jobs under the limit made each admission read all of its Pods
// and jobs, finished or not. RegisterIndexes adds them.
const (
	// indexLivePod: a Pod not Succeeded or Failed, under "job" for a job's worker Pod
	// (labelled vmafx.dev/job) and "ladder" for a ladder's (vmafx.dev/ladder).
	indexLivePod = "attempt:live-pod"
	// indexWaitsForLimit: a VmafxJob whose status says it waits for the limit, under "yes".
	indexWaitsForLimit = "attempt:waits-for-limit"
)

var waitingJobs = client.MatchingFields{indexWaitsForLimit: "yes"}

// RegisterIndexes adds both indexes to the cache of the client the limit reads (the
// manager's, with the jobs and their worker Pods).
func RegisterIndexes(ctx context.Context, idx client.FieldIndexer) error {
	if err := RegisterPodIndex(ctx, idx); err != nil {
		return err
	}
	return idx.IndexField(ctx, &vmafxv1.VmafxJob{}, indexWaitsForLimit, waitingJobKey)
}

// RegisterPodIndex adds the live-Pod index to a Pod cache alone: the ladders' Pods'.
func RegisterPodIndex(ctx context.Context, idx client.FieldIndexer) error {
	return idx.IndexField(ctx, &corev1.Pod{}, indexLivePod, livePodKey)
}

func livePodKey(o client.Object) []string {
	p, ok := o.(*corev1.Pod)
	if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	switch {
	case p.Labels[vmafxv1.LabelJob] != "":
		return []string{"job"}
	case p.Labels[vmafxv1.LabelLadder] != "":
		return []string{"ladder"}
	}
	return nil
}

func waitingJobKey(o client.Object) []string {
	if j, ok := o.(*vmafxv1.VmafxJob); ok && WaitsForLimit(j) {
		return []string{"yes"}
	}
	return nil
}

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
	live, err := l.countLive(ctx, c, ns, now)
	if err != nil {
		return false, err
	}
	free := l.max - live
	if free <= 0 {
		return false, nil
	}
	ahead, err := l.waitingAhead(ctx, c, job, free)
	if err != nil {
		return false, err
	}
	if ahead >= free {
		return false, nil
	}
	created := l.created[ns]
	if created == nil {
		created = map[string]admitted{}
		l.created[ns] = created
	}
	created[pod] = admitted{job: job.Name, at: now}
	return true, nil
}

// countLive counts ns's live worker Pods: the caches' (through indexLivePod), and the
// ones admitted that the caches do not show yet. An admitted Pod the cache shows, live or
// finished, leaves l.created; one it never showed leaves after createdGrace.
func (l *NamespaceLimit) countLive(ctx context.Context, c client.Reader, ns string, now time.Time) (int, error) {
	live := 0
	for _, from := range []struct {
		r    client.Reader
		kind string
	}{{c, "job"}, {l.ladderPods, "ladder"}} {
		if from.r == nil {
			continue
		}
		// The cache's own objects, read and not kept: no copy of every Pod per admission.
		var pods corev1.PodList
		if err := from.r.List(ctx, &pods, client.InNamespace(ns), client.MatchingFields{indexLivePod: from.kind}, client.UnsafeDisableDeepCopy); err != nil {
			return 0, fmt.Errorf("listing the live %s Pods of namespace %s: %w", from.kind, ns, err)
		}
		live += len(pods.Items)
	}
	created := l.created[ns]
	for name, a := range created {
		if now.Sub(a.at) > createdGrace {
			delete(created, name)
			continue
		}
		r := c
		if strings.HasPrefix(a.job, ladderKey) && l.ladderPods != nil {
			r = l.ladderPods
		}
		var p corev1.Pod
		switch err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p, client.UnsafeDisableDeepCopy); {
		case err == nil:
			delete(created, name) // the cache has it: counted above if live
		case apierrors.IsNotFound(err):
			live++
		default:
			return 0, fmt.Errorf("reading worker Pod %s/%s from the cache: %w", ns, name, err)
		}
	}
	return live, nil
}

// Waking returns the jobs of namespace ns to reconcile when a place may have come free:
// the first waiting ones by the scheduler's order, as many as there are free places (at
// least one, should the cache lag), not counting those admitted a moment ago. Waking
// every waiting job on every finished Pod made a burst's cost grow with its square.
func (l *NamespaceLimit) Waking(ctx context.Context, c client.Reader, ns string, now time.Time) ([]string, error) {
	if l == nil {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	live, err := l.countLive(ctx, c, ns, now)
	if err != nil {
		return nil, err
	}
	n := max(l.max-live, 1)
	jobs, err := l.waiting(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	// The n first, by insertion into a short sorted slice: n is at most the limit, the
	// waiting jobs can be thousands.
	first := make([]*vmafxv1.VmafxJob, 0, n+1)
	for _, j := range jobs {
		if len(first) == n && !goesBefore(j, first[n-1]) {
			continue
		}
		i, _ := slices.BinarySearchFunc(first, j, func(a, b *vmafxv1.VmafxJob) int {
			if goesBefore(a, b) {
				return -1
			}
			return 1
		})
		first = slices.Insert(first, i, j)
		if len(first) > n {
			first = first[:n]
		}
	}
	names := make([]string, len(first))
	for i, j := range first {
		names[i] = j.Name
	}
	return names, nil
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
// job (higher spec.priority, or the same and created earlier), up to enough: it stops at
// enough, the free places.
func (l *NamespaceLimit) waitingAhead(ctx context.Context, c client.Reader, job *vmafxv1.VmafxJob, enough int) (int, error) {
	jobs, err := l.waiting(ctx, c, job.Namespace)
	if err != nil {
		return 0, err
	}
	ahead := 0
	for _, o := range jobs {
		if o.Name != job.Name && goesBefore(o, job) {
			if ahead++; ahead >= enough {
				break
			}
		}
	}
	return ahead, nil
}

// waiting returns the jobs of namespace ns that wait for the limit (through
// indexWaitsForLimit), less those admitted a moment ago whose status does not show it
// yet. The jobs are the cache's own: not to be changed.
func (l *NamespaceLimit) waiting(ctx context.Context, c client.Reader, ns string) ([]*vmafxv1.VmafxJob, error) {
	var jobs vmafxv1.VmafxJobList
	if err := c.List(ctx, &jobs, client.InNamespace(ns), waitingJobs, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the jobs of namespace %s that wait for its worker limit: %w", ns, err)
	}
	created := l.created[ns]
	justAdmitted := make(map[string]bool, len(created))
	for _, a := range created {
		justAdmitted[a.job] = true
	}
	out := make([]*vmafxv1.VmafxJob, 0, len(jobs.Items))
	for i := range jobs.Items {
		o := &jobs.Items[i]
		if !justAdmitted[o.Name] && WaitsForLimit(o) {
			out = append(out, o)
		}
	}
	return out, nil
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
