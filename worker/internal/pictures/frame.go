package pictures

import (
	"image"
	"image/color"

	"github.com/vmafx/vmafx/vmaf"
)

// MaxPanelWidth bounds each of the three panels' width: a larger frame is shrunk by an
// integer factor (averaging each block of samples), so a 4K frame's picture stays a few
// hundred kilobytes.
const MaxPanelWidth = 960

// Gap is the width of the dark stripe between panels.
const Gap = 8

// HeatGain scales the difference before it is coloured: a difference of 1/HeatGain of
// the full range (about 8% of it) or more is white hot, so coding noise of a few code
// values shows.
const HeatGain = 12

// Pair returns the reference, the distorted frame and their difference heat map side by
// side, on one row, all luma. ref and dist must have the same size.
func Pair(ref, dist *vmaf.Frame) *image.RGBA {
	w, h := ref.Width, ref.Height
	f := 1
	for w/f > MaxPanelWidth {
		f++
	}
	pw, ph := max(w/f, 1), max(h/f, 1)
	img := image.NewRGBA(image.Rect(0, 0, 3*pw+2*Gap, ph))
	for i := range img.Pix {
		img.Pix[i] = 0x20
		if i%4 == 3 {
			img.Pix[i] = 0xff
		}
	}
	maxVal := float64(int(1)<<max(ref.BitDepth, 1) - 1)
	for y := range ph {
		for x := range pw {
			r, d, diff := block(ref, dist, x*f, y*f, f)
			img.SetRGBA(x, y, gray(r/maxVal))
			img.SetRGBA(pw+Gap+x, y, gray(d/maxVal))
			img.SetRGBA(2*(pw+Gap)+x, y, heat(diff/maxVal*HeatGain))
		}
	}
	return img
}

// block averages the f x f block at (x0, y0): the reference's and distorted luma and their
// absolute difference (averaged per sample, so a shrunk picture shows where they differ,
// not where they cancel).
func block(ref, dist *vmaf.Frame, x0, y0, f int) (r, d, diff float64) {
	n := 0
	for y := y0; y < min(y0+f, ref.Height); y++ {
		row := y * ref.Width
		for x := x0; x < min(x0+f, ref.Width); x++ {
			a, b := float64(ref.Y[row+x]), float64(dist.Y[row+x])
			r += a
			d += b
			if a > b {
				diff += a - b
			} else {
				diff += b - a
			}
			n++
		}
	}
	return r / float64(n), d / float64(n), diff / float64(n)
}

func gray(v float64) color.RGBA {
	c := clamp8(v)
	return color.RGBA{c, c, c, 0xff}
}

// heat maps 0..1 through black, red, yellow to white (the "hot" colour map): brightness
// grows with the difference in every channel, so brighter always means more different.
func heat(v float64) color.RGBA {
	v = min(max(v, 0), 1) * 3
	return color.RGBA{clamp8(v), clamp8(v - 1), clamp8(v - 2), 0xff}
}

func clamp8(v float64) uint8 {
	return uint8(min(max(v, 0), 1)*255 + 0.5)
}
