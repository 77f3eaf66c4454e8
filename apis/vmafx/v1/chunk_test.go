package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlanChunks(t *testing.T) {
	cases := map[string]struct {
		frames, parallelism int
		want                []ChunkRange
	}{
		"one":                     {frames: 10, parallelism: 1, want: []ChunkRange{{0, 10}}},
		"even":                    {frames: 10, parallelism: 2, want: []ChunkRange{{0, 5}, {5, 5}}},
		"odd frames":              {frames: 11, parallelism: 3, want: []ChunkRange{{0, 4}, {4, 4}, {8, 3}}},
		"more chunks than frames": {frames: 3, parallelism: 8, want: []ChunkRange{{0, 1}, {1, 1}, {2, 1}}},
		"no frames":               {frames: 0, parallelism: 4, want: nil},
		"parallelism 0 means one": {frames: 4, parallelism: 0, want: []ChunkRange{{0, 4}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := PlanChunks(tc.frames, tc.parallelism)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PlanChunks(%d, %d) (-want,+got):\n%s", tc.frames, tc.parallelism, diff)
			}
			sum := 0
			for _, c := range got {
				sum += c.Count
			}
			if sum != max(tc.frames, 0) {
				t.Errorf("chunks cover %d frames, want %d", sum, tc.frames)
			}
		})
	}
}

func TestChunkPartURI(t *testing.T) {
	if got, want := ChunkPartURI("s3://b/out.json", 7), "s3://b/out.json.chunk-007"; got != want {
		t.Errorf("ChunkPartURI = %q, want %q", got, want)
	}
}
