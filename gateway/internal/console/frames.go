package console

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
	"github.com/vmafx/vmafx/media/fetch"
)

// worstFrames is how many of the lowest frames a job's page marks and lists.
const worstFrames = 5

// metric is a per-frame metric the job page plots, by libvmaf's name.
type metric struct {
	name, title, unit string
	fixed             bool // VMAF's 0..100 range rather than the data's
}

// plotted are the per-frame metrics drawn, VMAF first: the worker's names for the
// features a job asks for (spec.features), the luma PSNR for psnr.
var plotted = []metric{
	{"vmaf", "VMAF per frame", "VMAF", true},
	{"psnr_y", "PSNR (luma) per frame", "PSNR Y (dB)", false},
	{"float_ssim", "SSIM per frame", "SSIM", false},
	{"float_ms_ssim", "MS-SSIM per frame", "MS-SSIM", false},
	{"cambi", "CAMBI (banding) per frame", "CAMBI", false},
}

// PerFrame are a job's per-frame scores: Frames[i] is the frame number of Values[m][i].
type PerFrame struct {
	Frames []int
	Values map[string][]float64
}

// ParseOutput reads a worker's per-frame output: libvmaf's JSON ("frames" with
// "frameNum" and "metrics") or the worker's CSV (a Frame column, then one per metric).
// Only the plotted metrics are kept, so memory is a few numbers a frame.
func ParseOutput(r io.Reader, format vmafxv1.OutputFormat) (*PerFrame, error) {
	pf := &PerFrame{Values: map[string][]float64{}}
	if format == vmafxv1.OutputCSV {
		return pf, parseCSV(r, pf)
	}
	// Streamed frame by frame into the plotted metrics only: an hour of frames costs a
	// few MiB, not the document's size many times over.
	dec := json.NewDecoder(bufio.NewReader(r))
	bad := func(err error) error { return fmt.Errorf("the output is not libvmaf's JSON: %w", err) }
	if tok, err := dec.Token(); err != nil {
		return nil, bad(err)
	} else if tok != json.Delim('{') {
		return nil, bad(fmt.Errorf("want an object, got %v", tok))
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		if key != "frames" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, bad(err)
			}
			continue
		}
		if tok, err := dec.Token(); err != nil {
			return nil, bad(err)
		} else if tok != json.Delim('[') {
			return nil, bad(fmt.Errorf("frames: want a list, got %v", tok))
		}
		for dec.More() {
			var fr struct {
				FrameNum int `json:"frameNum"`
				Metrics  struct {
					VMAF   *float64 `json:"vmaf"`
					PSNRY  *float64 `json:"psnr_y"`
					SSIM   *float64 `json:"float_ssim"`
					MSSSIM *float64 `json:"float_ms_ssim"`
					CAMBI  *float64 `json:"cambi"`
				} `json:"metrics"`
			}
			if err := dec.Decode(&fr); err != nil {
				return nil, bad(fmt.Errorf("frame %d: %w", len(pf.Frames), err))
			}
			pf.Frames = append(pf.Frames, fr.FrameNum)
			m := fr.Metrics
			for name, v := range map[string]*float64{"vmaf": m.VMAF, "psnr_y": m.PSNRY, "float_ssim": m.SSIM, "float_ms_ssim": m.MSSSIM, "cambi": m.CAMBI} {
				if v != nil {
					pf.Values[name] = append(pf.Values[name], *v)
				}
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, bad(err)
		}
	}
	return pf, pf.check()
}

func parseCSV(r io.Reader, pf *PerFrame) error {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("the output is not the worker's CSV: %w", err)
	}
	if len(head) == 0 || head[0] != "Frame" {
		return errors.New("the output is not the worker's CSV (a Frame column first)")
	}
	cols := map[string]int{}
	for i, h := range head {
		if slices.ContainsFunc(plotted, func(m metric) bool { return m.name == h }) {
			cols[h] = i
		}
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("output line %d: %w", line, err)
		}
		n, err := strconv.Atoi(rec[0])
		if err != nil {
			return fmt.Errorf("output line %d: frame %q is not a number", line, rec[0])
		}
		pf.Frames = append(pf.Frames, n)
		for name, i := range cols {
			if i >= len(rec) {
				return fmt.Errorf("output line %d: no %s column", line, name)
			}
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				return fmt.Errorf("output line %d: %s %q is not a number", line, name, rec[i])
			}
			pf.Values[name] = append(pf.Values[name], v)
		}
	}
	return pf.check()
}

// check refuses an output whose metrics do not cover every frame, or that has none.
func (pf *PerFrame) check() error {
	if len(pf.Frames) == 0 {
		return errors.New("the output has no frames")
	}
	for name, vs := range pf.Values {
		if len(vs) != len(pf.Frames) {
			return fmt.Errorf("the output has %s for %d of its %d frames", name, len(vs), len(pf.Frames))
		}
	}
	if len(pf.Values["vmaf"]) == 0 {
		return errors.New("the output has no vmaf column")
	}
	return nil
}

// Charts draws one chart per metric present, VMAF first with its worst frames marked,
// and lists those frames: listed (the job's status, as the worker found them) when
// given, else the curve's own lowest.
func (pf *PerFrame) Charts(listed []worstFrame) ([]Chart, []worstFrame) {
	var charts []Chart
	worst := listed
	for _, m := range plotted {
		vs := pf.Values[m.name]
		if len(vs) == 0 {
			continue
		}
		pts := make([]Point, len(vs))
		for i, v := range vs {
			pts[i] = Point{X: float64(pf.Frames[i]), Y: v}
		}
		axes := Axes{X: "frame", Y: m.unit}
		var marks []Mark
		if m.fixed {
			lo, hi := 0.0, 100.0
			axes.YMin, axes.YMax = &lo, &hi
			if len(listed) == 0 {
				worst = lowest(pf.Frames, vs, worstFrames)
			}
			for _, w := range worst {
				y, err := strconv.ParseFloat(w.VMAF, 64)
				if err != nil {
					continue
				}
				marks = append(marks, Mark{X: float64(w.Frame), Y: y, Label: fmt.Sprintf("frame %d: VMAF %s", w.Frame, w.VMAF)})
			}
		}
		id := strings.ReplaceAll(m.name, "_", "-")
		charts = append(charts, lineChart(id, m.title, axes, []Series{{Label: m.unit, Points: decimate(pts, maxCurvePoints)}}, marks))
	}
	return charts, worst
}

// lowest lists the n lowest-scoring frames, lowest first (the earlier of equal ones).
func lowest(frames []int, vs []float64, n int) []worstFrame {
	order := make([]int, len(vs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case vs[a] < vs[b]:
			return -1
		case vs[a] > vs[b]:
			return 1
		}
		return 0
	})
	var out []worstFrame
	for _, i := range order[:min(n, len(order))] {
		out = append(out, worstFrame{Frame: frames[i], VMAF: strconv.FormatFloat(vs[i], 'f', 3, 64)})
	}
	return out
}

// curves reads the job's per-frame output, when the console may and can, and draws it
// with listed (the status's worst frames) marked; otherwise note says why there is no
// curve.
func (c *Console) curves(r *http.Request, s session, j *vmafxv1.VmafxJob, listed []worstFrame) (charts []Chart, worst []worstFrame, frames int, note string) {
	pf, note := c.readOutput(r.Context(), s, j)
	if pf == nil {
		return nil, listed, 0, note
	}
	charts, worst = pf.Charts(listed)
	return charts, worst, len(pf.Frames), ""
}

func (c *Console) readOutput(ctx context.Context, s session, j *vmafxv1.VmafxJob) (*PerFrame, string) {
	if j.Spec.Output == nil {
		return nil, "This job writes no per-frame output (spec.output), so only its pooled scores are known."
	}
	out := string(*j.Spec.Output)
	if j.Status.Phase != vmafxv1.JobSucceeded {
		return nil, "The per-frame curve is drawn from " + out + " once the job has succeeded."
	}
	if cond := meta.FindStatusCondition(j.Status.Conditions, vmafxv1.JobOutputWritten); cond != nil && cond.Status != "True" {
		return nil, "The worker could not write the per-frame output: " + cond.Message
	}
	u, err := fetch.ParseURI(out)
	if err != nil {
		return nil, "The output URI cannot be read: " + err.Error()
	}
	if !outputs.ObjectStore(out) {
		return nil, "The per-frame output is on the job's output volume (" + out + "), which the API server's console cannot read; copy it from the volume to plot it."
	}
	if !c.opts.ReadOutputs {
		return nil, "This console does not read outputs from object storage (vmafx-api --console-read-outputs is off); the per-frame scores are in " + out + "."
	}
	ctx, cancel := context.WithTimeout(ctx, outputs.Timeout)
	defer cancel()
	obj, done, err := c.outputs.Open(ctx, s.User, j, u, c.opts.MaxOutputBytes, "the per-frame output")
	if err != nil {
		return nil, err.Error()
	}
	defer done()
	pf, err := ParseOutput(obj, j.Spec.OutputFormat)
	if err != nil {
		return nil, "Reading the per-frame output " + out + ": " + err.Error()
	}
	return pf, ""
}
