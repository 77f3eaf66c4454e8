package console

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestParseOutputJSONAndCSV(t *testing.T) {
	js := `{"version":"x","frames":[{"frameNum":0,"metrics":{"vmaf":90.5,"psnr_y":40,"adm2":1}},{"frameNum":1,"metrics":{"vmaf":12.25,"psnr_y":30,"adm2":1}}]}`
	csv := "Frame,adm2,psnr_y,vmaf,\n0,1.000000,40.000000,90.500000,\n1,1.000000,30.000000,12.250000,\n"
	for _, tc := range []struct {
		name, in string
		format   vmafxv1.OutputFormat
	}{{"json", js, vmafxv1.OutputJSON}, {"default is json", js, ""}, {"csv", csv, vmafxv1.OutputCSV}} {
		t.Run(tc.name, func(t *testing.T) {
			pf, err := ParseOutput(strings.NewReader(tc.in), tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(pf.Frames, pf.Values["vmaf"], pf.Values["psnr_y"]) != "[0 1] [90.5 12.25] [40 30]" || len(pf.Values) != 2 {
				t.Errorf("parsed %v %v, want frames 0 and 1 with vmaf and psnr_y only", pf.Frames, pf.Values)
			}
			charts, worst := pf.Charts(nil)
			if len(charts) != 2 || charts[0].ID != "vmaf" || charts[0].Points != 2 || charts[1].ID != "psnr-y" {
				t.Errorf("charts %+v, want VMAF then PSNR, 2 points each", charts)
			}
			if len(worst) != 2 || worst[0] != (worstFrame{Frame: 1, VMAF: "12.250"}) {
				t.Errorf("worst frames %v, want frame 1 first", worst)
			}
		})
	}
}

// TestParseOutputKeepsEveryPlottedMetric: the JSON reader and the CSV reader know every
// metric the page plots.
func TestParseOutputKeepsEveryPlottedMetric(t *testing.T) {
	var js, head, row []string
	for i, m := range plotted {
		js = append(js, fmt.Sprintf("%q:%d", m.name, i+1))
		head = append(head, m.name)
		row = append(row, fmt.Sprint(i+1))
	}
	for format, in := range map[vmafxv1.OutputFormat]string{
		vmafxv1.OutputJSON: `{"version":"x","frames":[{"frameNum":7,"metrics":{` + strings.Join(js, ",") + `}}],"pooled_metrics":{"vmaf":{"mean":1}}}`,
		vmafxv1.OutputCSV:  "Frame," + strings.Join(head, ",") + ",\n7," + strings.Join(row, ",") + ",\n",
	} {
		pf, err := ParseOutput(strings.NewReader(in), format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for i, m := range plotted {
			if got := pf.Values[m.name]; len(got) != 1 || got[0] != float64(i+1) {
				t.Errorf("%s: %s = %v, want [%d]", format, m.name, got, i+1)
			}
		}
	}
}

func TestParseOutputRefusesBadOutputs(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		format   vmafxv1.OutputFormat
		want     string
	}{
		{"not json", "Frame,vmaf\n", "", "not libvmaf's JSON"},
		{"no frames", `{"frames":[]}`, "", "no frames"},
		{"no vmaf", `{"frames":[{"frameNum":0,"metrics":{"psnr_y":1}}]}`, "", "no vmaf"},
		{"a frame without vmaf", `{"frames":[{"frameNum":0,"metrics":{"vmaf":1}},{"frameNum":1,"metrics":{}}]}`, "", "vmaf for 1 of its 2 frames"},
		{"csv without a Frame column", "vmaf\n1\n", vmafxv1.OutputCSV, "Frame column"},
		{"csv with a word", "Frame,vmaf,\n0,high,\n", vmafxv1.OutputCSV, `line 2: vmaf "high" is not a number`},
		{"csv short line", "Frame,psnr_y,vmaf,\n0,1\n", vmafxv1.OutputCSV, "line 2: no vmaf column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOutput(strings.NewReader(tc.in), tc.format)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one that says %q", err, tc.want)
			}
		})
	}
}

func TestDecimateKeepsDips(t *testing.T) {
	pts := make([]Point, 100000)
	for i := range pts {
		pts[i] = Point{X: float64(i), Y: 90}
	}
	pts[54321].Y = 3
	got := decimate(pts, maxCurvePoints)
	if len(got) > maxCurvePoints {
		t.Fatalf("%d points, want at most %d", len(got), maxCurvePoints)
	}
	dip := false
	for i, p := range got {
		dip = dip || (p.X == 54321 && p.Y == 3)
		if i > 0 && p.X <= got[i-1].X {
			t.Fatalf("points out of order at %d: %v after %v", i, p, got[i-1])
		}
	}
	if !dip {
		t.Error("the one-frame dip was dropped")
	}
	if short := pts[:10]; len(decimate(short, maxCurvePoints)) != 10 {
		t.Error("a short curve was decimated")
	}
}

func TestTicks(t *testing.T) {
	if got := fmt.Sprint(ticks(0, 100, 5)); got != "[0 20 40 60 80 100]" {
		t.Errorf("ticks(0, 100) = %s", got)
	}
	var labels []string
	for _, v := range logTicks(math.Log10(420), math.Log10(4200)) {
		labels = append(labels, tickLabel(math.Pow(10, v)))
	}
	if got := strings.Join(labels, " "); got != "500 1000 2000" {
		t.Errorf("log ticks from 420 to 4200 = %s, want 500 1000 2000", got)
	}
}

func TestLadderSeries(t *testing.T) {
	r := func(name string, h int32, kbps int64, score string, hull bool) vmafxv1.LadderRung {
		return vmafxv1.LadderRung{Name: name, Encoder: vmafxv1.EncoderX264, Height: h, Bitrate: kbps * 1000, Score: score, Hull: hull}
	}
	series := ladderSeries([]vmafxv1.LadderRung{
		r("720-a", 720, 4000, "95", true), r("720-b", 720, 1000, "80", false), r("360-a", 360, 900, "78", true),
		{Name: "failed", Encoder: vmafxv1.EncoderX264, Height: 360, Phase: vmafxv1.RungFailed},
	})
	var got []string
	for _, s := range series {
		var xs []string
		for _, p := range s.Points {
			xs = append(xs, fmt.Sprint(p.X))
		}
		got = append(got, fmt.Sprintf("%s%v:%s", s.Label, s.Hull, strings.Join(xs, ",")))
	}
	if want := "libx264 720pfalse:1000,4000 libx264 360pfalse:900 convex hulltrue:900,4000"; strings.Join(got, " ") != want {
		t.Errorf("series %q, want %q", strings.Join(got, " "), want)
	}
}

func TestChartEscapes(t *testing.T) {
	ch := lineChart(`a"b`, "<script>alert(1)</script>", Axes{X: "<x>", Y: "y"}, []Series{{Label: "</title><script>", Points: []Point{{X: 1, Y: 2, Label: "<b>"}}, Dots: true}}, []Mark{{X: 1, Y: 2, Label: "<i>"}})
	for _, bad := range []string{"<script>", "<b>", "<i>", `a"b`, "<x>"} {
		if strings.Contains(string(ch.SVG), bad) {
			t.Errorf("the SVG carries %q unescaped: %s", bad, ch.SVG)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/console/namespaces/a/jobs": "/console/namespaces/a/jobs",
		"/console/":                  "",
		"https://evil.example/":      "",
		"//evil.example/console/":    "",
		"/console/login?next=x":      "",
		"/console/\\evil":            "",
		"/v1/namespaces/a/jobs":      "",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		site, origin string
		want         bool
	}{
		{"", "", true}, {"same-origin", "http://door.example", true}, {"none", "", true},
		{"cross-site", "", false}, {"same-site", "", false}, {"", "http://evil.example", false}, {"", "null", true},
	} {
		r := httptest.NewRequest("POST", "http://door.example/console/login", nil)
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := sameOrigin(r); got != tc.want {
			t.Errorf("Sec-Fetch-Site %q, Origin %q: %v, want %v", tc.site, tc.origin, got, tc.want)
		}
	}
}

func TestCSRFTokenIsPerToken(t *testing.T) {
	a, again := csrfToken("a"), csrfToken("a")
	if a == csrfToken("b") || a != again || strings.Contains(csrfToken("secret-token"), "secret") {
		t.Error("the form token must be the same for one bearer token, differ between two, and not show the token")
	}
}

// BenchmarkParseOutput reads an hour at 24 fps of libvmaf's JSON with VMAF's features and
// PSNR: the memory a job page's curve costs the door.
func BenchmarkParseOutput(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"version":"x","fps":24,"frames":[`)
	const frames = 24 * 3600
	for i := range frames {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"frameNum":%d,"metrics":{"integer_adm2":0.981234,"integer_adm_scale0":0.951234,"integer_adm_scale1":0.961234,"integer_adm_scale2":0.971234,"integer_adm_scale3":0.981234,"integer_motion2":3.123456,"integer_motion":3.223456,"integer_vif_scale0":0.612345,"integer_vif_scale1":0.712345,"integer_vif_scale2":0.812345,"integer_vif_scale3":0.912345,"psnr_y":41.123456,"psnr_cb":44.123456,"psnr_cr":45.123456,"vmaf":%.6f}}`, i, 90+float64(i%10))
	}
	sb.WriteString(`],"pooled_metrics":{}}`)
	doc := sb.String()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		pf, err := ParseOutput(strings.NewReader(doc), vmafxv1.OutputJSON)
		if err != nil || len(pf.Frames) != frames {
			b.Fatal(err)
		}
	}
}

// TestStreamsOneASession: a session's newer live list ends its older one, which is told
// it was replaced; the streams open at once are bounded.
func TestStreamsOneASession(t *testing.T) {
	ss := streams{open: map[string]*stream{}}
	ctx1, stop1 := context.WithCancel(context.Background())
	first, ok := ss.start("a", stop1)
	if !ok {
		t.Fatal("first stream refused")
	}
	_, stop2 := context.WithCancel(context.Background())
	second, ok := ss.start("a", stop2)
	if !ok || ctx1.Err() == nil || !first.replaced.Load() || second.replaced.Load() {
		t.Fatalf("second stream of a session: ok %v, first ended %v, first replaced %v", ok, ctx1.Err() != nil, first.replaced.Load())
	}
	ss.end("a", first) // the replaced stream's handler returns: the newer one stays
	if ss.open["a"] != second {
		t.Error("ending the replaced stream forgot the newer one")
	}
	ss.end("a", second)
	if len(ss.open) != 0 {
		t.Errorf("%d streams left open", len(ss.open))
	}
	for i := range maxStreams {
		if _, ok := ss.start(fmt.Sprint(i), func() {}); !ok {
			t.Fatalf("stream %d refused under the bound", i)
		}
	}
	if _, ok := ss.start("one more", func() {}); ok {
		t.Errorf("stream %d accepted, want at most %d", maxStreams+1, maxStreams)
	}
}

// TestComparisonRenditions: a comparison's entries are their jobs' distorted videos in
// table order: the first of a job is its spec.distorted (0), the next its first rendition.
func TestComparisonRenditions(t *testing.T) {
	table := []vmafxv1.ComparisonEntry{{Name: "r1", Job: "ab-r1"}, {Name: "r2", Job: "ab-r1"}, {Name: "r3", Job: "ab-r1"}, {Name: "r4", Job: "ab-r4"}, {Name: "r5", Job: "ab-r4"}}
	var got []int
	for _, rd := range comparisonRenditions(table) {
		got = append(got, rd.K)
	}
	if want := []int{0, 1, 2, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("renditions %v, want %v", got, want)
	}
}
