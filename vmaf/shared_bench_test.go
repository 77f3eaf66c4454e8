package vmaf

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkScoreMany times n renditions of a 640x360 reference (frames in memory, so no
// decode to save) scored two ways on 2 threads: one after the other with Score
// ("separate"), and at once through one read of the reference with ScoreMany ("shared").
// It measures what sharing costs beside the kernel (the ring, a copy of each reference
// frame per rendition, the split of threads), not what it saves: the decode it saves is
// measured with real encodes in hack/bench-renditions.sh.
func BenchmarkScoreMany(b *testing.B) {
	const w, h, frames, threads = 640, 360, 12, 2
	refP, distP := synthPair(w, h, 4)
	info := VideoInfo{Width: w, Height: h, Format: YUV420P}
	src := func(p [][]uint16) FrameSource { return &memSource{info: info, planes: p, n: frames} }
	for _, n := range []int{2, 6} {
		b.Run(fmt.Sprintf("renditions=%d/separate", n), func(b *testing.B) {
			for b.Loop() {
				for range n {
					if _, err := Score(context.Background(), src(refP), src(distP), Options{Threads: threads}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*n*frames)*1e3, "ms/frame-pair")
		})
		b.Run(fmt.Sprintf("renditions=%d/shared", n), func(b *testing.B) {
			for b.Loop() {
				rs := make([]Rendition, n)
				for i := range rs {
					rs[i] = Rendition{Distorted: src(distP)}
				}
				got, err := ScoreMany(context.Background(), src(refP), rs, threads, 0)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range got {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*n*frames)*1e3, "ms/frame-pair")
		})
	}
}
