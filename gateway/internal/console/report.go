package console

import (
	"net/http"
	"strconv"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
)

// listedWorst are the worst frames of j's distorted video k in its status, with their
// pictures' console URLs when pictures is set.
func listedWorst(j *vmafxv1.VmafxJob, k int, pictures bool) []worstFrame {
	v, err := jobs.Video(j, k)
	if err != nil || v.Worst == nil {
		return nil
	}
	var out []worstFrame
	for _, f := range v.Worst.WorstFrames {
		w := worstFrame{Frame: int(f.Index), VMAF: f.VMAF}
		if pictures {
			w.Picture = reportURL(j, k, vmafxv1.WorstFramePicture(int(f.Index)))
		}
		out = append(out, w)
	}
	return out
}

// reportURL is the console's URL of file in the report of j's distorted video k.
func reportURL(j *vmafxv1.VmafxJob, k int, file string) string {
	u := Prefix + "namespaces/" + j.Namespace + "/jobs/" + j.Name + "/report/" + file
	if k > 0 {
		u += "?rendition=" + strconv.Itoa(k)
	}
	return u
}

// reportFile streams a picture of the report of the job's distorted video ?rendition=
// (0, spec.distorted, unless given) from its object store, read as the
// caller with the keys of the job's Secret (the per-frame output's access rules, package
// outputs): only the worker's names, only a worst frame the status lists, only when the
// console reads outputs, at most outputs.MaxPictureBytes.
func (c *Console) reportFile(w http.ResponseWriter, r *http.Request, s session) {
	file := r.PathValue("file")
	if !outputs.IsPictureName(file) {
		http.Error(w, "a report holds "+outputs.PictureNames+" only", http.StatusNotFound)
		return
	}
	if !c.opts.ReadOutputs {
		http.Error(w, "this console does not read outputs (vmafx-api --console-read-outputs is off)", http.StatusNotFound)
		return
	}
	k, err := jobs.ParseRendition(r.URL.Query().Get("rendition"))
	if err != nil {
		http.Error(w, err.Error(), statusCode(err))
		return
	}
	j, err := c.store.Get(r.Context(), s.User, s.Namespace, r.PathValue("name"))
	if err != nil {
		http.Error(w, err.Error(), statusCode(err))
		return
	}
	p, err := c.outputs.Picture(r.Context(), s.User, j, k, file, outputs.MaxPictureBytes)
	if err != nil {
		http.Error(w, err.Error(), statusCode(err))
		return
	}
	defer p.Close()
	p.Serve(w)
}
