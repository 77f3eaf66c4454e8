package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// The defaults of VmafxPlacementArgs. This file is the only place that knows them.
var (
	// DefaultHeartbeatStaleAfter is 60 s: the device plugin writes a heartbeat every 10 s,
	// so a node is dropped after six missed beats, and the operator marks a VmafxNode
	// unhealthy after the same 60 s.
	DefaultHeartbeatStaleAfter = 60 * time.Second
	// DefaultScoringStrategy spreads work: on a fresh cluster each job gets a device of its
	// own before any device is shared.
	DefaultScoringStrategy = Spread
	// DefaultSlotsWeight makes free slots count twice as much as freshness or vendor
	// preference: one slot more free on a four-slot node (25 points) outweighs a heartbeat
	// 10 s older (about 17 points at the default staleness).
	DefaultSlotsWeight int64 = 2
	// DefaultFreshnessWeight breaks ties between nodes with equal free slots in favour of
	// the one heard from last.
	DefaultFreshnessWeight int64 = 1
	// DefaultVendorWeight lets vendor preference pick between equally loaded nodes without
	// overriding load: a vulkan job still goes to an idle amd node before a busy nvidia one.
	DefaultVendorWeight int64 = 1
	// DefaultVendorPreference lists the GPU vendors in the order of their native backends
	// in the API (cuda, hip, sycl).
	DefaultVendorPreference = []vmafxv1.GPUVendor{vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD, vmafxv1.VendorIntel}
)

// SetDefaults_VmafxPlacementArgs fills every unset field of args with its default.
func SetDefaults_VmafxPlacementArgs(args *VmafxPlacementArgs) {
	if args.HeartbeatStaleAfter == nil {
		args.HeartbeatStaleAfter = &metav1.Duration{Duration: DefaultHeartbeatStaleAfter}
	}
	if args.ScoringStrategy == nil {
		args.ScoringStrategy = ptr.To(DefaultScoringStrategy)
	}
	if args.Weights == nil {
		args.Weights = &ScoreWeights{}
	}
	if args.Weights.Slots == nil {
		args.Weights.Slots = ptr.To(DefaultSlotsWeight)
	}
	if args.Weights.Freshness == nil {
		args.Weights.Freshness = ptr.To(DefaultFreshnessWeight)
	}
	if args.Weights.Vendor == nil {
		args.Weights.Vendor = ptr.To(DefaultVendorWeight)
	}
	if len(args.VendorPreference) == 0 {
		args.VendorPreference = append([]vmafxv1.GPUVendor(nil), DefaultVendorPreference...)
	}
}
