package attempt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Worker Pods of jobs carry the finalizer vmafx.dev/result from their creation: the API
// server keeps a Pod, with the result in its termination message, until the operator
// has recorded the attempt's outcome and releases it. A Pod deleted before that (by a
// person, an eviction, the Pod garbage collector) waits, Terminating, for the record.

// Release removes the result finalizer from pods. The JSON patch tests the finalizer's
// position first, so it removes exactly that entry even if other finalizers change, and
// needs no resourceVersion (the kubelet updates a Pod's status often).
//
// A Pod this process released a moment ago is not patched again: the cache shows the
// finalizer until the patch's watch event arrives, and a reconcile in between would send
// a patch whose test fails, one more request for the API server and an error to retry.
func Release(ctx context.Context, c client.Client, pods ...*corev1.Pod) error {
	var errs []error
	for _, pod := range pods {
		i := slices.Index(pod.Finalizers, vmafxv1.FinalizerResult)
		if i < 0 || released.recent(pod.UID, time.Now()) {
			continue
		}
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch := fmt.Appendf(nil, `[{"op":"test","path":%q,"value":%q},{"op":"remove","path":%q}]`, path, vmafxv1.FinalizerResult, path)
		err := c.Patch(ctx, pod, client.RawPatch(types.JSONPatchType, patch))
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			// A failed test (the finalizers moved) is retried on fresh data.
			errs = append(errs, fmt.Errorf("releasing worker Pod %s: %w", pod.Name, err))
		default:
			released.add(pod.UID, time.Now())
			klog.FromContext(ctx).V(4).Info("Released worker Pod", "pod", klog.KObj(pod))
		}
	}
	return errors.Join(errs...)
}

// released remembers the Pods released in the last releaseMemo, by UID (a Pod of the
// same name made since has another). Shared by every reconciler of the process: a UID
// names one Pod.
var released = &uidMemo{ttl: releaseMemo}

// releaseMemo is how long a released Pod is not released again: far longer than a watch
// event takes to reach the cache, far shorter than a reason to release it twice.
const releaseMemo = 30 * time.Second

// uidMemo is a set of UIDs that forgets each after ttl; memory is bounded by the Pods
// released in a ttl.
type uidMemo struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[types.UID]time.Time
}

func (u *uidMemo) recent(uid types.UID, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	t, ok := u.m[uid]
	return ok && now.Sub(t) < u.ttl
}

func (u *uidMemo) add(uid types.UID, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[types.UID]time.Time{}
	}
	if len(u.m) >= 1024 && len(u.m)%1024 == 0 {
		for k, t := range u.m {
			if now.Sub(t) >= u.ttl {
				delete(u.m, k)
			}
		}
	}
	u.m[uid] = now
}

// Delete deletes a worker Pod that should not run on; a result finalizer keeps it until
// the attempt's outcome is recorded. The UID precondition spares a Pod of the same name
// made since.
func Delete(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	err := c.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting worker Pod %s: %w", pod.Name, err)
	}
	return nil
}

// ForceDelete removes a Pod whose node does not answer without waiting for its kubelet,
// as the Pod garbage collector does for Pods of deleted nodes. Only once the attempt is
// recorded as lost and its finalizer released.
func ForceDelete(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	err := c.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("force-deleting worker Pod %s: %w", pod.Name, err)
	}
	return nil
}

// Held returns the Pods of pods that the result finalizer holds and whose controller is
// the kind object called name: those to release once that object is gone.
func Held(pods []corev1.Pod, kind, name string) []*corev1.Pod {
	var held []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		owner := metav1.GetControllerOf(p)
		if owner != nil && owner.Kind == kind && owner.Name == name && slices.Contains(p.Finalizers, vmafxv1.FinalizerResult) {
			held = append(held, p)
		}
	}
	return held
}
