package decode

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Decoders, the values of Decoder.Name and of a result's decoder: ffmpeg's software
// decoders, NVIDIA's NVDEC (ffmpeg's -hwaccel cuda) or VA-API (AMD and Intel).
const (
	Software = "software"
	NVDEC    = "nvdec"
	VAAPI    = "vaapi"
)

// HW is the hardware decoder to try for an encoded input; the zero value decodes in
// software.
type HW struct {
	// Name is Software (or empty), NVDEC or VAAPI.
	Name string
	// Device is VA-API's render node (/dev/dri/renderD128).
	Device string
}

// Hwaccels returns the hardware acceleration methods this ffmpeg build offers
// (`ffmpeg -hide_banner -hwaccels`: cuda, vaapi, ...), asked once per process and
// ffmpeg program and kept. A build that cannot say offers none.
func (t *Tools) Hwaccels(ctx context.Context) []string {
	e, _ := hwaccels.LoadOrStore(t.FFmpeg, &hwaccelsEntry{})
	entry := e.(*hwaccelsEntry)
	entry.once.Do(func() {
		out, err := exec.CommandContext(ctx, t.FFmpeg, "-hide_banner", "-hwaccels").Output()
		if err != nil {
			return
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasSuffix(line, ":") {
				continue // "Hardware acceleration methods:"
			}
			entry.methods = append(entry.methods, line)
		}
	})
	return entry.methods
}

// hwaccels caches Hwaccels by ffmpeg program: a worker finds its tools again for each
// input, and ffmpeg's answer does not change while the process runs.
var hwaccels sync.Map // string -> *hwaccelsEntry

type hwaccelsEntry struct {
	once    sync.Once
	methods []string
}

// ChooseHW picks the hardware decoder for a slot's GPU of vendor (nvidia, amd, intel;
// anything else decodes in software): NVDEC when ffmpeg offers cuda, VA-API on the
// first of renderNodes when ffmpeg offers vaapi; else software.
func (t *Tools) ChooseHW(ctx context.Context, vendor string, renderNodes []string) HW {
	switch vendor {
	case "nvidia":
		if slices.Contains(t.Hwaccels(ctx), "cuda") {
			return HW{Name: NVDEC}
		}
	case "amd", "intel":
		if len(renderNodes) > 0 && slices.Contains(t.Hwaccels(ctx), "vaapi") {
			return HW{Name: VAAPI, Device: renderNodes[0]}
		}
	}
	return HW{Name: Software}
}

// RenderNodes lists the DRM render nodes under dev (/dev): the ones a slot's container
// was given.
func RenderNodes(dev string) []string {
	nodes, _ := filepath.Glob(filepath.Join(dev, "dri", "renderD*"))
	slices.Sort(nodes)
	return nodes
}

// hwArgs are ffmpeg's input options for hw. Without -hwaccel_output_format the decoded
// frames come back to system memory (nv12, p010), and -pix_fmt converts them to the
// same planar format as software decoding, losslessly.
func hwArgs(hw HW) []string {
	switch hw.Name {
	case NVDEC:
		return []string{"-hwaccel", "cuda"}
	case VAAPI:
		return []string{"-hwaccel", "vaapi", "-hwaccel_device", hw.Device}
	}
	return nil
}
