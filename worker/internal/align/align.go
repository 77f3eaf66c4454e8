// Package align finds the frame offset between a reference and a distorted video: the
// number of frames by which the distorted's pictures come late (a positive offset, e.g.
// black leader frames or a later cut) or early (negative) against the reference's.
//
// It compares small luma thumbnails of the first frames of both inputs at every offset of
// a window, on a cheap measure (the mean squared error of the thumbnails, reported as a
// PSNR), and confirms the winner on a second measure (the mean absolute difference): a
// misaligned pair is told from an aligned one at a small fraction of a score's cost, and
// without a model. The thumbnails are what a Recorder keeps, so memory is bounded by the
// window whatever the inputs' size.
package align

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/beside"
)

const (
	// DefaultWindow is the offsets searched either side of zero by default: a second at
	// 30 fps, beyond which a misalignment is an edit, not a leader or a dropped frame.
	DefaultWindow = 30
	// MaxWindow bounds the window, and with it the frames read and the thumbnails held.
	MaxWindow = 300
	// Pairs is how many frame pairs are compared at each offset (fewer in short inputs).
	Pairs = 60
	// minPairs is the fewest pairs a search compares; shorter inputs are not searched.
	minPairs = 3
	// thumbWidth bounds a thumbnail's width: the luma is averaged in square blocks of
	// the smallest size that brings it to this width or below (160x90 for 1080p).
	thumbWidth = 160

	// Measure names the search's measure in results.
	Measure = "luma-psnr-thumbnail"

	// MinConfidence is the confidence below which an offset other than zero is not
	// trusted: the runner-up (an offset not next to the best) explains the frames
	// almost as well, as in still or periodic pictures.
	MinConfidence = 0.2
	// clearRatio is how much larger the error at offset zero must be than at the best
	// offset for the best one to be clearly better (about 1.8 dB).
	clearRatio = 1.5
)

// Frames is how many frames of each input a search of window reads.
func Frames(window int) int { return window + Pairs }

// Recorder keeps luma thumbnails of the first frames of the reference (side 0) and the
// distorted video (side 1), for Search.
type Recorder struct {
	info   vmaf.VideoInfo
	block  int // the side of the square averaged into one thumbnail sample
	tw, th int
	limits [2]int // frames kept per side
	window int
	thumbs [2][][]float32
	sums   [2][]uint64 // one thumbnail row's block sums per side, reused: the sides are read at once

	bg *early // set by Wrap
	// jobs take a wrapped side's thumbnails beside its reading (Wrap).
	jobs [2]beside.Queue[[]float32]
}

// early is a wrapped recorder's search, started as soon as both sides are complete
// (their limit or their end reached), beside the scoring rather than after it.
type early struct {
	mu       sync.Mutex
	complete [2]bool
	started  bool
	done     chan struct{}
	result   Result
}

// NewRecorder returns a recorder for a search of window offsets either side of zero
// over frames of info (both inputs have the reference's size by then).
func NewRecorder(info vmaf.VideoInfo, window int) *Recorder {
	// A block never exceeds the height, so that a very wide, flat picture still has a row.
	block := max(1, min((info.Width+thumbWidth-1)/thumbWidth, info.Height))
	return &Recorder{
		info: info, block: block, tw: max(1, info.Width/block), th: max(1, info.Height/block),
		limits: [2]int{Frames(window), Frames(window)}, window: window,
	}
}

// Wrap returns src, recording the thumbnails of its first frames as they are read, for
// side 0 (reference) or 1 (distorted). Each side must be read by one goroutine at a time;
// the two may be read at once, as the kernel does. The thumbnails are taken beside the
// reading (beside.Queue): a 1080p one costs about as much as reading the frame, on the
// step every frame passes through in turn.
func (r *Recorder) Wrap(side int, src vmaf.FrameSource) vmaf.FrameSource {
	if r.bg == nil {
		r.bg = &early{}
	}
	return &tee{FrameSource: src, r: r, side: side, keep: r.keep(side)}
}

type tee struct {
	vmaf.FrameSource
	r    *Recorder
	side int
	keep func([]float32) // r.keep(side), made once rather than at every read
}

func (t *tee) ReadFrame(f *vmaf.Frame) error {
	r, side, keep := t.r, t.side, t.keep
	r.jobs[side].BeforeRead(f, keep)
	err := t.FrameSource.ReadFrame(f)
	recorded := len(r.thumbs[side]) + r.jobs[side].Pending()
	if err == nil && recorded < r.limits[side] && r.fits(f) {
		g := vmaf.Frame{Width: f.Width, Height: f.Height, BitDepth: f.BitDepth, Y: f.Y, Y8: f.Y8}
		r.jobs[side].Go(f, func() []float32 { return r.thumbnail(&g, make([]uint64, r.tw)) })
		recorded++
	}
	if err != nil || recorded >= r.limits[side] {
		r.jobs[side].Fold(true, keep) // the search reads every thumbnail
		r.sideComplete(side)
	}
	return err
}

// keep appends a thumbnail taken beside the reading to side's.
func (r *Recorder) keep(side int) func([]float32) {
	return func(th []float32) { r.thumbs[side] = append(r.thumbs[side], th) }
}

// sideComplete records that side has all the thumbnails it will have, and starts the
// search in its own goroutine once both sides do: the reader reaches that point while
// the kernel still scores earlier frames, and on a long input 90 frames in, so the
// search no longer adds its time to the score's end.
func (r *Recorder) sideComplete(side int) {
	bg := r.bg
	bg.mu.Lock()
	defer bg.mu.Unlock()
	bg.complete[side] = true
	if bg.started || !bg.complete[0] || !bg.complete[1] {
		return
	}
	bg.started = true
	bg.done = make(chan struct{})
	go func() {
		defer close(bg.done)
		bg.result = r.Search()
	}()
}

// Result is the search of a wrapped recorder: the one started when both sides were
// complete, waited for, or a search now of what was recorded when it was not started
// (the scoring stopped before either side was complete). It is called once the sides'
// reading has stopped.
func (r *Recorder) Result() Result {
	bg := r.bg
	if bg == nil {
		return r.Search()
	}
	bg.mu.Lock()
	started := bg.started
	bg.mu.Unlock()
	if !started {
		for side := range r.jobs { // the reading has stopped: its last thumbnails
			r.jobs[side].Fold(true, r.keep(side))
		}
		return r.Search()
	}
	<-bg.done
	return bg.result
}

// Read reads the frames a search needs from ref and dist (fewer where an input ends).
func (r *Recorder) Read(ref, dist vmaf.FrameSource) error {
	for side, src := range []vmaf.FrameSource{ref, dist} {
		var f vmaf.Frame
		for len(r.thumbs[side]) < r.limits[side] {
			err := src.ReadFrame(&f)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: %w", [2]string{"reference", "distorted"}[side], err)
			}
			r.add(side, &f)
		}
	}
	return nil
}

// Decimate has Read keep n times as many frames of the faster side (0 the reference, 1
// the distorted), whose frame rate is n times the other's, for SearchPhases.
func (r *Recorder) Decimate(n, faster int) { r.limits[faster] *= n }

// SearchPhases searches the offset with the faster side decimated by n: every n-th of its
// frames from phase p, for each p from 0 to n-1. It returns the best phase's result (the
// smallest error at its best offset) and the phase; offsets count decimated frames.
func (r *Recorder) SearchPhases(n, faster int) (Result, int) {
	var best Result
	phase := 0
	for p := range n {
		sub := *r
		sub.thumbs[faster] = nil
		for i := p; i < len(r.thumbs[faster]); i += n {
			sub.thumbs[faster] = append(sub.thumbs[faster], r.thumbs[faster][i])
		}
		res := sub.Search()
		if p == 0 || res.Pairs > 0 && (best.Pairs == 0 || res.BestPSNR > best.BestPSNR) {
			best, phase = res, p
		}
	}
	return best, phase
}

// add appends the thumbnail of f to side.
func (r *Recorder) add(side int, f *vmaf.Frame) {
	if !r.fits(f) {
		return // the kernel refuses such a frame; the search has nothing to say about it
	}
	if len(r.sums[side]) < r.tw {
		r.sums[side] = make([]uint64, r.tw)
	}
	r.thumbs[side] = append(r.thumbs[side], r.thumbnail(f, r.sums[side][:r.tw]))
}

// fits reports whether f has the recorder's size.
func (r *Recorder) fits(f *vmaf.Frame) bool {
	return f.Width == r.info.Width && f.Height == r.info.Height
}

// thumbnail is f's thumbnail: the mean of each block of luma samples, on the 8-bit scale
// whatever the bit depth, so that inputs of different depths compare. sums is the
// scratch of one thumbnail row's block sums (tw of them).
func (r *Recorder) thumbnail(f *vmaf.Frame, sums []uint64) []float32 {
	b, tw, th := r.block, r.tw, r.th
	th2 := make([]float32, tw*th)
	scale := 1 / float64(b*b)
	if f.BitDepth > 8 {
		scale /= float64(int(1) << (f.BitDepth - 8))
	}
	packed := packedSums(b, f.BitDepth)
	bytes := f.Packed8() // an 8-bit frame read as bytes for a GPU backend: summed as they are
	for ty := range th {
		clear(sums)
		for y := ty * b; y < ty*b+b; y++ {
			switch {
			case bytes != nil && packed:
				addPacked8(bytes[y*f.Width:y*f.Width+tw*b], b, sums)
			case bytes != nil:
				addPlain(bytes[y*f.Width:y*f.Width+tw*b], b, sums)
			case packed:
				addPacked(f.Y[y*f.Width:y*f.Width+tw*b], b, sums)
			default:
				addPlain(f.Y[y*f.Width:y*f.Width+tw*b], b, sums)
			}
		}
		out := th2[ty*tw : ty*tw+tw]
		for tx, s := range sums {
			if packed {
				s = s&0xffff + s>>16&0xffff + s>>32&0xffff + s>>48
			}
			out[tx] = float32(float64(s) * scale)
		}
	}
	return th2
}

// packedSums reports whether blocks of side b at bitDepth can be summed four samples at
// a time in the 16-bit lanes of a uint64 (addPacked): b a multiple of 4, and no lane,
// which sums b*b/4 samples, above 16 bits. A thumbnail is taken of each of the first
// frames of both inputs, every pixel read, so this is most of its cost.
func packedSums(b, bitDepth int) bool {
	return b%4 == 0 && b*b/4*(1<<bitDepth-1) < 1<<16
}

// addPlain adds each b-sample block of row to its sum: samples or bytes.
func addPlain[S uint8 | uint16](row []S, b int, sums []uint64) {
	for tx := range sums {
		var s uint64
		for _, v := range row[tx*b : tx*b+b] {
			s += uint64(v)
		}
		sums[tx] += s
	}
}

// addPacked adds each b-sample block of row, four samples a word, to its sum's 16-bit
// lanes (packedSums says when they cannot carry into each other). Blocks of 8, 12, 16 and
// 24 samples (720p, 1080p, 1440p and 4K thumbnails) have loops of their own, without an
// inner loop.
//
//go:noinline
func addPacked(row []uint16, b int, sums []uint64) {
	// A byte view reads the samples as little-endian words at any alignment.
	bs := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(row))), 2*len(row))
	le := binary.LittleEndian
	switch b {
	case 8:
		bs = bs[:16*len(sums)]
		for tx := range sums {
			blk := bs[16*tx : 16*tx+16]
			sums[tx] += le.Uint64(blk) + le.Uint64(blk[8:])
		}
	case 12:
		bs = bs[:24*len(sums)]
		for tx := range sums {
			blk := bs[24*tx : 24*tx+24]
			sums[tx] += le.Uint64(blk) + le.Uint64(blk[8:]) + le.Uint64(blk[16:])
		}
	case 16:
		bs = bs[:32*len(sums)]
		for tx := range sums {
			blk := bs[32*tx : 32*tx+32]
			sums[tx] += le.Uint64(blk) + le.Uint64(blk[8:]) + le.Uint64(blk[16:]) + le.Uint64(blk[24:])
		}
	case 24:
		bs = bs[:48*len(sums)]
		for tx := range sums {
			blk := bs[48*tx : 48*tx+48]
			sums[tx] += le.Uint64(blk) + le.Uint64(blk[8:]) + le.Uint64(blk[16:]) +
				le.Uint64(blk[24:]) + le.Uint64(blk[32:]) + le.Uint64(blk[40:])
		}
	default:
		for tx := range sums {
			blk := bs[2*tx*b : 2*tx*b+2*b]
			var s uint64
			for i := 0; i+8 <= len(blk); i += 8 {
				s += le.Uint64(blk[i:])
			}
			sums[tx] += s
		}
	}
}

// lowBytes keeps the even bytes of a word, each in a 16-bit lane.
const lowBytes = 0x00ff00ff00ff00ff

// pairs adds a word's odd bytes to its even ones, in four 16-bit lanes.
func pairs(x uint64) uint64 { return x&lowBytes + x>>8&lowBytes }

// addPacked8 is addPacked on bytes: a word of eight bytes adds its even and its odd
// bytes to the sum's four 16-bit lanes, two samples a lane, and a block's last four
// bytes (b is a multiple of 4) two to each of the low two lanes. So a lane gets at most
// 2*ceil(b/8) samples of a row, and of a block at most 256 for the blocks up to 32 that
// packedSums allows at 8 bits: 256 times 255 is 65280, below 2^16.
//
//go:noinline
func addPacked8(row []byte, b int, sums []uint64) {
	le := binary.LittleEndian
	switch b {
	case 8:
		row = row[:8*len(sums)]
		for tx := range sums {
			sums[tx] += pairs(le.Uint64(row[8*tx:]))
		}
	case 12:
		row = row[:12*len(sums)]
		for tx := range sums {
			blk := row[12*tx : 12*tx+12]
			sums[tx] += pairs(le.Uint64(blk)) + pairs(uint64(le.Uint32(blk[8:])))
		}
	case 16:
		row = row[:16*len(sums)]
		for tx := range sums {
			blk := row[16*tx : 16*tx+16]
			sums[tx] += pairs(le.Uint64(blk)) + pairs(le.Uint64(blk[8:]))
		}
	case 24:
		row = row[:24*len(sums)]
		for tx := range sums {
			blk := row[24*tx : 24*tx+24]
			sums[tx] += pairs(le.Uint64(blk)) + pairs(le.Uint64(blk[8:])) + pairs(le.Uint64(blk[16:]))
		}
	default:
		for tx := range sums {
			blk := row[tx*b : tx*b+b]
			var s uint64
			i := 0
			for ; i+8 <= len(blk); i += 8 {
				s += pairs(le.Uint64(blk[i:]))
			}
			if i < len(blk) {
				s += pairs(uint64(le.Uint32(blk[i:])))
			}
			sums[tx] += s
		}
	}
}

// Result is what a search found.
type Result struct {
	// Best is the offset whose frame pairs differ least: the distorted's frame
	// i+Best shows the reference's frame i. Zero when nothing was searched.
	Best int
	// Window is the offsets searched either side of zero: the window asked for, or
	// less where the inputs are short.
	Window int
	// Pairs is the number of frame pairs compared at each offset; 0 when the inputs
	// were too short to search.
	Pairs int
	// BestPSNR and ZeroPSNR are the measure, in dB, at Best and at offset zero.
	BestPSNR, ZeroPSNR float64
	// Confidence, from 0 to 1, is the share of the runner-up's error that Best removes;
	// the runner-up is the best offset not next to Best, so that slow motion, where the
	// neighbours differ little, keeps a high confidence and still pictures a low one.
	Confidence float64
	// Confirmed is set when the second measure (the mean absolute difference) picks
	// Best as well.
	Confirmed bool
}

// Clear reports whether Best is clearly better than zero: confirmed, confident, and
// with a markedly smaller error. A Best of zero is never "clearly" another offset.
func (r Result) Clear() bool {
	return r.Best != 0 && r.Pairs > 0 && r.Confirmed && r.Confidence >= MinConfidence &&
		r.ZeroPSNR <= r.BestPSNR-10*math.Log10(clearRatio)
}

// Search compares the recorded thumbnails at every offset of the window.
func (r *Recorder) Search() Result {
	nr, nd := len(r.thumbs[0]), len(r.thumbs[1])
	w := min(r.window, min(nr, nd)/2)
	k := min(Pairs, nr-w, nd-w)
	res := Result{Window: w}
	if k < minPairs {
		return Result{}
	}
	res.Pairs = k
	mse := make([]float64, 2*w+1)
	mad := make([]float64, 2*w+1)
	// Each offset's errors are its own, so the offsets are shared out among
	// the processors: on a short input the search runs when the last frame
	// is read, after the scoring threads are done with everything else,
	// and its time is the score's tail.
	parts := min(runtime.GOMAXPROCS(0), len(mse))
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for o := p; o < len(mse); o += parts {
				d := o - w
				ri, di := max(0, -d), max(0, d)
				var se, ae float64
				for i := range k {
					s, a := diff(r.thumbs[0][ri+i], r.thumbs[1][di+i])
					se += s
					ae += a
				}
				mse[o], mad[o] = se/float64(k), ae/float64(k)
			}
		})
	}
	wg.Wait()
	best, bestMAD := argmin(mse, w), argmin(mad, w)
	res.Best, res.Confirmed = best-w, best == bestMAD
	res.BestPSNR, res.ZeroPSNR = psnr(mse[best]), psnr(mse[w])
	runnerUp := math.Inf(1)
	for i, e := range mse {
		if i < best-1 || i > best+1 {
			runnerUp = min(runnerUp, e)
		}
	}
	if math.IsInf(runnerUp, 1) { // a window of one: every other offset is a neighbour
		for i, e := range mse {
			if i != best {
				runnerUp = min(runnerUp, e)
			}
		}
	}
	if runnerUp > 0 && !math.IsInf(runnerUp, 1) {
		res.Confidence = 1 - mse[best]/runnerUp
	}
	return res
}

// diff is the mean squared and mean absolute difference of two thumbnails. It is the
// search's whole cost (61 offsets of 60 pairs of 14 400 samples at the defaults, a
// few percent of scoring a short clip), so it keeps four independent sums: a single
// sum waits on each addition before the next, four let the additions overlap. Where
// the kernel's processor path has vectors, diffAVX2 keeps the same four sums in the
// lanes of a register, so both give the same doubles.
func diff(a, b []float32) (se, ae float64) {
	b = b[:len(a)]
	var s, abs [4]float64
	i := 0
	if vectorDiff() && len(a) >= 4 {
		var sums [8]float64
		i = len(a) &^ 3
		diffAVX2(&a[0], &b[0], i, &sums)
		copy(s[:], sums[:4])
		copy(abs[:], sums[4:])
	}
	s, abs = diffSums(a, b, i, s, abs)
	n := float64(len(a))
	return (s[0] + s[1] + s[2] + s[3]) / n, (abs[0] + abs[1] + abs[2] + abs[3]) / n
}

// diffSums adds samples i and on of a and b into the four sums of squares s and
// of absolute values abs, sample i+k into sum k in groups of four, and the last
// few into sum 0.
func diffSums(a, b []float32, i int, s, abs [4]float64) ([4]float64, [4]float64) {
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	a0, a1, a2, a3 := abs[0], abs[1], abs[2], abs[3]
	for ; i+4 <= len(a); i += 4 {
		d0, d1 := float64(a[i]-b[i]), float64(a[i+1]-b[i+1])
		d2, d3 := float64(a[i+2]-b[i+2]), float64(a[i+3]-b[i+3])
		s0, s1, s2, s3 = s0+d0*d0, s1+d1*d1, s2+d2*d2, s3+d3*d3
		a0, a1, a2, a3 = a0+math.Abs(d0), a1+math.Abs(d1), a2+math.Abs(d2), a3+math.Abs(d3)
	}
	for ; i < len(a); i++ {
		d := float64(a[i] - b[i])
		s0 += d * d
		a0 += math.Abs(d)
	}
	return [4]float64{s0, s1, s2, s3}, [4]float64{a0, a1, a2, a3}
}

// argmin is the index of the smallest of v; of equal values, the one nearest to
// centre (offset zero), so that still pictures keep their frames where they are.
func argmin(v []float64, centre int) int {
	best := centre
	for i, e := range v {
		if e < v[best] || e == v[best] && abs(i-centre) < abs(best-centre) {
			best = i
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// psnr is the PSNR in dB of a mean squared error on the 8-bit scale, capped at 100 dB
// for identical pictures.
func psnr(mse float64) float64 {
	if mse <= 255*255*1e-10 {
		return 100
	}
	return 10 * math.Log10(255*255/mse)
}
