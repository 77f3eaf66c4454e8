package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VmafxNodeSpec describes a Kubernetes Node that offers scoring slots. The device plugin
// on that node creates it from what it discovers.
//
// +kubebuilder:validation:XValidation:rule="has(self.nodeName) == has(oldSelf.nodeName)",message="nodeName is immutable: it cannot be added or removed once the VmafxNode exists",fieldPath=".nodeName"
type VmafxNodeSpec struct {
	// nodeName is the Kubernetes Node this object describes. Unset: the VmafxNode's own
	// name (metadata.name), which is how the device plugin names the VmafxNode it creates.
	// VMAFX reads VmafxNodes only in its own namespace (vmafx-system).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nodeName is immutable"
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// gpuVendor is the kind of device the node's slots run on: nvidia, amd, intel or cpu.
	// +required
	GPUVendor GPUVendor `json:"gpuVendor"`

	// capacity is the number of scoring slots the node offers (0 or more).
	// +kubebuilder:validation:Minimum=0
	// +optional
	Capacity int32 `json:"capacity,omitempty"`

	// image is the worker image the node is provisioned for: the device plugin sets it to
	// the worker image it was deployed with (VMAFX_WORKER_IMAGE). It is informational: worker
	// Pods always run the operator's worker image (VMAFX_OPERATOR_WORKER_IMAGE), and the
	// operator reports on the VmafxNode's WorkerImage condition whether the two agree, so a
	// node left on another release during an upgrade shows.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Image string `json:"image,omitempty"`
}

// KubernetesNodeName returns the Kubernetes Node that n describes: spec.nodeName, or the
// VmafxNode's own name when spec.nodeName is unset.
func (n *VmafxNode) KubernetesNodeName() string {
	if n.Spec.NodeName != "" {
		return n.Spec.NodeName
	}
	return n.Name
}

// SlotCounts counts a node's scoring slots by state.
type SlotCounts struct {
	// total is every slot the device plugin advertises.
	// +optional
	Total int32 `json:"total,omitempty"`
	// healthy is the slots on healthy devices.
	// +optional
	Healthy int32 `json:"healthy,omitempty"`
	// allocated is the slots the kubelet has given to containers.
	// +optional
	Allocated int32 `json:"allocated,omitempty"`
}

// VmafxNodeStatus is what the node agent reports and the operator's verdict on its
// heartbeat. The device plugin alone writes device and slots (when they change), the
// operator alone writes healthy, jobs and conditions. The heartbeat itself is the node's
// Lease (NodeLeaseName), not this status.
type VmafxNodeStatus struct {
	// observedGeneration is the generation the operator last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// healthy is true while the heartbeat is fresh (see the Ready condition for why not).
	// Always written, so `kubectl get vmnode` prints false rather than a blank.
	// +optional
	Healthy bool `json:"healthy"`
	// lastHeartbeat is deprecated: the heartbeat is the renewTime of the node's Lease
	// vmafx-node-<name> in the same namespace (`kubectl vmafx nodes` shows its age). Device
	// plugins of the release before the Leases stamp it on every beat, and the operator and
	// vmafx-scheduler still count it (whichever is later, the Lease or this), so such a node
	// stays alive through an upgrade; this release's plugin stamps it only for a few minutes
	// after it starts (statusHeartbeatFor). Written only by device plugins.
	// +optional
	LastHeartbeat *metav1.Time `json:"lastHeartbeat,omitempty"`
	// jobs is the number of worker Pods running on the node. Always written, so an idle
	// node prints JOBS 0 rather than a blank.
	// +optional
	Jobs int32 `json:"jobs"`
	// device describes the node's scoring devices, e.g. "2x nvidia (10de:2684)".
	// +optional
	Device string `json:"device,omitempty"`
	// slots counts the node's scoring slots by state.
	// +optional
	Slots *SlotCounts `json:"slots,omitempty"`
	// conditions: Ready, WorkerImage.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Condition types of a VmafxNode.
const (
	// NodeReady is True while the node's heartbeat is fresh.
	NodeReady = "Ready"
	// NodeWorkerImage is True when spec.image names the image worker Pods run, False when
	// it names another; it is absent when spec.image is empty.
	NodeWorkerImage = "WorkerImage"
)

// VmafxNode is a node that offers VMAF scoring slots, kept alive by its device plugin's
// heartbeat: the renewal of the Lease vmafx-node-<name> beside it. vmafx-scheduler places
// worker Pods only on nodes whose heartbeat is fresh.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vmnode,categories=vmafx
// +kubebuilder:printcolumn:name="Vendor",type=string,JSONPath=`.spec.gpuVendor`
// +kubebuilder:printcolumn:name="Healthy",type=boolean,JSONPath=`.status.healthy`
// +kubebuilder:printcolumn:name="Jobs",type=integer,JSONPath=`.status.jobs`
// +kubebuilder:printcolumn:name="Device",type=string,JSONPath=`.status.device`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VmafxNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the node.
	// +required
	Spec VmafxNodeSpec `json:"spec"`

	// status is the heartbeat and health.
	// +optional
	Status VmafxNodeStatus `json:"status,omitempty"`
}

// VmafxNodeList is a list of VmafxNodes.
//
// +kubebuilder:object:root=true
type VmafxNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VmafxNode `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VmafxNode{}, &VmafxNodeList{})
}
