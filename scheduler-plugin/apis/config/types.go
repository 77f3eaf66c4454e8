package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// VmafxPlacementArgs are the arguments of the VmafxPlacement plugin.
//
// +kubebuilder:object:root=true
type VmafxPlacementArgs struct {
	metav1.TypeMeta

	// HeartbeatStaleAfter is how old a VmafxNode's status.lastHeartbeat may be, on the
	// scheduler's clock, before the node stops receiving worker Pods.
	HeartbeatStaleAfter metav1.Duration
	// ScoringStrategy says which nodes score higher on free scoring slots.
	ScoringStrategy ScoringStrategy
	// Weights weigh the parts of a node's score.
	Weights ScoreWeights
	// VendorPreference orders the GPU vendors for backends that any GPU can run (vulkan,
	// auto): the first scores highest, an unlisted vendor lowest.
	VendorPreference []vmafxv1.GPUVendor
}

// ScoringStrategy is how free scoring slots count in a node's score.
type ScoringStrategy string

const (
	// Spread prefers the node with the largest share of its slots free, so that work
	// spreads across nodes and devices.
	Spread ScoringStrategy = "Spread"
	// BinPack prefers the node with the largest share of its slots in use, so that whole
	// nodes stay free for large batches or can be scaled down.
	BinPack ScoringStrategy = "BinPack"
)

// ScoringStrategies lists the valid strategies.
var ScoringStrategies = []ScoringStrategy{Spread, BinPack}

// ScoreWeights weigh the parts of a node's score against each other. A weight of zero
// leaves that part out.
type ScoreWeights struct {
	// Slots weighs the free-slot part (Spread or BinPack).
	Slots int64
	// Freshness weighs how recent the node's heartbeat is.
	Freshness int64
	// Vendor weighs VendorPreference, for backends that any GPU vendor can run.
	Vendor int64
}
