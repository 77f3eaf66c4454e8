package comparison

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/labelindex"
	"github.com/vmafx/vmafx/operator/internal/owned"
	"github.com/vmafx/vmafx/operator/internal/statuspatch"
)

// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxcomparisons,verbs=get;list;watch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxcomparisons/status,verbs=get;update;patch
// Child jobs name their comparison as owner with blockOwnerDeletion, which needs update
// on the owner's finalizers.
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxcomparisons/finalizers,verbs=update
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Event and condition reasons.
const (
	// ReasonJobCreated: a VmafxJob was created for a distorted video.
	ReasonJobCreated = "JobCreated"
	// ReasonJobRefused: the API server refused a VmafxJob (its message says why); that
	// distorted video fails.
	ReasonJobRefused = "JobRefused"
	// ReasonAllScored: every distorted video has a score.
	ReasonAllScored = "AllScored"
	// ReasonSomeFailed: at least one distorted video's job failed.
	ReasonSomeFailed = "SomeFailed"
	// ReasonInProgress: jobs are still running.
	ReasonInProgress = "InProgress"
	// ReasonJobNameTaken: a VmafxJob of the name the comparison gives an input's job
	// exists and is not the comparison's (no controller reference with its UID); it is
	// never adopted, and that input fails.
	ReasonJobNameTaken = "JobNameTaken"
)

// nameFreeRecheck is how often a comparison looks again whether a job of its child's name
// that is on its way out (being deleted, or an earlier comparison's) is gone.
const nameFreeRecheck = 5 * time.Second

// Reconciler reconciles VmafxComparisons.
type Reconciler struct {
	Client client.Client
	// APIReader reads around the cache: whose is a job of a child's name that already
	// exists.
	APIReader client.Reader
	Recorder  events.EventRecorder
}

// SetupWithManager registers the reconciler: it watches VmafxComparisons and the
// VmafxJobs they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmafxv1.VmafxComparison{}).
		Owns(&vmafxv1.VmafxJob{}).
		Named("vmafxcomparison").
		Complete(r)
}

// Reconcile creates the comparison's missing jobs and records their results.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cmp := &vmafxv1.VmafxComparison{}
	if err := r.Client.Get(ctx, req.NamespacedName, cmp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cmp.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	logger := klog.FromContext(ctx).WithValues("vmafxComparison", klog.KObj(cmp))
	ctx = klog.NewContext(ctx, logger)
	before := cmp.DeepCopy()

	jobs, err := r.listJobs(ctx, cmp)
	if err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	var result ctrl.Result
	table := make([]vmafxv1.ComparisonEntry, len(cmp.Spec.Distorted))
	// made: the entry of each group's job that this reconcile tried to create, whose
	// outcome the group's other inputs share.
	made := map[string]*vmafxv1.ComparisonEntry{}
	for i := range cmp.Spec.Distorted {
		name := cmp.Spec.InputName(i)
		first, _ := group(cmp, i)
		e := recorded(before.Status.Results, name)
		e.Name, e.Job = name, JobName(cmp, cmp.Spec.InputName(first))
		switch job := jobs[e.Job]; {
		case job != nil:
			fromJobRow(&e, job, i-first)
		case e.Phase.Finished():
			// Recorded; its job may be gone with its TTL and is never made again.
		case made[e.Job] != nil:
			e.Phase, e.Message = made[e.Job].Phase, made[e.Job].Message
		default:
			wait, err := r.createJob(ctx, cmp, BuildJob(cmp, i), &e)
			if err != nil {
				errs = append(errs, err)
			}
			if wait {
				result.RequeueAfter = nameFreeRecheck
			}
			made[e.Job] = &e
		}
		table[i] = e
	}
	setStatus(cmp, table)
	if err := errors.Join(errs...); err == nil {
		cmp.Status.ObservedGeneration = cmp.Generation
	}
	if !equality.Semantic.DeepEqual(before.Status, cmp.Status) {
		// SUCCEEDED prints 0 until the first job succeeds, not an empty column.
		patch := statuspatch.Naming(client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}),
			map[string]any{"total": cmp.Status.Total, "succeeded": cmp.Status.Succeeded})
		if err := r.Client.Status().Patch(ctx, cmp, patch); err != nil {
			errs = append(errs, err)
		} else if before.Status.Phase != cmp.Status.Phase && finished(cmp.Status.Phase) {
			logger.V(2).Info("Comparison finished", "phase", cmp.Status.Phase, "succeeded", cmp.Status.Succeeded, "failed", cmp.Status.Failed)
			typ, reason := corev1.EventTypeNormal, ReasonAllScored
			if cmp.Status.Phase == vmafxv1.JobFailed {
				typ, reason = corev1.EventTypeWarning, ReasonSomeFailed
			}
			r.Recorder.Eventf(cmp, nil, typ, reason, "Compare", "%d of %d distorted videos scored; best: %s", cmp.Status.Succeeded, cmp.Status.Total, orDash(cmp.Status.Best))
		}
	}
	return result, errors.Join(errs...)
}

// JobName is the name of the VmafxJob that scores the comparison's input called name.
func JobName(cmp *vmafxv1.VmafxComparison, name string) string { return cmp.Name + "-" + name }

// listJobs returns the comparison's jobs from the cache, by name.
func (r *Reconciler) listJobs(ctx context.Context, cmp *vmafxv1.VmafxComparison) (map[string]*vmafxv1.VmafxJob, error) {
	var list vmafxv1.VmafxJobList
	if err := r.Client.List(ctx, &list, client.InNamespace(cmp.Namespace), labelindex.Matching(vmafxv1.LabelComparison, vmafxv1.JobLabelValue(cmp.Name))); err != nil {
		return nil, fmt.Errorf("listing the jobs of comparison %s: %w", cmp.Name, err)
	}
	jobs := map[string]*vmafxv1.VmafxJob{}
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], cmp) {
			jobs[list.Items[i].Name] = &list.Items[i]
		}
	}
	return jobs, nil
}

// createJob creates job, input e's (and its group's). A refusal that stands fails that
// input. wait says the job's name is held by a job on its way out: look again later.
func (r *Reconciler) createJob(ctx context.Context, cmp *vmafxv1.VmafxComparison, job *vmafxv1.VmafxJob, e *vmafxv1.ComparisonEntry) (wait bool, _ error) {
	err := r.Client.Create(ctx, job)
	e.Phase, e.Message = vmafxv1.JobPending, ""
	switch {
	case err == nil:
		klog.FromContext(ctx).V(2).Info("Created a job", "vmafxJob", klog.KObj(job))
		r.Recorder.Eventf(cmp, job, corev1.EventTypeNormal, ReasonJobCreated, "Create", "created VmafxJob %s for %s", job.Name, e.Name)
	case apierrors.IsAlreadyExists(err):
		return r.nameTaken(ctx, cmp, job.Name, e)
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		e.Phase, e.Message = vmafxv1.JobFailed, oneLine(fmt.Sprintf("the API server refused VmafxJob %s: %v", job.Name, err))
		r.Recorder.Eventf(cmp, nil, corev1.EventTypeWarning, ReasonJobRefused, "Create", "%s", e.Message)
	default:
		return false, fmt.Errorf("creating VmafxJob %s: %w", job.Name, err)
	}
	return false, nil
}

// nameTaken looks at the job that holds the name of input e's job. The comparison's own
// (an earlier reconcile made it and the cache has not seen it yet) is waited for; one on
// its way out is waited for; anyone else's is never adopted: its result could be
// anything its author wrote, so the input fails, naming the job.
func (r *Reconciler) nameTaken(ctx context.Context, cmp *vmafxv1.VmafxComparison, name string, e *vmafxv1.ComparisonEntry) (wait bool, _ error) {
	job := &vmafxv1.VmafxJob{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: cmp.Namespace, Name: name}, job); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil // gone since: create it next time
		}
		return false, fmt.Errorf("reading VmafxJob %s: %w", name, err)
	}
	switch verdict, why := owned.Check(job, cmp, "VmafxComparison"); verdict {
	case owned.Going:
		e.Message = oneLine(fmt.Sprintf("waiting for VmafxJob %s to go (%s) before creating this input's job under that name", name, why))
		return true, nil
	case owned.Foreign:
		e.Phase, e.Message = vmafxv1.JobFailed, oneLine(fmt.Sprintf("VmafxJob %s already exists and is not this comparison's (%s): it is not adopted; delete it, or create the comparison under another name", name, why))
		r.Recorder.Eventf(cmp, job, corev1.EventTypeWarning, ReasonJobNameTaken, "Create", "%s", e.Message)
	}
	return false, nil
}

// group is the range [first, end) of the inputs scored by the same job as input i: with
// spec.sharedReference, up to maxRenditionsPerPod consecutive inputs in spec order; else
// input i alone.
func group(cmp *vmafxv1.VmafxComparison, i int) (first, end int) {
	sr := cmp.Spec.SharedReference
	if sr == nil {
		return i, i + 1
	}
	n := int(sr.MaxRenditionsPerPod)
	if n < 1 { // not defaulted by the API server
		n = vmafxv1.DefaultMaxRenditionsPerPod
	}
	first = i / n * n
	return first, min(first+n, len(cmp.Spec.Distorted))
}

// output is where input i's per-frame scores go; empty without spec.output.
func output(cmp *vmafxv1.VmafxComparison, i int) vmafxv1.OutputURI {
	if cmp.Spec.Output == nil {
		return ""
	}
	return vmafxv1.JoinOutput(*cmp.Spec.Output, cmp.Spec.InputName(i)+vmafxv1.OutputExtension(cmp.Spec.OutputFormat))
}

// BuildJob returns the VmafxJob that scores input i of cmp: its group's (see group),
// named after the group's first input, whose video is the job's spec.distorted and the
// others' its spec.renditions, in spec order.
func BuildJob(cmp *vmafxv1.VmafxComparison, i int) *vmafxv1.VmafxJob {
	first, end := group(cmp, i)
	name := cmp.Spec.InputName(first)
	spec := cmp.Spec.ScoringSettings.JobSpec(cmp.Spec.Reference, cmp.Spec.Distorted[first].URI, output(cmp, first))
	spec.Alignment = cmp.Spec.Alignment.DeepCopy()
	for k := first + 1; k < end; k++ {
		rr := vmafxv1.JobRendition{Distorted: cmp.Spec.Distorted[k].URI}
		if o := output(cmp, k); o != "" {
			rr.Output = &o
		}
		spec.Renditions = append(spec.Renditions, rr)
	}
	return &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{
			Name:      JobName(cmp, name),
			Namespace: cmp.Namespace,
			Labels: map[string]string{
				vmafxv1.LabelComparison:        vmafxv1.JobLabelValue(cmp.Name),
				"app.kubernetes.io/managed-by": "vmafx-operator",
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cmp, vmafxv1.GroupVersion.WithKind("VmafxComparison"))},
		},
		Spec: spec,
	}
}

func finished(p vmafxv1.JobPhase) bool { return p.Finished() }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
