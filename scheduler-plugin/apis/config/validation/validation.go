package validation

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/scheduler-plugin/apis/config"
)

// MaxWeight bounds each score weight, as kube-scheduler bounds plugin weights, so that a
// weighted sum of parts (each at most 100) can never overflow.
const MaxWeight = 100

// ValidateVmafxPlacementArgs returns every problem with args, each naming its field under
// path (nil for paths relative to the args themselves).
func ValidateVmafxPlacementArgs(path *field.Path, args *config.VmafxPlacementArgs) field.ErrorList {
	var errs field.ErrorList

	if d := args.HeartbeatStaleAfter.Duration; d <= 0 {
		errs = append(errs, field.Invalid(path.Child("heartbeatStaleAfter"), d.String(), "must be greater than zero"))
	}

	switch args.ScoringStrategy {
	case config.Spread, config.BinPack:
	default:
		errs = append(errs, field.NotSupported(path.Child("scoringStrategy"), args.ScoringStrategy, config.ScoringStrategies))
	}

	weightsPath := path.Child("weights")
	for _, w := range []struct {
		name  string
		value int64
	}{{"slots", args.Weights.Slots}, {"freshness", args.Weights.Freshness}, {"vendor", args.Weights.Vendor}} {
		if w.value < 0 || w.value > MaxWeight {
			errs = append(errs, field.Invalid(weightsPath.Child(w.name), w.value, "must be between 0 and 100"))
		}
	}
	if args.Weights.Slots+args.Weights.Freshness+args.Weights.Vendor == 0 {
		errs = append(errs, field.Invalid(weightsPath, "all zero", "at least one weight must be greater than zero"))
	}

	prefPath := path.Child("vendorPreference")
	seen := make(map[vmafxv1.GPUVendor]bool, len(args.VendorPreference))
	for i, v := range args.VendorPreference {
		switch {
		case !slices.Contains(vmafxv1.GPUVendors, v):
			errs = append(errs, field.NotSupported(prefPath.Index(i), v, vmafxv1.GPUVendors))
		case seen[v]:
			errs = append(errs, field.Duplicate(prefPath.Index(i), v))
		}
		seen[v] = true
	}
	return errs
}
