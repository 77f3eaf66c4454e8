package pictures

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/vmafx/vmafx/vmaf"
)

// BenchmarkPair1080p draws and PNG-encodes one 1080p worst frame, as --pictures does for
// each (docs/benchmarks.md).
func BenchmarkPair1080p(b *testing.B) {
	ref := &vmaf.Frame{Width: 1920, Height: 1080, BitDepth: 8, Y: make([]uint16, 1920*1080)}
	dist := &vmaf.Frame{Width: 1920, Height: 1080, BitDepth: 8, Y: make([]uint16, 1920*1080)}
	for i := range ref.Y {
		ref.Y[i] = uint16(i * 7 % 256)
		dist.Y[i] = uint16(i * 11 % 256)
	}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := png.Encode(&buf, Pair(ref, dist)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "png-bytes")
}
