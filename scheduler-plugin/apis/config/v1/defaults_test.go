package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/scheduler-plugin/apis/config"
)

func TestSetDefaults(t *testing.T) {
	tests := map[string]struct {
		in, want VmafxPlacementArgs
	}{
		"empty": {
			want: VmafxPlacementArgs{
				HeartbeatStaleAfter: &metav1.Duration{Duration: 60 * time.Second},
				ScoringStrategy:     ptr.To(Spread),
				Weights:             &ScoreWeights{Slots: ptr.To[int64](2), Freshness: ptr.To[int64](1), Vendor: ptr.To[int64](1)},
				VendorPreference:    []vmafxv1.GPUVendor{vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD, vmafxv1.VendorIntel},
			},
		},
		"set fields are kept, zero weights included": {
			in: VmafxPlacementArgs{
				HeartbeatStaleAfter: &metav1.Duration{Duration: 30 * time.Second},
				ScoringStrategy:     ptr.To(BinPack),
				Weights:             &ScoreWeights{Freshness: ptr.To[int64](0)},
				VendorPreference:    []vmafxv1.GPUVendor{vmafxv1.VendorIntel},
			},
			want: VmafxPlacementArgs{
				HeartbeatStaleAfter: &metav1.Duration{Duration: 30 * time.Second},
				ScoringStrategy:     ptr.To(BinPack),
				Weights:             &ScoreWeights{Slots: ptr.To[int64](2), Freshness: ptr.To[int64](0), Vendor: ptr.To[int64](1)},
				VendorPreference:    []vmafxv1.GPUVendor{vmafxv1.VendorIntel},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			SetDefaults_VmafxPlacementArgs(got)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultsDoNotAlias(t *testing.T) {
	var a VmafxPlacementArgs
	SetDefaults_VmafxPlacementArgs(&a)
	a.VendorPreference[0] = vmafxv1.VendorIntel
	if DefaultVendorPreference[0] != vmafxv1.VendorNVIDIA {
		t.Errorf("changing defaulted args changed the default vendor preference")
	}
}

func TestConversionRoundTrip(t *testing.T) {
	in := config.VmafxPlacementArgs{
		HeartbeatStaleAfter: metav1.Duration{Duration: 45 * time.Second},
		ScoringStrategy:     config.BinPack,
		Weights:             config.ScoreWeights{Slots: 3, Freshness: 0, Vendor: 7},
		VendorPreference:    []vmafxv1.GPUVendor{vmafxv1.VendorAMD},
	}
	var versioned VmafxPlacementArgs
	Convert_config_VmafxPlacementArgs_To_v1_VmafxPlacementArgs(&in, &versioned)
	var out config.VmafxPlacementArgs
	Convert_v1_VmafxPlacementArgs_To_config_VmafxPlacementArgs(&versioned, &out)
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
