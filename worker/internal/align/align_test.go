package align

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/vmaf"
)

// clip reads the frames of a raw 176x144 yuv420p test clip of the vmaf package.
func clip(t *testing.T, name string) []vmaf.Frame {
	t.Helper()
	return clipOf(t, name, 176, 144, vmaf.YUV420P)
}

// clipFile opens a raw test clip of the vmaf package, closed when the test ends.
func clipFile(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "vmaf", "testdata", "clips", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// clipOf reads the frames of a raw test clip of the vmaf package.
func clipOf(t *testing.T, name string, w, h int, format vmaf.PixelFormat) []vmaf.Frame {
	t.Helper()
	f := clipFile(t, name)
	src, err := vmaf.OpenRaw(bufio.NewReader(f), w, h, format)
	if err != nil {
		t.Fatal(err)
	}
	var frames []vmaf.Frame
	for {
		var fr vmaf.Frame
		err := src.ReadFrame(&fr)
		if errors.Is(err, io.EOF) {
			return frames
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, fr)
	}
}

// frames is a FrameSource of frames in memory.
type frames struct {
	f []vmaf.Frame
	i int
}

func (s *frames) Info() vmaf.VideoInfo {
	return vmaf.VideoInfo{Width: s.f[0].Width, Height: s.f[0].Height, Format: vmaf.YUV420P}
}

func (s *frames) ReadFrame(f *vmaf.Frame) error {
	if s.i == len(s.f) {
		return io.EOF
	}
	*f = s.f[s.i]
	s.i++
	return nil
}

func black(like vmaf.Frame) vmaf.Frame {
	f := like
	f.Y = make([]uint16, len(like.Y))
	for i := range f.Y {
		f.Y[i] = 16
	}
	return f
}

func search(t *testing.T, ref, dist []vmaf.Frame, window int) Result {
	t.Helper()
	r := NewRecorder(vmaf.VideoInfo{Width: ref[0].Width, Height: ref[0].Height, Format: vmaf.YUV420P}, window)
	if err := r.Read(&frames{f: ref}, &frames{f: dist}); err != nil {
		t.Fatal(err)
	}
	return r.Search()
}

func TestSearch(t *testing.T) {
	ref, dist := clip(t, "p01_ref.yuv"), clip(t, "p01_dist.yuv")
	tests := []struct {
		name      string
		dist      []vmaf.Frame
		want      int
		wantClear bool
	}{
		{"aligned", dist, 0, false},
		{"distorted starts 3 frames late", dist[3:], -3, true},
		{"distorted has 3 frames more at the start", append(append([]vmaf.Frame{}, ref[20:23]...), dist...), 3, true},
		{"two black leader frames", append([]vmaf.Frame{black(dist[0]), black(dist[0])}, dist...), 2, true},
		{"one dropped frame at the start", dist[1:], -1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := search(t, ref, tc.dist, DefaultWindow)
			if res.Best != tc.want || res.Clear() != tc.wantClear {
				t.Fatalf("best %d clear %v (%+v); want %d clear %v", res.Best, res.Clear(), res, tc.want, tc.wantClear)
			}
			if res.Pairs < minPairs || res.Window < 3 {
				t.Errorf("compared %d pairs over a window of %d", res.Pairs, res.Window)
			}
			if tc.wantClear && (res.Confidence < MinConfidence || res.BestPSNR <= res.ZeroPSNR) {
				t.Errorf("confidence %v, PSNR %v at best, %v at zero", res.Confidence, res.BestPSNR, res.ZeroPSNR)
			}
		})
	}
}

// Still pictures fit every offset: the search keeps zero and says it is not sure.
func TestSearchStill(t *testing.T) {
	ref := clip(t, "p01_ref.yuv")
	still := make([]vmaf.Frame, 40)
	for i := range still {
		still[i] = ref[0]
	}
	res := search(t, still, still[2:], DefaultWindow)
	if res.Best != 0 || res.Clear() || res.Confidence != 0 {
		t.Fatalf("%+v; want best 0, not clear, confidence 0", res)
	}
}

// Too few frames to compare: nothing searched, nothing claimed.
func TestSearchShort(t *testing.T) {
	ref := clip(t, "p01_ref.yuv")
	res := search(t, ref[:4], ref[:4], DefaultWindow)
	if res.Pairs != 0 || res.Clear() {
		t.Fatalf("%+v; want no search", res)
	}
}

// The tee records what the scoring reads, up to the window's frames.
func TestWrap(t *testing.T) {
	// Three times the clip: more frames than a window of 2 keeps.
	ref, dist := clip(t, "p01_ref.yuv"), clip(t, "p01_dist.yuv")
	ref, dist = append(append(ref, ref...), ref...), append(append(dist, dist...), dist...)
	r := NewRecorder(vmaf.VideoInfo{Width: 176, Height: 144, Format: vmaf.YUV420P}, 2)
	rs, ds := r.Wrap(0, &frames{f: ref}), r.Wrap(1, &frames{f: dist[2:]})
	var f vmaf.Frame
	for rs.ReadFrame(&f) == nil {
	}
	for ds.ReadFrame(&f) == nil {
	}
	if len(r.thumbs[0]) != Frames(2) || len(r.thumbs[1]) != Frames(2) {
		t.Fatalf("kept %d and %d thumbnails, want %d", len(r.thumbs[0]), len(r.thumbs[1]), Frames(2))
	}
	if res := r.Search(); res.Best != -2 || !res.Clear() {
		t.Fatalf("%+v; want best -2, clear", res)
	}
	// Both sides complete: the search started beside the reading, and its result is
	// the search's.
	if !r.bg.started {
		t.Fatal("the search did not start when both sides were complete")
	}
	if got, want := r.Result(), r.Search(); got != want {
		t.Fatalf("Result %+v, want the search's %+v", got, want)
	}
}

// TestWrapSidesAtOnce reads the two wrapped sides from two goroutines at once, as the
// kernel does, and wants the thumbnails of reading them in turn. Under the race detector
// (make test runs it there) it also fails when the sides share scratch.
func TestWrapSidesAtOnce(t *testing.T) {
	ref, dist := clip(t, "p01_ref.yuv"), clip(t, "p01_dist.yuv")
	info := vmaf.VideoInfo{Width: 176, Height: 144, Format: vmaf.YUV420P}
	want := NewRecorder(info, DefaultWindow)
	if err := want.Read(&frames{f: ref}, &frames{f: dist}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		r := NewRecorder(info, DefaultWindow)
		sides := [2]vmaf.FrameSource{r.Wrap(0, &frames{f: ref}), r.Wrap(1, &frames{f: dist})}
		done := make(chan struct{})
		for _, src := range sides {
			go func() {
				defer func() { done <- struct{}{} }()
				var f vmaf.Frame
				for src.ReadFrame(&f) == nil {
				}
			}()
		}
		<-done
		<-done
		for side := range 2 {
			if !slices.EqualFunc(r.thumbs[side], want.thumbs[side], slices.Equal) {
				t.Fatalf("side %d: the thumbnails differ from those of reading the sides in turn", side)
			}
		}
		if got := r.Result(); got != want.Search() {
			t.Fatalf("Result %+v, want %+v", got, want.Search())
		}
	}
}

// The thumbnails are taken beside the reading and kept in read order, however late their
// jobs run: here each waits a millisecond, and the frames are read as the kernel reads
// them, into slots that rotate (so a read waits only for the job of the plane it
// overwrites), as bytes and as samples.
func TestWrapThumbnailsBeside(t *testing.T) {
	ref, dist := clip(t, "p01_ref.yuv"), clip(t, "p01_dist.yuv")
	info := vmaf.VideoInfo{Width: 176, Height: 144, Format: vmaf.YUV420P}
	want := NewRecorder(info, DefaultWindow)
	if err := want.Read(&frames{f: ref}, &frames{f: dist}); err != nil {
		t.Fatal(err)
	}
	for _, packed := range []bool{false, true} {
		r := NewRecorder(info, DefaultWindow)
		late := func(run func()) {
			go func() {
				time.Sleep(time.Millisecond)
				run()
			}()
		}
		r.jobs[0].Start, r.jobs[1].Start = late, late
		for side, name := range []string{"p01_ref.yuv", "p01_dist.yuv"} {
			raw, err := vmaf.OpenRaw(clipFile(t, name), 176, 144, vmaf.YUV420P)
			if err != nil {
				t.Fatal(err)
			}
			src := r.Wrap(side, raw)
			slots := make([]vmaf.Frame, 3)
			for n := 0; ; n++ {
				f := &slots[n%len(slots)]
				f.Packed = packed
				if src.ReadFrame(f) != nil {
					break
				}
			}
		}
		for side := range 2 {
			if !slices.EqualFunc(r.thumbs[side], want.thumbs[side], slices.Equal) {
				t.Fatalf("packed %v, side %d: %d thumbnails, not those of reading in turn (%d)", packed, side, len(r.thumbs[side]), len(want.thumbs[side]))
			}
		}
		if got := r.Result(); got != want.Search() {
			t.Fatalf("packed %v: Result %+v, want %+v", packed, got, want.Search())
		}
	}
}

// A scoring that stops before a side is complete still gets a search of what was
// recorded.
func TestResultIncomplete(t *testing.T) {
	ref, dist := clip(t, "p01_ref.yuv"), clip(t, "p01_dist.yuv")
	r := NewRecorder(vmaf.VideoInfo{Width: 176, Height: 144, Format: vmaf.YUV420P}, DefaultWindow)
	rs, ds := r.Wrap(0, &frames{f: ref}), r.Wrap(1, &frames{f: dist})
	var f vmaf.Frame
	for range 3 {
		if rs.ReadFrame(&f) != nil || ds.ReadFrame(&f) != nil {
			t.Fatal("short clip")
		}
	}
	if r.bg.started {
		t.Fatal("the search started before either side was complete")
	}
	if got, want := r.Result(), r.Search(); got != want {
		t.Fatalf("Result %+v, want the search's %+v", got, want)
	}
}

// A 10-bit input compares with an 8-bit one on the 8-bit scale.
func TestThumbnailDepth(t *testing.T) {
	ref := clip(t, "p01_ref.yuv")
	deep := make([]vmaf.Frame, len(ref))
	for i, f := range ref {
		d := f
		d.BitDepth = 10
		d.Y = make([]uint16, len(f.Y))
		for j, v := range f.Y {
			d.Y[j] = v << 2
		}
		deep[i] = d
	}
	res := search(t, ref, deep, DefaultWindow)
	if res.Best != 0 || res.BestPSNR != 100 {
		t.Fatalf("%+v; want best 0 at 100 dB", res)
	}
}

func TestCompareRates(t *testing.T) {
	r := func(n, d int) decode.Rate { return decode.Rate{Num: n, Den: d} }
	tests := []struct {
		ref, dist decode.Rate
		want      RateMatch
	}{
		{r(25, 1), r(50, 2), RateSame},
		{r(25, 1), decode.Rate{}, RateSame},
		{r(24, 1), r(24000, 1001), RateNTSC},
		{r(30000, 1001), r(30, 1), RateNTSC},
		{r(25, 1), r(50, 1), RateMultiple},
		{r(60000, 1001), r(30000, 1001), RateMultiple},
		{r(25, 1), r(30, 1), RateOther},
		{r(24, 1), r(25, 1), RateOther},
	}
	for _, tc := range tests {
		if got := CompareRates(tc.ref, tc.dist); got != tc.want {
			t.Errorf("CompareRates(%v, %v) = %v, want %v", tc.ref, tc.dist, got, tc.want)
		}
	}
	for _, tc := range []struct {
		ref, dist decode.Rate
		n, faster int
	}{{r(25, 1), r(50, 1), 2, 1}, {r(60000, 1001), r(30000, 1001), 2, 0}, {r(72, 1), r(24, 1), 3, 0}, {r(24, 1), r(25, 1), 1, 0}} {
		if n, faster := Factor(tc.ref, tc.dist); n != tc.n || faster != tc.faster {
			t.Errorf("Factor(%v, %v) = %d, %d; want %d, %d", tc.ref, tc.dist, n, faster, tc.n, tc.faster)
		}
	}
	if msg := RateMessage(r(25, 1), r(50, 1)); msg != "reference 25 fps, distorted 50 fps: the distorted has 2 times the other's frame rate, a frame-rate conversion that pairing frames by index does not undo; give --auto-align (spec.alignment.auto) to score every 2nd frame of the distorted against the other's, convert it to 25 fps first (ffmpeg -vf fps=25), or give --align (spec.alignment with starts) to pair frames by index anyway" {
		t.Errorf("message %q", msg)
	}
}

// No false alarm: every aligned pair of the kernel's reference data (synthetic motion,
// still bars under temporal noise, a blur, 10-bit, 4:4:4 at an odd size, CRF 45) is found
// aligned, or not clearly anything else.
func TestSearchAlignedPairs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "vmaf", "testdata", "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 6 || strings.HasPrefix(line, "#") {
			continue
		}
		w, _ := strconv.Atoi(f[3])
		h, _ := strconv.Atoi(f[4])
		format, err := vmaf.ParsePixelFormat(f[5])
		if err != nil {
			t.Fatal(err)
		}
		ref, dist := clipOf(t, f[1], w, h, format), clipOf(t, f[2], w, h, format)
		res := search(t, ref, dist, DefaultWindow)
		if res.Clear() || res.Best != 0 && res.Pairs > 0 && res.Confidence >= MinConfidence {
			t.Errorf("%s: %+v; want offset 0 or no clear offset", f[0], res)
		}
		t.Logf("%s: best %d, confidence %.2f, %.2f dB (%d pairs)", f[0], res.Best, res.Confidence, res.BestPSNR, res.Pairs)
		n++
	}
	if n < 5 {
		t.Fatalf("read %d pairs", n)
	}
}

// Any geometry gets a thumbnail: a strip wider than high by far, a single pixel.
func TestThumbnailGeometry(t *testing.T) {
	for _, size := range [][2]int{{3840, 16}, {1, 1}, {2, 4000}} {
		info := vmaf.VideoInfo{Width: size[0], Height: size[1], Format: vmaf.YUV420P}
		r := NewRecorder(info, 1)
		f := vmaf.Frame{Width: size[0], Height: size[1], BitDepth: 8, Y: make([]uint16, size[0]*size[1])}
		for i := range f.Y {
			f.Y[i] = 200
		}
		r.add(0, &f)
		if len(r.thumbs[0]) != 1 || len(r.thumbs[0][0]) == 0 || r.thumbs[0][0][0] != 200 {
			t.Errorf("%dx%d: thumbnails %v", size[0], size[1], r.thumbs[0])
		}
	}
}

// thumbnailRef is the thumbnail as the definition says: each block's samples summed one
// by one.
func thumbnailRef(r *Recorder, f *vmaf.Frame) []float32 {
	b := r.block
	out := make([]float32, r.tw*r.th)
	scale := 1 / float64(b*b) / float64(int(1)<<(max(f.BitDepth, 8)-8))
	for ty := range r.th {
		for tx := range r.tw {
			var sum uint64
			for y := ty * b; y < ty*b+b; y++ {
				for x := tx * b; x < tx*b+b; x++ {
					sum += uint64(f.Y[y*f.Width+x])
				}
			}
			out[ty*r.tw+tx] = float32(float64(sum) * scale)
		}
	}
	return out
}

// The thumbnail summed four samples a word equals the one summed sample by sample, at
// the largest sample values of each depth (where a lane would carry first) and on
// noise, for block sizes that are and are not a multiple of 4.
func TestThumbnailPackedSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, sz := range [][2]int{{1280, 720}, {1920, 1080}, {2560, 1440}, {3840, 2160}, {161, 90}, {1000, 100}, {50, 40}} {
		for _, depth := range []int{8, 10, 12, 16} {
			for _, kind := range []string{"max", "noise"} {
				w, h := sz[0], sz[1]
				f := vmaf.Frame{Width: w, Height: h, BitDepth: depth, Y: make([]uint16, w*h)}
				for i := range f.Y {
					f.Y[i] = uint16(1<<depth - 1)
					if kind == "noise" {
						f.Y[i] = uint16(rng.IntN(1 << depth))
					}
				}
				r := NewRecorder(vmaf.VideoInfo{Width: w, Height: h, Format: vmaf.YUV420P}, DefaultWindow)
				r.add(0, &f)
				want := thumbnailRef(r, &f)
				if got := r.thumbs[0][0]; !slices.Equal(got, want) {
					t.Fatalf("%dx%d %d-bit %s (block %d, packed %v): thumbnail differs from the sample-by-sample sums",
						w, h, depth, kind, r.block, packedSums(r.block, depth))
				}
			}
		}
	}
}

// An 8-bit frame read as bytes for a GPU backend (vmaf.Frame.Packed) gets the same
// thumbnail as its samples, on each side at once: at 255 everywhere (where a lane of
// addPacked8 would carry first) and on noise, for every block size of the common frame
// sizes, blocks that are not a multiple of 4, and the largest packed block (32).
func TestThumbnailOfBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, sz := range [][2]int{{1280, 720}, {1920, 1080}, {2560, 1440}, {3840, 2160}, {5120, 40}, {4480, 40},
		{3200, 30}, {640, 10}, {161, 90}, {1000, 100}, {50, 40}, {1, 1}} {
		for _, kind := range []string{"max", "noise"} {
			w, h := sz[0], sz[1]
			plain := vmaf.Frame{Width: w, Height: h, BitDepth: 8, Y: make([]uint16, w*h)}
			packed := vmaf.Frame{Width: w, Height: h, BitDepth: 8, Y8: make([]byte, w*h)}
			for i := range plain.Y {
				plain.Y[i] = 255
				if kind == "noise" {
					plain.Y[i] = uint16(rng.IntN(256))
				}
				packed.Y8[i] = byte(plain.Y[i])
			}
			r := NewRecorder(vmaf.VideoInfo{Width: w, Height: h, Format: vmaf.YUV420P}, DefaultWindow)
			r.add(0, &plain)
			r.add(1, &packed)
			if !slices.Equal(r.thumbs[0][0], r.thumbs[1][0]) || !slices.Equal(r.thumbs[1][0], thumbnailRef(r, &plain)) {
				t.Errorf("%dx%d %s (block %d, packed %v): the thumbnail of the frame's bytes differs from that of its samples",
					w, h, kind, r.block, packedSums(r.block, 8))
			}
		}
	}
}

// FuzzAddPacked8: a row of bytes summed two to a 16-bit lane (addPacked8) gives each
// block the sum addPlain gives it, for every block size packedSums allows at 8 bits
// (multiples of 4 up to 32) and any bytes, over as many rows as a block has.
func FuzzAddPacked8(f *testing.F) {
	f.Add(uint64(1), uint8(12), uint8(3), false)
	f.Add(uint64(2), uint8(32), uint8(1), true)
	f.Add(uint64(3), uint8(20), uint8(7), false)
	f.Add(uint64(4), uint8(8), uint8(160), true)
	f.Fuzz(func(t *testing.T, seed uint64, b, blocks uint8, full bool) {
		bs := 4 * (1 + int(b)%8) // 4 to 32
		if !packedSums(bs, 8) {
			t.Fatalf("block %d not packed at 8 bits", bs)
		}
		n := 1 + int(blocks)
		rng := rand.New(rand.NewPCG(seed, 8))
		packed, plain := make([]uint64, n), make([]uint64, n)
		row := make([]byte, n*bs)
		for range bs { // a block's rows: the lanes' most
			for i := range row {
				row[i] = 255
				if !full {
					row[i] = byte(rng.IntN(256))
				}
			}
			addPacked8(row, bs, packed)
			addPlain(row, bs, plain)
		}
		for i, s := range packed {
			if got := s&0xffff + s>>16&0xffff + s>>32&0xffff + s>>48; got != plain[i] {
				t.Fatalf("block %d of %d bytes: packed sum %d, want %d", i, bs, got, plain[i])
			}
		}
	})
}
