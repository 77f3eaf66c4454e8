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

// histogramRef counts every other sample of every other row, one by one.
func histogramRef(f *vmaf.Frame) (h [HistogramBins]int) {
	shift := max(f.BitDepth, 6) - 6
	for y := 0; y < f.Height; y += 2 {
		for x := 0; x < f.Width; x += 2 {
			h[(f.Y[y*f.Width+x]>>shift)&(HistogramBins-1)]++
		}
	}
	return h
}

// The detector's histogram, counted two bins at a time, is the one the definition
// counts, at widths that end on either sample of a pair.
func TestCutsHistogram(t *testing.T) {
	for _, w := range []int{1, 2, 3, 4, 5, 6, 7, 33, 176} {
		f := vmaf.Frame{Width: w, Height: 5, BitDepth: 10, Y: make([]uint16, w*5)}
		for i := range f.Y {
			f.Y[i] = uint16(i * 37 % 1024)
		}
		c := NewCuts(&fixedSource{f: f})
		var got vmaf.Frame
		if err := c.ReadFrame(&got); err != nil {
			t.Fatal(err)
		}
		if c.cur != histogramRef(&f) {
			t.Fatalf("width %d: histogram %v, want %v", w, c.cur, histogramRef(&f))
		}
	}
}

// fixedSource yields one frame forever.
type fixedSource struct{ f vmaf.Frame }

func (s *fixedSource) Info() vmaf.VideoInfo {
	return vmaf.VideoInfo{Width: s.f.Width, Height: s.f.Height, Format: vmaf.YUV420P}
}

func (s *fixedSource) ReadFrame(f *vmaf.Frame) error {
	*f = s.f
	return nil
}
