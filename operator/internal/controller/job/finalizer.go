package job

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/labelindex"
)

// Worker Pods carry the finalizer vmafx.dev/result from their creation: the API server
// keeps a Pod, with the result in its termination message, until the operator has
// recorded the attempt's outcome and releases it. A Pod deleted before that (by a
// person, an eviction, the Pod garbage collector) waits, Terminating, for the record.

// releaseRecorded releases the Pods of the attempts the job's (stored) status accounts
// for: every Pod of a finished job, else those up to the last recorded attempt.
func (r *Reconciler) releaseRecorded(ctx context.Context, s *scope) error {
	if chunked(s.job) {
		return r.release(ctx, recordedStepPods(s.job, s.pods)...)
	}
	upTo := recordedUpTo(s.job)
	var done []*corev1.Pod
	for _, p := range s.pods {
		if isFinished(s.job) || attemptOf(p) <= upTo {
			done = append(done, p)
		}
	}
	return r.release(ctx, done...)
}

// release removes the result finalizer from pods. The JSON patch tests the finalizer's
// position first, so it removes exactly that entry even if other finalizers change, and
// needs no resourceVersion (the kubelet updates a Pod's status often).
func (r *Reconciler) release(ctx context.Context, pods ...*corev1.Pod) error {
	var errs []error
	for _, pod := range pods {
		i := slices.Index(pod.Finalizers, vmafxv1.FinalizerResult)
		if i < 0 {
			continue
		}
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch := fmt.Appendf(nil, `[{"op":"test","path":%q,"value":%q},{"op":"remove","path":%q}]`, path, vmafxv1.FinalizerResult, path)
		err := r.Client.Patch(ctx, pod, client.RawPatch(types.JSONPatchType, patch))
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			// A failed test (the finalizers moved) is retried on fresh data.
			errs = append(errs, fmt.Errorf("releasing worker Pod %s: %w", pod.Name, err))
		default:
			klog.FromContext(ctx).V(4).Info("Released worker Pod", "pod", klog.KObj(pod))
		}
	}
	return errors.Join(errs...)
}

// releaseOrphans releases the Pods of a job that is gone, which the garbage collector is
// deleting. The cache says the job is gone; the API server is asked before any Pod of a
// job of that name is let go, so that a job the cache has not seen yet keeps its Pods.
func (r *Reconciler) releaseOrphans(ctx context.Context, key types.NamespacedName) error {
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(key.Namespace), labelindex.Matching(vmafxv1.LabelJob, vmafxv1.JobLabelValue(key.Name))); err != nil {
		return fmt.Errorf("listing the Pods of job %s: %w", key.Name, err)
	}
	var held []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		owner := metav1.GetControllerOf(p)
		if owner != nil && owner.Kind == "VmafxJob" && owner.Name == key.Name && slices.Contains(p.Finalizers, vmafxv1.FinalizerResult) {
			held = append(held, p)
		}
	}
	if len(held) == 0 {
		return nil
	}
	live := &vmafxv1.VmafxJob{}
	err := r.APIReader.Get(ctx, key, live)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading job %s: %w", key.Name, err)
	}
	var orphans []*corev1.Pod
	for _, p := range held {
		if err == nil && metav1.GetControllerOf(p).UID == live.UID && live.DeletionTimestamp == nil {
			continue
		}
		orphans = append(orphans, p)
	}
	return r.release(ctx, orphans...)
}
