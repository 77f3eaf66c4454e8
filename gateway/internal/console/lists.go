package console

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// objectRow is one comparison or ladder of a list.
type objectRow struct {
	Name, Phase, Progress, Best, Age string
}

type objectsView struct {
	Kind, Namespace, Path string
	Rows                  []objectRow
}

func (v objectsView) PageTitle() string { return v.Kind + " in " + v.Namespace }

func newestFirst(a, b metav1.ObjectMeta) int {
	if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

func (c *Console) comparisons(w http.ResponseWriter, r *http.Request, s session) {
	var list vmafxv1.VmafxComparisonList
	if err := c.store.ReadList(r.Context(), s.User, s.Namespace, &list, listLimit); err != nil {
		c.fail(w, r, s, err)
		return
	}
	slices.SortStableFunc(list.Items, func(a, b vmafxv1.VmafxComparison) int { return newestFirst(a.ObjectMeta, b.ObjectMeta) })
	v := objectsView{Kind: "Comparisons", Namespace: s.Namespace, Path: "comparisons"}
	now := c.now()
	for _, o := range list.Items {
		v.Rows = append(v.Rows, objectRow{Name: o.Name, Phase: phaseOf(o.Status.Phase), Best: o.Status.Best,
			Progress: fmt.Sprintf("%d of %d scored, %d failed", o.Status.Succeeded, o.Status.Total, o.Status.Failed), Age: age(now, o.CreationTimestamp)})
	}
	c.render(w, r, http.StatusOK, "comparisons", s, v)
}

func (c *Console) ladders(w http.ResponseWriter, r *http.Request, s session) {
	var list vmafxv1.VmafxLadderList
	if err := c.store.ReadList(r.Context(), s.User, s.Namespace, &list, listLimit); err != nil {
		c.fail(w, r, s, err)
		return
	}
	slices.SortStableFunc(list.Items, func(a, b vmafxv1.VmafxLadder) int { return newestFirst(a.ObjectMeta, b.ObjectMeta) })
	v := objectsView{Kind: "Ladders", Namespace: s.Namespace, Path: "ladders"}
	now := c.now()
	for _, o := range list.Items {
		v.Rows = append(v.Rows, objectRow{Name: o.Name, Phase: phaseOf(o.Status.Phase), Best: strings.Join(o.Status.Hull, ", "),
			Progress: fmt.Sprintf("%d of %d scored, %d failed", o.Status.Scored, o.Status.Total, o.Status.Failed), Age: age(now, o.CreationTimestamp)})
	}
	c.render(w, r, http.StatusOK, "ladders", s, v)
}

type comparisonView struct {
	Namespace string
	C         *vmafxv1.VmafxComparison
	Phase     string
	Chart     *Chart
	Worst     worstView
}

func (v comparisonView) PageTitle() string { return "Comparison " + v.C.Name }

func (c *Console) comparison(w http.ResponseWriter, r *http.Request, s session) {
	var o vmafxv1.VmafxComparison
	if err := c.store.Read(r.Context(), s.User, s.Namespace, r.PathValue("name"), &o); err != nil {
		c.fail(w, r, s, err)
		return
	}
	v := comparisonView{Namespace: s.Namespace, C: &o, Phase: phaseOf(o.Status.Phase)}
	// A comparison's inputs have no bitrate: its chart is each input's score, in the
	// spec's order, the best one marked.
	var pts []Point
	var marks []Mark
	for i, e := range o.Status.Results {
		sc, err := strconv.ParseFloat(e.Score, 64)
		if err != nil {
			continue
		}
		pts = append(pts, Point{X: float64(i + 1), Y: sc, Label: e.Name + ": " + e.Score})
		if e.Name == o.Status.Best {
			marks = append(marks, Mark{X: float64(i + 1), Y: sc, Label: "best: " + e.Name})
		}
	}
	if len(pts) > 0 {
		lo, hi := 0.0, 100.0
		ch := lineChart("comparison", "VMAF of each distorted input (in the spec's order)", Axes{X: "input", Y: "VMAF", YMin: &lo, YMax: &hi},
			[]Series{{Label: "VMAF", Points: pts, Dots: true}}, marks)
		v.Chart = &ch
	}
	v.Worst = c.renditionsWorst(r, s, "input", vmafxv1.LabelComparison, o.Name, comparisonRenditions(o.Status.Results))
	c.render(w, r, http.StatusOK, "comparison", s, v)
}

// comparisonRenditions are a comparison's table entries as renditions of their jobs: with
// sharedReference a job scores a group of inputs, in spec order as the table lists them,
// so an entry is its job's distorted video as many as the entries of that job before it.
func comparisonRenditions(table []vmafxv1.ComparisonEntry) []rendition {
	var rs []rendition
	seen := map[string]int{}
	for _, e := range table {
		rs = append(rs, rendition{Name: e.Name, Job: e.Job, K: seen[e.Job]})
		seen[e.Job]++
	}
	return rs
}

type ladderView struct {
	Namespace string
	L         *vmafxv1.VmafxLadder
	Phase     string
	Chart     *Chart
	Worst     worstView
}

func (v ladderView) PageTitle() string { return "Ladder " + v.L.Name }

func (c *Console) ladder(w http.ResponseWriter, r *http.Request, s session) {
	var o vmafxv1.VmafxLadder
	if err := c.store.Read(r.Context(), s.User, s.Namespace, r.PathValue("name"), &o); err != nil {
		c.fail(w, r, s, err)
		return
	}
	v := ladderView{Namespace: s.Namespace, L: &o, Phase: phaseOf(o.Status.Phase)}
	if series := ladderSeries(o.Status.Rungs); len(series) > 0 {
		ch := lineChart("ladder", "Rate-quality curves, with the convex hull (the chosen rungs)", Axes{X: "bitrate (kbit/s, log scale)", Y: "VMAF", XLog: true}, series, nil)
		v.Chart = &ch
	}
	var rs []rendition
	for _, rg := range o.Status.Rungs {
		rs = append(rs, rendition{Name: rg.Name, Job: rg.Job})
	}
	v.Worst = c.renditionsWorst(r, s, "rung", vmafxv1.LabelLadder, o.Name, rs)
	c.render(w, r, http.StatusOK, "ladder", s, v)
}

// ladderSeries is one curve per encoder and resolution, by bitrate, in the table's
// order, then the hull across them (the rungs marked hull, by bitrate).
func ladderSeries(rungs []vmafxv1.LadderRung) []Series {
	var out []Series
	index := map[string]int{}
	var hull Series
	hull.Label, hull.Hull, hull.Dots = "convex hull", true, true
	for _, rg := range rungs {
		sc, err := strconv.ParseFloat(rg.Score, 64)
		if err != nil || rg.Bitrate <= 0 {
			continue
		}
		res := rg.Resolution
		if res == "" {
			res = fmt.Sprintf("%dp", rg.Height)
		}
		key := string(rg.Encoder) + " " + res
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, Series{Label: key, Dots: true})
		}
		p := Point{X: float64(rg.Bitrate) / 1000, Y: sc, Label: fmt.Sprintf("%s: %.0f kbit/s, VMAF %s", rg.Name, float64(rg.Bitrate)/1000, rg.Score)}
		out[i].Points = append(out[i].Points, p)
		if rg.Hull {
			hull.Points = append(hull.Points, p)
		}
	}
	byRate := func(a, b Point) int {
		switch {
		case a.X < b.X:
			return -1
		case a.X > b.X:
			return 1
		}
		return 0
	}
	for i := range out {
		slices.SortStableFunc(out[i].Points, byRate)
	}
	if len(hull.Points) > 0 {
		slices.SortStableFunc(hull.Points, byRate)
		out = append(out, hull)
	}
	return out
}
