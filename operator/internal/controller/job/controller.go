package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/labelindex"
	"github.com/vmafx/vmafx/operator/internal/metrics"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

// requeueWithBackoff runs the reconcile again through the queue's rate limiter (growing
// delays), which RequeueAfter, the deprecation's suggested replacement, does not give.
var requeueWithBackoff = ctrl.Result{Requeue: true} //nolint:staticcheck // see above

// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs/status,verbs=get;update;patch
// Worker Pods name their job as owner with blockOwnerDeletion, which the API server's
// OwnerReferencesPermissionEnforcement admission plugin allows only to those who may
// update the owner's finalizers.
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler reconciles VmafxJobs.
type Reconciler struct {
	Client client.Client
	// APIReader reads around the cache: to tell a Pod that is gone from one the cache has
	// not seen yet, and to check a job on the API server before starting another attempt.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	Metrics   *metrics.Jobs

	Worker  config.WorkerConfig
	Volumes config.VolumePolicy
	// Attempts are the attempt engine's settings, the operator's as they are.
	config.Attempts
	// TTLAfterFinished is the default of spec.ttlSecondsAfterFinished; negative: never.
	TTLAfterFinished time.Duration
	// MaxConcurrentReconciles is the number of jobs reconciled in parallel.
	MaxConcurrentReconciles int
	// MaxWorkersPerNamespace caps the live worker Pods of one namespace; 0: no cap.
	MaxWorkersPerNamespace int
	// Limit, when set, is the namespace limit shared with the ladder reconciler; unset, the
	// reconciler makes its own from MaxWorkersPerNamespace.
	Limit *attempt.NamespaceLimit
	// LadderPods is the cache of the ladders' Pods: one that finishes or goes wakes the
	// jobs waiting for the namespace's limit, as a worker Pod does. Nil: not watched.
	LadderPods cache.Cache

	limit *attempt.NamespaceLimit
	// seen times the states of the Pods as this operator's cache shows them (seenStates).
	seen seenStates
}

// SetupWithManager registers the reconciler: it watches VmafxJobs and the Pods they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&vmafxv1.VmafxJob{}).
		Owns(&corev1.Pod{}).
		Named("vmafxjob").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles})
	r.limit = r.Limit
	if r.limit == nil {
		// A limit of its own (no ladders' Pods), which reads the manager's caches through
		// the limit's indexes; a limit given in Limit comes with them.
		if r.limit = attempt.NewNamespaceLimit(r.MaxWorkersPerNamespace, nil); r.limit != nil {
			if err := attempt.RegisterIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
				return fmt.Errorf("indexing for the namespace limit: %w", err)
			}
		}
	}
	if r.limit != nil {
		// A worker Pod that finishes or goes wakes the jobs its namespace's limit holds.
		b = b.Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.wakeWaiting))
		if r.LadderPods != nil {
			b = b.WatchesRawSource(source.Kind(r.LadderPods, &corev1.Pod{}, handler.TypedEnqueueRequestsFromMapFunc(
				func(ctx context.Context, pod *corev1.Pod) []reconcile.Request { return r.wakeWaiting(ctx, pod) })))
		}
	}
	return b.Complete(r)
}

// scope is what one reconcile knows.
type scope struct {
	job  *vmafxv1.VmafxJob
	pods []*corev1.Pod // the job's Pods, by attempt
	now  time.Time
	// events to emit once the status that explains them is written.
	events []event
	// forceDelete are Pods to remove without waiting for their kubelet, once the status
	// that counts their attempts as lost is written and their finalizers released.
	forceDelete []*corev1.Pod
	// boundAt is when the attempt's Pod was bound, if it is.
	boundAt time.Time
	// quietUntil: until then, a status that only shows the attempt's progress is not
	// written (progressOnly).
	quietUntil time.Time
	// shown: the stored status shows the job already (a phase was written); see showAfter.
	shown bool
}

type event struct {
	warning        bool
	reason, action string
	note           string
	related        *corev1.Pod
}

// emitAll queues the engine's events; those about the attempt's Pod name pod.
func (s *scope) emitAll(events []attempt.Event, pod *corev1.Pod) {
	for _, e := range events {
		var related *corev1.Pod
		if e.Pod {
			related = pod
		}
		s.emit(e.Warning, e.Reason, e.Action, e.Note, related)
	}
}

func (s *scope) emit(warning bool, reason, action, note string, pod *corev1.Pod) {
	s.events = append(s.events, event{warning: warning, reason: reason, action: action, note: note, related: pod})
}

// Reconcile moves one job forward by one step and records what it saw.
//
// An attempt's outcome is recorded in the job's status before anything follows from it:
// the worker Pod's finalizer is released, and the next attempt created, only in view of
// a status that the API server has stored. So a Pod's result cannot be lost with the Pod,
// and a status write that fails leaves nothing behind that a later reconcile would count
// twice.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &vmafxv1.VmafxJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.releaseOrphans(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	logger := klog.FromContext(ctx).WithValues("vmafxJob", klog.KObj(job))
	ctx = klog.NewContext(ctx, logger)
	pods, err := r.listPods(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	if job.DeletionTimestamp != nil {
		// The job is going, and its Pods with it: nothing waits for their results.
		return ctrl.Result{}, r.release(ctx, pods...)
	}
	if isFinished(job) {
		for _, p := range pods {
			r.seen.forget(p.UID)
		}
		err := r.release(ctx, pods...)
		result, ttlErr := r.expire(ctx, job, pods)
		return result, errors.Join(err, ttlErr)
	}
	before := job.DeepCopy()
	s := &scope{job: job, pods: pods, now: r.Clock.Now(), shown: job.Status.Phase != ""}
	reconcile := r.reconcile
	if chunked(job) {
		reconcile = r.reconcileChunked
	}
	result, err := reconcile(ctx, s)
	if err == nil {
		job.Status.ObservedGeneration = job.Generation
	}
	if job.Status.Phase == "" {
		job.Status.Phase = vmafxv1.JobPending
	}
	// Events tell what this reconcile did (a Pod created, a Pod found lost), which stays
	// true even when the status write below fails, and a later reconcile would not see it
	// again: emit them either way.
	r.flushEvents(s)
	if s.now.Before(s.quietUntil) && progressOnly(before, job) {
		// The Pod's state has not lasted its delay (showAfter) yet: a job that moves on sooner
		// writes only what it moves on to. Nothing here is what the API server must
		// hold: the Pod, named after its attempt and kept by its finalizer, is the record
		// that the attempt started, and a status write that fails is survived the same way.
		job.Status = *before.Status.DeepCopy()
		if wait := s.quietUntil.Sub(s.now) + recheckMargin; result.RequeueAfter == 0 || wait < result.RequeueAfter {
			result.RequeueAfter = wait
		}
	} else if !equality.Semantic.DeepEqual(before.Status, job.Status) {
		if progressOnly(before, job) {
			// A state of the Pod that has lasted its delay, as the cache shows it. A cache
			// that lags (seconds, on a busy API server) may show a state the Pod has left
			// already: written, it would be superseded at once. Ask the API server first,
			// as next() does for the job: one read in place of a wasted write. A cache
			// behind gets the Pod's newer version through its watch, which runs this
			// reconcile again: polling sooner would read the Pod again for every 200 ms
			// the cache lags (0.25 reads a job at 100 nodes on a loaded machine, issue 32).
			if behind, podErr := r.podBehind(ctx, s); podErr != nil || behind {
				return ctrl.Result{RequeueAfter: podLagRecheck}, errors.Join(err, podErr)
			}
		}
		// The resourceVersion in the patch makes a write computed from stale data fail with
		// a conflict; the reconcile then runs again on fresh data.
		patchErr := r.Client.Status().Patch(ctx, job, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(patchErr) {
			logger.V(4).Info("Status changed underneath; retrying")
			return requeueWithBackoff, err
		}
		if patchErr != nil {
			return result, errors.Join(err, patchErr)
		}
		r.observeMetrics(before, job, s.boundAt)
	}
	// From here on the status is stored as computed: release what it accounts for.
	if relErr := r.releaseRecorded(ctx, s); relErr != nil {
		return result, errors.Join(err, relErr)
	}
	for _, p := range s.forceDelete {
		err = errors.Join(err, attempt.ForceDelete(ctx, r.Client, p))
	}
	return result, err
}

// progressDelay is how long a state of an attempt's Pod (waiting to be placed, to start,
// running) must last before the job's status shows it: states that pass sooner are never
// written, and an attempt that ends within progressDelay of its Pod's start causes one
// status write, its outcome. A kubelet batches its Pod status writes for the same reason.
const progressDelay = 5 * time.Second

// queuedDelay is progressDelay for a job's first state shown when that state only says
// its Pod waits its turn: the scheduler has not looked at it yet, every node's slots are
// taken (the scheduler's verdict names no other reason, attempt.WaitsForSlot), or it is
// bound and its kubelet has not started it and gives no reason. A burst of new jobs
// queues there for seconds to a minute, and each such state shown is one more status
// write per job, superseded moments later. Any other reason (a verdict that names a stale
// heartbeat or the wrong vendor, a scheduling gate, the kubelet's ImagePullBackOff), the
// start or an outcome shows after progressDelay or at once as before, and so does any
// change once the status shows the job (a lifted scheduling gate, a retry's next
// attempt). A Pod the scheduler ignores longer than attempt.SchedulerSilence says so after
// that minute, as before.
const queuedDelay = 30 * time.Second

// showAfter is how long the attempt's Pod state o must last before the status shows it;
// shown says the status shows the job already.
func showAfter(o observation, shown bool) time.Duration {
	if !shown && o.State == attempt.Pending &&
		(o.Reason == ReasonWaitingForScheduler || o.Reason == ReasonScheduled || attempt.WaitsForSlot(o.Reason, o.Message)) {
		return queuedDelay
	}
	return progressDelay
}

// podBehind says whether the cache shows an older version of the job's current Pod
// (status.podName) than the API server has.
func (r *Reconciler) podBehind(ctx context.Context, s *scope) (bool, error) {
	i := slices.IndexFunc(s.pods, func(p *corev1.Pod) bool { return p.Name == s.job.Status.PodName })
	if i < 0 {
		return false, nil
	}
	cached := s.pods[i]
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), live)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading worker Pod %s: %w", cached.Name, err)
	}
	return live.ResourceVersion != cached.ResourceVersion, nil
}

// progressOnly says whether after differs from before only in an unfinished attempt's
// progress: its number and Pod, the node and start time, the phase, message, Scheduled
// and Running. Counters, results, refusals and failures are never held back, nor a job
// that waited for its namespace's limit (the jobs behind it must see it go).
func progressOnly(before, after *vmafxv1.VmafxJob) bool {
	if attempt.WaitsForLimit(before) || isFinished(after) {
		return false
	}
	b, a := before.Status.DeepCopy(), after.Status.DeepCopy()
	for _, st := range []*vmafxv1.VmafxJobStatus{b, a} {
		st.Phase, st.Message, st.Attempts, st.PodName, st.Node, st.StartTime, st.ObservedGeneration = "", "", 0, "", "", nil, 0
		meta.RemoveStatusCondition(&st.Conditions, vmafxv1.JobScheduled)
		meta.RemoveStatusCondition(&st.Conditions, vmafxv1.JobRunningCondition)
	}
	return equality.Semantic.DeepEqual(b, a)
}

func isFinished(job *vmafxv1.VmafxJob) bool {
	return job.Status.Phase.Finished()
}

// listPods returns the job's Pods from the cache, ordered by attempt.
func (r *Reconciler) listPods(ctx context.Context, job *vmafxv1.VmafxJob) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(job.Namespace), labelindex.Matching(vmafxv1.LabelJob, vmafxv1.JobLabelValue(job.Name))); err != nil {
		return nil, fmt.Errorf("listing the Pods of job %s: %w", job.Name, err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		if metav1IsControlledBy(&list.Items[i], job) {
			pods = append(pods, &list.Items[i])
		}
	}
	sort.Slice(pods, func(i, j int) bool { return attemptOf(pods[i]) < attemptOf(pods[j]) })
	return pods, nil
}

func attemptOf(pod *corev1.Pod) int32 {
	n, err := strconv.Atoi(pod.Labels[vmafxv1.LabelAttempt])
	if err != nil {
		return 0
	}
	return int32(n)
}

// currentAttempt is the highest attempt known from status or from the Pods. Pods count
// because a status write can fail after the Pod it describes was created.
func currentAttempt(s *scope) int32 {
	n := s.job.Status.Attempts
	for _, p := range s.pods {
		n = max(n, attemptOf(p))
	}
	return n
}

// recordedUpTo is the last attempt whose outcome the job's status accounts for. Attempts
// run one after another, and each ends failed or lost (a success ends the job).
func recordedUpTo(job *vmafxv1.VmafxJob) int32 {
	return job.Status.FailedAttempts + job.Status.LostAttempts
}

func (r *Reconciler) reconcile(ctx context.Context, s *scope) (ctrl.Result, error) {
	n := currentAttempt(s)
	st := &s.job.Status
	st.Attempts = n
	var pod *corev1.Pod
	if n > 0 {
		var err error
		if pod, err = r.attemptPod(ctx, s, n); err != nil {
			return ctrl.Result{}, err
		}
		if pod != nil {
			st.PodName = pod.Name
		}
	}
	rec := attempt.Record{N: n, Failed: st.FailedAttempts, Lost: st.LostAttempts, Recorded: n > 0 && recordedUpTo(s.job) >= n, LastFailed: lastFailed(s.job)}
	d := attempt.Decide(r.policy(s.job), rec, attempt.Attempt{Pod: PodName(s.job, n)}, pod, parseResult, s.now)
	if res := r.endedWithRows(s, rec, pod, d.Obs); res != nil {
		// A job with renditions records the attempt's rows and decides on them itself
		// (renditions.go), in place of the engine's decision on the Pod as a whole.
		st.Node = d.Obs.Node
		if d.Obs.Started != nil && st.StartTime == nil {
			st.StartTime = timePtr(*d.Obs.Started)
		}
		s.boundAt = boundAt(pod)
		return r.renditionsEnded(s, n, pod, d.Obs, res), nil
	}
	s.emitAll(d.Events, pod)
	if d.Delete {
		if err := r.deletePod(ctx, pod); err != nil {
			return ctrl.Result{}, err
		}
	}
	if d.ForceDelete {
		s.forceDelete = append(s.forceDelete, pod)
	}
	if pod != nil {
		s.boundAt = boundAt(pod)
	}
	if pod != nil && !rec.Recorded {
		if d.Action == attempt.Wait && !d.Deleting {
			// The Pod's state is shown once it has lasted its delay (showAfter): waiting
			// to be placed since its creation, to start since its binding, running since
			// it started.
			since := d.Obs.Since
			if d.Obs.State == attempt.Running && d.Obs.Started != nil {
				since = *d.Obs.Started
			}
			// And not before this operator's cache has shown the state that long
			// (seenStates): a lagging watch delays the check with it.
			if first := r.seen.since(pod.UID, d.Obs.State, d.Obs.Bound, s.now); first.After(since) {
				since = first
			}
			s.quietUntil = since.Add(showAfter(d.Obs, s.shown))
		}
		if d.Obs.Node != "" {
			st.Node = d.Obs.Node
		}
		if d.Obs.Started != nil && st.StartTime == nil {
			st.StartTime = timePtr(*d.Obs.Started)
		}
	}
	// The attempt's outcome first, then what follows from it.
	switch d.Outcome {
	case attempt.RecordFailure:
		st.FailedAttempts++
		st.LostAttempts = max(n-st.FailedAttempts, 0)
	case attempt.RecordLoss:
		st.LostAttempts = max(n-st.FailedAttempts, 0)
	}
	switch d.Action {
	case attempt.Start:
		return r.next(ctx, s, rec)
	case attempt.Succeed:
		if hasRenditions(s.job) {
			// A result without a row for each distorted video asked for (endedWithRows
			// found none to record) proves no score: fail rather than record it.
			msg := fmt.Sprintf("attempt %d's worker result has %d rows for the %d distorted videos asked for", n, len(d.Obs.Result.Renditions), len(missingRenditions(s.job)))
			setFailed(s.job, ReasonUnparsableResult, msg, s.now)
			s.emit(true, ReasonUnparsableResult, "Fail", msg, pod)
			break
		}
		r.succeeded(s, d.Obs, pod)
	case attempt.RecordFailure:
		setRetrying(s.job, d.Obs, n, d.RetryAt)
	case attempt.RecordLoss:
		setLost(s.job, n, d.Message)
	case attempt.Fail:
		setFailed(s.job, d.Reason, d.Message, s.now)
	case attempt.Wait:
		switch {
		case d.Deleting:
			setWaitingForDeletion(s.job, d.Obs)
		case rec.Recorded:
			// Waiting for the backoff, or for a force-deleted Pod to go.
		case d.Obs.State == attempt.Running:
			setRunning(s.job, d.Obs)
		default:
			setPending(s.job, d.Obs)
		}
	}
	if d.Requeue {
		return requeueWithBackoff, nil
	}
	return ctrl.Result{RequeueAfter: d.After}, nil
}

// endedWithRows is the renditions result of a job with spec.renditions whose attempt's
// Pod (o, not yet recorded) ended with rows to record; nil otherwise.
func (r *Reconciler) endedWithRows(s *scope, rec attempt.Record, pod *corev1.Pod, o observation) *vmafxv1.WorkerResult {
	if !hasRenditions(s.job) || pod == nil || rec.Recorded || (o.State != attempt.Succeeded && o.State != attempt.Failed) {
		return nil
	}
	return renditionsResult(s.job, pod)
}

// boundAt is when pod was bound to its node; zero if it is not.
func boundAt(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// policy is the attempt engine's limits for job: its spec, and the operator's defaults.
func (r *Reconciler) policy(job *vmafxv1.VmafxJob) attempt.Policy {
	return attempt.Policy{
		BackoffLimit: backoffLimit(job), MaxLost: maxLostAttempts,
		RetryBackoff: r.RetryBackoff, MaxRetryBackoff: r.MaxRetryBackoff,
		PendingDeadline: r.pendingDeadline(job), StartTimeout: r.PodStartTimeout, TerminatingTimeout: r.TerminatingTimeout,
	}
}

// lastFailed says whether the job's last recorded attempt failed (rather than was lost),
// so that the next one waits for the backoff.
func lastFailed(job *vmafxv1.VmafxJob) bool {
	c := meta.FindStatusCondition(job.Status.Conditions, vmafxv1.JobRunningCondition)
	return c != nil && c.Reason == ReasonAttemptFailed
}

// succeeded records the worker's score as the job's result.
func (r *Reconciler) succeeded(s *scope, o observation, pod *corev1.Pod) {
	setSucceeded(s.job, o, s.now)
	s.emit(false, ReasonSucceeded, "Score", s.job.Status.Message, pod)
	if o.Result.OutputError != "" {
		s.emit(true, ReasonOutputFailed, "WriteOutput", "the score is kept, but the per-frame output was not written: "+oneLine(o.Result.OutputError), pod)
	}
	if note := alignmentWarning(o.Result); note != "" {
		s.emit(true, ReasonLikelyMisaligned, "Score", note, pod)
	}
}

// next starts the attempt after rec.N (the first when there is none).
func (r *Reconciler) next(ctx context.Context, s *scope, rec attempt.Record) (ctrl.Result, error) {
	if rec.N == 0 {
		return r.startAttempt(ctx, s, 1, "first")
	}
	// The cache may lag the API server: a job that succeeded, or moved on to another
	// attempt, could look here as if it still waited for one. Ask the API server.
	fresh := &vmafxv1.VmafxJob{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.job), fresh); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if fresh.ResourceVersion != s.job.ResourceVersion {
		klog.FromContext(ctx).V(4).Info("The cached job is behind the API server; waiting for it", "cached", s.job.ResourceVersion, "current", fresh.ResourceVersion)
		return ctrl.Result{RequeueAfter: cacheLagRetry}, nil
	}
	kind := "lost"
	if rec.LastFailed {
		kind = "retry"
	}
	return r.startAttempt(ctx, s, rec.N+1, kind)
}

// attemptPod returns attempt n's Pod, or nil when it no longer exists (see ownPod).
func (r *Reconciler) attemptPod(ctx context.Context, s *scope, n int32) (*corev1.Pod, error) {
	return r.ownPod(ctx, s, PodName(s.job, n))
}

// ownPod returns the job's Pod called name, or nil when it no longer exists. A Pod missing
// from the cache is looked up on the API server before it is declared gone, because the
// cache may not have seen a Pod created moments ago.
func (r *Reconciler) ownPod(ctx context.Context, s *scope, name string) (*corev1.Pod, error) {
	for _, p := range s.pods {
		if p.Name == name {
			return p, nil
		}
	}
	pod := &corev1.Pod{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.job.Namespace, Name: name}, pod)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading worker Pod %s: %w", name, err)
	}
	if !metav1IsControlledBy(pod, s.job) {
		return nil, fmt.Errorf("pod %s exists but is not owned by job %s; delete it or rename the job", name, s.job.Name)
	}
	s.pods = append(s.pods, pod)
	return pod, nil
}

// recheckMargin lands a deadline's requeue just after it (attempt.RecheckMargin).
const recheckMargin = attempt.RecheckMargin

func (r *Reconciler) pendingDeadline(job *vmafxv1.VmafxJob) time.Duration {
	if d := job.Spec.PendingDeadlineSeconds; d != nil {
		return time.Duration(*d) * time.Second
	}
	return r.PendingDeadline
}

// cacheLagRetry is how soon a reconcile that found the cache behind runs again; the
// watch event that brings the cache up to date usually triggers one sooner.
const cacheLagRetry = 200 * time.Millisecond

// podLagRecheck is how soon a reconcile that held back a progress write, because the
// cache showed an older version of the attempt's Pod than the API server, runs again if
// the Pod's watch event has not run it sooner: a safety net, not the way on.
const podLagRecheck = progressDelay

// deletePod deletes a worker Pod that should not run on (attempt.Delete).
func (r *Reconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	return attempt.Delete(ctx, r.Client, pod)
}

// backoffLimit is spec.backoffLimit, which the API server always sets (the CRD's
// +kubebuilder:default is the one place its default is written); a job it has not
// defaulted gets no retry rather than a second copy of the default.
func backoffLimit(job *vmafxv1.VmafxJob) int32 {
	if job.Spec.BackoffLimit == nil {
		return 0
	}
	return *job.Spec.BackoffLimit
}

// startAttempt creates attempt n's Pod. AlreadyExists means an earlier reconcile made it.
func (r *Reconciler) startAttempt(ctx context.Context, s *scope, n int32, kind string) (ctrl.Result, error) {
	if err := workerpod.CheckVolume(s.job.Spec.Volume, r.Volumes); err != nil {
		msg := oneLine(err.Error())
		setFailed(s.job, ReasonVolumeNotAllowed, msg, s.now)
		s.emit(true, ReasonVolumeNotAllowed, "Fail", msg, nil)
		return ctrl.Result{}, nil
	}
	if wait, result, err := r.waitForNamespaceLimit(ctx, s, n); wait || err != nil {
		return result, err
	}
	pod := buildPod(s.job, n, r.Worker)
	created, err := attempt.Create(ctx, r.Client, pod)
	if err != nil {
		r.limit.Forget(pod.Namespace, pod.Name)
		rf := r.refused(s, pod.Name, err)
		switch {
		case rf.Gone:
		case rf.Err != nil:
			return ctrl.Result{}, rf.Err
		case rf.Fail:
			setFailed(s.job, rf.FailReason, rf.Message, s.now)
		default:
			setPending(s.job, observation{Reason: rf.Reason, Message: rf.Message})
		}
		return ctrl.Result{RequeueAfter: rf.After}, nil
	}
	r.created(ctx, s, pod, created, kind, fmt.Sprintf("attempt %d", n))
	s.job.Status.Attempts = n
	s.job.Status.PodName = pod.Name
	setPending(s.job, observation{Reason: ReasonWaitingForScheduler, Message: fmt.Sprintf("worker Pod %s is waiting for %s", pod.Name, vmafxv1.SchedulerName)})
	return ctrl.Result{}, nil
}

// created records that a Pod of the job was created (or found made by an earlier
// reconcile): it ends a refusal; the attempt's progress shows after its delay (showAfter).
func (r *Reconciler) created(ctx context.Context, s *scope, pod *corev1.Pod, created bool, kind, what string) {
	if created {
		r.Metrics.Attempts.WithLabelValues(kind).Inc()
		s.emit(false, ReasonPodCreated, "Create", fmt.Sprintf("created worker Pod %s (%s)", pod.Name, what), pod)
	} else {
		klog.FromContext(ctx).V(2).Info("Worker Pod already exists", "pod", klog.KObj(pod))
	}
	clearRefused(s.job, pod.Name)
	// The new Pod waits for the scheduler, which has not looked at it yet.
	s.quietUntil = s.now.Add(showAfter(observation{Reason: ReasonWaitingForScheduler}, s.shown))
}

// refused decides on the API server's refusal to create a Pod of the job
// (attempt.Refused) and records it in the PodRefused condition and a Warning event, both
// with the API server's reason and words. The pending deadline counts from the first
// refusal, the condition's transition.
func (r *Reconciler) refused(s *scope, pod string, err error) attempt.Refusal {
	var since time.Time
	if c := meta.FindStatusCondition(s.job.Status.Conditions, vmafxv1.JobPodRefused); c != nil && c.Status == metav1.ConditionTrue {
		since = c.LastTransitionTime.Time
	}
	rf := attempt.Refused(r.policy(s.job), pod, err, s.now.Sub(s.job.CreationTimestamp.Time), since, s.now)
	if !rf.Gone {
		setCondition(s.job, vmafxv1.JobPodRefused, true, rf.Reason, rf.Condition)
		s.emitAll(rf.Events, nil)
	}
	return rf
}

func (r *Reconciler) flushEvents(s *scope) {
	for _, e := range s.events {
		typ := corev1.EventTypeNormal
		if e.warning {
			typ = corev1.EventTypeWarning
		}
		// A typed nil Pod in the interface would not be nil to the recorder.
		var related runtime.Object
		if e.related != nil {
			related = e.related
		}
		r.Recorder.Eventf(s.job, related, typ, e.reason, e.action, "%s", e.note)
	}
}

// observeMetrics observes what the status write from before to after tells; boundAt is
// when the attempt's Pod was bound, if known (the status may show it seconds later).
func (r *Reconciler) observeMetrics(before, after *vmafxv1.VmafxJob, boundAt time.Time) {
	created := after.CreationTimestamp.Time
	if !isScheduled(before) && isScheduled(after) {
		if boundAt.IsZero() {
			boundAt = r.Clock.Now()
		}
		r.Metrics.ScheduleSeconds.Observe(boundAt.Sub(created).Seconds())
	}
	if !isFinished(before) && isFinished(after) {
		r.Metrics.Outcomes.WithLabelValues(string(after.Status.Phase)).Inc()
		r.Metrics.CompletionSeconds.WithLabelValues(string(after.Status.Phase)).Observe(r.Clock.Since(created).Seconds())
		if after.Status.Phase == vmafxv1.JobSucceeded {
			r.Metrics.ObserveResult(after.Status.Result)
		}
	}
}
