package pictures

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/vmafx/vmafx/vmaf"
)

const clips = "../../../vmaf/testdata/clips/"

// readFrame returns frame n of a 176x144 yuv420p test clip.
func readFrame(t *testing.T, name string, n int) *vmaf.Frame {
	t.Helper()
	f, err := os.Open(clips + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := vmaf.OpenRaw(f, 176, 144, vmaf.YUV420P)
	if err != nil {
		t.Fatal(err)
	}
	fr := &vmaf.Frame{}
	for range n + 1 {
		if err := src.ReadFrame(fr); err != nil {
			t.Fatal(err)
		}
	}
	return fr
}

// roundTrip encodes img as PNG and decodes it, as a reader of the file would.
func roundTrip(t *testing.T, img image.Image) image.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	out, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// luma is the mean brightness (0 to 255) of r in img.
func luma(img image.Image, r image.Rectangle) float64 {
	var sum float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			sum += float64(cr+cg+cb) / 3 / 257
		}
	}
	return sum / float64(r.Dx()*r.Dy())
}

func TestPairOnRealClip(t *testing.T) {
	ref := readFrame(t, "p02_ref.yuv", 5)
	dist := readFrame(t, "p02_dist.yuv", 5) // libx264 CRF 45: visibly different
	img := roundTrip(t, Pair(ref, dist))
	if got, want := img.Bounds().Size(), image.Pt(3*176+2*Gap, 144); got != want {
		t.Fatalf("size %v, want %v", got, want)
	}
	refPanel := image.Rect(0, 0, 176, 144)
	distPanel := refPanel.Add(image.Pt(176+Gap, 0))
	heatPanel := refPanel.Add(image.Pt(2*(176+Gap), 0))
	for name, r := range map[string]image.Rectangle{"reference": refPanel, "distorted": distPanel, "heat map": heatPanel} {
		if l := luma(img, r); l < 1 {
			t.Errorf("%s panel is blank (mean brightness %.2f)", name, l)
		}
	}
	// The reference panel shows the reference's luma, pixel for pixel.
	if c, _, _, _ := img.At(10, 20).RGBA(); uint8(c>>8) != uint8(ref.Y[20*176+10]) {
		t.Errorf("reference pixel (10,20) = %d, want %d", c>>8, ref.Y[20*176+10])
	}

	same := roundTrip(t, Pair(ref, ref))
	if l := luma(same, heatPanel); l != 0 {
		t.Errorf("heat map of a frame against itself has brightness %.2f, want 0", l)
	}
}

func TestHeatMapBrighterWhereThePairDiffers(t *testing.T) {
	ref := readFrame(t, "p01_ref.yuv", 3)
	dist := &vmaf.Frame{Width: ref.Width, Height: ref.Height, BitDepth: ref.BitDepth, Y: append([]uint16(nil), ref.Y...)}
	// Damage one block of the distorted frame.
	block := image.Rect(40, 30, 100, 90)
	for y := block.Min.Y; y < block.Max.Y; y++ {
		for x := block.Min.X; x < block.Max.X; x++ {
			dist.Y[y*ref.Width+x] = 255 - dist.Y[y*ref.Width+x]
		}
	}
	img := roundTrip(t, Pair(ref, dist))
	off := image.Pt(2*(176+Gap), 0)
	inside := luma(img, block.Add(off))
	outside := luma(img, image.Rect(110, 100, 170, 140).Add(off))
	if !(inside > 100 && outside == 0) {
		t.Errorf("heat map brightness %.1f inside the damaged block, %.1f outside: want bright inside, black outside", inside, outside)
	}
}

func TestPairShrinksLargeFrames(t *testing.T) {
	w, h := 2*MaxPanelWidth+10, 64
	ref := &vmaf.Frame{Width: w, Height: h, BitDepth: 10, Y: make([]uint16, w*h)}
	dist := &vmaf.Frame{Width: w, Height: h, BitDepth: 10, Y: make([]uint16, w*h)}
	for i := range ref.Y {
		ref.Y[i] = 1023
	}
	img := Pair(ref, dist)
	pw := w / 3
	if got, want := img.Bounds().Size(), image.Pt(3*pw+2*Gap, h/3); got != want {
		t.Fatalf("size %v, want %v (panels shrunk by 3)", got, want)
	}
	if c := img.RGBAAt(5, 5); c.R != 255 {
		t.Errorf("10-bit white reference drawn as %v, want white", c)
	}
	if c := img.RGBAAt(2*(pw+Gap)+5, 5); c != (heat(1)) {
		t.Errorf("full-range difference drawn as %v, want white hot", c)
	}
}

func TestPlot(t *testing.T) {
	var points []Point
	for i := range 100 {
		points = append(points, Point{Index: 10 + i, VMAF: 80 + float64(i%7)})
	}
	points[42].VMAF = 12
	worst := []Point{points[42], points[0]}

	img := roundTrip(t, Image(points, worst, []int{60}))
	if got := img.Bounds().Size(); got != image.Pt(PlotWidth, PlotHeight) {
		t.Fatalf("size %v", got)
	}
	// The worst frame's dot is red where the plot puts it, and the curve is drawn.
	p := newPlot(points)
	r, g, b, _ := img.At(int(p.x(52)+0.5), int(p.y(12)+0.5)).RGBA()
	if r>>8 != 0xd6 || g>>8 != 0x27 || b>>8 != 0x28 {
		t.Errorf("worst frame 52 not marked red: %x %x %x", r>>8, g>>8, b>>8)
	}
	if l := luma(img, img.Bounds()); l > 254 || l < 200 {
		t.Errorf("plot brightness %.1f: blank or overdrawn", l)
	}

	svg := SVG(points, worst, []int{60})
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Fatalf("SVG is not XML: %v", err)
	}
	if n := strings.Count(string(svg), "<circle"); n != 2 {
		t.Errorf("SVG marks %d frames, want 2", n)
	}
	if !strings.Contains(string(svg), ">52: 12.00<") {
		t.Error("SVG does not label the worst frame")
	}
	if !strings.Contains(string(svg), ">scene 60<") || strings.Count(string(svg), "stroke-dasharray") != 1 {
		t.Error("SVG does not mark the scene cut at 60")
	}
	// The cut is dashed in the PNG, above the curve's band.
	if r, g, b, _ := img.At(int(p.x(60)+0.5), margin).RGBA(); r>>8 != 0x99 || g>>8 != 0x99 || b>>8 != 0x99 {
		t.Errorf("scene cut not drawn at frame 60: %x %x %x", r>>8, g>>8, b>>8)
	}
	// No frames: an empty plot, not a crash.
	_ = SVG(nil, nil, nil)
	_ = Image(nil, nil, nil)
	_ = Image(points[:1], nil, nil)
}
