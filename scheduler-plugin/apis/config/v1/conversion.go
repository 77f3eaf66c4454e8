package v1

import (
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/scheduler-plugin/apis/config"
)

func addConversionFuncs(scheme *runtime.Scheme) error {
	if err := scheme.AddConversionFunc((*VmafxPlacementArgs)(nil), (*config.VmafxPlacementArgs)(nil), func(a, b any, _ conversion.Scope) error {
		Convert_v1_VmafxPlacementArgs_To_config_VmafxPlacementArgs(a.(*VmafxPlacementArgs), b.(*config.VmafxPlacementArgs))
		return nil
	}); err != nil {
		return err
	}
	return scheme.AddConversionFunc((*config.VmafxPlacementArgs)(nil), (*VmafxPlacementArgs)(nil), func(a, b any, _ conversion.Scope) error {
		Convert_config_VmafxPlacementArgs_To_v1_VmafxPlacementArgs(a.(*config.VmafxPlacementArgs), b.(*VmafxPlacementArgs))
		return nil
	})
}

// Convert_v1_VmafxPlacementArgs_To_config_VmafxPlacementArgs converts defaulted file args
// to the internal form; a field still unset converts to its zero value, which validation
// then refuses where zero is not allowed.
func Convert_v1_VmafxPlacementArgs_To_config_VmafxPlacementArgs(in *VmafxPlacementArgs, out *config.VmafxPlacementArgs) {
	*out = config.VmafxPlacementArgs{}
	if in.HeartbeatStaleAfter != nil {
		out.HeartbeatStaleAfter = *in.HeartbeatStaleAfter
	}
	if in.ScoringStrategy != nil {
		out.ScoringStrategy = config.ScoringStrategy(*in.ScoringStrategy)
	}
	if w := in.Weights; w != nil {
		out.Weights = config.ScoreWeights{Slots: deref(w.Slots), Freshness: deref(w.Freshness), Vendor: deref(w.Vendor)}
	}
	out.VendorPreference = append([]vmafxv1.GPUVendor(nil), in.VendorPreference...)
}

// Convert_config_VmafxPlacementArgs_To_v1_VmafxPlacementArgs converts internal args back to
// the file form (kube-scheduler does so to print its effective configuration).
func Convert_config_VmafxPlacementArgs_To_v1_VmafxPlacementArgs(in *config.VmafxPlacementArgs, out *VmafxPlacementArgs) {
	stale := in.HeartbeatStaleAfter
	strategy := ScoringStrategy(in.ScoringStrategy)
	w := in.Weights
	*out = VmafxPlacementArgs{
		TypeMeta:            out.TypeMeta,
		HeartbeatStaleAfter: &stale,
		ScoringStrategy:     &strategy,
		Weights:             &ScoreWeights{Slots: &w.Slots, Freshness: &w.Freshness, Vendor: &w.Vendor},
		VendorPreference:    append([]vmafxv1.GPUVendor(nil), in.VendorPreference...),
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
