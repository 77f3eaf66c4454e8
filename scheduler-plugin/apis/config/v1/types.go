package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// VmafxPlacementArgs are the arguments of the VmafxPlacement plugin, as written in the
// pluginConfig of a KubeSchedulerConfiguration profile. Every field is optional.
//
// +kubebuilder:object:root=true
type VmafxPlacementArgs struct {
	metav1.TypeMeta `json:",inline"`

	// heartbeatStaleAfter is how old a VmafxNode's status.lastHeartbeat may be, on the
	// scheduler's clock, before the node stops receiving worker Pods. Default 60s: the
	// device plugin beats every 10 s, so six missed beats in a row.
	// +optional
	HeartbeatStaleAfter *metav1.Duration `json:"heartbeatStaleAfter,omitempty"`

	// scoringStrategy is Spread (prefer the node with the largest share of free slots) or
	// BinPack (prefer the fullest node that still fits). Default Spread. A worker Pod may
	// override it with the annotation vmafx.dev/scoring-strategy.
	// +optional
	ScoringStrategy *ScoringStrategy `json:"scoringStrategy,omitempty"`

	// weights weigh the parts of a node's score. Defaults: slots 2, freshness 1, vendor 1.
	// +optional
	Weights *ScoreWeights `json:"weights,omitempty"`

	// vendorPreference orders the GPU vendors (nvidia, amd, intel) for the backends that
	// any GPU can run (vulkan, auto): the first scores highest, an unlisted vendor lowest.
	// Default [nvidia, amd, intel].
	// +optional
	VendorPreference []vmafxv1.GPUVendor `json:"vendorPreference,omitempty"`
}

// ScoringStrategy is how free scoring slots count in a node's score: Spread or BinPack.
type ScoringStrategy string

// The scoring strategies.
const (
	Spread  ScoringStrategy = "Spread"
	BinPack ScoringStrategy = "BinPack"
)

// ScoreWeights weigh the parts of a node's score, each from 0 (left out) to 100.
type ScoreWeights struct {
	// slots weighs the free-slot part. Default 2.
	// +optional
	Slots *int64 `json:"slots,omitempty"`
	// freshness weighs how recent the node's heartbeat is. Default 1.
	// +optional
	Freshness *int64 `json:"freshness,omitempty"`
	// vendor weighs vendorPreference, for vulkan and auto jobs. Default 1.
	// +optional
	Vendor *int64 `json:"vendor,omitempty"`
}
