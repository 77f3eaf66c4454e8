package vmaf

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/ulikunitz/xz"
)

// The VMAF v1 reference set (testdata/v1, see testdata/README.md): libvmaf 3.2.0's C
// path on four pairs for the v1 models and the other built-in models. Its clips are
// stored xz-compressed, so the tests decompress them in memory, once per test binary.

// v1Pair is one line of testdata/v1/pairs.tsv.
type v1Pair struct {
	refPair
	bitDepth int
	fps      float64
}

// v1Models are the models testdata/v1/ref holds a log for, per pair.
var v1Models = []string{
	"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160", "vmaf_v1.0.16_3d0h_2160",
	"vmaf_v1.0.16_hfr_3d0h", "vmaf_4k_v0.6.1", "vmaf_b_v0.6.3",
}

func loadV1Pairs(t testing.TB) []v1Pair {
	t.Helper()
	var pairs []v1Pair
	for _, c := range pairLines(t, "testdata/v1/pairs.tsv", 9) {
		bd, _ := strconv.Atoi(c[6])
		fps, _ := strconv.ParseFloat(c[8], 64)
		pairs = append(pairs, v1Pair{refPair: parseRefPair(t, c), bitDepth: bd, fps: fps})
	}
	return pairs
}

var v1Clips sync.Map // file name -> func() ([]byte, error)

// v1Clip returns the decompressed bytes of testdata/v1/clips/<name> (a .yuv.xz file).
func v1Clip(t testing.TB, name string) []byte {
	t.Helper()
	load, _ := v1Clips.LoadOrStore(name, sync.OnceValues(func() ([]byte, error) {
		f, err := os.Open(filepath.Join("testdata/v1/clips", name))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, err := xz.NewReader(bufio.NewReader(f))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(r)
	}))
	data, err := load.(func() ([]byte, error))()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return data
}

// openV1Pair opens a v1 pair's reference and distorted clips as frame sources.
func openV1Pair(t testing.TB, p v1Pair) (ref, dist FrameSource) {
	t.Helper()
	open := func(name string) FrameSource {
		r, err := OpenRaw(bytes.NewReader(v1Clip(t, name)), p.w, p.h, p.pf)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	return open(p.ref), open(p.dist)
}

// v1Frames reads every frame of one of a pair's clips (which is "ref" or "dist"), with
// the chroma planes when chroma is set.
func v1Frames(t testing.TB, p v1Pair, which string, chroma bool) []*Frame {
	t.Helper()
	name := p.ref
	if which == "dist" {
		name = p.dist
	}
	src, err := OpenRaw(bytes.NewReader(v1Clip(t, name)), p.w, p.h, p.pf)
	if err != nil {
		t.Fatal(err)
	}
	var frames []*Frame
	for {
		f := &Frame{Chroma: chroma}
		if err := src.ReadFrame(f); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	if len(frames) != p.frames {
		t.Fatalf("%s: read %d frames, pairs.tsv says %d", name, len(frames), p.frames)
	}
	return frames
}

// readV1Log reads libvmaf's log of pair p under model.
func readV1Log(t testing.TB, p v1Pair, model string) *libvmafLog {
	t.Helper()
	return readLog(t, filepath.Join("testdata/v1/ref", p.name+"_"+model+".json"))
}

func TestV1ReferenceSetReads(t *testing.T) {
	for _, p := range loadV1Pairs(t) {
		frames := v1Frames(t, p, "dist", true)
		if f := frames[0]; f.Width != p.w || f.Height != p.h || f.BitDepth != p.bitDepth || len(f.U) == 0 {
			t.Errorf("%s: frame 0 is %dx%d at %d bits with %d chroma samples", p.name, f.Width, f.Height, f.BitDepth, len(f.U))
		}
		for _, m := range v1Models {
			if l := readV1Log(t, p, m); len(l.Frames) != p.frames {
				t.Errorf("%s %s: %d frames in the log, want %d", p.name, m, len(l.Frames), p.frames)
			}
		}
	}
}
