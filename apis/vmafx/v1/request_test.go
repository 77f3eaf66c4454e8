package v1

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// requestCase is one case of testdata/worker-requests.json: the worker command line the
// operator wrote before the typed request (Args) and the request that replaced it. The
// operator's tests check that it builds Request; the worker's that Request runs as Args
// did.
type requestCase struct {
	Name    string          `json:"name"`
	Args    []string        `json:"args"`
	Request json.RawMessage `json:"request"`
}

// TestWorkerRequestsParse: every case's request reads, and writes back the same JSON.
func TestWorkerRequestsParse(t *testing.T) {
	data, err := os.ReadFile("testdata/worker-requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []requestCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 9 {
		t.Fatalf("%d cases, want every mode", len(cases))
	}
	for _, c := range cases {
		r, err := ParseWorkerRequest(c.Request)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		back, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := compact(t, back), compact(t, c.Request); got != want {
			t.Errorf("%s: written back as\n%s\nwant\n%s", c.Name, got, want)
		}
	}
}

func compact(t *testing.T, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(out)
}

// TestParseWorkerRequestRefuses: what a worker must not run is refused with the field
// named.
func TestParseWorkerRequestRefuses(t *testing.T) {
	const head = `"apiVersion":"vmafx.dev/v1","kind":"WorkerRequest"`
	const score = `"score":{"reference":"r.y4m","distorted":"d.y4m"}`
	for _, tc := range []struct{ name, json, want string }{
		{"not JSON", `score`, "not a JSON object"},
		{"another version", `{"apiVersion":"vmafx.dev/v2","kind":"WorkerRequest",` + score + `}`, `apiVersion "vmafx.dev/v2"`},
		{"no version", `{` + score + `}`, `apiVersion "", kind ""`},
		{"another kind", `{"apiVersion":"vmafx.dev/v1","kind":"VmafxJob",` + score + `}`, `kind "VmafxJob"`},
		{"unknown field", `{` + head + `,` + score + `,"priority":3}`, `unknown field "priority"`},
		{"unknown nested field", `{` + head + `,"score":{"reference":"r","distorted":"d","distorteds":["x"]}}`, `unknown field "distorteds"`},
		{"wrong type", `{` + head + `,"score":{"reference":"r","distorted":"d","width":"wide"}}`, "score.width"},
		{"trailing data", `{` + head + `,` + score + `} {}`, "after top-level value"},
		{"no mode", `{` + head + `}`, "exactly one of score, encode and ladderReport, got 0"},
		{"two modes", `{` + head + `,` + score + `,"ladderReport":{"output":"s3://b/"}}`, "got 2"},
		{"no distorted", `{` + head + `,"score":{"reference":"r"}}`, "score.distorted: required"},
		{"negative", `{` + head + `,"score":{"reference":"r","distorted":"d","frames":{"start":-1}}}`, "score.frames.start: -1: want 0 or more"},
		{"bit depth", `{` + head + `,"score":{"reference":"r","distorted":"d","scoringBitDepth":9}}`, "score.scoringBitDepth: 9"},
		{"worst frames", `{` + head + `,"score":{"reference":"r","distorted":"d","worstFrames":21}}`, "score.worstFrames: 21: want 0 to 20"},
		{"output format", `{` + head + `,"score":{"reference":"r","distorted":"d","outputFormat":"xml"}}`, "score.outputFormat"},
		{"empty chunk", `{` + head + `,"score":{"reference":"r","distorted":"d","chunk":{"start":0,"count":0,"totalFrames":4,"part":"p"}}}`, "score.chunk.count: 0: want 1 or more"},
		{"endpoint", `{` + head + `,` + score + `,"store":{"s3Endpoint":"minio:9000"}}`, `store.s3Endpoint: "minio:9000": want an http:// or https:// URL`},
		{"no merge parts", `{` + head + `,"score":{"reference":"r","distorted":"d","output":"o","merge":{"parts":0}}}`, "score.merge.parts"},
		{"encode without height", `{` + head + `,"encode":{"reference":"r","output":"o","encoder":"libx264","value":23}}`, "encode.height: 0: want 1 or more"},
		{"report without output", `{` + head + `,"ladderReport":{"rungs":[]}}`, "ladderReport.output: required"},
		{"rendition without distorted", `{` + head + `,"score":{"reference":"r","distorted":"d","renditions":[{"output":"o"}]}}`, "score.renditions[0].distorted: required"},
		{"too many renditions", `{` + head + `,"score":{"reference":"r","distorted":"d","renditions":[` +
			strings.TrimSuffix(strings.Repeat(`{"distorted":"x"},`, MaxWorkerRenditions), ",") + `]}}`, "score.renditions: 9 distorted inputs with score.distorted: at most 8"},
		{"too large", `{` + head + `,"score":{"reference":"` + strings.Repeat("r", MaxWorkerRequestBytes) + `","distorted":"d"}}`, "more than 65536"},
	} {
		_, err := ParseWorkerRequest([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
