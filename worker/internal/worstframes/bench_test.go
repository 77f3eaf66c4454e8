package worstframes

import (
	"testing"

	"github.com/vmafx/vmafx/vmaf"
)

// frameSource yields the same 1080p 8-bit frame forever.
type frameSource struct{ y []uint16 }

func (s *frameSource) Info() vmaf.VideoInfo {
	return vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P}
}

func (s *frameSource) ReadFrame(f *vmaf.Frame) error {
	f.Width, f.Height, f.BitDepth, f.Y = 1920, 1080, 8, s.y
	return nil
}

// BenchmarkCuts is the scene detector's cost per 1080p frame, which the scoring pays on
// the reader's goroutine (docs/benchmarks.md).
func BenchmarkCuts(b *testing.B) {
	y := make([]uint16, 1920*1080)
	for i := range y {
		y[i] = uint16(i * 7 % 256)
	}
	c := NewCuts(&frameSource{y: y})
	f := &vmaf.Frame{}
	b.SetBytes(int64(len(y)))
	for b.Loop() {
		if err := c.ReadFrame(f); err != nil {
			b.Fatal(err)
		}
	}
}
