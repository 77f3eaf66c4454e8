package decode

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/vmafx/vmafx/vmaf"
)

// Output pixel formats by chroma layout and bit depth: the kernel reads
// planar 4:2:0, 4:2:2, 4:4:4 and gray at 8, 10 and 12 bits.
var outputFormats = map[string]map[int]vmaf.PixelFormat{
	"420":  {8: vmaf.YUV420P, 10: vmaf.YUV420P10LE, 12: vmaf.YUV420P12LE},
	"422":  {8: vmaf.YUV422P, 10: vmaf.YUV422P10LE, 12: vmaf.YUV422P12LE},
	"444":  {8: vmaf.YUV444P, 10: vmaf.YUV444P10LE, 12: vmaf.YUV444P12LE},
	"gray": {8: vmaf.Gray, 10: vmaf.Gray10, 12: vmaf.Gray12},
}

// Patterns of ffmpeg pixel format names (libavutil/pixfmt.h), by family.
var (
	// yuv420p, yuvj422p, yuva444p10le, yuv440p, yuv411p, yuv420p9be ...
	planarRE = regexp.MustCompile(`^yuva?j?(4[0-4][0-4])p(\d+)?(le|be)?$`)
	// gray, gray10le, ya8, ya16be
	grayRE = regexp.MustCompile(`^(?:gray|ya)(\d+)?(le|be)?$`)
	// p010le, p210be, p416le (semi-planar high depth), y210le, y212le (packed 4:2:2)
	semiRE = regexp.MustCompile(`^[py]([024])(1[026])(le|be)$`)
	// gbrp, gbrap12le, rgb24, bgr48le, rgba64be, x2rgb10le, 0rgb, ...
	rgbRE = regexp.MustCompile(`^(?:gbra?p|[a0x]?(?:rgb|bgr)[a0x]?|x2(?:rgb|bgr))(\d+)?(le|be)?$`)
)

// semi-planar and packed 8-bit formats
var packed8 = map[string]string{
	"nv12": "420", "nv21": "420", "nv16": "422", "nv20le": "422", "nv20be": "422", "nv24": "444", "nv42": "444",
	"yuyv422": "422", "uyvy422": "422", "yvyu422": "422", "uyyvyy411": "422", "yuv411p": "422",
	"vuya": "444", "vuyx": "444", "ayuv64le": "444", "xv30le": "444", "xv36le": "444",
}

// OutputFormat returns the format the kernel reads a decoder's frames in:
// the same chroma layout and bit depth where the kernel has it, and else the
// nearest that keeps the luma: 9-bit is written as 10-bit, 14- and 16-bit as
// 12-bit (the kernel's deepest), 4:4:0 and 4:1:x chroma as 4:4:4 or 4:2:2,
// RGB as 4:4:4 YUV. name is ffprobe's pix_fmt, e.g. "yuv420p10le".
func OutputFormat(name string) (vmaf.PixelFormat, error) {
	layout, depth, ok := classify(strings.ToLower(name))
	if !ok {
		return vmaf.PixelFormatUnknown, fmt.Errorf("%w: pixel format %q", ErrUndecodable, name)
	}
	switch {
	case depth <= 8:
		depth = 8
	case depth <= 10:
		depth = 10
	default:
		depth = 12
	}
	return outputFormats[layout][depth], nil
}

// classify returns the chroma layout ("420", "422", "444", "gray") and bit
// depth of an ffmpeg pixel format name.
func classify(name string) (layout string, depth int, ok bool) {
	bits := func(s string) int {
		if s == "" {
			return 8
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	if l, ok := packed8[name]; ok {
		depth = 8
		if strings.HasPrefix(name, "xv30") {
			depth = 10
		} else if strings.HasPrefix(name, "xv36") || strings.HasPrefix(name, "ayuv64") {
			depth = 12
		}
		return l, depth, true
	}
	if m := planarRE.FindStringSubmatch(name); m != nil {
		switch m[1] {
		case "420", "422", "444":
			layout = m[1]
		case "410":
			layout = "420"
		case "411":
			layout = "422"
		default: // 440
			layout = "444"
		}
		return layout, bits(m[2]), true
	}
	if m := grayRE.FindStringSubmatch(name); m != nil {
		return "gray", bits(m[1]), true
	}
	if m := semiRE.FindStringSubmatch(name); m != nil {
		layout = map[string]string{"0": "420", "2": "422", "4": "444"}[m[1]]
		return layout, bits(m[2]), true
	}
	if m := rgbRE.FindStringSubmatch(name); m != nil {
		d := bits(m[1])
		switch {
		case strings.HasPrefix(name, "x2"):
			d = 10
		case strings.Contains(name, "48") || strings.Contains(name, "64"):
			d = 16
		case !strings.HasPrefix(name, "gbr"):
			d = 8 // rgb24, rgba, 0rgb: the number is bits per pixel
		}
		return "444", d, true
	}
	return "", 0, false
}
