package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes/status,verbs=get;patch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Field indexes the reconciler needs; the manager registers them.
const (
	// IndexPodNode indexes worker Pods by spec.nodeName.
	IndexPodNode = "spec.nodeName"
	// IndexVmafxNodeName indexes VmafxNodes by spec.nodeName.
	IndexVmafxNodeName = "spec.nodeName"
)

// recheckMargin lands the staleness requeue just after the deadline, so the reconcile
// that runs then sees the node as stale rather than a few microseconds short of it.
const recheckMargin = 50 * time.Millisecond

// Reconciler reconciles VmafxNodes.
type Reconciler struct {
	Client     client.Client
	Recorder   events.EventRecorder
	Clock      clock.PassiveClock
	StaleAfter time.Duration
}

// SetupWithManager registers the reconciler. It must see status-only updates (every
// heartbeat is one), so it filters nothing by generation.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmafxv1.VmafxNode{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.nodesOfPod)).
		Named("vmafxnode").
		Complete(r)
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
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logger := klog.FromContext(ctx).WithValues("vmafxNode", klog.KObj(node))
	ctx = klog.NewContext(ctx, logger)

	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.MatchingFields{IndexPodNode: node.Spec.NodeName}, client.HasLabels{vmafxv1.LabelJob}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing worker Pods on node %s: %w", node.Spec.NodeName, err)
	}
	before := node.DeepCopy()
	v := assess(node, r.Clock.Now(), r.StaleAfter)
	node.Status.Healthy = v.healthy
	node.Status.Jobs = countRunning(pods.Items)
	status := metav1.ConditionFalse
	if v.healthy {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&node.Status.Conditions, metav1.Condition{
		Type: vmafxv1.NodeReady, Status: status, Reason: v.reason, Message: v.message, ObservedGeneration: node.Generation,
	})

	var moveErr error
	if !v.healthy {
		moveErr = r.moveJobs(ctx, node, pods.Items, v)
	} else if before.Status.LastHeartbeat != nil && !before.Status.Healthy && hasReadyCondition(before) {
		r.Recorder.Eventf(node, nil, corev1.EventTypeNormal, ReasonNodeRecovered, "Recover", "heartbeat fresh again: %s", v.message)
	}
	if moveErr == nil {
		node.Status.ObservedGeneration = node.Generation
	}
	var patchErr error
	if !equality.Semantic.DeepEqual(before.Status, node.Status) {
		// No optimistic lock: the device plugin updates the same status every few seconds
		// and this patch only names the fields the operator owns.
		patchErr = r.Client.Status().Patch(ctx, node, client.MergeFrom(before))
	}
	if err := errors.Join(moveErr, patchErr); err != nil {
		return ctrl.Result{}, err
	}
	if v.healthy {
		return ctrl.Result{RequeueAfter: v.staleIn + recheckMargin}, nil
	}
	return ctrl.Result{}, nil
}

func hasReadyCondition(node *vmafxv1.VmafxNode) bool {
	return meta.FindStatusCondition(node.Status.Conditions, vmafxv1.NodeReady) != nil
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

// moveJobs deletes the live worker Pods bound to an unhealthy node; each job's
// reconciler then starts a new attempt, which vmafx-scheduler keeps off this node. A Pod
// already being deleted is left alone, so each Pod is moved once.
func (r *Reconciler) moveJobs(ctx context.Context, node *vmafxv1.VmafxNode, pods []corev1.Pod, v verdict) error {
	var errs []error
	moved := 0
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("deleting worker Pod %s on stale node %s: %w", pod.Name, node.Spec.NodeName, err))
			continue
		}
		moved++
		klog.FromContext(ctx).Info("Moving job off unhealthy node", "pod", klog.KObj(pod), "reason", v.reason)
		job := &vmafxv1.VmafxJob{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: pod.Labels[vmafxv1.LabelJob]}, job); err == nil {
			r.Recorder.Eventf(job, pod, corev1.EventTypeWarning, ReasonNodeStale, "Move",
				"node %s is unhealthy (%s); worker Pod %s deleted, a new attempt will be placed elsewhere", node.Spec.NodeName, v.message, pod.Name)
		}
	}
	if moved > 0 {
		r.Recorder.Eventf(node, nil, corev1.EventTypeWarning, ReasonNodeStale, "Move", "%s; moved %d job(s) off the node", v.message, moved)
	}
	return errors.Join(errs...)
}
