package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/media/fetch"
)

// MaxPictureBytes bounds a report file the console streams: a worst frame's picture is
// three panels at most 960 pixels wide, a few MiB as PNG; the plot less.
const MaxPictureBytes = 16 << 20

// reportFileName is every name the worker gives a picture in a report (frame-NNNNNN.png,
// vmafxv1.WorstFramePicture, and the plot): the report route serves these and nothing else.
var reportFileName = regexp.MustCompile(`^(frame-[0-9]{6}\.png|` + regexp.QuoteMeta(vmafxv1.ReportPlotSVG) + `|` + regexp.QuoteMeta(vmafxv1.ReportPlotPNG) + `)$`)

// reportOf is the URI of j's report when it drew pictures: the output's URI followed by
// ".report/", as the worker writes it. The status's own report field must agree: the
// console reads only beside the output the job's spec names.
func reportOf(j *vmafxv1.VmafxJob) string {
	r := j.Status.Result
	if j.Spec.Output == nil || r == nil || j.Spec.WorstFrames == nil || !j.Spec.WorstFrames.Pictures {
		return ""
	}
	report := string(*j.Spec.Output) + vmafxv1.ReportSuffix
	if r.Report != report {
		return ""
	}
	return report
}

// listedWorst are the worst frames of j's status, with their pictures' console URLs when
// pictures is set.
func listedWorst(j *vmafxv1.VmafxJob, pictures bool) []worstFrame {
	r := j.Status.Result
	if r == nil {
		return nil
	}
	var out []worstFrame
	for _, f := range r.WorstFrames {
		w := worstFrame{Frame: int(f.Index), VMAF: f.VMAF}
		if pictures {
			w.Picture = reportURL(j, vmafxv1.WorstFramePicture(int(f.Index)))
		}
		out = append(out, w)
	}
	return out
}

func reportURL(j *vmafxv1.VmafxJob, file string) string {
	return Prefix + "namespaces/" + j.Namespace + "/jobs/" + j.Name + "/report/" + file
}

// reportFile streams a picture of the job's report from its object store, read as the
// caller with the keys of the job's Secret (the per-frame output's access rules):
// only the worker's names (reportFileName), only a worst frame the status lists, only
// when the console reads outputs, at most MaxPictureBytes.
func (c *Console) reportFile(w http.ResponseWriter, r *http.Request, s session) {
	file := r.PathValue("file")
	if !reportFileName.MatchString(file) {
		http.Error(w, "a report holds frame-NNNNNN.png, "+vmafxv1.ReportPlotSVG+" and "+vmafxv1.ReportPlotPNG+" only", http.StatusNotFound)
		return
	}
	if !c.opts.ReadOutputs {
		http.Error(w, "this console does not read outputs (vmafx-api --console-read-outputs is off)", http.StatusNotFound)
		return
	}
	j, err := c.store.Get(r.Context(), s.User, s.Namespace, r.PathValue("name"))
	if err != nil {
		http.Error(w, err.Error(), statusCode(err))
		return
	}
	report := reportOf(j)
	if report == "" {
		http.Error(w, "job "+j.Name+" has no pictures", http.StatusNotFound)
		return
	}
	if n, ok := frameOf(file); ok && !listsFrame(j, n) {
		http.Error(w, fmt.Sprintf("frame %d is not one of job %s's worst frames", n, j.Name), http.StatusNotFound)
		return
	}
	u, err := fetch.ParseURI(report + file)
	if err != nil || !objectStore(report) {
		http.Error(w, "the report "+report+" is not in object storage the console reads", http.StatusNotFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), outputTimeout)
	defer cancel()
	obj, done, note := c.openObject(ctx, s, j, u, MaxPictureBytes, "the report's pictures")
	if obj == nil {
		code := http.StatusBadGateway
		if strings.HasPrefix(note, secretRefused) {
			code = http.StatusForbidden
		}
		http.Error(w, note, code)
		return
	}
	defer done()
	ct := "image/png"
	if file == vmafxv1.ReportPlotSVG {
		ct = "image/svg+xml"
	}
	w.Header().Set("Content-Type", ct)
	// The pictures are the caller's alone, and do not change once written.
	w.Header().Set("Cache-Control", "private, max-age=300")
	// An SVG opened on its own is a document of the console's origin: whatever its store
	// holds, it runs no script and loads nothing.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	if _, err := io.Copy(w, obj); err != nil {
		// Headers are sent: the broken body is all the browser learns.
		return
	}
}

// frameOf is the frame index a frame-NNNNNN.png names.
func frameOf(file string) (int, bool) {
	if len(file) != len("frame-000000.png") || file[:6] != "frame-" {
		return 0, false
	}
	n, err := strconv.Atoi(file[6:12])
	return n, err == nil
}

func listsFrame(j *vmafxv1.VmafxJob, n int) bool {
	for _, f := range j.Status.Result.WorstFrames {
		if int(f.Index) == n {
			return true
		}
	}
	return false
}
