package job

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	// RetryBackoff is the wait before the attempt after the first failure; it doubles for
	// each further failure up to MaxRetryBackoff.
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// PendingDeadline is the default of spec.pendingDeadlineSeconds; 0: none.
	PendingDeadline time.Duration
	// PodStartTimeout bounds the time from a Pod's binding to its container's start.
	PodStartTimeout time.Duration
	// TerminatingTimeout bounds how long a deleted Pod may stay Terminating after its
	// grace period before the attempt counts as lost and the Pod is force-deleted.
	TerminatingTimeout time.Duration
	// TTLAfterFinished is the default of spec.ttlSecondsAfterFinished; negative: never.
	TTLAfterFinished time.Duration
	// MaxConcurrentReconciles is the number of jobs reconciled in parallel.
	MaxConcurrentReconciles int
	// MaxWorkersPerNamespace caps the live worker Pods of one namespace; 0: no cap.
	MaxWorkersPerNamespace int
	// Limit, when set, is the namespace limit shared with the ladder reconciler; unset, the
	// reconciler makes its own from MaxWorkersPerNamespace.
	Limit *NamespaceLimit
	// LadderPods is the cache of the ladders' Pods: one that finishes or goes wakes the
	// jobs waiting for the namespace's limit, as a worker Pod does. Nil: not watched.
	LadderPods cache.Cache

	limit *NamespaceLimit
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
		r.limit = NewNamespaceLimit(r.MaxWorkersPerNamespace, nil)
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
}

type event struct {
	warning        bool
	reason, action string
	note           string
	related        *corev1.Pod
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
		err := r.release(ctx, pods...)
		result, ttlErr := r.expire(ctx, job, pods)
		return result, errors.Join(err, ttlErr)
	}
	before := job.DeepCopy()
	s := &scope{job: job, pods: pods, now: r.Clock.Now()}
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
	if !equality.Semantic.DeepEqual(before.Status, job.Status) {
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
		r.observeMetrics(before, job)
	}
	// From here on the status is stored as computed: release what it accounts for.
	if relErr := r.releaseRecorded(ctx, s); relErr != nil {
		return result, errors.Join(err, relErr)
	}
	for _, p := range s.forceDelete {
		if delErr := r.Client.Delete(ctx, p, client.GracePeriodSeconds(0), client.Preconditions{UID: &p.UID}); delErr != nil && !apierrors.IsNotFound(delErr) && !apierrors.IsConflict(delErr) {
			err = errors.Join(err, fmt.Errorf("force-deleting worker Pod %s: %w", p.Name, delErr))
		}
	}
	return result, err
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
	s.job.Status.Attempts = n
	if n == 0 {
		return r.startAttempt(ctx, s, 1, "first")
	}
	pod, err := r.attemptPod(ctx, s, n)
	if err != nil {
		return ctrl.Result{}, err
	}
	if pod != nil {
		s.job.Status.PodName = pod.Name
	}
	if recordedUpTo(s.job) >= n {
		return r.afterAttempt(ctx, s, n, pod)
	}
	return r.followAttempt(ctx, s, n, pod)
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

// followAttempt follows attempt n, whose outcome is not recorded yet, through its Pod.
func (r *Reconciler) followAttempt(ctx context.Context, s *scope, n int32, pod *corev1.Pod) (ctrl.Result, error) {
	if pod == nil {
		// Only a Pod without the result finalizer (from an older operator, or one whose
		// finalizer was removed by hand) can vanish before its outcome is recorded.
		why := fmt.Sprintf("worker Pod %s was deleted", PodName(s.job, n))
		s.emit(true, ReasonPodLost, "Retry", why+"; starting a new attempt", nil)
		return r.recordLost(s, n, why)
	}
	o := observe(pod)
	if o.node != "" {
		s.job.Status.Node = o.node
	}
	if o.started != nil && s.job.Status.StartTime == nil {
		s.job.Status.StartTime = timePtr(*o.started)
	}
	switch o.state {
	case podPending:
		return r.pendingAttempt(ctx, s, n, pod, o)
	case podRunning:
		setRunning(s.job, o)
		return ctrl.Result{}, nil
	case podSucceeded:
		setSucceeded(s.job, o, s.now)
		s.emit(false, ReasonSucceeded, "Score", s.job.Status.Message, pod)
		if o.result.OutputError != "" {
			s.emit(true, ReasonOutputFailed, "WriteOutput", "the score is kept, but the per-frame output was not written: "+oneLine(o.result.OutputError), pod)
		}
		if note := alignmentWarning(o.result); note != "" {
			s.emit(true, ReasonLikelyMisaligned, "Score", note, pod)
		}
		return ctrl.Result{}, nil
	case podTerminating:
		return r.terminatingAttempt(s, n, pod, o)
	case podLost:
		s.emit(true, ReasonPodLost, "Retry", o.message+"; starting a new attempt", pod)
		return r.recordLost(s, n, o.message)
	}
	return r.recordFailure(s, n, pod, o)
}

// pendingAttempt waits for a Pod that has not started, within the pending deadline (not
// placed yet) or the start timeout (placed, its container not started).
func (r *Reconciler) pendingAttempt(ctx context.Context, s *scope, n int32, pod *corev1.Pod, o observation) (ctrl.Result, error) {
	if o.bound {
		left := o.since.Add(r.PodStartTimeout).Sub(s.now)
		if left > 0 {
			setPending(s.job, o)
			return ctrl.Result{RequeueAfter: left + recheckMargin}, nil
		}
		reason := o.reason
		if reason == ReasonScheduled {
			reason = ReasonStartTimeout
		}
		o.state, o.reason, o.ended = podFailed, reason,
			s.now
		o.message = oneLine(fmt.Sprintf("worker Pod %s did not start within %s of being bound to node %s: %s", pod.Name, r.PodStartTimeout, o.node, o.message))
		if err := r.deletePod(ctx, pod); err != nil {
			return ctrl.Result{}, err
		}
		return r.recordFailure(s, n, pod, o)
	}
	var requeue time.Duration
	if d := r.pendingDeadline(s.job); d > 0 {
		left := o.since.Add(d).Sub(s.now)
		if left <= 0 {
			if err := r.deletePod(ctx, pod); err != nil {
				return ctrl.Result{}, err
			}
			msg := oneLine(fmt.Sprintf("worker Pod %s was not placed on a node within the pending deadline (%s): %s", pod.Name, d, o.message))
			setFailed(s.job, ReasonPendingDeadline, msg, s.now)
			s.emit(true, ReasonPendingDeadline, "Fail", msg, pod)
			return ctrl.Result{}, nil
		}
		requeue = left + recheckMargin
	}
	if o.reason == ReasonWaitingForScheduler && s.now.Sub(o.since) >= schedulerSilence {
		// No word from the scheduler at all: it is not running, or not as vmafx-scheduler.
		o.message = fmt.Sprintf("worker Pod %s has waited %s for %s, which has not looked at it: check that the vmafx-scheduler Deployment in %s runs",
			pod.Name, s.now.Sub(o.since).Round(time.Second), vmafxv1.SchedulerName, vmafxv1.SystemNamespace)
	} else if o.reason == ReasonWaitingForScheduler && (requeue == 0 || requeue > schedulerSilence) {
		requeue = o.since.Add(schedulerSilence).Sub(s.now) + recheckMargin
	}
	setPending(s.job, o)
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// schedulerSilence is how long a Pod may wait without any word from vmafx-scheduler
// before the job says so: the scheduler answers within seconds, placed or not.
const schedulerSilence = time.Minute

// recheckMargin lands a deadline's requeue just after it, so the reconcile that runs then
// sees it passed rather than a few microseconds short of it.
const recheckMargin = 50 * time.Millisecond

func (r *Reconciler) pendingDeadline(job *vmafxv1.VmafxJob) time.Duration {
	if d := job.Spec.PendingDeadlineSeconds; d != nil {
		return time.Duration(*d) * time.Second
	}
	return r.PendingDeadline
}

// terminatingAttempt waits for a deleted Pod to go. A kubelet that is alive confirms
// within the grace period; past TerminatingTimeout after it the node is taken for gone:
// the attempt counts as lost and the Pod is force-deleted, as the Pod garbage collector
// does for Pods of deleted nodes.
func (r *Reconciler) terminatingAttempt(s *scope, n int32, pod *corev1.Pod, o observation) (ctrl.Result, error) {
	if left := o.since.Add(r.TerminatingTimeout).Sub(s.now); left > 0 {
		setWaitingForDeletion(s.job, o)
		return ctrl.Result{RequeueAfter: left + recheckMargin}, nil
	}
	why := fmt.Sprintf("worker Pod %s stayed Terminating %s past its grace period: its node %s does not answer", pod.Name, r.TerminatingTimeout, pod.Spec.NodeName)
	s.emit(true, ReasonPodLost, "Retry", why+"; force-deleting it and starting a new attempt", pod)
	s.forceDelete = append(s.forceDelete, pod)
	return r.recordLost(s, n, why)
}

// recordLost records attempt n as lost. Lost attempts do not use the backoff budget,
// but a job that keeps losing its Pods fails after maxLostAttempts.
func (r *Reconciler) recordLost(s *scope, n int32, why string) (ctrl.Result, error) {
	st := &s.job.Status
	st.LostAttempts = max(n-st.FailedAttempts, 0)
	if st.LostAttempts > maxLostAttempts {
		setFailed(s.job, ReasonTooManyLost, fmt.Sprintf("%d worker Pods were lost (the last: %s); giving up", st.LostAttempts, why), s.now)
		return ctrl.Result{}, nil
	}
	setLost(s.job, n, why)
	return requeueWithBackoff, nil
}

// recordFailure records attempt n as failed, and fails the job when the failure is
// deterministic (the same input would fail the same way) or the backoff limit is spent.
func (r *Reconciler) recordFailure(s *scope, n int32, pod *corev1.Pod, o observation) (ctrl.Result, error) {
	st := &s.job.Status
	st.FailedAttempts++
	st.LostAttempts = max(n-st.FailedAttempts, 0)
	limit := backoffLimit(s.job)
	switch {
	case permanentReasons[o.reason]:
		setFailed(s.job, o.reason, fmt.Sprintf("attempt %d failed (%s): %s; not retried, as the same input fails the same way", n, o.reason, o.message), s.now)
		s.emit(true, ReasonNotRetried, "Fail", s.job.Status.Message, pod)
		return ctrl.Result{}, nil
	case st.FailedAttempts > limit:
		setFailed(s.job, o.reason, fmt.Sprintf("attempt %d failed (%s): %s; backoffLimit %d reached", n, o.reason, o.message, limit), s.now)
		s.emit(true, ReasonBackoffLimit, "Fail", s.job.Status.Message, pod)
		return ctrl.Result{}, nil
	}
	retryAt := r.retryAt(st.FailedAttempts, o, s.now)
	setRetrying(s.job, o, n, retryAt)
	s.emit(true, ReasonAttemptFailed, "Retry", fmt.Sprintf("attempt %d failed (%s): %s; retrying in %s", n, o.reason, o.message, max(retryAt.Sub(s.now), 0).Round(time.Second)), pod)
	return ctrl.Result{RequeueAfter: max(retryAt.Sub(s.now), 0) + recheckMargin}, nil
}

// permanentReasons are the failures that no retry can change: the videos or the request
// are unusable, the model is unknown, the result cannot be read.
var permanentReasons = map[string]bool{
	vmafxv1.ReasonBadInput: true,
	vmafxv1.ReasonBadModel: true,
	ReasonUnparsableResult: true,
}

func (r *Reconciler) retryAt(failed int32, o observation, now time.Time) time.Time {
	ended := o.ended
	if ended.IsZero() {
		ended = now
	}
	return ended.Add(r.backoff(failed))
}

// afterAttempt starts the attempt after n, whose outcome is recorded, once its Pod is
// gone or finished and, after a failure, the backoff has passed.
func (r *Reconciler) afterAttempt(ctx context.Context, s *scope, n int32, pod *corev1.Pod) (ctrl.Result, error) {
	failed := meta.FindStatusCondition(s.job.Status.Conditions, vmafxv1.JobRunningCondition)
	afterFailure := failed != nil && failed.Reason == ReasonAttemptFailed
	if pod != nil {
		o := observe(pod)
		switch o.state {
		case podPending, podRunning:
			// The operator ended the attempt (its Pod did not start in time): the Pod goes
			// before the next one comes, so that a job never has two live Pods.
			if err := r.deletePod(ctx, pod); err != nil {
				return ctrl.Result{}, err
			}
			o.message = fmt.Sprintf("worker Pod %s is being deleted", pod.Name)
			setWaitingForDeletion(s.job, o)
			return ctrl.Result{RequeueAfter: r.TerminatingTimeout}, nil
		case podTerminating:
			if left := o.since.Add(r.TerminatingTimeout).Sub(s.now); left > 0 {
				setWaitingForDeletion(s.job, o)
				return ctrl.Result{RequeueAfter: left + recheckMargin}, nil
			}
			s.forceDelete = append(s.forceDelete, pod)
			return requeueWithBackoff, nil
		}
		if afterFailure {
			if left := r.retryAt(s.job.Status.FailedAttempts, o, s.now).Sub(s.now); left > 0 {
				return ctrl.Result{RequeueAfter: left + recheckMargin}, nil
			}
		}
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
	if afterFailure {
		kind = "retry"
	}
	return r.startAttempt(ctx, s, n+1, kind)
}

// cacheLagRetry is how soon a reconcile that found the cache behind runs again; the
// watch event that brings the cache up to date usually triggers one sooner.
const cacheLagRetry = 200 * time.Millisecond

// deletePod deletes a worker Pod that should not run on; its finalizer keeps it until
// the attempt's outcome is recorded.
func (r *Reconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting worker Pod %s: %w", pod.Name, err)
	}
	return nil
}

// backoff is the wait before the attempt after the failed-th failure: RetryBackoff,
// doubled for each further failure, at most MaxRetryBackoff.
func (r *Reconciler) backoff(failed int32) time.Duration {
	d := r.RetryBackoff
	for i := int32(1); i < failed && d < r.MaxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, r.MaxRetryBackoff)
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
	err := r.Client.Create(ctx, pod)
	switch {
	case apierrors.IsAlreadyExists(err):
		klog.FromContext(ctx).V(2).Info("Worker Pod already exists", "pod", klog.KObj(pod))
	case err != nil:
		r.limit.forget(pod.Namespace, pod.Name)
		return r.refused(s, pod, err)
	default:
		r.Metrics.Attempts.WithLabelValues(kind).Inc()
		s.emit(false, ReasonPodCreated, "Create", fmt.Sprintf("created worker Pod %s (attempt %d)", pod.Name, n), pod)
	}
	clearRefused(s.job, pod.Name)
	s.job.Status.Attempts = n
	s.job.Status.PodName = pod.Name
	setPending(s.job, observation{reason: ReasonWaitingForScheduler, message: fmt.Sprintf("worker Pod %s is waiting for %s", pod.Name, vmafxv1.SchedulerName)})
	return ctrl.Result{}, nil
}

// refused records that the API server refused to create an attempt's Pod: in the
// PodRefused condition and a Warning event, both with the API server's reason and words.
// A refusal that stands (the Pod is invalid, or forbidden by policy) fails the job; one
// that can pass (a used-up quota) is retried with a growing wait, within the pending
// deadline.
func (r *Reconciler) refused(s *scope, pod *corev1.Pod, err error) (ctrl.Result, error) {
	kind, reason := classifyRefusal(err, s.now.Sub(s.job.CreationTimestamp.Time))
	switch kind {
	case refusalNamespaceGone:
		return ctrl.Result{}, nil // the job goes with its namespace
	case refusalError:
		// Not a refusal but a failed request (timeout, server error): retried with the
		// controller's backoff, and shown until it passes.
		setCondition(s.job, vmafxv1.JobPodRefused, true, reason, oneLine(fmt.Sprintf("creating worker Pod %s: %v", pod.Name, err)))
		return ctrl.Result{}, fmt.Errorf("creating worker Pod %s: %w", pod.Name, err)
	}
	msg := oneLine(fmt.Sprintf("the API server refused worker Pod %s: %s", pod.Name, apiMessage(err)))
	setCondition(s.job, vmafxv1.JobPodRefused, true, reason, msg)
	s.emit(true, ReasonFailedCreate, "Create", msg, nil)
	if kind == refusalPermanent {
		setFailed(s.job, ReasonPodRefused, msg+"; it would be refused again: fix the cause and create the job anew", s.now)
		return ctrl.Result{}, nil
	}
	since := s.now
	if c := meta.FindStatusCondition(s.job.Status.Conditions, vmafxv1.JobPodRefused); c != nil && !c.LastTransitionTime.IsZero() {
		since = c.LastTransitionTime.Time
	}
	if d := r.pendingDeadline(s.job); d > 0 && s.now.Sub(since) >= d {
		setFailed(s.job, ReasonPendingDeadline, msg+fmt.Sprintf("; still refused after the pending deadline (%s)", d), s.now)
		s.emit(true, ReasonPendingDeadline, "Fail", s.job.Status.Message, nil)
		return ctrl.Result{}, nil
	}
	wait := min(max(s.now.Sub(since), r.RetryBackoff), r.MaxRetryBackoff)
	setPending(s.job, observation{reason: reason, message: msg + fmt.Sprintf("; retrying in %s", wait.Round(time.Second))})
	return ctrl.Result{RequeueAfter: wait}, nil
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

func (r *Reconciler) observeMetrics(before, after *vmafxv1.VmafxJob) {
	created := after.CreationTimestamp.Time
	if !isScheduled(before) && isScheduled(after) {
		r.Metrics.ScheduleSeconds.Observe(r.Clock.Since(created).Seconds())
	}
	if !isFinished(before) && isFinished(after) {
		r.Metrics.Outcomes.WithLabelValues(string(after.Status.Phase)).Inc()
		r.Metrics.CompletionSeconds.WithLabelValues(string(after.Status.Phase)).Observe(r.Clock.Since(created).Seconds())
	}
}
