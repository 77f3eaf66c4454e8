package ladder

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
	"github.com/vmafx/vmafx/operator/internal/labelindex"
)

// A ladder's encode and report Pods carry the result finalizer vmafx.dev/result from
// their creation, as a job's worker Pods do (attempt.Release says why): an encode deleted
// after it wrote its encode keeps its result until the rung records it, rather than
// being encoded again.

// recordedPods are the ladder's Pods, held by the result finalizer, whose outcome the
// ladder's status records: every Pod of a finished ladder; else an encode Pod of a rung
// past its encode or of an attempt counted as failed or lost, and a report Pod of an
// attempt counted as failed or lost.
func recordedPods(l *vmafxv1.VmafxLadder, pods map[string]*corev1.Pod) []*corev1.Pod {
	rungs := map[string]*vmafxv1.LadderRung{}
	for i := range l.Status.Rungs {
		rungs[l.Status.Rungs[i].Name] = &l.Status.Rungs[i]
	}
	var out []*corev1.Pod
	for _, p := range pods {
		if !slices.Contains(p.Finalizers, vmafxv1.FinalizerResult) {
			continue
		}
		n := attemptOf(p)
		recorded := finished(l)
		switch p.Labels[vmafxv1.LabelStep] {
		case stepEncode:
			r := rungs[p.Labels[vmafxv1.LabelRung]]
			recorded = recorded || r != nil && (r.Phase != vmafxv1.RungEncoding || n <= r.EncodeFailures+r.EncodeLost)
		case stepReport:
			recorded = recorded || n <= l.Status.ReportFailures+l.Status.ReportLost
		}
		if recorded {
			out = append(out, p)
		}
	}
	return out
}

// attemptOf is the attempt a ladder Pod runs, from its label; 0 when unreadable.
func attemptOf(pod *corev1.Pod) int32 {
	n, err := strconv.Atoi(pod.Labels[vmafxv1.LabelAttempt])
	if err != nil {
		return 0
	}
	return int32(n)
}

// releaseAll releases every Pod of a ladder that is finished or going.
func (r *Reconciler) releaseAll(ctx context.Context, l *vmafxv1.VmafxLadder) error {
	held, err := r.heldPods(ctx, types.NamespacedName{Namespace: l.Namespace, Name: l.Name})
	if err != nil {
		return err
	}
	return attempt.Release(ctx, r.Client, slices.DeleteFunc(held, func(p *corev1.Pod) bool { return !metav1.IsControlledBy(p, l) })...)
}

// releaseOrphans releases the Pods of a ladder that is gone, which the garbage collector
// is deleting. The cache says the ladder is gone; the API server is asked before any Pod
// is let go, so that a ladder the cache has not seen yet keeps its Pods.
func (r *Reconciler) releaseOrphans(ctx context.Context, key types.NamespacedName) error {
	held, err := r.heldPods(ctx, key)
	if err != nil || len(held) == 0 {
		return err
	}
	live := &vmafxv1.VmafxLadder{}
	err = r.APIReader.Get(ctx, key, live)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading ladder %s: %w", key.Name, err)
	}
	gone := err != nil || live.DeletionTimestamp != nil
	return attempt.Release(ctx, r.Client, slices.DeleteFunc(held, func(p *corev1.Pod) bool {
		return !gone && metav1.GetControllerOf(p).UID == live.UID
	})...)
}

// heldPods are the Pods in the ladders' cache, labelled with the ladder named by key and
// controlled by a VmafxLadder of that name, that the result finalizer holds.
func (r *Reconciler) heldPods(ctx context.Context, key types.NamespacedName) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := r.Pods.List(ctx, &list, client.InNamespace(key.Namespace), labelindex.Matching(vmafxv1.LabelLadder, vmafxv1.JobLabelValue(key.Name))); err != nil {
		return nil, fmt.Errorf("listing the Pods of ladder %s: %w", key.Name, err)
	}
	return attempt.Held(list.Items, "VmafxLadder", key.Name), nil
}
