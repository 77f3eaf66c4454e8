package workermemory

import (
	"testing"

	"github.com/vmafx/vmafx/vmaf"
)

// TestRendition: one more distorted video needs its kernel at one thread and its decoder
// within the share of the limit the worker plans to use, in whole MiB; it grows with the
// pixels, the depth, the extra features, the model and the decoded size.
func TestRendition(t *testing.T) {
	v1, err := vmaf.LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	hd := Rendition(Default1080p, Default1080p, nil, nil)
	need := vmaf.MemoryEstimate(Default1080p, 1, nil) + DecoderBytes(Default1080p)
	if hd%(1<<20) != 0 || hd*BudgetPercent/100 < need || (hd-1<<20)*BudgetPercent/100 >= need {
		t.Errorf("1080p: %d bytes for %d needed at %d%%: want the least whole MiB whose share holds it", hd, need, BudgetPercent)
	}
	t.Logf("1080p: %d MiB", hd>>20)
	uhd := vmaf.VideoInfo{Width: 3840, Height: 2160, Format: vmaf.YUV420P}
	uhd10 := vmaf.VideoInfo{Width: 3840, Height: 2160, Format: vmaf.YUV420P10LE}
	small := vmaf.VideoInfo{Width: 640, Height: 360, Format: vmaf.YUV420P}
	for _, tc := range []struct {
		name          string
		less, greater int64
	}{
		{"2160p over 1080p", hd, Rendition(uhd, uhd, nil, nil)},
		{"10-bit over 8-bit", Rendition(uhd, uhd, nil, nil), Rendition(uhd10, uhd10, nil, nil)},
		{"features", Rendition(uhd, uhd, nil, nil), Rendition(uhd, uhd, []vmaf.Feature{vmaf.FeaturePSNR, vmaf.FeatureSSIM}, nil)},
		{"360p under 1080p", Rendition(small, small, nil, nil), hd},
		{"a larger decode", Rendition(small, small, nil, nil), Rendition(small, Default1080p, nil, nil)},
		{"VMAF v1 over the default model", hd, Rendition(Default1080p, Default1080p, nil, v1)},
	} {
		if tc.less >= tc.greater {
			t.Errorf("%s: %d MiB, not more than %d MiB", tc.name, tc.greater>>20, tc.less>>20)
		}
	}
	t.Logf("2160p: %d MiB, 10-bit: %d MiB, 360p: %d MiB", Rendition(uhd, uhd, nil, nil)>>20, Rendition(uhd10, uhd10, nil, nil)>>20, Rendition(small, small, nil, nil)>>20)
}
