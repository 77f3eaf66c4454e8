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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/metrics"
)

// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler reconciles VmafxJobs.
type Reconciler struct {
	Client client.Client
	// APIReader reads around the cache, to tell a Pod that is gone from one the cache
	// has not seen yet.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	Metrics   *metrics.Jobs

	Worker          config.WorkerConfig
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// MaxConcurrentReconciles is the number of jobs reconciled in parallel.
	MaxConcurrentReconciles int
}

// SetupWithManager registers the reconciler: it watches VmafxJobs and the Pods they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmafxv1.VmafxJob{}).
		Owns(&corev1.Pod{}).
		Named("vmafxjob").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}

// scope is what one reconcile knows.
type scope struct {
	job  *vmafxv1.VmafxJob
	pods []*corev1.Pod // the job's Pods, by attempt
	now  time.Time
	// events to emit once the status that explains them is written.
	events []event
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
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &vmafxv1.VmafxJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logger := klog.FromContext(ctx).WithValues("vmafxJob", klog.KObj(job))
	ctx = klog.NewContext(ctx, logger)
	if isFinished(job) {
		return ctrl.Result{}, nil
	}
	pods, err := r.listPods(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := job.DeepCopy()
	s := &scope{job: job, pods: pods, now: r.Clock.Now()}
	result, err := r.reconcile(ctx, s)
	if err == nil {
		job.Status.ObservedGeneration = job.Generation
	}
	if job.Status.Phase == "" {
		job.Status.Phase = vmafxv1.JobPending
	}
	if equality.Semantic.DeepEqual(before.Status, job.Status) {
		r.flushEvents(s)
		return result, err
	}
	// Events tell what this reconcile did (a Pod created, a Pod found lost), which stays
	// true even when the status write below fails, and a later reconcile would not see it
	// again: emit them either way.
	r.flushEvents(s)
	// The resourceVersion in the patch makes a write computed from stale data fail with
	// a conflict; the reconcile then runs again on fresh data.
	patchErr := r.Client.Status().Patch(ctx, job, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(patchErr) {
		logger.V(4).Info("Status changed underneath; retrying")
		return ctrl.Result{Requeue: true}, err
	}
	if patchErr == nil {
		r.observeMetrics(before, job)
	}
	return result, errors.Join(err, patchErr)
}

func isFinished(job *vmafxv1.VmafxJob) bool {
	return job.Status.Phase == vmafxv1.JobSucceeded || job.Status.Phase == vmafxv1.JobFailed
}

// listPods returns the job's Pods from the cache, ordered by attempt.
func (r *Reconciler) listPods(ctx context.Context, job *vmafxv1.VmafxJob) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels{vmafxv1.LabelJob: job.Name}); err != nil {
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
	if pod == nil {
		s.emit(true, ReasonPodLost, "Retry", fmt.Sprintf("worker Pod %s disappeared; starting a new attempt", PodName(s.job, n)), nil)
		return r.retryLost(ctx, s, n, "worker Pod "+PodName(s.job, n)+" was deleted")
	}
	s.job.Status.PodName = pod.Name
	o := observe(pod)
	recorded := s.job.Status.FailedAttempts
	s.job.Status.FailedAttempts = failures(s, pod, o)
	if o.node != "" {
		s.job.Status.Node = o.node
	}
	if o.started != nil && s.job.Status.StartTime == nil {
		s.job.Status.StartTime = timePtr(*o.started)
	}
	switch o.state {
	case podPending:
		setPending(s.job, o)
		return ctrl.Result{}, nil
	case podRunning:
		setRunning(s.job, o)
		return ctrl.Result{}, nil
	case podSucceeded:
		setSucceeded(s.job, o, s.now)
		s.emit(false, ReasonSucceeded, "Score", s.job.Status.Message, pod)
		if o.result.OutputError != "" {
			s.emit(true, ReasonOutputFailed, "WriteOutput", "the score is kept, but the per-frame output was not written: "+oneLine(o.result.OutputError), pod)
		}
		return ctrl.Result{}, nil
	case podTerminating:
		setWaitingForDeletion(s.job, o)
		// The Pod's deletion completes through the kubelet; its removal triggers the
		// next reconcile. The requeue is a safety net for a kubelet that never answers.
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	case podLost:
		s.emit(true, ReasonPodLost, "Retry", o.message+"; starting a new attempt", pod)
		return r.retryLost(ctx, s, n, o.message)
	}
	return r.handleFailure(ctx, s, n, pod, o, s.job.Status.FailedAttempts > recorded)
}

// attemptPod returns attempt n's Pod, or nil when it no longer exists. A Pod missing
// from the cache is looked up on the API server before it is declared gone, because
// the cache may not have seen a Pod created moments ago.
func (r *Reconciler) attemptPod(ctx context.Context, s *scope, n int32) (*corev1.Pod, error) {
	name := PodName(s.job, n)
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
	return pod, nil
}

// failures counts the failed attempts among the job's Pods and the current one; lost
// Pods do not count. Status is not trusted alone: the write that recorded a failure may
// have been lost while the Pod that failed is still there.
func failures(s *scope, current *corev1.Pod, o observation) int32 {
	var n int32
	listed := false
	for _, p := range s.pods {
		listed = listed || p.Name == current.Name
		if observe(p).state == podFailed {
			n++
		}
	}
	if !listed && o.state == podFailed {
		n++ // the current Pod came from the API reader, not the cache
	}
	return max(n, s.job.Status.FailedAttempts)
}

// handleFailure fails the job once the failures exceed spec.backoffLimit, and otherwise
// starts the next attempt after the backoff. firstSeen is true on the reconcile that first
// records this failure, which is the one that tells people about it.
func (r *Reconciler) handleFailure(ctx context.Context, s *scope, n int32, pod *corev1.Pod, o observation, firstSeen bool) (ctrl.Result, error) {
	failed := s.job.Status.FailedAttempts
	limit := backoffLimit(s.job)
	if failed > limit {
		setFailed(s.job, o.reason, fmt.Sprintf("attempt %d failed (%s): %s; backoffLimit %d reached", n, o.reason, o.message, limit), s.now)
		s.emit(true, ReasonBackoffLimit, "Fail", s.job.Status.Message, pod)
		return ctrl.Result{}, nil
	}
	wait := r.backoff(failed)
	ended := o.ended
	if ended.IsZero() {
		ended = s.now
	}
	retryAt := ended.Add(wait)
	setRetrying(s.job, o, n, retryAt)
	if firstSeen {
		s.emit(true, ReasonAttemptFailed, "Retry", fmt.Sprintf("attempt %d failed (%s): %s; retrying in %s", n, o.reason, o.message, retryAt.Sub(s.now).Round(time.Second)), pod)
	}
	if remaining := retryAt.Sub(s.now); remaining > 0 {
		return ctrl.Result{RequeueAfter: remaining}, nil
	}
	return r.startAttempt(ctx, s, n+1, "retry")
}

func (r *Reconciler) retryLost(ctx context.Context, s *scope, n int32, why string) (ctrl.Result, error) {
	lost := n - s.job.Status.FailedAttempts
	if lost > maxLostAttempts {
		setFailed(s.job, ReasonTooManyLost, fmt.Sprintf("%d worker Pods were lost (the last: %s); giving up", lost, why), s.now)
		return ctrl.Result{}, nil
	}
	return r.startAttempt(ctx, s, n+1, "lost")
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

func backoffLimit(job *vmafxv1.VmafxJob) int32 {
	if job.Spec.BackoffLimit == nil {
		return 2
	}
	return *job.Spec.BackoffLimit
}

// startAttempt creates attempt n's Pod. AlreadyExists means an earlier reconcile made it.
func (r *Reconciler) startAttempt(ctx context.Context, s *scope, n int32, kind string) (ctrl.Result, error) {
	pod := buildPod(s.job, n, r.Worker)
	err := r.Client.Create(ctx, pod)
	switch {
	case apierrors.IsAlreadyExists(err):
		klog.FromContext(ctx).V(2).Info("Worker Pod already exists", "pod", klog.KObj(pod))
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("creating worker Pod %s: %w", pod.Name, err)
	default:
		r.Metrics.Attempts.WithLabelValues(kind).Inc()
		s.emit(false, ReasonPodCreated, "Create", fmt.Sprintf("created worker Pod %s (attempt %d)", pod.Name, n), pod)
	}
	s.job.Status.Attempts = n
	s.job.Status.PodName = pod.Name
	setPending(s.job, observation{reason: ReasonWaitingForScheduler, message: fmt.Sprintf("worker Pod %s is waiting for %s", pod.Name, vmafxv1.SchedulerName)})
	return ctrl.Result{}, nil
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
