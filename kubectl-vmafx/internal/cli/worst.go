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

// worstView is what `worst -o json|yaml` prints: the job's score and where it is made.
type worstView struct {
	Name        string                  `json:"name"`
	Score       string                  `json:"score"`
	Percentiles *vmafxv1.JobPercentiles `json:"percentiles,omitempty"`
	WorstFrames []vmafxv1.JobFrame      `json:"worstFrames"`
	Scenes      *vmafxv1.JobScenes      `json:"scenes,omitempty"`
	Report      string                  `json:"report,omitempty"`
}

func (o *options) worstCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "worst JOB",
		Short: "Show a succeeded VmafxJob's worst frames, score percentiles and worst scene, and where its report and pictures lie",
		Example: `  kubectl vmafx worst my-job
  kubectl vmafx worst my-job -o json`,
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
			r := j.Status.Result
			if j.Status.Phase == vmafxv1.JobFailed {
				return fmt.Errorf("job %s failed: %s", j.Name, j.Status.Message)
			}
			if j.Status.Phase != vmafxv1.JobSucceeded || r == nil {
				return fmt.Errorf("job %s has no score yet (phase %s)", j.Name, phaseOrPending(j.Status.Phase))
			}
			v := worstView{Name: j.Name, Score: r.Mean, Percentiles: r.Percentiles, WorstFrames: r.WorstFrames, Scenes: r.Scenes, Report: r.Report}
			return o.printWorst(v)
		},
	}
}

func phaseOrPending(p vmafxv1.JobPhase) vmafxv1.JobPhase {
	if p == "" {
		return vmafxv1.JobPending
	}
	return p
}

func (o *options) printWorst(v worstView) error {
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
