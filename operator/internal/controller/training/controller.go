package training

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/statuspatch"
)

// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxmodeltrainings,verbs=get;list;watch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxmodeltrainings/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxmodeltrainings/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// FollowInterval is how often a running trainer's /status is read: its samples and
// errors change between checkpoints, which are minutes apart.
const FollowInterval = 10 * time.Second

// Reconciler runs one trainer Deployment per VmafxModelTraining and reflects the
// trainer's /status in the run's status.
type Reconciler struct {
	Client client.Client
	// APIReader lists trainer Pods: the manager's cache holds worker Pods only.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Worker    config.WorkerConfig
	// Follow reads a trainer Pod's /status; nil means HTTP to the Pod's IP.
	Follow func(ctx context.Context, pod *corev1.Pod) (*vmafxv1.TrainerStatus, error)
}

// SetupWithManager registers the reconciler; it owns the trainer Deployments.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Follow == nil {
		r.Follow = followHTTP
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmafxv1.VmafxModelTraining{}).
		Owns(&appsv1.Deployment{}).
		Named("vmafxmodeltraining").
		Complete(r)
}

// Reconcile ensures the run's trainer and follows it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tr := &vmafxv1.VmafxModelTraining{}
	if err := r.Client.Get(ctx, req.NamespacedName, tr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := klog.FromContext(ctx).WithValues("vmafxModelTraining", klog.KObj(tr))
	ctx = klog.NewContext(ctx, log)
	before := tr.DeepCopy()

	obs, err := r.ensureTrainer(ctx, tr)
	if err != nil {
		return ctrl.Result{}, err
	}
	if obs.pod != nil && !tr.Spec.Suspend {
		st, ferr := r.Follow(ctx, obs.pod)
		if ferr != nil {
			log.V(4).Info("Trainer status not available", "pod", klog.KObj(obs.pod), "err", ferr)
		} else {
			obs.trainer = st
		}
	}
	setStatus(tr, obs)
	if !equality.Semantic.DeepEqual(before.Status, tr.Status) {
		log.V(2).Info("Training status", "phase", tr.Status.Phase, "samples", tr.Status.Samples, "modelVersion", tr.Status.ModelVersion)
		// SAMPLES prints 0 for a run that has not counted any yet.
		patch := statuspatch.Naming(client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), map[string]any{"samples": tr.Status.Samples})
		if err := r.Client.Status().Patch(ctx, tr, patch); err != nil {
			return ctrl.Result{}, err
		}
		// Events follow the status that was written: a reconcile that read a stale copy
		// fails its optimistic lock here and says nothing, instead of announcing the same
		// checkpoint a second time.
		r.emitEvents(before, tr, obs)
	}
	if tr.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: FollowInterval}, nil
}

// observed is what the reconciler saw of a run's trainer.
type observed struct {
	deployment string
	// pod is the trainer Pod that runs, or the newest one when none runs.
	pod     *corev1.Pod
	trainer *vmafxv1.TrainerStatus
	// refused is the Deployment's word that the API server refuses its Pod (its
	// ReplicaFailure condition); empty when it does not.
	refused string
}

// ensureTrainer creates or updates the run's Deployment and finds its Pod.
func (r *Reconciler) ensureTrainer(ctx context.Context, tr *vmafxv1.VmafxModelTraining) (observed, error) {
	want := buildDeployment(tr, r.Worker)
	obs := observed{deployment: want.Name}
	if err := controllerutil.SetControllerReference(tr, want, r.Client.Scheme()); err != nil {
		return obs, err
	}
	// The Deployment is rewritten only when what the operator wants of it changed (its
	// hash), not on every follow: the API server's defaults would always differ.
	hash := specHash(want)
	want.Annotations = map[string]string{annotationSpecHash: hash}
	dep := &appsv1.Deployment{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), dep)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return obs, fmt.Errorf("creating the trainer Deployment %s: %w", want.Name, err)
		} else if err == nil {
			r.Recorder.Eventf(tr, want, corev1.EventTypeNormal, vmafxv1.EventTrainerCreated, "Create", "created Deployment %s", want.Name)
		}
	case err != nil:
		return obs, err
	case dep.Annotations[annotationSpecHash] != hash:
		obs.refused = replicaFailure(dep)
		dep.Labels, dep.Annotations, dep.OwnerReferences, dep.Spec = want.Labels, want.Annotations, want.OwnerReferences, want.Spec
		if err := r.Client.Update(ctx, dep); err != nil {
			return obs, fmt.Errorf("updating the trainer Deployment %s: %w", want.Name, err)
		}
	default:
		obs.refused = replicaFailure(dep)
	}
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(tr.Namespace), client.MatchingLabels(trainerLabels(tr))); err != nil {
		return obs, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			obs.pod = p
			break
		}
		if obs.pod == nil || p.CreationTimestamp.After(obs.pod.CreationTimestamp.Time) {
			obs.pod = p
		}
	}
	return obs, nil
}

// emitEvents records a CheckpointWritten event per new model version, and a
// CheckpointWithheld event when a due checkpoint was not pushed.
func (r *Reconciler) emitEvents(before, after *vmafxv1.VmafxModelTraining, obs observed) {
	if n := after.Status.TrainerRestarts; n > before.Status.TrainerRestarts && obs.pod != nil {
		_, exit := lastExit(obs.pod)
		r.Recorder.Eventf(after, obs.pod, corev1.EventTypeWarning, vmafxv1.EventTrainerRestarted, "Restart",
			"the kubelet restarted the trainer in Pod %s (%d times in all); its last exit: %s", obs.pod.Name, n, exit)
	}
	if c := after.Status.LastCheckpoint; c != nil && (before.Status.LastCheckpoint == nil || before.Status.LastCheckpoint.Digest != c.Digest) {
		r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, vmafxv1.EventCheckpointWritten, "Push",
			"model version %s (%s@%s) from %d samples, held-out RMSE %s (base model %s)", after.Status.ModelVersion,
			c.Reference, c.Digest, c.Samples, orDash(after.Status.HeldOutError), orDash(after.Status.BaseHeldOutError))
	}
	b, a := condition(before, vmafxv1.TrainingCheckpointPublished), condition(after, vmafxv1.TrainingCheckpointPublished)
	if a != nil && a.Status == "False" && a.Reason != vmafxv1.ReasonWaitingForSamples && (b == nil || b.Reason != a.Reason || b.Message != a.Message) {
		r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, vmafxv1.EventCheckpointWithheld, "Push", "%s", a.Message)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
