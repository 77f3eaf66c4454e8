package console

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
)

// worstOfJob is where one rendition's (a comparison's input, a ladder's rung) score is
// made: its job's worst frames as the worker found them, each with its picture's console
// URL when the console shows it.
type worstOfJob struct {
	// Name is the input's or the rung's.
	Name, Job, Score string
	Worst            []worstFrame
	// Pictured is set when the frames' pictures are shown.
	Pictured bool
}

// worstView is the worst frames of a comparison's or a ladder's renditions, and why
// there are none or no pictures.
type worstView struct {
	// Kind is what a rendition is called on the page (input, rung).
	Kind, Namespace string
	Items           []worstOfJob
	Note            string
}

// rendition is a comparison's input or a ladder's rung: its name, its job's, and which
// of the job's distorted videos it is (K, in the job's spec order: 0 but for the inputs
// of a shared-reference group after its first).
type rendition struct {
	Name, Job string
	K         int
}

// renditionsWorst reads the jobs the operator made for owner (those labelled label,
// vmafx.dev/comparison or vmafx.dev/ladder, with owner's name), as the caller, in one
// list, and lists each rendition's worst frames
// in the table's order, with their pictures where the console reads them (the job page's
// rules: the console reads outputs, the job drew pictures in object storage, and the
// caller may read the Secret of its keys).
func (c *Console) renditionsWorst(r *http.Request, s session, kind, label, owner string, rs []rendition) worstView {
	v := worstView{Kind: kind, Namespace: s.Namespace}
	sel := labels.Set{label: vmafxv1.JobLabelValue(owner)}.String()
	list, err := c.store.List(r.Context(), s.User, s.Namespace, jobs.ListOptions{Selector: sel, Limit: listLimit})
	if err != nil {
		v.Note = "The worst frames are in the jobs' status, which the console reads as you, and may not: " + err.Error()
		return v
	}
	byName := map[string]*vmafxv1.VmafxJob{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	keys := map[string]bool{}
	hidden := false
	for _, rd := range rs {
		j := byName[rd.Job]
		if j == nil {
			continue
		}
		vid, err := jobs.Video(j, rd.K)
		if err != nil || vid.Phase != vmafxv1.JobSucceeded || vid.Worst == nil || len(vid.Worst.WorstFrames) == 0 {
			continue
		}
		report := outputs.ReportOf(j, rd.K)
		pictured := report != "" && c.opts.ReadOutputs && outputs.ObjectStore(report) && c.mayReadKeys(r.Context(), s, j, keys)
		hidden = hidden || (report != "" && !pictured)
		v.Items = append(v.Items, worstOfJob{Name: rd.Name, Job: j.Name, Score: vid.Score, Worst: listedWorst(j, rd.K, pictured), Pictured: pictured})
	}
	if hidden {
		v.Note = "Some jobs drew pictures of their worst frames that this console does not show: it shows them where it reads the job's output (see a job's page)."
	}
	return v
}

// mayReadKeys reports whether the caller may read the Secret of j's store keys (no
// Secret: the door's own access, as for the output), asking once a Secret a page.
func (c *Console) mayReadKeys(ctx context.Context, s session, j *vmafxv1.VmafxJob, seen map[string]bool) bool {
	cr := j.Spec.Credentials
	if cr == nil {
		return true
	}
	name := cr.SecretRef.Name
	if ok, asked := seen[name]; asked {
		return ok
	}
	var sec corev1.Secret
	seen[name] = c.store.Read(ctx, s.User, j.Namespace, name, &sec) == nil
	return seen[name]
}
