package command

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
)

// noEnv is an environment without variables.
func noEnv(string) string { return "" }

// runConfig reads request as "run --request" does.
func runConfig(t *testing.T, request string, extra ...string) (*vmafxv1.WorkerRequest, *scoreConfig, error) {
	t.Helper()
	f := newRunFlags()
	if err := f.set.FlagSet().Parse(append([]string{"--request", request}, extra...)); err != nil {
		t.Fatal(err)
	}
	return f.config(noEnv, nil)
}

// allFields compares configs field by field, unexported ones too.
var allFields = cmp.Exporter(func(reflect.Type) bool { return true })

// TestRequestRunsAsFlags: every case of testutil.WorkerRequestCases (the operator's tests
// check that it builds each request) runs as the command line the operator wrote before
// the request, to the last setting.
func TestRequestRunsAsFlags(t *testing.T) {
	modes := map[string]bool{}
	for _, c := range testutil.WorkerRequestCases(t) {
		req, fromRequest, err := runConfig(t, c.JSON)
		if err != nil {
			t.Errorf("%s: request: %v", c.Name, err)
			continue
		}
		var want, got any
		switch c.Args[0] {
		case "score":
			want, err = parseScore(c.Args[1:], noEnv)
			got = fromRequest
			modes[map[bool]string{true: "probe"}[req.Score.Probe]+map[bool]string{true: "chunk"}[req.Score.Chunk != nil]+
				map[bool]string{true: "merge"}[req.Score.Merge != nil]] = true
		case "encode":
			f := newEncodeFlags()
			if err := f.set.FlagSet().Parse(c.Args[1:]); err != nil {
				t.Fatal(err)
			}
			var flags *encodeConfig
			flags, err = f.config(noEnv)
			ec, rerr := fromRequest.encodeConfig(req)
			if rerr != nil {
				t.Errorf("%s: request: %v", c.Name, rerr)
			}
			// The encode command has no spool flags; a run's are the score's, whose
			// default limit is the one an unset limit means.
			ec.spool = flags.spool
			want, got = flags, ec
			modes["encode"] = true
		case "ladder-report":
			f := newLadderReportFlags()
			err = f.set.FlagSet().Parse(c.Args[1:])
			if err == nil {
				want, err = f.config(noEnv, nil)
			}
			lr, rerr := fromRequest.ladderReportConfig(req)
			if rerr != nil {
				t.Errorf("%s: request: %v", c.Name, rerr)
			}
			got = lr
			modes["ladder-report"] = true
		}
		if err != nil {
			t.Errorf("%s: flags: %v", c.Name, err)
			continue
		}
		if diff := cmp.Diff(want, got, allFields); diff != "" {
			t.Errorf("%s: config from the request (-flags +request):\n%s", c.Name, diff)
		}
	}
	for _, m := range []string{"", "probe", "chunk", "merge", "encode", "ladder-report"} {
		if !modes[m] {
			t.Errorf("no case runs mode %q", m)
		}
	}
}

// TestRunScores: "run --request" scores as the flags do, end to end, and reports the
// same result.
func TestRunScores(t *testing.T) {
	req := vmafxv1.NewWorkerRequest()
	req.Score = &vmafxv1.ScoreRequest{Reference: refClip, Distorted: distClip, Width: pairW, Height: pairH, Frames: &vmafxv1.FrameRange{Count: 4},
		Features: []string{"psnr"}}
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	viaRequest := runWorker(t, context.Background(), nil, "run", "--request", string(data))
	viaFlags := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, "--frames", ":4", "--features", "psnr")...)
	got, want := viaRequest.result(t), viaFlags.result(t)
	if viaRequest.code != 0 || got.Error != nil {
		t.Fatalf("exit %d, %+v, stderr:\n%s", viaRequest.code, got.Error, viaRequest.stderr)
	}
	if got.Score != want.Score || got.Frames != 4 || got.Features["psnr_y"] != want.Features["psnr_y"] {
		t.Errorf("run scored %v over %d frames (psnr_y %v), the flags %v over %d (%v)", got.Score, got.Frames, got.Features["psnr_y"],
			want.Score, want.Frames, want.Features["psnr_y"])
	}
}

// TestRunRefuses: a request the worker cannot run fails as a bad request, in the
// termination message, with the request's field named, never a flag.
func TestRunRefuses(t *testing.T) {
	const head = `"apiVersion":"vmafx.dev/v1","kind":"WorkerRequest"`
	score := func(fields string) string {
		return `{` + head + `,"score":{"reference":"` + refClip + `","distorted":"` + distClip + `","width":176,"height":144` + fields + `}}`
	}
	for _, tc := range []struct{ name, request, want string }{
		{"unknown field", `{` + head + `,"score":{"reference":"r","distorted":"d","thread":4}}`, `unknown field "thread"`},
		{"newer version", `{"apiVersion":"vmafx.dev/v2","kind":"WorkerRequest"}`, `apiVersion "vmafx.dev/v2"`},
		{"no request", ``, "--request (or VMAFX_REQUEST) is required"},
		{"chunk without part", score(`,"chunk":{"start":0,"count":4,"totalFrames":16,"part":""}`), "score.chunk needs score.chunk.part"},
		{"chunk past the total", score(`,"chunk":{"start":14,"count":4,"totalFrames":16,"part":"/tmp/p"}`), "score.chunk 14:4 ends past score.chunk.totalFrames 16"},
		{"probe and merge", score(`,"output":"/tmp/o","probe":true,"merge":{"parts":2}`), "score.probe, score.chunk and score.merge.parts exclude each other"},
		{"pictures without output", score(`,"pictures":true`), "score.pictures needs score.output"},
		{"auto with starts", score(`,"alignment":{"auto":true,"referenceStart":2}`), "score.alignment.auto finds the starts itself"},
		{"window past the bound", score(`,"alignment":{"auto":true,"window":301}`), "score.alignment.window 301: at most 300"},
		{"bad endpoint", `{` + head + `,"score":{"reference":"r","distorted":"d"},"store":{"s3Endpoint":"minio"}}`, "store.s3Endpoint"},
		{"unknown feature", score(`,"features":["vif"]`), "score.features:"},
		{"bad pixel format", score(`,"pixelFormat":"rgb24"`), "score.pixelFormat:"},
		{"renditions with auto-align", score(`,"renditions":[{"distorted":"` + distClip + `"}],"alignment":{"auto":true}`), "score.renditions do not go with score.alignment.auto"},
		{"renditions with a chunk", score(`,"output":"/tmp/o","renditions":[{"distorted":"` + distClip + `"}],"chunk":{"start":0,"count":4,"totalFrames":16,"part":"/tmp/p"}`), "do not go with score.chunk"},
		{"rendition not a URI", score(`,"renditions":[{"distorted":"http://%zz/y"}]`), "score.renditions[0].distorted"},
		{"encode raw width alone", `{` + head + `,"encode":{"reference":"r","output":"o","encoder":"libx264","value":23,"height":720,"rawWidth":1920}}`,
			"set encode.rawWidth and encode.rawHeight together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runWorker(t, context.Background(), nil, "run", "--request", tc.request)
			var res struct{ Error *vmafxv1.WorkerError } // a WorkerResult, or an encode's EncodeResult
			if err := json.Unmarshal([]byte(r.termination), &res); err != nil || res.Error == nil {
				t.Fatalf("exit %d, termination %q (%v); want an error", r.code, r.termination, err)
			}
			if msg := res.Error.Message; r.code != 2 || res.Error.Reason != vmafxv1.ReasonBadInput || !strings.Contains(msg, tc.want) {
				t.Errorf("exit %d, %s: %q; want exit 2, BadInput, %q", r.code, res.Error.Reason, msg, tc.want)
			}
			if flag := regexp.MustCompile(`--[a-z]+`).FindString(strings.ReplaceAll(res.Error.Message, "--request", "")); flag != "" {
				t.Errorf("message %q names the flag %s", res.Error.Message, flag)
			}
		})
	}
}

// TestRunReportCrash: a crashed run of a score request reports as the score would.
func TestRunReportCrash(t *testing.T) {
	term := filepath.Join(t.TempDir(), "termination-log")
	req := `{"apiVersion":"vmafx.dev/v1","kind":"WorkerRequest","score":{"reference":"` + refClip + `","distorted":"` + distClip + `"}}`
	var stdout, stderr strings.Builder
	code := ReportCrash([]string{"run", "--request", req, "--termination-log", term}, noEnv, &stdout, &stderr, "fatal error: out of memory")
	msg, err := os.ReadFile(term)
	if err != nil {
		t.Fatal(err)
	}
	r, err := vmafxv1.ParseWorkerResult(msg)
	if code != 1 || err != nil || r.Error == nil || r.Error.Reason != vmafxv1.ReasonInternal {
		t.Errorf("exit %d, result %s (%v); want exit 1 and an Internal error", code, msg, err)
	}
	encode := `{"apiVersion":"vmafx.dev/v1","kind":"WorkerRequest","encode":{"reference":"r","output":"o","encoder":"libx264","value":23,"height":720}}`
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"score", "--reference", "r"}, true},
		{[]string{"run", "--request", req}, true},
		{[]string{"run", "--request", encode}, false},
		{[]string{"run", "--request", "{"}, false},
		{[]string{"version"}, false},
	} {
		if got := Supervised(tc.args, noEnv); got != tc.want {
			t.Errorf("Supervised(%.40q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestDocsRequestExample: the request of docs/worker.md reads and runs as a score.
func TestDocsRequestExample(t *testing.T) {
	data, err := os.ReadFile("../../../docs/worker.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- request example -->\n```json\n(.*?)```").FindSubmatch(data)
	if m == nil {
		t.Fatal("docs/worker.md has no request example (<!-- request example --> and a json block)")
	}
	req, cfg, err := runConfig(t, string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if req.Score == nil || cfg.reference == nil || len(cfg.features) == 0 || cfg.chunk != nil {
		t.Errorf("request %+v: want a plain score with features", req)
	}
}
