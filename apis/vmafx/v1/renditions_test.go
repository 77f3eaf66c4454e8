package v1

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseRenditions: a result of several renditions is checked row by row: failed rows
// pass, a scored row without frames or with a score out of range refuses the message.
func TestParseRenditions(t *testing.T) {
	ok := WorkerRendition{Score: 90, Min: 80, Max: 95, Frames: 10}
	failed := WorkerRendition{Error: &WorkerError{Reason: ReasonBadInput, Message: "short"}}
	for name, c := range map[string]struct {
		rows []WorkerRendition
		want string // "" accepted
	}{
		"scored and failed": {rows: []WorkerRendition{ok, failed}},
		"no frames":         {rows: []WorkerRendition{ok, {Score: 90, Min: 80, Max: 95}}, want: "rendition 1 has no frames"},
		"out of range":      {rows: []WorkerRendition{{Score: 101, Min: 80, Max: 102, Frames: 1}}, want: "rendition 0 score 101"},
		"too many":          {rows: make([]WorkerRendition, MaxWorkerRenditions+1), want: "at most 8"},
	} {
		msg, err := json.Marshal(WorkerResult{Version: ResultVersion, Renditions: c.rows})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseWorkerResult(msg)
		switch {
		case c.want == "" && (err != nil || len(got.Renditions) != len(c.rows)):
			t.Errorf("%s: %v, %+v; want the rows", name, err, got)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err %v, want %q", name, err, c.want)
		}
	}
}
