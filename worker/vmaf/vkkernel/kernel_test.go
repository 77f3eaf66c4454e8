package vkkernel

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/worker/internal/vulkan"
	"github.com/vmafx/vmafx/worker/vmaf"
)

// openOrSkip opens the default device's kernel. Without a usable device
// the test skips, unless VMAFX_REQUIRE_VULKAN=1 (make test sets it).
func openOrSkip(t testing.TB) *Kernel {
	t.Helper()
	k, err := Open(vulkan.Config{})
	if err != nil {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" && errors.Is(err, vulkan.ErrUnavailable) {
			t.Skipf("no usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
		}
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(k.Close)
	return k
}

// pair is a line of worker/vmaf/testdata/pairs.tsv.
type pair struct {
	name, ref, dist string
	w, h            int
	pf              vmaf.PixelFormat
}

func loadPairs(t testing.TB) []pair {
	t.Helper()
	f, err := os.Open("../testdata/pairs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pairs []pair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if strings.HasPrefix(c[0], "#") || len(c) < 8 {
			continue
		}
		w, _ := strconv.Atoi(c[3])
		h, _ := strconv.Atoi(c[4])
		pf, err := vmaf.ParsePixelFormat(c[5])
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, pair{name: c[0], ref: c[1], dist: c[2], w: w, h: h, pf: pf})
	}
	if len(pairs) == 0 {
		t.Fatal("no pairs in pairs.tsv")
	}
	return pairs
}

func openClip(t testing.TB, name string, p pair) *vmaf.RawReader {
	t.Helper()
	f, err := os.Open(filepath.Join("../testdata/clips", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := vmaf.OpenRaw(bufio.NewReader(f), p.w, p.h, p.pf)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestScoreMatchesCPU scores every testdata pair with the device computing
// what it offloads and compares every per-frame feature and score, and the
// pooled scores, with the CPU kernel's: they must be identical, not close.
func TestScoreMatchesCPU(t *testing.T) {
	k := openOrSkip(t)
	for _, p := range loadPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			score := func(off vmaf.Offload) *vmaf.Result {
				res, err := vmaf.Score(context.Background(), openClip(t, p.ref, p), openClip(t, p.dist, p),
					vmaf.Options{Threads: 2, Offload: off})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			cpu, gpu := score(nil), score(k)
			if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
				t.Errorf("per-frame features (-cpu +vulkan):\n%s", diff)
			}
			if diff := cmp.Diff(cpu.Pooled, gpu.Pooled); diff != "" {
				t.Errorf("pooled (-cpu +vulkan):\n%s", diff)
			}
		})
	}
}

// TestMotionSAD compares the motion integer directly with the CPU's on
// planes that stress the arithmetic: every bit depth, odd sizes, full-scale
// steps between frames (the largest blurred values) and noise.
func TestMotionSAD(t *testing.T) {
	k := openOrSkip(t)
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := [][2]int{{33, 33}, {177, 145}, {640, 360}, {1921, 37}}
	for _, bpc := range []int{8, 10, 12, 16} {
		for _, sz := range sizes {
			w, h := sz[0], sz[1]
			wk, err := k.NewWorker(w, h, bpc)
			if err != nil {
				t.Fatal(err)
			}
			maxv := 1<<bpc - 1
			for round, pattern := range []string{"noise", "steps", "flat"} {
				prev, cur := make([]uint16, w*h), make([]uint16, w*h)
				for i := range prev {
					switch pattern {
					case "noise":
						prev[i], cur[i] = uint16(rng.IntN(maxv+1)), uint16(rng.IntN(maxv+1))
					case "steps":
						if (i/w+i%w/3)%2 == 0 {
							prev[i] = uint16(maxv)
						} else {
							cur[i] = uint16(maxv)
						}
					case "flat":
						prev[i], cur[i] = 7, 7
					}
				}
				got, err := wk.MotionSAD(prev, cur)
				if err != nil {
					t.Fatal(err)
				}
				if want := vmaf.MotionSAD(prev, cur, w, h, bpc); got != want {
					t.Errorf("%dx%d %d-bit %s (round %d): SAD %d, CPU %d", w, h, bpc, pattern, round, got, want)
				}
			}
			wk.Close()
		}
	}
}

// failing is an Offload whose workers fail, as a lost device does.
type failing struct{ err error }

func (f failing) NewWorker(w, h, bpc int) (vmaf.OffloadWorker, error) { return nil, f.err }

// TestScoreOffloadError checks that a failing device fails the score with
// its error rather than scoring anything on the CPU behind its back.
func TestScoreOffloadError(t *testing.T) {
	p := loadPairs(t)[0]
	want := errors.New("device lost")
	_, err := vmaf.Score(context.Background(), openClip(t, p.ref, p), openClip(t, p.dist, p),
		vmaf.Options{Threads: 2, Offload: failing{want}})
	if !errors.Is(err, want) {
		t.Errorf("Score = %v, want %v", err, want)
	}
}
