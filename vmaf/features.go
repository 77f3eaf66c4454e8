package vmaf

import (
	"fmt"
	"slices"
	"strings"
)

// Feature is an extra metric that Score can compute beside VMAF, in the same
// pass over the frames (Options.Features). Each reproduces the libvmaf 3.2.0
// feature extractor of the same name with its default options.
type Feature int

// The extra features, in the order their metrics appear in the output
// (libvmaf's order).
const (
	// FeaturePSNR is libvmaf's "psnr" extractor: psnr_y, psnr_cb and
	// psnr_cr in dB (psnr_y alone for gray input).
	FeaturePSNR Feature = iota + 1
	// FeatureSSIM is libvmaf's "float_ssim": SSIM of the luma plane, 0..1.
	FeatureSSIM
	// FeatureMSSSIM is libvmaf's "float_ms_ssim": 5-scale MS-SSIM of the
	// luma plane, 0..1.
	FeatureMSSSIM
	// FeatureCAMBI is libvmaf's "cambi": banding visibility of the
	// distorted luma plane, 0 (none) to 1000 (libvmaf's clip), no
	// reference needed.
	FeatureCAMBI
)

var featureNames = [...]string{FeaturePSNR: "psnr", FeatureSSIM: "ssim", FeatureMSSSIM: "ms_ssim", FeatureCAMBI: "cambi"}

// AllFeatures lists every extra feature, in output order.
var AllFeatures = []Feature{FeaturePSNR, FeatureSSIM, FeatureMSSSIM, FeatureCAMBI}

// String returns the name ParseFeature accepts: "psnr", "ssim", "ms_ssim"
// or "cambi".
func (f Feature) String() string {
	if f <= 0 || int(f) >= len(featureNames) {
		return fmt.Sprintf("Feature(%d)", int(f))
	}
	return featureNames[f]
}

// MarshalText writes the feature's name, so that Features read well in
// JSON and YAML.
func (f Feature) MarshalText() ([]byte, error) {
	if f <= 0 || int(f) >= len(featureNames) {
		return nil, fmt.Errorf("%w: %v", ErrUnknownFeature, f)
	}
	return []byte(featureNames[f]), nil
}

// UnmarshalText parses a name as ParseFeature does.
func (f *Feature) UnmarshalText(text []byte) error {
	v, err := ParseFeature(string(text))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// ParseFeature parses a feature name: "psnr", "ssim", "ms_ssim" (or
// "ms-ssim", "msssim") or "cambi", case-insensitive. libvmaf's extractor
// names "float_ssim" and "float_ms_ssim" are accepted too. Any other name is
// an error wrapping ErrUnknownFeature.
func ParseFeature(name string) (Feature, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "psnr":
		return FeaturePSNR, nil
	case "ssim", "float_ssim":
		return FeatureSSIM, nil
	case "ms_ssim", "ms-ssim", "msssim", "float_ms_ssim":
		return FeatureMSSSIM, nil
	case "cambi":
		return FeatureCAMBI, nil
	}
	return 0, fmt.Errorf("%w: %q (known: psnr, ssim, ms_ssim, cambi)", ErrUnknownFeature, name)
}

// ParseFeatures parses a comma-separated list of feature names (as
// ParseFeature does), ignoring empty entries and repeats; an empty list is
// no extra feature.
func ParseFeatures(list string) ([]Feature, error) {
	var out []Feature
	for _, name := range strings.Split(list, ",") {
		if strings.TrimSpace(name) == "" {
			continue
		}
		f, err := ParseFeature(name)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return normalizeFeatures(out)
}

// normalizeFeatures sorts fs into output order and drops repeats; an
// unknown value is ErrUnknownFeature.
func normalizeFeatures(fs []Feature) ([]Feature, error) {
	var out []Feature
	for _, f := range fs {
		if f <= 0 || int(f) >= len(featureNames) {
			return nil, fmt.Errorf("%w: %v", ErrUnknownFeature, f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out, nil
}

// libvmaf's metric names of the extra features.
const (
	metricPSNRY  = "psnr_y"
	metricPSNRCb = "psnr_cb"
	metricPSNRCr = "psnr_cr"
	metricSSIM   = "float_ssim"
	metricMSSSIM = "float_ms_ssim"
	metricCAMBI  = "cambi"
)
