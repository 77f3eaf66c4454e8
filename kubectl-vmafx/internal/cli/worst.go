package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// worstView is what `worst -o json|yaml` prints: the job's score and where it is made,
// or one of its distorted videos' for a shared-reference group's job (Rendition, its
// index in the job's spec order, and Distorted, its URI).
type worstView struct {
	Name        string                  `json:"name"`
	Rendition   *int                    `json:"rendition,omitempty"`
	Distorted   string                  `json:"distorted,omitempty"`
	Phase       vmafxv1.JobPhase        `json:"phase,omitempty"`
	Message     string                  `json:"message,omitempty"`
	Score       string                  `json:"score"`
	Percentiles *vmafxv1.JobPercentiles `json:"percentiles,omitempty"`
	WorstFrames []vmafxv1.JobFrame      `json:"worstFrames"`
	Scenes      *vmafxv1.JobScenes      `json:"scenes,omitempty"`
	Report      string                  `json:"report,omitempty"`
}

// groupView is what `worst -o json|yaml` prints for a shared-reference group's job
// without --rendition: every distorted video's view, in the job's spec order.
type groupView struct {
	Name       string      `json:"name"`
	Renditions []worstView `json:"renditions"`
}

func (o *options) worstCmd() *cobra.Command {
	rendition := -1
	cmd := &cobra.Command{
		Use:   "worst JOB",
		Short: "Show a succeeded VmafxJob's worst frames, score percentiles and worst scene, and where its report and pictures lie",
		Long: `Show a succeeded VmafxJob's worst frames, score percentiles and worst scene, and where its report and pictures lie.

A job of a shared-reference comparison scores several distorted videos (spec.renditions):
worst shows each one's in a section of its own, in the job's spec order, or only the one
--rendition names (0 is spec.distorted, k is spec.renditions[k-1]).`,
		Example: `  kubectl vmafx worst my-job
  kubectl vmafx worst my-job -o json
  kubectl vmafx worst my-comparison-r1 --rendition 2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.output != "" && o.output != "json" && o.output != "yaml" {
				return fmt.Errorf("--output %q: worst prints a table, json or yaml", o.output)
			}
			c, ns, err := o.client()
			if err != nil {
				return err
			}
			j := &vmafxv1.VmafxJob{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: args[0]}, j); err != nil {
				return err
			}
			videos := j.Videos()
			if rendition >= len(videos) {
				return fmt.Errorf("--rendition %d: job %s scores %d distorted videos, 0 to %d in its spec order", rendition, j.Name, len(videos), len(videos)-1)
			}
			if len(videos) == 1 || rendition >= 0 {
				k := max(rendition, 0)
				v, err := videoView(j, k, videos[k])
				if err != nil {
					return err
				}
				return o.printWorst(v)
			}
			g := groupView{Name: j.Name}
			for k, vid := range videos {
				v, _ := videoView(j, k, vid)
				g.Renditions = append(g.Renditions, v)
			}
			return o.printGroup(g)
		},
	}
	cmd.Flags().IntVar(&rendition, "rendition", -1, "for a shared-reference comparison's job, show only its distorted video of this index in the job's spec order (0: spec.distorted; default: every one)")
	return cmd
}

// videoView is the view of j's distorted video k, v; an error when it has no score, for
// a job of one video (a group's view says so in its phase and message).
func videoView(j *vmafxv1.VmafxJob, k int, v vmafxv1.JobVideo) (worstView, error) {
	view := worstView{Name: j.Name}
	if len(j.Spec.Renditions) > 0 {
		view.Rendition, view.Distorted, view.Phase, view.Message = &k, v.Distorted, v.Phase, v.Message
	}
	if v.Phase == vmafxv1.JobFailed {
		return view, fmt.Errorf("%s failed: %s", videoName(j, k), v.Message)
	}
	if v.Phase != vmafxv1.JobSucceeded || v.Worst == nil {
		return view, fmt.Errorf("%s has no score yet (phase %s)", videoName(j, k), phaseOrPending(v.Phase))
	}
	w := v.Worst
	view.Score, view.Percentiles, view.WorstFrames, view.Scenes, view.Report = v.Score, w.Percentiles, w.WorstFrames, w.Scenes, w.Report
	return view, nil
}

// videoName names j's distorted video k in errors: the job, for a job of one.
func videoName(j *vmafxv1.VmafxJob, k int) string {
	if len(j.Spec.Renditions) == 0 {
		return "job " + j.Name
	}
	return fmt.Sprintf("rendition %d of job %s", k, j.Name)
}

// printGroup prints every distorted video of a group's job: as one document for json and
// yaml, else a section each.
func (o *options) printGroup(g groupView) error {
	if o.output != "" {
		return o.print(g)
	}
	for i, v := range g.Renditions {
		if i > 0 {
			fmt.Fprintln(o.streams.Out)
		}
		fmt.Fprintf(o.streams.Out, "Rendition %d: %s\n", *v.Rendition, v.Distorted)
		if v.Phase != vmafxv1.JobSucceeded {
			msg := fmt.Sprintf("No score (phase %s)", phaseOrPending(v.Phase))
			if v.Message != "" {
				msg += ": " + v.Message
			}
			fmt.Fprintln(o.streams.Out, msg)
			continue
		}
		if err := o.printWorst(v); err != nil {
			return err
		}
	}
	return nil
}

func phaseOrPending(p vmafxv1.JobPhase) vmafxv1.JobPhase {
	if p == "" {
		return vmafxv1.JobPending
	}
	return p
}

// print prints v as json or yaml (o.output).
func (o *options) print(v any) error {
	switch o.output {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(o.streams.Out, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = o.streams.Out.Write(b)
		return err
	}
	return fmt.Errorf("--output %q: worst prints a table, json or yaml", o.output)
}

func (o *options) printWorst(v worstView) error {
	if o.output != "" {
		return o.print(v)
	}
	out := o.streams.Out
	line := "VMAF " + v.Score
	if p := v.Percentiles; p != nil {
		line += fmt.Sprintf(" (1st percentile %s, 5th %s, median %s)", p.P1, p.P5, p.P50)
	}
	fmt.Fprintln(out, line)
	if s := v.Scenes; s != nil {
		if w := s.Worst; w != nil {
			fmt.Fprintf(out, "Scenes: %d; the worst starts at frame %d (%d frames): mean %s, min %s, 5th percentile %s\n", s.Count, w.Start, w.Frames, w.Mean, w.Min, w.P5)
		} else {
			fmt.Fprintf(out, "Scenes: %d\n", s.Count)
		}
	}
	if v.Report != "" {
		fmt.Fprintf(out, "Report: %s\n", v.Report)
	}
	if len(v.WorstFrames) == 0 {
		fmt.Fprintln(out, "No worst frames listed (spec.worstFrames.count is 0, or the worker predates them).")
		return nil
	}
	fmt.Fprintln(out)
	tw := printers.GetNewTabWriter(out)
	fmt.Fprintln(tw, "RANK\tFRAME\tVMAF")
	for i, f := range v.WorstFrames {
		fmt.Fprintf(tw, "%d\t%d\t%s\n", i+1, f.Index, f.VMAF)
	}
	return tw.Flush()
}
