package ladder

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/text"
	"github.com/vmafx/vmafx/operator/internal/attempt"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/labelindex"
	"github.com/vmafx/vmafx/operator/internal/owned"
	"github.com/vmafx/vmafx/operator/internal/statuspatch"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxladders,verbs=get;list;watch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxladders/status,verbs=get;update;patch
// Children name their ladder as owner with blockOwnerDeletion, which needs update on the
// owner's finalizers.
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxladders/finalizers,verbs=update
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs,verbs=get;list;watch;create
// Patch releases the result finalizer of the ladder's Pods.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Event and condition reasons.
const (
	// ReasonEncodeFailed: an encode attempt failed (the worker's reason follows).
	ReasonEncodeFailed = "EncodeFailed"
	// ReasonRungFailed: a rung failed for good: its encode, or its score.
	ReasonRungFailed = "RungFailed"
	// ReasonHullComputed: every rung has an outcome and the hull is marked.
	ReasonHullComputed = "HullComputed"
	// ReasonNoRungScored: every rung failed, so there is no hull.
	ReasonNoRungScored = "NoRungScored"
	// ReasonReportFailed: the report Pod could not write ladder.json/.csv/.svg.
	ReasonReportFailed = "ReportFailed"
	// ReasonLadderInProgress: rungs are still encoding or scoring.
	ReasonLadderInProgress = "InProgress"
	// ReasonNameTaken: a Pod or VmafxJob of the name the ladder gives its child exists and
	// is not the ladder's (no controller reference with its UID); it is never adopted, and
	// that rung (or the report) fails.
	ReasonNameTaken = "NameTaken"
	// ReasonVolumeNotAllowed: spec.volume names a CSI driver the operator's configuration
	// does not allow; no Pod is created.
	ReasonVolumeNotAllowed = "VolumeNotAllowed"
)

// Reconciler reconciles VmafxLadders.
type Reconciler struct {
	Client client.Client
	// APIReader reads around the caches: whose is a Pod or job of a child's name that
	// already exists (the Pod caches hold only labelled Pods).
	APIReader client.Reader
	// Pods is the cache of the ladders' own Pods (labelled vmafx.dev/ladder): the
	// manager's Pod cache holds worker Pods of VmafxJobs only.
	Pods     cache.Cache
	Recorder events.EventRecorder
	Worker   config.WorkerConfig
	// Limit is the namespace's limit of live worker Pods, shared with the job reconciler:
	// encode Pods count against it and wait for a place; nil: no limit.
	Limit *attempt.NamespaceLimit
	// Volumes is the operator's volume allow-list: the encode Pods mount spec.volume with
	// the operator's rights, as a VmafxJob's worker Pods do.
	Volumes config.VolumePolicy
	// Attempts are the job reconciler's: encodes and the report go through the same
	// attempt engine as scores (PendingDeadline is the default of the ladder's
	// pendingDeadlineSeconds, for them as for its scoring jobs).
	config.Attempts
}

// SetupWithManager registers the reconciler: it watches VmafxLadders, the VmafxJobs they
// own and, through its own cache, their Pods.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmafxv1.VmafxLadder{}).
		Owns(&vmafxv1.VmafxJob{}).
		WatchesRawSource(source.Kind(r.Pods, &corev1.Pod{},
			handler.TypedEnqueueRequestForOwner[*corev1.Pod](mgr.GetScheme(), mgr.GetRESTMapper(), &vmafxv1.VmafxLadder{}, handler.OnlyControllerOwner()))).
		Named("vmafxladder").
		Complete(r)
}

// scope is what one reconcile knows.
type scope struct {
	ladder *vmafxv1.VmafxLadder
	pods   map[string]*corev1.Pod // by name
	jobs   map[string]*vmafxv1.VmafxJob
	// limited is set when an encode waits for a place under the namespace's limit.
	limited bool
	now     time.Time
	// requeue is the soonest an encode asked to be looked at again; 0: none. backoff: an
	// encode asked for the queue's backoff.
	requeue time.Duration
	backoff bool
	// forceDelete are Pods to remove without waiting for their kubelet once the status
	// that counts their attempts as lost is written.
	forceDelete []*corev1.Pod
	// fresh: the cached ladder was found to be the API server's (checked once).
	fresh *bool
}

func (s *scope) after(d time.Duration) {
	if d > 0 && (s.requeue == 0 || d < s.requeue) {
		s.requeue = d
	}
}

// limitRecheck is how often a ladder whose encodes wait for a place under the namespace's
// limit looks again: the jobs' Pods finishing do not wake it.
const limitRecheck = 10 * time.Second

// Reconcile moves every rung one step forward and records what it saw.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	l := &vmafxv1.VmafxLadder{}
	if err := r.Client.Get(ctx, req.NamespacedName, l); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.releaseOrphans(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if l.DeletionTimestamp != nil || finished(l) {
		// Every outcome is recorded, or the ladder is going: no Pod of it is kept.
		return ctrl.Result{}, r.releaseAll(ctx, l)
	}
	logger := klog.FromContext(ctx).WithValues("vmafxLadder", klog.KObj(l))
	ctx = klog.NewContext(ctx, logger)
	before := l.DeepCopy()
	if err := workerpod.CheckVolume(l.Spec.Volume, r.Volumes); err != nil {
		return ctrl.Result{}, r.refuse(ctx, l, before, ReasonVolumeNotAllowed, oneLine(err.Error()))
	}
	s, err := r.observe(ctx, l)
	if err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	rungs := mergeRungs(l.Spec.Rungs(), l.Status.Rungs)
	for i := range rungs {
		if err := r.advance(ctx, s, &rungs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	l.Status.Rungs = rungs
	if err := r.finish(ctx, s); err != nil {
		errs = append(errs, err)
	}
	setCounts(l)
	if len(errs) == 0 {
		l.Status.ObservedGeneration = l.Generation
	}
	stored := true
	if !equality.Semantic.DeepEqual(before.Status, l.Status) {
		if err := r.Client.Status().Patch(ctx, l, columnsPatch(before, l)); err != nil {
			errs, stored = append(errs, err), false
		} else if !finished(before) && finished(l) {
			logger.V(2).Info("Ladder finished", "phase", l.Status.Phase, "hull", l.Status.Hull)
		}
	}
	if stored {
		// The outcomes are stored: their Pods' result finalizers go, and Pods of dead
		// nodes whose attempts are recorded as lost go without their kubelet.
		errs = append(errs, attempt.Release(ctx, r.Client, recordedPods(l, s.pods)...))
		for _, p := range s.forceDelete {
			errs = append(errs, attempt.ForceDelete(ctx, r.Client, p))
		}
	}
	if s.limited {
		s.after(limitRecheck)
	}
	if s.backoff {
		return ctrl.Result{Requeue: true}, errors.Join(errs...) //nolint:staticcheck // the queue's growing backoff, which RequeueAfter does not give
	}
	return ctrl.Result{RequeueAfter: s.requeue}, errors.Join(errs...)
}

// refuse fails a ladder that cannot run as written, before any Pod or job is created.
func (r *Reconciler) refuse(ctx context.Context, l, before *vmafxv1.VmafxLadder, reason, msg string) error {
	l.Status.Phase = vmafxv1.JobFailed
	l.Status.ObservedGeneration = l.Generation
	setCondition(l, vmafxv1.LadderFailed, true, reason, msg)
	if err := r.Client.Status().Patch(ctx, l, columnsPatch(before, l)); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Ladder refused", "reason", reason, "message", msg)
	r.Recorder.Eventf(l, nil, corev1.EventTypeWarning, reason, "Refuse", "%s", msg)
	return nil
}

func finished(l *vmafxv1.VmafxLadder) bool {
	return l.Status.Phase.Finished()
}

// observe lists the ladder's Pods and jobs from the caches.
func (r *Reconciler) observe(ctx context.Context, l *vmafxv1.VmafxLadder) (*scope, error) {
	sel := labelindex.Matching(vmafxv1.LabelLadder, vmafxv1.JobLabelValue(l.Name))
	var pods corev1.PodList
	if err := r.Pods.List(ctx, &pods, client.InNamespace(l.Namespace), sel); err != nil {
		return nil, fmt.Errorf("listing the Pods of ladder %s: %w", l.Name, err)
	}
	var jobs vmafxv1.VmafxJobList
	if err := r.Client.List(ctx, &jobs, client.InNamespace(l.Namespace), sel); err != nil {
		return nil, fmt.Errorf("listing the jobs of ladder %s: %w", l.Name, err)
	}
	s := &scope{ladder: l, pods: map[string]*corev1.Pod{}, jobs: map[string]*vmafxv1.VmafxJob{}, now: time.Now()}
	for i := range pods.Items {
		if metav1.IsControlledBy(&pods.Items[i], l) {
			s.pods[pods.Items[i].Name] = &pods.Items[i]
		}
	}
	for i := range jobs.Items {
		if metav1.IsControlledBy(&jobs.Items[i], l) {
			s.jobs[jobs.Items[i].Name] = &jobs.Items[i]
		}
	}
	return s, nil
}

// mergeRungs returns the grid's rungs with what an earlier status recorded of them.
func mergeRungs(grid, recorded []vmafxv1.LadderRung) []vmafxv1.LadderRung {
	byName := map[string]vmafxv1.LadderRung{}
	for _, r := range recorded {
		byName[r.Name] = r
	}
	for i := range grid {
		if r, ok := byName[grid[i].Name]; ok {
			grid[i] = r
		}
		if grid[i].Phase == "" {
			grid[i].Phase = vmafxv1.RungEncoding
		}
	}
	return grid
}

// advance moves one rung forward: encode, then score.
func (r *Reconciler) advance(ctx context.Context, s *scope, rung *vmafxv1.LadderRung) error {
	switch rung.Phase {
	case vmafxv1.RungEncoding:
		return r.advanceEncode(ctx, s, rung)
	case vmafxv1.RungScoring:
		return r.advanceScore(ctx, s, rung)
	}
	return nil
}

func (r *Reconciler) advanceScore(ctx context.Context, s *scope, rung *vmafxv1.LadderRung) error {
	l := s.ladder
	rung.Job = JobName(l, rung.Name)
	job := s.jobs[rung.Job]
	if job == nil {
		want := buildJob(l, rung)
		err := r.Client.Create(ctx, want)
		switch {
		case apierrors.IsAlreadyExists(err):
			msg, err := r.nameTaken(ctx, s, want, &vmafxv1.VmafxJob{})
			if msg != "" {
				rung.Phase, rung.Message, rung.Job = vmafxv1.RungFailed, msg, ""
			}
			return err
		case err == nil:
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			rung.Phase, rung.Message = vmafxv1.RungFailed, oneLine(fmt.Sprintf("the API server refused VmafxJob %s: %v", want.Name, err))
		default:
			return fmt.Errorf("creating VmafxJob %s: %w", want.Name, err)
		}
		return nil
	}
	switch job.Status.Phase {
	case vmafxv1.JobSucceeded:
		if res := job.Status.Result; res != nil {
			rung.Score = res.Mean
			rung.P5, rung.WorstFrame = res.WorstOf()
		}
		rung.Phase = vmafxv1.RungSucceeded
	case vmafxv1.JobFailed:
		rung.Phase, rung.Message = vmafxv1.RungFailed, oneLine("scoring failed: "+job.Status.Message)
		r.Recorder.Eventf(l, job, corev1.EventTypeWarning, ReasonRungFailed, "Score", "rung %s: %s", rung.Name, rung.Message)
	}
	return nil
}

// nameTaken looks at what holds the name of the child want, read into into, when its
// create found the name taken. The ladder's own (the cache is behind) or one on its way
// out is waited for: the reconcile is requeued by the error or, once it goes, by a
// later event. Anyone else's is never adopted: its outcome could be anything its author
// wrote, so msg says why the step fails, naming it.
func (r *Reconciler) nameTaken(ctx context.Context, s *scope, want, into client.Object) (msg string, _ error) {
	l := s.ladder
	kind := "Pod"
	if _, ok := want.(*vmafxv1.VmafxJob); ok {
		kind = "VmafxJob"
	}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), into); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("%s %s was there a moment ago and is gone: creating it again", kind, want.GetName())
		}
		return "", fmt.Errorf("reading %s %s: %w", kind, want.GetName(), err)
	}
	switch verdict, why := owned.Check(into, l, "VmafxLadder"); verdict {
	case owned.Going:
		return "", fmt.Errorf("waiting for %s %s to go (%s) before creating the ladder's own under that name", kind, want.GetName(), why)
	case owned.Foreign:
		msg = oneLine(fmt.Sprintf("%s %s already exists and is not this ladder's (%s): it is not adopted; delete it, or create the ladder under another name", kind, want.GetName(), why))
		r.Recorder.Eventf(l, into, corev1.EventTypeWarning, ReasonNameTaken, "Create", "%s", msg)
		return msg, nil
	}
	return "", nil
}

// buildJob returns the VmafxJob that scores a rung's encode against the reference; the
// worker scales the encode back to the reference's size (bicubic) before scoring.
func buildJob(l *vmafxv1.VmafxLadder, rung *vmafxv1.LadderRung) *vmafxv1.VmafxJob {
	out := vmafxv1.JoinOutput(l.Spec.Output, rung.Name+vmafxv1.OutputExtension(l.Spec.OutputFormat))
	spec := l.Spec.ScoringSettings.JobSpec(l.Spec.Reference, readURI(encodeURI(l, rung.Name)), out)
	return &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{
			Name: JobName(l, rung.Name), Namespace: l.Namespace,
			Labels: map[string]string{
				vmafxv1.LabelLadder: vmafxv1.JobLabelValue(l.Name), vmafxv1.LabelRung: rung.Name,
				"app.kubernetes.io/managed-by": "vmafx-operator",
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(l, vmafxv1.GroupVersion.WithKind("VmafxLadder"))},
		},
		Spec: spec,
	}
}

// finish marks the hull once every rung has an outcome, then runs the report Pod and
// records its outcome.
func (r *Reconciler) finish(ctx context.Context, s *scope) error {
	l := s.ladder
	st := &l.Status
	for _, rung := range st.Rungs {
		if rung.Phase != vmafxv1.RungSucceeded && rung.Phase != vmafxv1.RungFailed {
			setCondition(l, vmafxv1.LadderComplete, false, ReasonLadderInProgress, "rungs are still encoding or scoring")
			return nil
		}
	}
	encoders := make([]vmafxv1.LadderEncoder, len(l.Spec.Codecs))
	for i, c := range l.Spec.Codecs {
		encoders[i] = c.Encoder
	}
	st.Hull = markHull(st.Rungs, encoders)
	if len(st.Hull) == 0 {
		st.Phase = vmafxv1.JobFailed
		setCondition(l, vmafxv1.LadderComplete, true, ReasonNoRungScored, "every rung failed: there is no hull")
		setCondition(l, vmafxv1.LadderFailed, true, ReasonNoRungScored, "every rung failed: see status.rungs[].message")
		return nil
	}
	setCondition(l, vmafxv1.LadderComplete, true, ReasonHullComputed, "chosen rungs: "+strings.Join(st.Hull, ", "))
	return r.report(ctx, s)
}

func backoffLimit(l *vmafxv1.VmafxLadder) int32 {
	if l.Spec.BackoffLimit == nil {
		return 2 // the VmafxJob CRD's default of backoffLimit
	}
	return *l.Spec.BackoffLimit
}

// setCounts derives the counts and the phase (while not finished) from the rungs.
func setCounts(l *vmafxv1.VmafxLadder) {
	st := &l.Status
	st.Total, st.Encoded, st.Scored, st.Failed = int32(len(st.Rungs)), 0, 0, 0
	started := false
	for _, r := range st.Rungs {
		if r.Bitrate > 0 {
			st.Encoded++
		}
		switch r.Phase {
		case vmafxv1.RungSucceeded:
			st.Scored++
		case vmafxv1.RungFailed:
			st.Failed++
		}
		started = started || r.EncodeAttempts > 0
	}
	if !finished(l) {
		st.Phase = vmafxv1.JobPending
		if started {
			st.Phase = vmafxv1.JobRunning
		}
	}
}

func setCondition(l *vmafxv1.VmafxLadder, typ string, status bool, reason, message string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&l.Status.Conditions, metav1.Condition{Type: typ, Status: s, Reason: reason, Message: message, ObservedGeneration: l.Generation})
}

// oneLine folds s to one bounded line for status and events (text.OneLine).
func oneLine(s string) string { return text.OneLine(s, 512) }

// columnsPatch is the ladder's status patch, naming RUNGS, ENCODED and SCORED so that
// they print 0 rather than nothing before the first rung moves.
func columnsPatch(before, l *vmafxv1.VmafxLadder) client.Patch {
	return statuspatch.Naming(client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}),
		map[string]any{"total": l.Status.Total, "encoded": l.Status.Encoded, "scored": l.Status.Scored})
}
