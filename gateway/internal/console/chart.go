package console

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Chart is an inline SVG plot with its description for screen readers.
type Chart struct {
	ID    string
	Title string
	SVG   template.HTML
	// Points is the number of points the main curve draws.
	Points int
}

// Series is one curve of a chart.
type Series struct {
	Label  string
	Points []Point
	// Hull draws the series thick and dashed over the others: a ladder's convex hull.
	Hull bool
	// Dots marks every point (a ladder's rungs); a per-frame curve has too many.
	Dots bool
}

// Point is a chart point; Label names it in the point's tooltip.
type Point struct {
	X, Y  float64
	Label string
}

// Mark is a circled point: a worst frame.
type Mark struct {
	X, Y  float64
	Label string
}

// Axes say what the axes show; YMin and YMax fix the y range (VMAF: 0 to 100) when set.
type Axes struct {
	X, Y       string
	YMin, YMax *float64
	XLog       bool
}

// Plot geometry, in SVG user units; the SVG scales to its container.
const (
	plotW, plotH                         = 800, 320
	padLeft, padRight, padTop, padBottom = 64, 16, 16, 48
	innerW, innerH                       = plotW - padLeft - padRight, plotH - padTop - padBottom
	maxCurvePoints                       = 4000
)

// palette is dark enough on white for WCAG's 3:1 for graphics; dashes tell the curves
// apart without colour.
var (
	palette = []string{"#0b5cad", "#b34700", "#1a7f37", "#8250df", "#cf222e", "#57606a"}
	dashes  = []string{"", "6 3", "2 3", "8 3 2 3", "4 4", "1 2"}
)

func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// lineChart draws series on common axes, the first series being the main curve (its id
// is id+"-curve"), with marks circled over it.
func lineChart(id, title string, axes Axes, series []Series, marks []Mark) Chart {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	tx := func(x float64) float64 {
		if axes.XLog && x > 0 {
			return math.Log10(x)
		}
		return x
	}
	for _, s := range series {
		for _, p := range s.Points {
			xmin, xmax = math.Min(xmin, tx(p.X)), math.Max(xmax, tx(p.X))
			ymin, ymax = math.Min(ymin, p.Y), math.Max(ymax, p.Y)
		}
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax, ymin, ymax = 0, 1, 0, 1
	}
	if axes.YMin != nil {
		ymin = *axes.YMin
	}
	if axes.YMax != nil {
		ymax = *axes.YMax
	}
	if xmax == xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	if ymax == ymin {
		ymin, ymax = ymin-1, ymax+1
	}
	px := func(x float64) float64 { return padLeft + (tx(x)-xmin)/(xmax-xmin)*innerW }
	py := func(y float64) float64 { return padTop + (ymax-y)/(ymax-ymin)*innerH }

	var b strings.Builder
	e := html.EscapeString
	fmt.Fprintf(&b, `<svg id="%s" class="chart" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-title" xmlns="http://www.w3.org/2000/svg">`, e(id), plotW, plotH, e(id))
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`, e(id), e(title))
	// Axes and grid.
	fmt.Fprintf(&b, `<g class="axes" stroke="#6e7781" stroke-width="1" fill="none"><rect x="%d" y="%d" width="%d" height="%d"/></g>`, padLeft, padTop, innerW, innerH)
	b.WriteString(`<g class="ticks" font-size="12" fill="#24292f">`)
	for _, t := range ticks(ymin, ymax, 5) {
		y := py(t)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%s" y2="%s" stroke="#d0d7de"/><text x="%d" y="%s" text-anchor="end">%s</text>`,
			padLeft, padLeft+innerW, f(y), f(y), padLeft-6, f(y+4), e(tickLabel(t)))
	}
	xticks := ticks(xmin, xmax, 8)
	if axes.XLog {
		xticks = logTicks(xmin, xmax)
	}
	for _, t := range xticks {
		x := padLeft + (t-xmin)/(xmax-xmin)*innerW
		label := tickLabel(t)
		if axes.XLog {
			label = tickLabel(math.Pow(10, t))
		}
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%d" y2="%d" stroke="#d0d7de"/><text x="%s" y="%d" text-anchor="middle">%s</text>`,
			f(x), f(x), padTop, padTop+innerH, f(x), padTop+innerH+16, e(label))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`, padLeft+innerW/2, plotH-8, e(axes.X))
	fmt.Fprintf(&b, `<text transform="rotate(-90)" x="%d" y="14" text-anchor="middle">%s</text>`, -(padTop + innerH/2), e(axes.Y))
	b.WriteString(`</g>`)
	main := 0
	for i, s := range series {
		color, dash, width := palette[i%len(palette)], dashes[i%len(dashes)], "1.5"
		if s.Hull {
			color, dash, width = "#24292f", "8 4", "3"
		}
		attrs := ""
		if i == 0 {
			attrs = fmt.Sprintf(` id="%s-curve" data-points="%d"`, e(id), len(s.Points))
			main = len(s.Points)
		}
		var pts strings.Builder
		for k, p := range s.Points {
			if k > 0 {
				pts.WriteByte(' ')
			}
			pts.WriteString(f(px(p.X)) + "," + f(py(p.Y)))
		}
		fmt.Fprintf(&b, `<polyline class="series"%s fill="none" stroke="%s" stroke-width="%s"`, attrs, color, width)
		if dash != "" {
			fmt.Fprintf(&b, ` stroke-dasharray="%s"`, dash)
		}
		fmt.Fprintf(&b, ` points="%s"><title>%s</title></polyline>`, pts.String(), e(s.Label))
		if s.Dots {
			for _, p := range s.Points {
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3.5" fill="%s"><title>%s</title></circle>`, f(px(p.X)), f(py(p.Y)), color, e(p.Label))
			}
		}
	}
	for _, m := range marks {
		fmt.Fprintf(&b, `<circle class="worst" cx="%s" cy="%s" r="6" fill="none" stroke="#cf222e" stroke-width="2"><title>%s</title></circle>`,
			f(px(m.X)), f(py(m.Y)), e(m.Label))
	}
	// Legend, bottom right inside the plot (rate-quality curves rise to the top right),
	// when there is more than one curve.
	if len(series) > 1 {
		b.WriteString(`<g class="legend" font-size="12" fill="#24292f">`)
		for i, s := range series {
			color, dash := palette[i%len(palette)], dashes[i%len(dashes)]
			if s.Hull {
				color, dash = "#24292f", "8 4"
			}
			y := padTop + innerH - 8 - 16*(len(series)-1-i)
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/><text x="%d" y="%d">%s</text>`,
				padLeft+innerW-190, padLeft+innerW-160, y-4, y-4, color, dash, padLeft+innerW-154, y, e(s.Label))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	// The SVG is built from escaped text and numbers only.
	return Chart{ID: id, Title: title, SVG: template.HTML(b.String()), Points: main} //nolint:gosec // every string in it is escaped above
}

// logTicks returns the round values (1, 2 and 5 times a power of ten) between the
// decimal logarithms lo and hi, as logarithms; every integer when there are too few.
func logTicks(lo, hi float64) []float64 {
	pick := func(steps []float64) []float64 {
		var out []float64
		for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
			for _, m := range steps {
				if t := e + math.Log10(m); t >= lo-1e-9 && t <= hi+1e-9 {
					out = append(out, t)
				}
			}
		}
		return out
	}
	if out := pick([]float64{1, 2, 5}); len(out) >= 3 {
		return out
	}
	return pick([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
}

// ticks returns about n round values spanning lo to hi.
func ticks(lo, hi float64, n int) []float64 {
	span := hi - lo
	if span <= 0 || n < 1 {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10(span/float64(n))))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= float64(n) {
			step *= m
			break
		}
	}
	var out []float64
	for t := math.Ceil(lo/step) * step; t <= hi+step*1e-9; t += step {
		out = append(out, t)
	}
	return out
}

func tickLabel(v float64) string {
	// A tick from a logarithm is a hair off its round value (10^3.30103 = 1999.99...).
	if math.Abs(v) >= 1e4 || math.Abs(v-math.Round(v)) < 1e-6*math.Max(1, math.Abs(v)) {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// decimate keeps at most limit points of a long curve: each bucket keeps its lowest and
// highest points, so a dip of one frame stays visible.
func decimate(pts []Point, limit int) []Point {
	if len(pts) <= limit || limit < 2 {
		return pts
	}
	buckets := limit / 2
	out := make([]Point, 0, limit)
	for b := 0; b < buckets; b++ {
		lo, hi := b*len(pts)/buckets, (b+1)*len(pts)/buckets
		if lo >= hi {
			continue
		}
		minI, maxI := lo, lo
		for i := lo; i < hi; i++ {
			if pts[i].Y < pts[minI].Y {
				minI = i
			}
			if pts[i].Y > pts[maxI].Y {
				maxI = i
			}
		}
		first, second := min(minI, maxI), max(minI, maxI)
		out = append(out, pts[first])
		if second != first {
			out = append(out, pts[second])
		}
	}
	return out
}
