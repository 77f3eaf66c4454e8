package ladderreport

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// WriteJSON writes the table as an indented JSON document {"ladder": name, "rungs": [...]}.
func WriteJSON(w io.Writer, name string, rungs []vmafxv1.LadderRung) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Ladder string               `json:"ladder"`
		Rungs  []vmafxv1.LadderRung `json:"rungs"`
	}{name, rungs})
}

// WriteCSV writes the table, one line per rung, with a header.
func WriteCSV(w io.Writer, rungs []vmafxv1.LadderRung) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"rung", "encoder", "rate_control", "value", "resolution", "bitrate_bps", "bytes", "vmaf", "hull", "phase",
		"vmaf_p5", "worst_frame", "worst_frame_vmaf"})
	for _, r := range rungs {
		worst, worstScore := "", ""
		if f := r.WorstFrame; f != nil {
			worst, worstScore = strconv.Itoa(int(f.Index)), f.VMAF
		}
		_ = cw.Write([]string{r.Name, string(r.Encoder), string(r.RateControl), strconv.Itoa(int(r.Value)), r.Resolution,
			strconv.FormatInt(r.Bitrate, 10), strconv.FormatInt(r.Bytes, 10), r.Score, strconv.FormatBool(r.Hull), string(r.Phase),
			r.P5, worst, worstScore})
	}
	cw.Flush()
	return cw.Error()
}

// Plot geometry, in SVG user units.
const (
	width, height          = 960, 600
	left, right, top, base = 80, 220, 50, 70 // margins: the legend sits in the right one
)

// palette colours the curves in order; it repeats past its end.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

type pt struct {
	kbps, score float64
	label       string // the quality setting, e.g. crf28
}

type curve struct {
	label string
	pts   []pt
}

// WriteSVG plots the scored rungs: VMAF against bitrate in kbit/s, one curve per encoder
// and resolution (in table order), and the hull of each encoder as a thick dashed line.
func WriteSVG(w io.Writer, name string, rungs []vmafxv1.LadderRung) error {
	var curves []*curve
	byLabel := map[string]*curve{}
	hulls := map[vmafxv1.LadderEncoder][]pt{}
	var encoders []vmafxv1.LadderEncoder
	maxKbps, minScore := 0.0, 100.0
	for _, r := range rungs {
		s, err := strconv.ParseFloat(r.Score, 64)
		if r.Phase != vmafxv1.RungSucceeded || err != nil || r.Bitrate <= 0 {
			continue
		}
		p := pt{float64(r.Bitrate) / 1000, s, string(r.RateControl) + strconv.Itoa(int(r.Value))}
		maxKbps, minScore = math.Max(maxKbps, p.kbps), math.Min(minScore, s)
		label := r.Encoder.Short() + " " + size(r)
		c := byLabel[label]
		if c == nil {
			c = &curve{label: label}
			byLabel[label] = c
			curves = append(curves, c)
		}
		c.pts = append(c.pts, p)
		if r.Hull {
			if _, ok := hulls[r.Encoder]; !ok {
				encoders = append(encoders, r.Encoder)
			}
			hulls[r.Encoder] = append(hulls[r.Encoder], p)
		}
	}
	xMax := niceCeil(maxKbps)
	yMin := math.Max(0, math.Floor(minScore/10)*10-10)
	if len(curves) == 0 {
		xMax, yMin = 1, 0
	}
	x := func(k float64) float64 { return left + k/xMax*(width-left-right) }
	y := func(s float64) float64 { return top + (100-s)/(100-yMin)*(height-top-base) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="28" font-size="16">%s: VMAF against bitrate</text>`+"\n", left, html.EscapeString(name))
	// Axes, grid and ticks.
	for i := 0; i <= 5; i++ {
		k := xMax * float64(i) / 5
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e0e0e0"/>`+"\n", x(k), top, x(k), height-base)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(k), height-base+18, trim(k))
	}
	for s := yMin; s <= 100; s += 10 {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e0e0e0"/>`+"\n", left, y(s), width-right, y(s))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, y(s)+4, trim(s))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>`+"\n", left, top, width-left-right, height-top-base)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">bitrate (kbit/s)</text>`+"\n", (left+width-right)/2, height-base+45)
	fmt.Fprintf(&b, `<text x="22" y="%d" text-anchor="middle" transform="rotate(-90 22 %d)">VMAF</text>`+"\n", (top+height-base)/2, (top+height-base)/2)
	// Curves, then hulls over them.
	legend := 0
	entry := func(label, colour, dash string, widthPx int) {
		ly := top + 10 + legend*20
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%d"%s/>`+"\n", width-right+15, ly, width-right+45, ly, colour, widthPx, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", width-right+52, ly+4, html.EscapeString(label))
		legend++
	}
	for i, c := range curves {
		colour := palette[i%len(palette)]
		sortPts(c.pts)
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colour, points(c.pts, x, y))
		for _, p := range c.pts {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", x(p.kbps), y(p.score), colour)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="%s">%s</text>`+"\n", x(p.kbps)+7, y(p.score)+12, colour, html.EscapeString(p.label))
		}
		entry(c.label, colour, "", 2)
	}
	for _, enc := range encoders {
		h := hulls[enc]
		sortPts(h)
		fmt.Fprintf(&b, `<polyline fill="none" stroke="black" stroke-width="3" stroke-dasharray="8 5" points="%s"/>`+"\n", points(h, x, y))
		for _, p := range h {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="6" fill="none" stroke="black" stroke-width="2"/>`+"\n", x(p.kbps), y(p.score))
		}
		entry(enc.Short()+" hull (chosen)", "black", ` stroke-dasharray="8 5"`, 3)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func size(r vmafxv1.LadderRung) string {
	if r.Width > 0 {
		return fmt.Sprintf("%dx%d", r.Width, r.Height)
	}
	return fmt.Sprintf("%dp", r.Height)
}

func sortPts(p []pt) {
	sort.SliceStable(p, func(i, j int) bool { return p[i].kbps < p[j].kbps })
}

func points(p []pt, x, y func(float64) float64) string {
	parts := make([]string, len(p))
	for i, q := range p {
		parts[i] = fmt.Sprintf("%.1f,%.1f", x(q.kbps), y(q.score))
	}
	return strings.Join(parts, " ")
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, for round tick labels.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trim(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }
