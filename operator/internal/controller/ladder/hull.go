package ladder

import (
	"sort"
	"strconv"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// point is a scored rung on the bitrate/quality plane.
type point struct {
	bitrate float64
	score   float64
	index   int // into the rungs
}

// markHull sets Hull on the rungs on the upper convex hull of bitrate against score,
// computed per encoder over all resolutions, as the per-title method does: a rung is
// chosen when no mix of other rungs of that encoder gives more quality for its bitrate.
// The hull stops at the best score: past it, more bits buy less. It returns the chosen
// rungs' names by encoder (in spec order) and rising bitrate.
func markHull(rungs []vmafxv1.LadderRung, encoders []vmafxv1.LadderEncoder) []string {
	var names []string
	for i := range rungs {
		rungs[i].Hull = false
	}
	for _, enc := range encoders {
		var pts []point
		for i, r := range rungs {
			if r.Encoder != enc || r.Phase != vmafxv1.RungSucceeded || r.Bitrate <= 0 {
				continue
			}
			s, err := strconv.ParseFloat(r.Score, 64)
			if err != nil {
				continue
			}
			pts = append(pts, point{bitrate: float64(r.Bitrate), score: s, index: i})
		}
		for _, p := range upperHull(pts) {
			rungs[p.index].Hull = true
			names = append(names, rungs[p.index].Name)
		}
	}
	return names
}

// upperHull returns the points of the upper convex hull of pts from the lowest bitrate
// up to the highest score, by rising bitrate (Andrew's monotone chain, upper half).
func upperHull(pts []point) []point {
	if len(pts) == 0 {
		return nil
	}
	sorted := append([]point(nil), pts...)
	// By bitrate; at equal bitrate the better score first, so the worse one is dropped.
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].bitrate != sorted[j].bitrate {
			return sorted[i].bitrate < sorted[j].bitrate
		}
		return sorted[i].score > sorted[j].score
	})
	var hull []point
	for _, p := range sorted {
		if len(hull) > 0 && hull[len(hull)-1].bitrate == p.bitrate {
			continue
		}
		// Pop while the last two points and p do not turn clockwise: the middle point
		// lies on or under the segment that skips it.
		for len(hull) >= 2 && cross(hull[len(hull)-2], hull[len(hull)-1], p) >= 0 {
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, p)
	}
	best := 0
	for i, p := range hull {
		if p.score > hull[best].score {
			best = i
		}
	}
	return hull[:best+1]
}

// cross is the z component of (a-o) x (b-o): positive for a counter-clockwise turn.
func cross(o, a, b point) float64 {
	return (a.bitrate-o.bitrate)*(b.score-o.score) - (a.score-o.score)*(b.bitrate-o.bitrate)
}
