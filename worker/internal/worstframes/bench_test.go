package worstframes

import (
	"fmt"
	"testing"

	"github.com/vmafx/vmafx/internal/testutil"
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

// BenchmarkCuts is the scene detector's cost per 1080p frame: every read here reuses the
// one plane, so each waits for the histogram before it (BenchmarkReadWithCuts is the
// reader's side of a run, docs/benchmarks.md).
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
	c.Distances()
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
		c.Distances() // the histogram counted and folded
		if c.prev != histogramRef(&f) {
			t.Fatalf("width %d: histogram %v, want %v", w, c.prev, histogramRef(&f))
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

// BenchmarkReadWithCuts is the reference reader's side of a run (vmaf's readPair): raw
// 1080p 8-bit 4:2:0 from memory into a ring of 8 frames (Score's slots), alone and
// through the scene detector, with the luma as 16-bit samples and as bytes (a GPU
// backend's run, vmaf.Frame.Packed).
func BenchmarkReadWithCuts(b *testing.B) {
	const w, h, frames = 1920, 1080, 64
	size := vmaf.YUV420P.FrameBytes(w, h)
	data := make([]byte, 2*size) // two frames, a cut between them
	for i := range data {
		data[i] = byte(i*7/(1+i/size*3)) & 0xfc
	}
	for _, packed := range []bool{false, true} {
		for _, cuts := range []bool{false, true} {
			name := fmt.Sprintf("packed=%v/cuts=%v", packed, cuts)
			b.Run(name, func(b *testing.B) {
				var ring [8]vmaf.Frame
				for i := range ring {
					ring[i].Packed = packed
				}
				for b.Loop() {
					raw, err := vmaf.OpenRaw(&testutil.LoopReader{Buf: data, N: frames * size}, w, h, vmaf.YUV420P)
					if err != nil {
						b.Fatal(err)
					}
					var src vmaf.FrameSource = raw
					c := NewCuts(raw)
					if cuts {
						src = c
					}
					for i := range frames {
						if err := src.ReadFrame(&ring[i%len(ring)]); err != nil {
							b.Fatal(err)
						}
					}
					if cuts && len(c.Distances()) != frames {
						b.Fatalf("%d distances, want %d", len(c.Distances()), frames)
					}
				}
				b.ReportMetric(float64(b.N*frames)/b.Elapsed().Seconds(), "frames/s")
			})
		}
	}
}
