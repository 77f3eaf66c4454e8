package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/pictures"
	"github.com/vmafx/vmafx/worker/internal/worstframes"
)

// worstMode is what a score reports about where it is made: the worst frames, scenes
// and pictures (see package worstframes and pictures).
type worstMode struct {
	// worstFrames is how many of the worst frames the result lists.
	worstFrames int
	// pictures writes the worst frames' pictures and the score plot into the report.
	pictures bool
	// sceneThreshold is the luma histogram distance that cuts a scene.
	sceneThreshold float64
}

// reportVersion is the version of report.json's layout.
const reportVersion = "vmafx.dev/report/v1"

// addWorstFlags adds the worst frames flags: the count to *worstFrames, the rest to r.
func addWorstFlags(s *cli.Set, worstFrames *int, r *vmafxv1.ScoreRequest) {
	s.Int(worstFrames, "worst-frames", envName("worst-frames"), vmafxv1.DefaultWorstFrames, 0, vmafxv1.MaxWorstFrames,
		"how many of the lowest-scoring frames the result lists, with a few of their features (0 to 20); the report beside --output lists them with every feature")
	s.Bool(&r.Pictures, "pictures", envName("pictures"), false,
		"write pictures into the report beside --output (OUTPUT"+vmafxv1.ReportSuffix+"): for each worst frame a PNG of the reference, the distorted frame and their difference heat map side by side, and the per-frame scores plotted (scores.svg, scores.png); costs a second decode of the inputs up to the last worst frame")
	s.Func("scene-threshold", envName("scene-threshold"), strconv.FormatFloat(worstframes.DefaultSceneThreshold, 'g', -1, 64),
		"luma histogram distance (0 to 1: the share of the reference's samples that changed bins since the frame before) at which a frame starts a new scene", func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0 && f <= 1) {
				return errors.New("want a number above 0, at most 1")
			}
			r.SceneThreshold = f
			return nil
		})
}

// check rejects pictures without an output to write them beside.
func (w *worstMode) check(output string, chunked bool) error {
	if w.pictures && (output == "" || chunked) {
		return badRequest("--pictures needs --output (the pictures are written beside it) and a run that scores the whole video (not --chunk, --merge-parts or --probe)")
	}
	return nil
}

// worstState is what a run learnt about where its score is made.
type worstState struct {
	cuts *worstframes.Cuts
	// first is the index of the first frame the kernel read (vmaf.Options.FirstIndex).
	first  int
	scenes []worstframes.Scene
	// report is the report's URI once written.
	report string
}

// addWorst adds the worst frames, percentiles and scene summary of res to r.
func (s *scorer) addWorst(r *vmafxv1.WorkerResult, res *vmaf.Result) {
	r.Percentiles = worstframes.Percentiles(res)
	r.WorstFrames = worstframes.Compact(res, worstframes.Worst(res, s.cfg.worstFrames))
	if s.worst.cuts != nil && s.worst.scenes == nil {
		s.worst.scenes = worstframes.Scenes(res, s.worst.cuts.Starts(s.worst.first, s.cfg.sceneThreshold))
	}
	r.Scenes = worstframes.Summary(s.worst.scenes)
	r.Report = s.worst.report
}

// reportDoc is report.json: everything the result summarises, in full.
type reportDoc struct {
	Version     string                     `json:"version"`
	Frames      int                        `json:"frames"`
	Pooled      vmafxv1.WorkerScene        `json:"pooled"`
	Percentiles *vmafxv1.WorkerPercentiles `json:"percentiles,omitempty"`
	WorstFrames []reportFrame              `json:"worstFrames"`
	Scenes      *reportScenes              `json:"scenes,omitempty"`
	Plot        map[string]string          `json:"plot,omitempty"`
}

type reportFrame struct {
	worstframes.Frame
	// Picture is the frame's picture, relative to the report.
	Picture string `json:"picture,omitempty"`
}

type reportScenes struct {
	Method    string              `json:"method"`
	Bins      int                 `json:"bins"`
	Threshold float64             `json:"threshold"`
	List      []worstframes.Scene `json:"list"`
}

// writeReport writes report.json, and with --pictures the pictures, beside the output;
// open reopens the inputs, as the kernel read them, for the pictures. A failure is the
// output's: the score is kept.
func (s *scorer) writeReport(ctx context.Context, res *vmaf.Result, stores *fetch.Stores, open func() (ref, dist vmaf.FrameSource, closeAll func(), err error)) (err error) {
	// The report stands beside a score that is made: whatever goes wrong drawing it, a
	// panic included, is reported as the output's error and the score is kept.
	defer func() {
		if p := recover(); p != nil {
			s.log.Error(nil, "Panic while writing the report", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error writing the report: panic: %v", p)
		}
	}()
	base, err := reportBase(s.cfg.output)
	if err != nil {
		return err
	}
	worst := worstframes.Worst(res, s.cfg.worstFrames)
	if s.worst.cuts != nil {
		s.worst.scenes = worstframes.Scenes(res, s.worst.cuts.Starts(s.worst.first, s.cfg.sceneThreshold))
	}
	p := res.Pooled["vmaf"]
	doc := reportDoc{
		Version: reportVersion, Frames: len(res.Frames), Percentiles: worstframes.Percentiles(res),
		Pooled:      vmafxv1.WorkerScene{Frames: len(res.Frames), Mean: p.Mean, HarmonicMean: p.HarmonicMean, Min: p.Min},
		WorstFrames: []reportFrame{},
	}
	if len(res.Frames) > 0 {
		doc.Pooled.Start = res.Frames[0].Index
	}
	if doc.Percentiles != nil {
		doc.Pooled.P5 = doc.Percentiles.P5
	}
	if s.worst.cuts != nil {
		doc.Scenes = &reportScenes{Method: "luma-histogram", Bins: worstframes.HistogramBins, Threshold: s.cfg.sceneThreshold, List: s.worst.scenes}
	}
	put := func(name, contentType string, data []byte) error {
		return putReport(ctx, stores, base, name, contentType, data)
	}
	for _, f := range worst {
		doc.WorstFrames = append(doc.WorstFrames, reportFrame{Frame: f})
	}
	if s.cfg.pictures {
		var points, marks []pictures.Point
		for i := range res.Frames {
			points = append(points, pictures.Point{Index: res.Frames[i].Index, VMAF: res.Frames[i].VMAF})
		}
		for _, f := range worst {
			marks = append(marks, pictures.Point{Index: f.Index, VMAF: f.VMAF})
		}
		var cuts []int
		for i, sc := range s.worst.scenes {
			if i > 0 {
				cuts = append(cuts, sc.Start)
			}
		}
		if err := put(vmafxv1.ReportPlotSVG, "image/svg+xml", pictures.SVG(points, marks, cuts)); err != nil {
			return err
		}
		if err := put(vmafxv1.ReportPlotPNG, "image/png", encodePNG(pictures.Image(points, marks, cuts))); err != nil {
			return err
		}
		doc.Plot = map[string]string{"svg": vmafxv1.ReportPlotSVG, "png": vmafxv1.ReportPlotPNG}
		names, err := s.framePictures(worst, open, put)
		if err != nil {
			return err
		}
		for i := range doc.WorstFrames {
			doc.WorstFrames[i].Picture = names[i]
		}
	}
	js, err := json.MarshalIndent(&doc, "", "  ")
	if err != nil {
		return err
	}
	if err := put(vmafxv1.ReportJSON, "application/json", append(js, '\n')); err != nil {
		return err
	}
	s.worst.report = fetch.Redact(base)
	return nil
}

// framePictures reads the inputs again up to the last worst frame and writes each worst
// frame's picture, returning their names in worst's order. Only the frame pair at hand
// is held.
func (s *scorer) framePictures(worst []worstframes.Frame, open func() (ref, dist vmaf.FrameSource, closeAll func(), err error), put func(name, contentType string, data []byte) error) ([]string, error) {
	names := make([]string, len(worst))
	want := map[int][]int{} // read position -> positions in worst
	last := -1
	for i, f := range worst {
		pos := f.Index - s.worst.first
		want[pos] = append(want[pos], i)
		last = max(last, pos)
		names[i] = vmafxv1.WorstFramePicture(f.Index)
	}
	if last < 0 {
		return names, nil
	}
	ref, dist, closeAll, err := open()
	if err != nil {
		return nil, fmt.Errorf("reading the inputs again for the pictures: %w", err)
	}
	defer closeAll()
	rf, df := &vmaf.Frame{}, &vmaf.Frame{}
	for pos := 0; pos <= last; pos++ {
		if err := ref.ReadFrame(rf); err != nil {
			return nil, fmt.Errorf("reading the reference again for the pictures, frame %d: %w", pos, err)
		}
		if err := dist.ReadFrame(df); err != nil {
			return nil, fmt.Errorf("reading the distorted video again for the pictures, frame %d: %w", pos, err)
		}
		if len(want[pos]) == 0 {
			continue
		}
		data := encodePNG(pictures.Pair(rf, df))
		if err := put(names[want[pos][0]], "image/png", data); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// reportBase is the report's URI: the output's followed by vmafxv1.ReportSuffix.
func reportBase(output string) (*url.URL, error) {
	u, err := fetch.ParseURI(output)
	if err != nil {
		return nil, err
	}
	r := *u
	r.Path += vmafxv1.ReportSuffix
	r.RawPath = ""
	return &r, nil
}

// putReport writes one file of the report: into the directory on a file:// output, as an
// object under the prefix otherwise.
func putReport(ctx context.Context, stores *fetch.Stores, base *url.URL, name, contentType string, data []byte) error {
	if base.Scheme == "file" {
		dir := filepath.Clean(base.Path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("report %s: %w", fetch.Redact(base), pathCause(err))
		}
		tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
		if err != nil {
			return fmt.Errorf("report %s: %w", fetch.Redact(base), pathCause(err))
		}
		_, err = tmp.Write(data)
		err = errors.Join(err, tmp.Chmod(0o644), tmp.Close())
		if err == nil {
			err = os.Rename(tmp.Name(), filepath.Join(dir, name))
		}
		if err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("report %s%s: %w", fetch.Redact(base), name, pathCause(err))
		}
		return nil
	}
	u := *base
	u.Path += name
	w, err := stores.Create(ctx, &u, contentType)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func encodePNG(img image.Image) []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, img) // writing to memory cannot fail
	return b.Bytes()
}

// reopen returns a function that opens the inputs again as the score opened them, for
// the pictures: through the score's own opener (the distorted scaled to the reference's
// size, the same options and skips), frames paired the same way.
func (s *scorer) reopen(open opener, refSkip, distSkip int) func() (vmaf.FrameSource, vmaf.FrameSource, func(), error) {
	return func() (vmaf.FrameSource, vmaf.FrameSource, func(), error) {
		ref, dist, err := open(refSkip, distSkip)
		if err != nil {
			return nil, nil, nil, err
		}
		var refSrc, distSrc vmaf.FrameSource = ref, dist
		if n := refSkip - ref.Skipped; n > 0 {
			refSrc = &skipped{FrameSource: refSrc, n: n, flag: "--reference-start"}
		}
		if n := distSkip - dist.Skipped; n > 0 {
			distSrc = &skipped{FrameSource: distSrc, n: n, flag: "--distorted-start"}
		}
		if s.cfg.align {
			refSrc, distSrc = pairShortest(refSrc, distSrc)
		}
		return refSrc, distSrc, func() { ref.Close(); dist.Close() }, nil
	}
}

// worstSummary is the log's short form of where r's score is made: the 5th percentile,
// the worst frame and the worst scene.
func worstSummary(r *vmafxv1.WorkerResult) string {
	var parts []string
	if p := r.Percentiles; p != nil {
		parts = append(parts, fmt.Sprintf("p5 %.6f", p.P5))
	}
	if len(r.WorstFrames) > 0 {
		parts = append(parts, fmt.Sprintf("frame %d %.6f", r.WorstFrames[0].Index, r.WorstFrames[0].VMAF))
	}
	if sc := r.Scenes; sc != nil && sc.Worst != nil {
		parts = append(parts, fmt.Sprintf("worst of %d scenes from frame %d, mean %.6f", sc.Count, sc.Worst.Start, sc.Worst.Mean))
	}
	return strings.Join(parts, ", ")
}
