package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/statuspatch"
)

// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes/status,verbs=get;patch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch,namespace=vmafx-system

// Field indexes the reconciler needs; the manager registers them.
const (
	// IndexPodNode indexes worker Pods by spec.nodeName.
	IndexPodNode = "spec.nodeName"
	// IndexVmafxNodeName indexes VmafxNodes by the Kubernetes Node they describe
	// (VmafxNode.KubernetesNodeName).
	IndexVmafxNodeName = "spec.nodeName"
)

// recheckMargin lands the staleness requeue just after the deadline, so the reconcile
// that runs then sees the node as stale rather than a few microseconds short of it.
const recheckMargin = 50 * time.Millisecond

// minStaleForHold is how many nodes must look stale at once, besides their share, before
// the operator suspects itself rather than the nodes: as the node lifecycle controller's
// partial disruption, "more than two".
const minStaleForHold = 3

// Reconciler reconciles the VmafxNodes of the operator's namespace (the manager's cache
// holds no others).
type Reconciler struct {
	Client client.Client
	// APIReader reads around the cache: a node's heartbeat (its VmafxNode and its Lease)
	// is read from the API server once more before any of its workers is deleted.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// StaleAfter is how long a node may go without a new heartbeat.
	StaleAfter time.Duration
	// UnhealthyThreshold is the share of stale nodes at which jobs stay where they are.
	UnhealthyThreshold float64
	// Contact says since when the operator can see the API server.
	Contact interface {
		Since() (time.Time, bool)
	}
	// WorkerImage is the image worker Pods run, compared with spec.image.
	WorkerImage string

	seen sightings
}

// SetupWithManager registers the reconciler. It must see every heartbeat: each renewal of
// a node's Lease, and each status-only update (a device plugin of the previous release
// beats through status.lastHeartbeat), so it filters nothing by generation. The manager's
// cache must hold the node heartbeat Leases of the namespace (LeaseCache).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmafxv1.VmafxNode{}).
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(nodeOfLease)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.nodesOfPod)).
		Named("vmafxnode").
		Complete(r)
}

// LeaseCache is what the manager's cache must hold of Leases for the reconciler: the node
// heartbeat Leases of namespace, not its leader-election Leases (renewed every few
// seconds) nor any other namespace's (the kubelets' node Leases, one per Node).
func LeaseCache(namespace string) cache.ByObject {
	return cache.ByObject{
		Namespaces: map[string]cache.Config{namespace: {}},
		Label:      labels.SelectorFromSet(labels.Set{vmafxv1.LabelComponent: vmafxv1.ComponentNodeHeartbeat}),
	}
}

// nodeOfLease maps a node heartbeat Lease to its VmafxNode.
func nodeOfLease(_ context.Context, obj client.Object) []reconcile.Request {
	node, ok := vmafxv1.NodeOfLease(obj.GetName())
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: node}}}
}

// leaseOf returns node's heartbeat Lease as reader has it, nil when there is none.
func leaseOf(ctx context.Context, reader client.Reader, node *vmafxv1.VmafxNode) (*coordinationv1.Lease, error) {
	name, ok := vmafxv1.NodeLeaseName(node.Name)
	if !ok {
		return nil, nil
	}
	lease := &coordinationv1.Lease{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: node.Namespace, Name: name}, lease); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the heartbeat Lease of VmafxNode %s: %w", node.Name, err)
	}
	return lease, nil
}

// nodesOfPod maps a worker Pod to the VmafxNode of the node it is bound to.
func (r *Reconciler) nodesOfPod(ctx context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" || pod.Labels[vmafxv1.LabelJob] == "" {
		return nil
	}
	var nodes vmafxv1.VmafxNodeList
	if err := r.Client.List(ctx, &nodes, client.MatchingFields{IndexVmafxNodeName: pod.Spec.NodeName}); err != nil {
		klog.FromContext(ctx).Error(err, "Listing VmafxNodes for a Pod", "pod", klog.KObj(pod))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(nodes.Items))
	for i := range nodes.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&nodes.Items[i])})
	}
	return reqs
}

// Reconcile judges one node's health and acts on it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	node := &vmafxv1.VmafxNode{}
	if err := r.Client.Get(ctx, req.NamespacedName, node); err != nil {
		if apierrors.IsNotFound(err) {
			r.seen.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logger := klog.FromContext(ctx).WithValues("vmafxNode", klog.KObj(node))
	ctx = klog.NewContext(ctx, logger)
	now := r.Clock.Now()
	connectedSince, connected := r.Contact.Since()
	if !connected {
		// Nothing the cache says about heartbeats can be trusted now, nor acted on.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}

	lease, err := leaseOf(ctx, r.Client, node)
	if err != nil {
		return ctrl.Result{}, err
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.MatchingFields{IndexPodNode: node.KubernetesNodeName()}, client.HasLabels{vmafxv1.LabelJob}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing worker Pods on node %s: %w", node.KubernetesNodeName(), err)
	}
	before := node.DeepCopy()
	v := assess(node.KubernetesNodeName(), r.seen.observe(node, lease, now), connectedSince, now, r.StaleAfter)
	node.Status.Jobs = countRunning(pods.Items)
	r.setWorkerImage(node)

	var moveErr error
	var requeue time.Duration
	if !v.healthy && v.quietFor >= r.StaleAfter && hasLivePods(pods.Items) {
		requeue, moveErr = r.moveJobs(ctx, node, lease, pods.Items, &v, connectedSince, now)
	}
	setReady(node, v)
	if v.healthy && !before.Status.Healthy && wasStale(before) {
		r.Recorder.Eventf(node, nil, corev1.EventTypeNormal, ReasonNodeRecovered, "Recover", "heartbeat fresh again: %s", v.message)
	}
	if moveErr == nil {
		node.Status.ObservedGeneration = node.Generation
	}
	var patchErr error
	if !equality.Semantic.DeepEqual(before.Status, node.Status) {
		// No optimistic lock: the device plugin updates the same status every few seconds
		// and this patch only names the fields the operator owns.
		// HEALTHY and JOBS print false and 0 for a node that never sent a heartbeat.
		patchErr = r.Client.Status().Patch(ctx, node, statuspatch.Naming(client.MergeFrom(before),
			map[string]any{"healthy": node.Status.Healthy, "jobs": node.Status.Jobs}))
	}
	if err := errors.Join(moveErr, patchErr); err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case requeue > 0:
		return ctrl.Result{RequeueAfter: requeue}, nil
	case v.healthy:
		return ctrl.Result{RequeueAfter: v.staleIn + recheckMargin}, nil
	case v.quietFor < r.StaleAfter:
		// Unhealthy (no heartbeat yet, or stale when the operator started) but not quiet
		// for long enough yet to move jobs: look again when it is.
		return ctrl.Result{RequeueAfter: r.StaleAfter - v.quietFor + recheckMargin}, nil
	}
	return ctrl.Result{}, nil
}

func setReady(node *vmafxv1.VmafxNode, v verdict) {
	node.Status.Healthy = v.healthy
	status := metav1.ConditionFalse
	if v.healthy {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&node.Status.Conditions, metav1.Condition{
		Type: vmafxv1.NodeReady, Status: status, Reason: v.reason, Message: v.message, ObservedGeneration: node.Generation,
	})
}

// setWorkerImage reports whether spec.image names the image worker Pods run.
func (r *Reconciler) setWorkerImage(node *vmafxv1.VmafxNode) {
	img := node.Spec.Image
	if img == "" || r.WorkerImage == "" {
		meta.RemoveStatusCondition(&node.Status.Conditions, vmafxv1.NodeWorkerImage)
		return
	}
	c := metav1.Condition{Type: vmafxv1.NodeWorkerImage, Status: metav1.ConditionTrue, Reason: ReasonImageMatches,
		Message: fmt.Sprintf("worker Pods run %s, as spec.image says", r.WorkerImage), ObservedGeneration: node.Generation}
	if img != r.WorkerImage {
		c.Status, c.Reason = metav1.ConditionFalse, ReasonImageDiffers
		c.Message = fmt.Sprintf("worker Pods run %s (the operator's VMAFX_OPERATOR_WORKER_IMAGE), not %s (spec.image)", r.WorkerImage, img)
	}
	meta.SetStatusCondition(&node.Status.Conditions, c)
}

// wasStale says whether node's status calls its heartbeat stale (rather than absent).
func wasStale(node *vmafxv1.VmafxNode) bool {
	c := meta.FindStatusCondition(node.Status.Conditions, vmafxv1.NodeReady)
	return c != nil && c.Reason == ReasonHeartbeatStale
}

func countRunning(pods []corev1.Pod) int32 {
	var n int32
	for i := range pods {
		if pods[i].Status.Phase == corev1.PodRunning && pods[i].DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func isLive(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

func hasLivePods(pods []corev1.Pod) bool {
	for i := range pods {
		if isLive(&pods[i]) {
			return true
		}
	}
	return false
}

// moveJobs deletes the live worker Pods bound to a stale node; each job's reconciler then
// counts the attempt as lost and starts a new one, which vmafx-scheduler keeps off this
// node. A Pod already being deleted is left alone, so each Pod is moved once. Before any
// Pod goes, two checks guard against a view of the cluster that is wrong rather than a
// node that is gone: the node's heartbeat is read again from the API server (the cache may
// be behind), and nothing moves while most nodes look stale at once. It returns when to
// look again if it held back.
func (r *Reconciler) moveJobs(ctx context.Context, node *vmafxv1.VmafxNode, lease *coordinationv1.Lease, pods []corev1.Pod, v *verdict, connectedSince, now time.Time) (time.Duration, error) {
	current := &vmafxv1.VmafxNode{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(node), current); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	currentLease, err := leaseOf(ctx, r.APIReader, current)
	if err != nil {
		return 0, err
	}
	if hb := vmafxv1.NodeHeartbeat(current, currentLease); !hb.Equal(vmafxv1.NodeHeartbeat(node, lease)) {
		// A newer heartbeat than the cache has: the node is alive. The watch brings it.
		klog.FromContext(ctx).V(2).Info("A newer heartbeat is on the API server; not moving jobs", "heartbeat", hb)
		*v = assess(node.KubernetesNodeName(), r.seen.observe(current, currentLease, now), connectedSince, now, r.StaleAfter)
		return time.Second, nil
	}
	if stale, total, err := r.countStale(ctx, node.Namespace, connectedSince, now); err != nil {
		return 0, err
	} else if stale >= minStaleForHold && float64(stale) >= r.UnhealthyThreshold*float64(total) {
		v.message += fmt.Sprintf("; its jobs are not moved: %d of %d VmafxNodes look stale at once (threshold %.2f), which points at the control plane or the network rather than the nodes",
			stale, total, r.UnhealthyThreshold)
		r.Recorder.Eventf(node, nil, corev1.EventTypeWarning, ReasonMassStaleness, "Hold", "%s", v.message)
		return r.StaleAfter / 2, nil
	}

	var errs []error
	moved := 0
	for i := range pods {
		pod := &pods[i]
		if !isLive(pod) {
			continue
		}
		err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("deleting worker Pod %s on stale node %s: %w", pod.Name, node.KubernetesNodeName(), err))
			continue
		}
		moved++
		klog.FromContext(ctx).Info("Moving job off unhealthy node", "pod", klog.KObj(pod), "reason", v.reason)
		if owner := metav1.GetControllerOf(pod); owner != nil && owner.Kind == "VmafxJob" {
			job := &vmafxv1.VmafxJob{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: owner.Name}, job); err == nil {
				r.Recorder.Eventf(job, pod, corev1.EventTypeWarning, ReasonNodeStale, "Move",
					"node %s is unhealthy (%s); worker Pod %s deleted, a new attempt will be placed elsewhere", node.KubernetesNodeName(), v.message, pod.Name)
			}
		}
	}
	if moved > 0 {
		r.Recorder.Eventf(node, nil, corev1.EventTypeWarning, ReasonNodeStale, "Move", "%s; moved %d job(s) off the node", v.message, moved)
	}
	return 0, errors.Join(errs...)
}

// countStale counts the VmafxNodes of namespace that look stale now or are about to:
// quiet for half the staleness window. Nodes beat out of step with each other, so when
// the operator stops seeing heartbeats (a watch that stalls) they go stale one after
// another over a heartbeat period; counting the ones on their way there too sees the
// whole outage at the first node, before any job moves.
func (r *Reconciler) countStale(ctx context.Context, namespace string, connectedSince, now time.Time) (stale, total int, err error) {
	var nodes vmafxv1.VmafxNodeList
	if err := r.Client.List(ctx, &nodes, client.InNamespace(namespace)); err != nil {
		return 0, 0, fmt.Errorf("listing VmafxNodes: %w", err)
	}
	var leases coordinationv1.LeaseList
	if err := r.Client.List(ctx, &leases, client.InNamespace(namespace)); err != nil {
		return 0, 0, fmt.Errorf("listing node heartbeat Leases: %w", err)
	}
	byName := make(map[string]*coordinationv1.Lease, len(leases.Items))
	for i := range leases.Items {
		byName[leases.Items[i].Name] = &leases.Items[i]
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		name, _ := vmafxv1.NodeLeaseName(n.Name)
		if v := assess(n.KubernetesNodeName(), r.seen.observe(n, byName[name], now), connectedSince, now, r.StaleAfter); !v.healthy || v.quietFor >= r.StaleAfter/2 {
			stale++
		}
	}
	return stale, len(nodes.Items), nil
}
