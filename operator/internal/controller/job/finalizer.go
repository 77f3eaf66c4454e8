package job

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
	"github.com/vmafx/vmafx/operator/internal/labelindex"
)

// Worker Pods carry the finalizer vmafx.dev/result from their creation (attempt.Release
// says why).

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

// release removes the result finalizer from pods (attempt.Release).
func (r *Reconciler) release(ctx context.Context, pods ...*corev1.Pod) error {
	return attempt.Release(ctx, r.Client, pods...)
}

// releaseOrphans releases the Pods of a job that is gone, which the garbage collector is
// deleting. The cache says the job is gone; the API server is asked before any Pod of a
// job of that name is let go, so that a job the cache has not seen yet keeps its Pods.
func (r *Reconciler) releaseOrphans(ctx context.Context, key types.NamespacedName) error {
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(key.Namespace), labelindex.Matching(vmafxv1.LabelJob, vmafxv1.JobLabelValue(key.Name))); err != nil {
		return fmt.Errorf("listing the Pods of job %s: %w", key.Name, err)
	}
	held := attempt.Held(list.Items, "VmafxJob", key.Name)
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
