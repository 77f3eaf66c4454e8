package training

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxmodeltrainings,verbs=get;list;watch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxmodeltrainings/status,verbs=get;update;patch

// Reasons of the Ready condition.
const (
	ReasonUnknownBaseModel    = "UnknownBaseModel"
	ReasonTrainerNotAvailable = "TrainerNotAvailable"
)

// Reconciler reconciles VmafxModelTrainings.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager registers the reconciler; only spec changes matter to it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmafxv1.VmafxModelTraining{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("vmafxmodeltraining").
		Complete(r)
}

// Reconcile validates a training run and reports its phase.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tr := &vmafxv1.VmafxModelTraining{}
	if err := r.Client.Get(ctx, req.NamespacedName, tr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := tr.DeepCopy()
	setStatus(tr)
	if equality.Semantic.DeepEqual(before.Status, tr.Status) {
		return ctrl.Result{}, nil
	}
	klog.FromContext(ctx).V(2).Info("Training status", "vmafxModelTraining", klog.KObj(tr), "phase", tr.Status.Phase)
	return ctrl.Result{}, r.Client.Status().Patch(ctx, tr, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// setStatus derives phase and Ready from the spec.
func setStatus(tr *vmafxv1.VmafxModelTraining) {
	cond := metav1.Condition{Type: vmafxv1.TrainingReady, Status: metav1.ConditionFalse, ObservedGeneration: tr.Generation}
	if !slices.Contains(vmafxv1.BuiltinModels, tr.Spec.BaseModel) {
		tr.Status.Phase = vmafxv1.TrainingFailed
		cond.Reason = ReasonUnknownBaseModel
		cond.Message = fmt.Sprintf("base model %q is not one of the built-in models (%s)", tr.Spec.BaseModel, strings.Join(vmafxv1.BuiltinModels, ", "))
	} else {
		tr.Status.Phase = vmafxv1.TrainingInitializing
		cond.Reason = ReasonTrainerNotAvailable
		cond.Message = "training has not started: the online trainer is not part of this release; the run is validated and waits for it"
	}
	meta.SetStatusCondition(&tr.Status.Conditions, cond)
	tr.Status.ObservedGeneration = tr.Generation
}
