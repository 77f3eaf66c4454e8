package placement

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// vmafxNodeEvents names VmafxNodes as a cluster event resource, <plural>.<version>.<group>;
// the scheduler watches a resource named so through a dynamic informer.
var vmafxNodeEvents = fwk.EventResource("vmafxnodes." + vmafxv1.GroupVersion.Version + "." + vmafxv1.GroupVersion.Group)

// EventsToRegister names the cluster events that can make a Pod this plugin rejected
// schedulable, each with a queueing hint that says whether it does for a given Pod, so a
// waiting Pod is retried as soon as it can fit, and only then; without them it would wait for
// the scheduler's periodic flush of unschedulable Pods (5 minutes).
//
//   - A VmafxNode created or updated: it can turn a node usable (first heartbeat, a fresh
//     one after a stale one, the right vendor). Its hint sees only status.lastHeartbeat; a
//     Lease renewal that turns a node fresh wakes the Pods through Placement.activate.
//   - A Node created or its allocatable changed: it can offer more vmafx.dev/slot.
//   - A scheduled Pod deleted: it can free a slot.
func (p *Placement) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: vmafxNodeEvents, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: p.isSchedulableAfterVmafxNodeChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}, QueueingHintFn: p.isSchedulableAfterNodeChange},
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, QueueingHintFn: p.isSchedulableAfterPodDelete},
	}, nil
}

// isSchedulableAfterVmafxNodeChange queues the Pod when the VmafxNode now offers the Pod's
// backend a node it did not offer before: created fresh, its heartbeat fresh again after
// being stale or absent, or its vendor changed to one that fits. A routine heartbeat of a
// node that was already fresh changes nothing and is skipped, so 1000 nodes beating every
// 10 s do not churn the queue.
func (p *Placement) isSchedulableAfterVmafxNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	b, ok := lookupBackend(pod.Annotations[vmafxv1.AnnotationBackend])
	if !ok {
		return fwk.QueueSkip, nil
	}
	fits := &backendFits[b]
	now := p.clock.Now().UnixNano()
	modified, err := vmafxNodeFactsOf(newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if modified.namespace != vmafxv1.SystemNamespace || !modified.offers(fits, now, p.staleAfter) {
		logger.V(5).Info("VmafxNode does not offer the pod's backend a node", "pod", klog.KObj(pod), "node", modified.nodeName)
		return fwk.QueueSkip, nil
	}
	if oldObj == nil {
		logger.V(5).Info("VmafxNode was created and offers the pod's backend a node", "pod", klog.KObj(pod), "node", modified.nodeName)
		return fwk.Queue, nil
	}
	original, err := vmafxNodeFactsOf(oldObj)
	if err != nil {
		return fwk.Queue, err
	}
	if original.nodeName == modified.nodeName && original.offers(fits, now, p.staleAfter) {
		logger.V(5).Info("VmafxNode offered the pod's backend a node already", "pod", klog.KObj(pod), "node", modified.nodeName)
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("VmafxNode now offers the pod's backend a node", "pod", klog.KObj(pod), "node", modified.nodeName)
	return fwk.Queue, nil
}

// eventFacts are the facts of a VmafxNode as a cluster event carries it.
type eventFacts struct {
	nodeFacts
	namespace, nodeName string
}

// vmafxNodeFactsOf reads the fields the hints need from a VmafxNode in an event: the
// scheduler's dynamic informer delivers *unstructured.Unstructured, and reading three fields
// from it is far cheaper than converting the whole object, which matters because hints run
// under the scheduling queue's lock.
func vmafxNodeFactsOf(obj any) (*eventFacts, error) {
	switch o := obj.(type) {
	case *vmafxv1.VmafxNode:
		f := &eventFacts{namespace: o.Namespace, nodeName: o.KubernetesNodeName()}
		f.present, f.vendor = true, lookupVendor(o.Spec.GPUVendor)
		if hb := o.Status.LastHeartbeat; hb != nil {
			f.heartbeat = hb.UnixNano()
		}
		return f, nil
	case *unstructured.Unstructured:
		f := &eventFacts{namespace: o.GetNamespace()}
		f.present = true
		f.nodeName, _, _ = unstructured.NestedString(o.Object, "spec", "nodeName")
		if f.nodeName == "" {
			f.nodeName = o.GetName() // spec.nodeName defaults to the VmafxNode's name
		}
		vendor, _, _ := unstructured.NestedString(o.Object, "spec", "gpuVendor")
		f.vendor = lookupVendor(vmafxv1.GPUVendor(vendor))
		if hb, found, _ := unstructured.NestedString(o.Object, "status", "lastHeartbeat"); found && hb != "" {
			t, err := time.Parse(time.RFC3339, hb)
			if err != nil {
				return nil, fmt.Errorf("VmafxNode %s/%s has a malformed status.lastHeartbeat %q: %w", o.GetNamespace(), o.GetName(), hb, err)
			}
			f.heartbeat = t.UnixNano()
		}
		return f, nil
	}
	return nil, fmt.Errorf("want a VmafxNode, got %T", obj)
}

// isSchedulableAfterNodeChange queues a worker Pod when a Node appears with enough
// vmafx.dev/slot for it, or a Node's allocatable vmafx.dev/slot grows (a device plugin
// registered, a device came back).
func (p *Placement) isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	original, modified, err := schedutil.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	want := podSlots(pod)
	slots := nodeSlots(modified)
	if slots < want || slots == 0 {
		logger.V(5).Info("Node does not offer enough vmafx.dev/slot", "pod", klog.KObj(pod), "node", klog.KObj(modified))
		return fwk.QueueSkip, nil
	}
	if original != nil && slots <= nodeSlots(original) {
		logger.V(5).Info("Node's vmafx.dev/slot did not grow", "pod", klog.KObj(pod), "node", klog.KObj(modified))
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("Node offers more vmafx.dev/slot", "pod", klog.KObj(pod), "node", klog.KObj(modified))
	return fwk.Queue, nil
}

func nodeSlots(n *v1.Node) int64 {
	q, ok := n.Status.Allocatable[vmafxv1.ResourceSlot]
	if !ok {
		return 0
	}
	return q.Value()
}

// isSchedulableAfterPodDelete queues a worker Pod when a scheduled Pod that held
// vmafx.dev/slot is deleted, which frees a slot on its node.
func (p *Placement) isSchedulableAfterPodDelete(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	deleted, _, err := schedutil.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if deleted.Spec.NodeName == "" || podSlots(deleted) == 0 {
		logger.V(5).Info("Deleted pod held no vmafx.dev/slot", "pod", klog.KObj(pod), "deletedPod", klog.KObj(deleted))
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("Deleted pod freed vmafx.dev/slot", "pod", klog.KObj(pod), "deletedPod", klog.KObj(deleted))
	return fwk.Queue, nil
}
