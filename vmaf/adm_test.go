package vmaf

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestADMStateReuse: ADM keeps its bands and parts in rings of rows that a
// frame's scan fills as it goes (admState.scan), so a worker's state carries
// rows of the frame before into the next. A frame scored after another must
// score as on a fresh state, and the rows a device's ADM is checked against
// must add up to the same features. The sizes take in the smallest ADM
// accepts (33x33), odd ones and heights whose scored rows reach the edge at
// the coarsest scale.
func TestADMStateReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 3))
	for _, sz := range [][2]int{{33, 33}, {34, 47}, {65, 41}, {100, 35}, {177, 145}} {
		w, h := sz[0], sz[1]
		for _, bpc := range []int{8, 10} {
			for name, opt := range map[string]admOptions{"v0.6.1": defaultADMOptions(), "v1": admV1Options(3, 1080)} {
				t.Run(fmt.Sprintf("%dx%d/%d-bit/%s", w, h, bpc, name), func(t *testing.T) {
					ref, dis := randomPlanes(rng, w, h, bpc, 2)
					for _, c := range append([]CPU{CPUGeneric}, vectorPaths...) {
						if !c.Supported() {
							continue
						}
						want := newADMState(w, h, opt).with(kernelsFor(c)).compute(ref[0], dis[0], bpc)
						s := newADMState(w, h, opt).with(kernelsFor(c))
						s.compute(ref[1], dis[1], bpc)
						if got := s.compute(ref[0], dis[0], bpc); got != want {
							t.Errorf("%v: after another frame %+v, on a fresh state %+v", c, got, want)
						}
						rows := newADMState(w, h, opt).with(kernelsFor(c)).rows(ref[0], dis[0], bpc)
						if got := s.fromRows(rows); got != want {
							t.Errorf("%v: from the rows %+v, computed %+v", c, got, want)
						}
					}
				})
			}
		}
	}
}
