package vkkernel

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ulikunitz/xz"

	"github.com/vmafx/vmafx/vmaf"
)

// v1Models are the models vmaf/testdata/v1/ref holds libvmaf's logs for, per pair
// (vmaf's TestV1Reference compares the CPU with them).
var v1Models = []string{
	"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160", "vmaf_v1.0.16_3d0h_2160",
	"vmaf_v1.0.16_hfr_3d0h", "vmaf_4k_v0.6.1", "vmaf_b_v0.6.3",
}

// v1Clip is a pair of vmaf/testdata/v1: its decompressed clips and geometry.
type v1Clip struct {
	name      string
	ref, dist []byte
	w, h      int
	pf        vmaf.PixelFormat
}

func loadV1Clips(t testing.TB) []v1Clip {
	t.Helper()
	data, err := os.ReadFile("../testdata/v1/pairs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	unxz := func(name string) []byte {
		f, err := os.Open(filepath.Join("../testdata/v1/clips", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := xz.NewReader(bufio.NewReader(f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return b
	}
	var out []v1Clip
	for line := range strings.SplitSeq(string(data), "\n") {
		c := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") || len(c) < 6 {
			continue
		}
		w, _ := strconv.Atoi(c[3])
		h, _ := strconv.Atoi(c[4])
		pf, err := vmaf.ParsePixelFormat(c[5])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v1Clip{name: c[0], ref: unxz(c[1]), dist: unxz(c[2]), w: w, h: h, pf: pf})
	}
	if len(out) == 0 {
		t.Fatal("no pairs in testdata/v1/pairs.tsv")
	}
	return out
}

// TestScoreV1ReferenceMatchesCPU scores every pair of the v1 reference set (640x360 and
// 480x272, 8 and 10 bits, 4:2:0 and 4:4:4) under every model it has libvmaf's logs for,
// on the device and on the CPU: every frame's features and the pooled scores must be
// identical, so the device gives what vmaf's TestV1Reference checks against libvmaf.
// SpEED chroma and CAMBI's c-values run on the device for every frame of the v1 models.
func TestScoreV1ReferenceMatchesCPU(t *testing.T) {
	k := openOrSkip(t)
	for _, c := range loadV1Clips(t) {
		for _, model := range v1Models {
			t.Run(c.name+"/"+model, func(t *testing.T) {
				score := func(off vmaf.Offload) *vmaf.Result {
					open := func(b []byte) *vmaf.RawReader {
						r, err := vmaf.OpenRaw(bytes.NewReader(b), c.w, c.h, c.pf)
						if err != nil {
							t.Fatal(err)
						}
						return r
					}
					res, err := vmaf.Score(context.Background(), open(c.ref), open(c.dist),
						vmaf.Options{Threads: 2, Offload: off, Model: model})
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				off := &countingOffload{k: k}
				cpu, gpu := score(nil), score(off)
				if k.speed != nil && strings.HasPrefix(model, "vmaf_v1") && off.speed.Load() != int64(len(gpu.Frames)) {
					t.Errorf("SpEED of %d frame pairs on the device, want all %d", off.speed.Load(), len(gpu.Frames))
				}
				if strings.HasPrefix(model, "vmaf_v1") && off.cambi.Load() != int64(len(gpu.Frames)) {
					t.Errorf("CAMBI of %d frames on the device, want all %d", off.cambi.Load(), len(gpu.Frames))
				}
				// The prescaled models (5d0h by 0.6, 3d0h_2160 by 0.5) decimate these clips'
				// chroma to too few blocks for a regular covariance: SpEED is 0 there, in
				// libvmaf too; TestScoreV1FormatsMatchCPU scores a prescaled one on larger frames.
				prescaled := model == "vmaf_v1.0.16_5d0h" || model == "vmaf_v1.0.16_3d0h_2160"
				if strings.HasPrefix(model, "vmaf_v1") && !prescaled && !slices.ContainsFunc(gpu.Frames, func(f vmaf.FrameScore) bool { return f.SpeedUV > 0 }) {
					t.Errorf("speed_chroma_uv is 0 on every frame: a comparison that cannot tell SpEED's values apart")
				}
				if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
					t.Errorf("per-frame features (-cpu +vulkan):\n%s", diff)
				}
				if diff := cmp.Diff(cpu.Pooled, gpu.Pooled); diff != "" {
					t.Errorf("pooled (-cpu +vulkan):\n%s", diff)
				}
			})
		}
	}
}
