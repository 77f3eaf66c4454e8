package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// ttl is how long a finished job is kept, and false when it is kept for ever.
func (r *Reconciler) ttl(job *vmafxv1.VmafxJob) (time.Duration, bool) {
	if s := job.Spec.TTLSecondsAfterFinished; s != nil {
		return time.Duration(*s) * time.Second, true
	}
	return r.TTLAfterFinished, r.TTLAfterFinished >= 0
}

// expire deletes a finished job and its Pods once its time to live has passed, as the
// Job TTL controller does: it checks the job on the API server first (its cached copy may
// be behind), deletes the Pods itself (so that they go even where no garbage collector
// runs) and then the job, on the condition that it is still the one that expired.
func (r *Reconciler) expire(ctx context.Context, job *vmafxv1.VmafxJob, pods []*corev1.Pod) (ctrl.Result, error) {
	at, ok := r.expiry(job)
	if !ok {
		return ctrl.Result{}, nil
	}
	if left := at.Sub(r.Clock.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left + recheckMargin}, nil
	}
	fresh := &vmafxv1.VmafxJob{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(job), fresh); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if at, ok := r.expiry(fresh); !ok || !isFinished(fresh) || at.After(r.Clock.Now()) {
		return ctrl.Result{RequeueAfter: cacheLagRetry}, nil
	}
	var errs []error
	for _, p := range pods {
		if err := r.Client.Delete(ctx, p, client.Preconditions{UID: &p.UID}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting worker Pod %s: %w", p.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	err := r.Client.Delete(ctx, fresh, client.Preconditions{UID: &fresh.UID, ResourceVersion: &fresh.ResourceVersion},
		client.PropagationPolicy("Background"))
	switch {
	case apierrors.IsNotFound(err):
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: cacheLagRetry}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("deleting finished job: %w", err)
	default:
		klog.FromContext(ctx).V(2).Info("Deleted a finished job after its ttlSecondsAfterFinished", "phase", fresh.Status.Phase)
	}
	return ctrl.Result{}, nil
}

// expiry is when job's time to live ends, and false when it never does.
func (r *Reconciler) expiry(job *vmafxv1.VmafxJob) (time.Time, bool) {
	ttl, ok := r.ttl(job)
	if !ok {
		return time.Time{}, false
	}
	end := job.CreationTimestamp.Time
	if t := job.Status.CompletionTime; t != nil {
		end = t.Time
	}
	return end.Add(ttl), true
}
