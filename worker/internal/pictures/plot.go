package pictures

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
)

// Plot sizes, in pixels, shared by the SVG and the PNG.
const (
	PlotWidth  = 1200
	PlotHeight = 400
	margin     = 48
)

// Point is one scored frame: its index and score.
type Point struct {
	Index int
	VMAF  float64
}

// plot maps points to the plot area: x by index, y by score from 0 (bottom) to 100.
type plot struct{ lo, hi int }

func newPlot(points []Point) plot {
	p := plot{}
	if len(points) > 0 {
		p.lo, p.hi = points[0].Index, points[len(points)-1].Index
	}
	return p
}

func (p plot) x(index int) float64 {
	span := max(p.hi-p.lo, 1)
	return margin + float64(index-p.lo)/float64(span)*(PlotWidth-2*margin)
}

func (p plot) y(score float64) float64 {
	return PlotHeight - margin - min(max(score, 0), 100)/100*(PlotHeight-2*margin)
}

// SVG returns the plot of points (in frame order) with the worst frames marked in red and
// labelled, and a dashed line at each scene cut (the index of a scene's first frame).
func SVG(points []Point, worst []Point, cuts []int) []byte {
	p := newPlot(points)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", PlotWidth, PlotHeight, PlotWidth, PlotHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", PlotWidth, PlotHeight)
	for s := 0; s <= 100; s += 20 {
		y := p.y(float64(s))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n",
			margin, y, PlotWidth-margin, y, margin-6, y+4, s)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">frame</text><text x="%d" y="%d" text-anchor="start">%d</text><text x="%d" y="%d" text-anchor="end">%d</text>`+"\n",
		PlotWidth/2, PlotHeight-12, margin, PlotHeight-margin+16, p.lo, PlotWidth-margin, PlotHeight-margin+16, p.hi)
	fmt.Fprintf(&b, `<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">VMAF</text>`+"\n", PlotHeight/2, PlotHeight/2)
	for _, c := range cuts {
		x := p.x(c)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999" stroke-dasharray="4 4"/><text x="%.1f" y="%d" fill="#777" text-anchor="middle">scene %d</text>`+"\n",
			x, margin, x, PlotHeight-margin, x, margin-6, c)
	}
	b.WriteString(`<polyline fill="none" stroke="#1f5fbf" stroke-width="1.5" points="`)
	for i, pt := range points {
		if math.IsNaN(pt.VMAF) {
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", p.x(pt.Index), p.y(pt.VMAF))
	}
	b.WriteString("\"/>\n")
	for _, w := range worst {
		x, y := p.x(w.Index), p.y(w.VMAF)
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="#d62728"/><text x="%.1f" y="%.1f" fill="#d62728" text-anchor="middle">%d: %.2f</text>`+"\n",
			x, y, x, y+18, w.Index, w.VMAF)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// Image returns the plot as SVG draws it, without the text: grid lines every 20 points,
// scene cuts dashed, the scores in blue, the worst frames as red dots.
func Image(points []Point, worst []Point, cuts []int) *image.RGBA {
	p := newPlot(points)
	img := image.NewRGBA(image.Rect(0, 0, PlotWidth, PlotHeight))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	grid := color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	for s := 0; s <= 100; s += 20 {
		y := int(math.Round(p.y(float64(s))))
		for x := margin; x <= PlotWidth-margin; x++ {
			img.SetRGBA(x, y, grid)
		}
	}
	dash := color.RGBA{0x99, 0x99, 0x99, 0xff}
	for _, c := range cuts {
		x := int(math.Round(p.x(c)))
		for y := margin; y <= PlotHeight-margin; y++ {
			if (y-margin)%8 < 4 {
				img.SetRGBA(x, y, dash)
			}
		}
	}
	blue := color.RGBA{0x1f, 0x5f, 0xbf, 0xff}
	for i := 1; i < len(points); i++ {
		a, b := points[i-1], points[i]
		if math.IsNaN(a.VMAF) || math.IsNaN(b.VMAF) {
			continue
		}
		line(img, p.x(a.Index), p.y(a.VMAF), p.x(b.Index), p.y(b.VMAF), blue)
	}
	if len(points) == 1 && !math.IsNaN(points[0].VMAF) {
		dot(img, p.x(points[0].Index), p.y(points[0].VMAF), 1, blue)
	}
	red := color.RGBA{0xd6, 0x27, 0x28, 0xff}
	for _, w := range worst {
		dot(img, p.x(w.Index), p.y(w.VMAF), 4, red)
	}
	return img
}

// line draws from (x0, y0) to (x1, y1), two pixels thick, one step per pixel of its
// longer side.
func line(img *image.RGBA, x0, y0, x1, y1 float64, c color.RGBA) {
	steps := int(math.Max(math.Abs(x1-x0), math.Abs(y1-y0))) + 1
	for i := 0; i <= steps; i++ {
		t := float64(i) / float64(steps)
		x, y := int(math.Round(x0+t*(x1-x0))), int(math.Round(y0+t*(y1-y0)))
		img.SetRGBA(x, y, c)
		img.SetRGBA(x, y+1, c)
	}
}

func dot(img *image.RGBA, cx, cy float64, r int, c color.RGBA) {
	x0, y0 := int(math.Round(cx)), int(math.Round(cy))
	for y := -r; y <= r; y++ {
		for x := -r; x <= r; x++ {
			if x*x+y*y <= r*r {
				img.SetRGBA(x0+x, y0+y, c)
			}
		}
	}
}
