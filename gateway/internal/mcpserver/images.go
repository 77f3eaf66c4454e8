package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
)

// The bounds on the pictures worst_frames returns as images: an answer of a few MiB, not
// of every picture of a report (a job may list 20 worst frames), so that neither the
// door's memory nor a model's context takes more than a glance needs.
const (
	// maxImages is the plot and the five worst frames a job lists by default.
	maxImages = 1 + vmafxv1.DefaultWorstFrames
	// maxImageBytes bounds one picture: three panels at most 960 pixels wide are a few
	// MiB as PNG at most.
	maxImageBytes = 4 << 20
	// maxImagesBytes bounds the pictures of one answer together.
	maxImagesBytes = 8 << 20
)

// images reads up to n pictures of j's distorted video k as u, PNGs only (the plot first, then the worst
// frames, lowest first), within the bounds above; a picture left out is named, with
// why, in a text content after the images, so the model knows what it did not get.
func (h *handlers) images(ctx context.Context, u access.User, j *vmafxv1.VmafxJob, k, n int) []mcp.Content {
	var names []string
	for _, name := range outputs.Pictures(j, k) {
		if outputs.ContentType(name) == outputs.PNG {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	if report := outputs.ReportOf(j, k); !outputs.ObjectStore(report) {
		return []mcp.Content{&mcp.TextContent{Text: "The pictures are in " + report + ", on the job's own output volume, which this door cannot read: no picture is returned as an image."}}
	}
	// The plot is last in Pictures: it goes first, the overview before the details.
	names = append(names[len(names)-1:], names[:len(names)-1]...)
	var out []mcp.Content
	var left []string
	total := 0
	for i, name := range names {
		if i >= n {
			left = append(left, name+" (beyond the images asked for)")
			continue
		}
		room := maxImagesBytes - total
		if room <= 0 {
			left = append(left, name+" (the answer's images are at their bound)")
			continue
		}
		b, err := h.pictures.ReadPicture(ctx, u, j, k, name, int64(min(maxImageBytes, room)))
		if err != nil {
			left = append(left, name+" ("+err.Error()+")")
			continue
		}
		total += len(b)
		out = append(out, &mcp.ImageContent{Data: b, MIMEType: outputs.PNG,
			Meta: mcp.Meta{"vmafx.dev/picture": name, "vmafx.dev/uri": outputs.ReportOf(j, k) + name}})
	}
	if len(left) > 0 {
		out = append(out, &mcp.TextContent{Text: "Pictures not returned as images: " + strings.Join(left, "; ") + ". Their URIs are in the answer above."})
	}
	return out
}
