package validation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/scheduler-plugin/apis/config"
)

func valid() config.VmafxPlacementArgs {
	return config.VmafxPlacementArgs{
		HeartbeatStaleAfter: metav1.Duration{Duration: time.Minute},
		ScoringStrategy:     config.Spread,
		Weights:             config.ScoreWeights{Slots: 2, Freshness: 1, Vendor: 1},
		VendorPreference:    []vmafxv1.GPUVendor{vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD, vmafxv1.VendorIntel},
	}
}

func TestValidateVmafxPlacementArgs(t *testing.T) {
	path := field.NewPath("args")
	tests := map[string]struct {
		mutate func(*config.VmafxPlacementArgs)
		want   field.ErrorList
	}{
		"valid":                   {mutate: func(*config.VmafxPlacementArgs) {}},
		"bin-pack":                {mutate: func(a *config.VmafxPlacementArgs) { a.ScoringStrategy = config.BinPack }},
		"one weight is enough":    {mutate: func(a *config.VmafxPlacementArgs) { a.Weights = config.ScoreWeights{Vendor: 100} }},
		"empty vendor preference": {mutate: func(a *config.VmafxPlacementArgs) { a.VendorPreference = nil }},
		"zero staleness": {
			mutate: func(a *config.VmafxPlacementArgs) { a.HeartbeatStaleAfter.Duration = 0 },
			want:   field.ErrorList{field.Invalid(path.Child("heartbeatStaleAfter"), "", "")},
		},
		"negative staleness": {
			mutate: func(a *config.VmafxPlacementArgs) { a.HeartbeatStaleAfter.Duration = -time.Second },
			want:   field.ErrorList{field.Invalid(path.Child("heartbeatStaleAfter"), "", "")},
		},
		"unknown strategy": {
			mutate: func(a *config.VmafxPlacementArgs) { a.ScoringStrategy = "MostAllocated" },
			want:   field.ErrorList{field.NotSupported(path.Child("scoringStrategy"), "", config.ScoringStrategies)},
		},
		"empty strategy": {
			mutate: func(a *config.VmafxPlacementArgs) { a.ScoringStrategy = "" },
			want:   field.ErrorList{field.NotSupported(path.Child("scoringStrategy"), "", config.ScoringStrategies)},
		},
		"weights out of range": {
			mutate: func(a *config.VmafxPlacementArgs) {
				a.Weights = config.ScoreWeights{Slots: -1, Freshness: 101, Vendor: 1}
			},
			want: field.ErrorList{
				field.Invalid(path.Child("weights", "slots"), "", ""),
				field.Invalid(path.Child("weights", "freshness"), "", ""),
			},
		},
		"all weights zero": {
			mutate: func(a *config.VmafxPlacementArgs) { a.Weights = config.ScoreWeights{} },
			want:   field.ErrorList{field.Invalid(path.Child("weights"), "", "")},
		},
		"cpu is not a GPU vendor": {
			mutate: func(a *config.VmafxPlacementArgs) { a.VendorPreference = []vmafxv1.GPUVendor{vmafxv1.VendorCPU} },
			want:   field.ErrorList{field.NotSupported(path.Child("vendorPreference").Index(0), "", vmafxv1.GPUVendors)},
		},
		"duplicate vendor": {
			mutate: func(a *config.VmafxPlacementArgs) {
				a.VendorPreference = []vmafxv1.GPUVendor{vmafxv1.VendorAMD, vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD}
			},
			want: field.ErrorList{field.Duplicate(path.Child("vendorPreference").Index(2), "")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := valid()
			tc.mutate(&args)
			got := ValidateVmafxPlacementArgs(path, &args)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
