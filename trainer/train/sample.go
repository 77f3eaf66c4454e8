package train

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/vmafx/vmafx/vmaf"
)

// frameLog is the part of a libvmaf JSON log (ours, vmaf.Result.WriteJSON, or libvmaf's)
// that a sample needs.
type frameLog struct {
	Frames []struct {
		Metrics map[string]*float64 `json:"metrics"`
	} `json:"frames"`
}

// ReadFrames reads a libvmaf JSON per-frame log and returns each frame's values of the
// model's features, in FeatureMetrics order. A log without one of them (another model's
// features, a CSV) is an error naming the metric.
func ReadFrames(r io.Reader, model *vmaf.Model) ([][]float64, error) {
	var log frameLog
	if err := json.NewDecoder(r).Decode(&log); err != nil {
		return nil, fmt.Errorf("not a libvmaf JSON log: %w", err)
	}
	if len(log.Frames) == 0 {
		return nil, fmt.Errorf("the log has no frames")
	}
	names := model.FeatureMetrics()
	frames := make([][]float64, len(log.Frames))
	flat := make([]float64, len(log.Frames)*len(names))
	for i, f := range log.Frames {
		frames[i] = flat[i*len(names) : (i+1)*len(names) : (i+1)*len(names)]
		for k, n := range names {
			v := f.Metrics[n]
			if v == nil {
				return nil, fmt.Errorf("frame %d has no %s: the log is not of the features of model %s", i, n, model.Name)
			}
			frames[i][k] = *v
		}
	}
	return frames, nil
}
