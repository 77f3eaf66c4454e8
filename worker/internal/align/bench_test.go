package align

import (
	"testing"

	"github.com/vmafx/vmafx/vmaf"
)

// BenchmarkThumbnail1080p is the search's cost per frame beside the decode: one 1080p
// luma plane averaged into its 160x90 thumbnail, from 16-bit samples and from bytes (an
// 8-bit frame read for a GPU backend).
func BenchmarkThumbnail1080p(b *testing.B) {
	info := vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P}
	for _, form := range []string{"samples", "bytes"} {
		b.Run(form, func(b *testing.B) {
			f := vmaf.Frame{Width: 1920, Height: 1080, BitDepth: 8}
			if form == "bytes" {
				f.Y8 = make([]byte, 1920*1080)
				for i := range f.Y8 {
					f.Y8[i] = byte(i * 7 % 256)
				}
			} else {
				f.Y = make([]uint16, 1920*1080)
				for i := range f.Y {
					f.Y[i] = uint16(i * 7 % 256)
				}
			}
			r := NewRecorder(info, DefaultWindow)
			b.SetBytes(1920 * 1080)
			for b.Loop() {
				r.thumbs[0] = r.thumbs[0][:0]
				r.add(0, &f)
			}
		})
	}
}

// BenchmarkSearch is the search itself at the default window: 61 offsets of 60 pairs of
// 160x90 thumbnails.
func BenchmarkSearch(b *testing.B) {
	info := vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P}
	r := NewRecorder(info, DefaultWindow)
	for side := range 2 {
		for i := range Frames(DefaultWindow) {
			t := make([]float32, r.tw*r.th)
			for j := range t {
				t[j] = float32((i*31 + j*side + j) % 255)
			}
			r.thumbs[side] = append(r.thumbs[side], t)
		}
	}
	for b.Loop() {
		r.Search()
	}
}
