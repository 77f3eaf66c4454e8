package ladder

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func rung(name string, enc vmafxv1.LadderEncoder, bitrate int64, score string) vmafxv1.LadderRung {
	return vmafxv1.LadderRung{Name: name, Encoder: enc, Bitrate: bitrate, Score: score, Phase: vmafxv1.RungSucceeded}
}

func TestMarkHull(t *testing.T) {
	x264, x265 := vmafxv1.EncoderX264, vmafxv1.EncoderX265
	tests := []struct {
		name     string
		rungs    []vmafxv1.LadderRung
		encoders []vmafxv1.LadderEncoder
		want     []string
	}{
		{
			name:     "empty",
			encoders: []vmafxv1.LadderEncoder{x264},
		},
		{
			name:     "one rung is its own hull",
			rungs:    []vmafxv1.LadderRung{rung("a", x264, 1000, "50")},
			encoders: []vmafxv1.LadderEncoder{x264},
			want:     []string{"a"},
		},
		{
			// Two resolutions crossing: 360p wins at low rates, 720p at high ones; the point
			// under the chord (360p at 2000) and the 720p point under 360p are left out.
			name: "two resolutions crossing",
			rungs: []vmafxv1.LadderRung{
				rung("360p-crf40", x264, 300, "40"), rung("360p-crf30", x264, 800, "62"), rung("360p-crf20", x264, 2000, "70"),
				rung("720p-crf40", x264, 700, "45"), rung("720p-crf30", x264, 1800, "80"), rung("720p-crf20", x264, 4000, "92"),
			},
			encoders: []vmafxv1.LadderEncoder{x264},
			want:     []string{"360p-crf40", "360p-crf30", "720p-crf30", "720p-crf20"},
		},
		{
			name: "collinear middle point dropped",
			rungs: []vmafxv1.LadderRung{
				rung("a", x264, 100, "10"), rung("b", x264, 200, "20"), rung("c", x264, 300, "30"),
			},
			encoders: []vmafxv1.LadderEncoder{x264},
			want:     []string{"a", "c"},
		},
		{
			name: "stops at the best score",
			rungs: []vmafxv1.LadderRung{
				rung("a", x264, 100, "50"), rung("b", x264, 200, "90"), rung("c", x264, 400, "89"),
			},
			encoders: []vmafxv1.LadderEncoder{x264},
			want:     []string{"a", "b"},
		},
		{
			name: "equal bitrate keeps the better score",
			rungs: []vmafxv1.LadderRung{
				rung("worse", x264, 100, "50"), rung("better", x264, 100, "60"), rung("top", x264, 300, "90"),
			},
			encoders: []vmafxv1.LadderEncoder{x264},
			want:     []string{"better", "top"},
		},
		{
			name: "per encoder; failed and unscored rungs left out",
			rungs: []vmafxv1.LadderRung{
				rung("x264-a", x264, 100, "50"), rung("x265-a", x265, 80, "50"),
				{Name: "x264-failed", Encoder: x264, Phase: vmafxv1.RungFailed, Bitrate: 50, Score: "99"},
				rung("x265-b", x265, 150, "70"),
			},
			encoders: []vmafxv1.LadderEncoder{x264, x265},
			want:     []string{"x264-a", "x265-a", "x265-b"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := markHull(tc.rungs, tc.encoders)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hull (-want +got):\n%s", diff)
			}
			on := map[string]bool{}
			for _, n := range got {
				on[n] = true
			}
			for _, r := range tc.rungs {
				if r.Hull != on[r.Name] {
					t.Errorf("rung %s: Hull %v, want %v", r.Name, r.Hull, on[r.Name])
				}
			}
		})
	}
}
