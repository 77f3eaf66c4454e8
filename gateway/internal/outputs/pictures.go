package outputs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/media/fetch"
)

// MaxPictureBytes bounds a report file a door streams: a worst frame's picture is three
// panels at most 960 pixels wide, a few MiB as PNG; the plot less.
const MaxPictureBytes = 16 << 20

// Content types of the report's pictures.
const (
	PNG = "image/png"
	SVG = "image/svg+xml"
)

// pictureName is every name the worker gives a picture in a report (frame-NNNNNN.png,
// vmafxv1.WorstFramePicture, and the plot): the doors serve these and nothing else, so
// no name reaches another object of the bucket.
var pictureName = regexp.MustCompile(`^(frame-[0-9]{6}\.png|` + regexp.QuoteMeta(vmafxv1.ReportPlotSVG) + `|` + regexp.QuoteMeta(vmafxv1.ReportPlotPNG) + `)$`)

// PictureNames says, for errors, which names a report's pictures have.
var PictureNames = "frame-NNNNNN.png (a worst frame's), " + vmafxv1.ReportPlotSVG + " and " + vmafxv1.ReportPlotPNG

// IsPictureName reports whether file is a name the worker gives a picture.
func IsPictureName(file string) bool { return pictureName.MatchString(file) }

// ContentType is the type of the picture named file.
func ContentType(file string) string {
	if file == vmafxv1.ReportPlotSVG {
		return SVG
	}
	return PNG
}

// ReportOf is the URI of the report of j's distorted video k (in spec order, 0 for a job
// of one) when it drew pictures: its output's URI followed by ".report/", as the worker
// writes it. The status's own report field must agree: a door reads only beside an
// output the job's spec names, never a URI the status alone gives.
func ReportOf(j *vmafxv1.VmafxJob, k int) string {
	v, err := jobs.Video(j, k)
	if err != nil || v.Output == "" || v.Worst == nil || j.Spec.WorstFrames == nil || !j.Spec.WorstFrames.Pictures {
		return ""
	}
	report := v.Output + vmafxv1.ReportSuffix
	if v.Worst.Report != report {
		return ""
	}
	return report
}

// Pictures are the names of the pictures of j's distorted video k, its worst frames'
// (lowest first) then the plot (SVG and PNG); none when it drew none.
func Pictures(j *vmafxv1.VmafxJob, k int) []string {
	v, err := jobs.Video(j, k)
	if err != nil || v.Phase != vmafxv1.JobSucceeded || ReportOf(j, k) == "" {
		return nil
	}
	var out []string
	for _, f := range v.Worst.WorstFrames {
		out = append(out, vmafxv1.WorstFramePicture(int(f.Index)))
	}
	return append(out, vmafxv1.ReportPlotSVG, vmafxv1.ReportPlotPNG)
}

// Picture is one picture of a job's report, open for reading.
type Picture struct {
	Name, ContentType string
	// Body holds at most the size the picture was opened with.
	Body  io.Reader
	close func()
}

// Close frees the picture's read.
func (p *Picture) Close() { p.close() }

// Picture opens the picture file of the report of j's distorted video k (j as u read
// it, so u's rights on the job are checked already), read as u with the keys of the
// job's Secret, at most maxBytes: only the worker's names (IsPictureName), only a worst
// frame the status lists for that video, only from object storage. A refusal is a 404
// for a picture that is not there to serve, a 403 when u may not read the Secret (Open).
func (r *Reader) Picture(ctx context.Context, u access.User, j *vmafxv1.VmafxJob, k int, file string, maxBytes int64) (*Picture, error) {
	if !IsPictureName(file) {
		return nil, notFound("a report holds " + PictureNames + " only, not " + strconv.Quote(file))
	}
	v, err := jobs.Video(j, k)
	if err != nil {
		return nil, err
	}
	report := ""
	if v.Phase == vmafxv1.JobSucceeded {
		report = ReportOf(j, k)
	}
	if report == "" {
		return nil, notFound(videoName(j, k) + " has no pictures (spec.worstFrames.pictures, once it has succeeded)")
	}
	if n, ok := frameOf(file); ok && !listsFrame(v.Worst, n) {
		return nil, notFound(fmt.Sprintf("frame %d is not one of %s's worst frames", n, videoName(j, k)))
	}
	uri, err := fetch.ParseURI(report + file)
	if err != nil || !ObjectStore(report) {
		return nil, notFound("the report " + report + " is not in object storage (s3://, gs://, azure://), which is all a door reads")
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	obj, done, err := r.Open(ctx, u, j, uri, maxBytes, "the report's pictures")
	if err != nil {
		cancel()
		return nil, err
	}
	return &Picture{Name: file, ContentType: ContentType(file), Body: obj, close: func() { done(); cancel() }}, nil
}

// ErrTooLarge is ReadPicture's error for a picture over its bound.
var ErrTooLarge = errors.New("the picture is larger than a door hands out")

// ReadPicture reads the whole picture file of j's report (Picture), refusing one over
// maxBytes with ErrTooLarge rather than cutting it.
func (r *Reader) ReadPicture(ctx context.Context, u access.User, j *vmafxv1.VmafxJob, k int, file string, maxBytes int64) ([]byte, error) {
	p, err := r.Picture(ctx, u, j, k, file, maxBytes+1)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	b, err := io.ReadAll(p.Body)
	if err != nil {
		return nil, badGateway("Reading " + file + " of the report: " + err.Error())
	}
	if int64(len(b)) > maxBytes {
		return nil, fmt.Errorf("%s: %w (%d bytes at most)", file, ErrTooLarge, maxBytes)
	}
	return b, nil
}

// frameOf is the frame index a frame-NNNNNN.png names.
func frameOf(file string) (int, bool) {
	if len(file) != len("frame-000000.png") || file[:6] != "frame-" {
		return 0, false
	}
	n, err := strconv.Atoi(file[6:12])
	return n, err == nil
}

// videoName names j's distorted video k for errors: the job for a job of one.
func videoName(j *vmafxv1.VmafxJob, k int) string {
	if len(j.Spec.Renditions) == 0 {
		return "job " + j.Name
	}
	return fmt.Sprintf("rendition %d of job %s", k, j.Name)
}

func listsFrame(w *vmafxv1.JobWorst, n int) bool {
	for _, f := range w.WorstFrames {
		if int(f.Index) == n {
			return true
		}
	}
	return false
}

// Serve answers with the picture: its type, private caching, and a sandbox for an SVG.
func (p *Picture) Serve(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", p.ContentType)
	// The pictures are the caller's alone, and do not change once written.
	h.Set("Cache-Control", "private, max-age=300")
	h.Set("X-Content-Type-Options", "nosniff")
	// An SVG opened on its own is a document of the door's origin: whatever its store
	// holds, it runs no script and loads nothing.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	// Headers are sent once the copy starts: a broken body is all the client learns.
	_, _ = io.Copy(w, p.Body)
}
