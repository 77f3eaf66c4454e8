package vmaf

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// synthCases are generated clips with libvmaf 3.2.0 logs in testdata/synth
// (see testdata/README.md). They reach what the 176x144 to 320x240 pairs do
// not: SSIM's automatic downscaling by 2, 3 and 4 with even and odd sizes,
// CAMBI on larger windows, at 8, 10 and 12 bits, and 4:2:2 chroma.
var synthCases = []struct {
	name   string
	w, h   int
	pf     PixelFormat
	frames int
}{
	{"s1", 1280, 720, YUV420P, 3},
	{"s2", 961, 541, YUV420P10LE, 3},
	{"s3", 902, 897, YUV422P12LE, 2},
}

// xorshift is a small deterministic generator, so that the clips do not
// depend on math/rand's algorithms.
type xorshift uint64

func (x *xorshift) next(n int) int {
	*x ^= *x << 13
	*x ^= *x >> 7
	*x ^= *x << 17
	return int(uint64(*x) % uint64(n))
}

// synthClip returns the raw reference and distorted clips of a case. Every
// plane has a slow diagonal ramp on its left half, dithered in the
// reference and cut into wide bands one 8-bit code apart in the distorted
// one (the banding CAMBI looks for), and a moving noisy checkerboard on its
// right half, blurred and re-noised in the distorted one.
func synthClip(w, h int, pf PixelFormat, frames int) (ref, dist []byte) {
	bpc := pf.BitDepth()
	sc := 1 << uint(bpc-8)
	maxV := 1<<uint(bpc) - 1
	rng := xorshift(0x9E3779B97F4A7C15)
	cw, ch := pf.chromaSize(w, h)
	var rb, db bytes.Buffer
	put := func(b *bytes.Buffer, v int) {
		v = min(max(v, 0), maxV)
		if bpc == 8 {
			b.WriteByte(byte(v))
		} else {
			b.Write([]byte{byte(v), byte(v >> 8)})
		}
	}
	for f := 0; f < frames; f++ {
		for p, size := range [3][2]int{{w, h}, {cw, ch}, {cw, ch}} {
			pw, ph := size[0], size[1]
			for y := 0; y < ph; y++ {
				row := make([]int, pw)
				for x := range row {
					if x >= pw/2 {
						v := 60 + 30*p
						if ((x+4*f)/12+y/12)%2 == 0 {
							v += 70
						}
						row[x] = (v+rng.next(24))*sc + rng.next(sc)
					}
				}
				for x, v := range row {
					if x < pw/2 {
						// 40..56 in 8-bit codes, in 1/16 steps of a code
						// at the clip's depth.
						g := (40*16 + (x+2*y+3*f)*16*16/(pw/2+2*ph)) * sc
						put(&rb, (g+rng.next(16))/16)
						put(&db, g/(16*sc)*sc)
						continue
					}
					put(&rb, v)
					l, r := row[max(x-1, pw/2)], row[min(x+1, pw-1)]
					put(&db, (l+2*v+r)/4+(rng.next(7)-3)*sc)
				}
			}
		}
	}
	return rb.Bytes(), db.Bytes()
}

// libvmafLayout rewrites a raw clip for libvmaf 3.2.0's command-line tool,
// which reads chroma planes of w>>1 (and h>>1) samples, not the rounded-up
// planes of the clip: it keeps the top-left part of each chroma plane,
// which is all of it libvmaf's features see.
func libvmafLayout(data []byte, w, h int, pf PixelFormat) []byte {
	fi := pf.info()
	bps := pf.bytesPerSample()
	cw, ch := pf.chromaSize(w, h)
	fw, fh := w>>fi.xShift, h>>fi.yShift
	var out []byte
	for len(data) > 0 {
		out = append(out, data[:w*h*bps]...)
		data = data[w*h*bps:]
		for range 2 {
			for y := 0; y < fh; y++ {
				out = append(out, data[y*cw*bps:(y*cw+fw)*bps]...)
			}
			data = data[cw*ch*bps:]
		}
	}
	return out
}

// TestSynthAccuracy scores the generated clips with every extra feature and
// compares all metrics with libvmaf's logs. With VMAFX_SYNTH_DIR set it
// also writes the clips there as raw files in the layout libvmaf's tool
// reads, for producing those logs.
func TestSynthAccuracy(t *testing.T) {
	for _, c := range synthCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ref, dist := synthClip(c.w, c.h, c.pf, c.frames)
			if dir := os.Getenv("VMAFX_SYNTH_DIR"); dir != "" {
				for suffix, data := range map[string][]byte{"ref": ref, "dist": dist} {
					data = libvmafLayout(data, c.w, c.h, c.pf)
					if err := os.WriteFile(filepath.Join(dir, c.name+"_"+suffix+".yuv"), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := readLog(t, filepath.Join("testdata/synth", c.name+"_extra.json"))
			feats := logFeatures(want)
			got, err := Score(context.Background(), rawSource(t, ref, c.w, c.h, c.pf), rawSource(t, dist, c.w, c.h, c.pf),
				Options{Model: "vmaf_v0.6.1", Threads: 2, Features: feats})
			if err != nil {
				t.Fatal(err)
			}
			worst := compareLog(t, got, want)
			t.Logf("%s %dx%d %v %v: max |delta| %v", c.name, c.w, c.h, c.pf, feats, worst)
		})
	}
}
