package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// errJobFailed makes `wait` and `score --wait` exit 1 when the job failed, as
// `kubectl wait` does when its condition is not met.
var errJobFailed = errors.New("job failed")

type options struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	output  string
	now     func() time.Time
}

// New returns the root command.
func New(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(true), streams: streams, now: time.Now}
	root := &cobra.Command{
		Use:           "kubectl-vmafx",
		Short:         "Score video quality with VMAF on Kubernetes (VmafxJobs)",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	o.flags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVarP(&o.output, "output", "o", "", "output format: json, yaml, wide or name (default: a table)")
	root.AddCommand(o.scoreCmd(), o.getCmd(), o.waitCmd(), o.logsCmd(), o.cancelCmd(), o.nodesCmd(), o.worstCmd())
	return root
}

func scheme() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	if err := coordinationv1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := vmafxv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

func (o *options) client() (client.WithWatch, string, error) {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme()})
	return c, ns, err
}

func (o *options) validOutput() error {
	switch o.output {
	case "", "wide", "json", "yaml", "name":
		return nil
	}
	return fmt.Errorf("--output %q: want json, yaml, wide or name", o.output)
}

func (o *options) scoreCmd() *cobra.Command {
	var (
		model, backend, name string
		wait                 bool
		timeout              time.Duration
		autoAlign            bool
		autoAlignWindow      int32
	)
	cmd := &cobra.Command{
		Use:   "score REFERENCE DISTORTED",
		Short: "Submit a VmafxJob scoring DISTORTED against REFERENCE (URIs: file:///data/..., http(s)://, s3://, gs://, azure://)",
		Example: `  kubectl vmafx score s3://clips/ref.y4m s3://clips/dist.y4m --wait
  kubectl vmafx score https://media.example.com/ref.mp4 https://media.example.com/720p.mp4 --model vmaf_v0.6.1neg -o json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validOutput(); err != nil {
				return err
			}
			c, ns, err := o.client()
			if err != nil {
				return err
			}
			job := &vmafxv1.VmafxJob{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: vmafxv1.VmafxJobSpec{Reference: vmafxv1.VideoURI(args[0]), Distorted: vmafxv1.VideoURI(args[1]),
					Model: vmafxv1.ModelReference(model), Backend: vmafxv1.Backend(backend)},
			}
			if autoAlign {
				job.Spec.Alignment = &vmafxv1.Alignment{Auto: true, Window: autoAlignWindow}
			} else if autoAlignWindow != 0 {
				return errors.New("--auto-align-window is the offsets --auto-align searches: give --auto-align too")
			}
			if name == "" {
				job.GenerateName = "vmafx-"
			}
			if err := c.Create(cmd.Context(), job); err != nil {
				return err
			}
			if !wait {
				if o.output == "" {
					fmt.Fprintf(o.streams.Out, "vmafxjob.vmafx.dev/%s created\n", job.Name)
					return nil
				}
				return o.printJobs(job)
			}
			fmt.Fprintf(o.streams.ErrOut, "vmafxjob.vmafx.dev/%s created, waiting\n", job.Name)
			return o.waitAndPrint(cmd.Context(), c, ns, job.Name, timeout)
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "VMAF model: a built-in one ("+strings.Join(vmafxv1.BuiltinModels, ", ")+") or oci://REGISTRY/REPOSITORY:TAG (default: the API's, vmaf_v0.6.1)")
	// Shell completion offers the built-in models, VMAF v1's included.
	_ = cmd.RegisterFlagCompletionFunc("model", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return vmafxv1.BuiltinModels, cobra.ShellCompDirectiveNoFileComp
	})
	cmd.Flags().StringVar(&backend, "backend", "", "cuda, hip, sycl, vulkan, cpu or auto (default: the API's, auto)")
	cmd.Flags().StringVar(&name, "name", "", "name of the job (default: generated, vmafx-...)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the score and print the job")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits")
	cmd.Flags().BoolVar(&autoAlign, "auto-align", false, "find the frame offset between the videos (leader frames, frames dropped at the start) and score the frames that match: spec.alignment.auto")
	cmd.Flags().Int32Var(&autoAlignWindow, "auto-align-window", 0, "offsets searched either side of zero, 1 to 300 (default: the API's, 30)")
	return cmd
}

func (o *options) getCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "get [JOB...]",
		Short: "Show VmafxJobs (all of the namespace without arguments)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validOutput(); err != nil {
				return err
			}
			c, ns, err := o.client()
			if err != nil {
				return err
			}
			var out []*vmafxv1.VmafxJob
			if len(args) == 0 {
				var l vmafxv1.VmafxJobList
				if err := c.List(cmd.Context(), &l, client.InNamespace(ns)); err != nil {
					return err
				}
				for i := range l.Items {
					out = append(out, &l.Items[i])
				}
			}
			for _, name := range args {
				j := &vmafxv1.VmafxJob{}
				if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
					return err
				}
				out = append(out, j)
			}
			if len(out) == 0 && o.output == "" {
				fmt.Fprintf(o.streams.ErrOut, "No VmafxJobs found in %s namespace.\n", ns)
				return nil
			}
			return o.printJobs(out...)
		},
	}
}

func (o *options) waitCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait JOB",
		Short: "Wait until a VmafxJob succeeds or fails, then show it (exit status 1 when it failed)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validOutput(); err != nil {
				return err
			}
			c, ns, err := o.client()
			if err != nil {
				return err
			}
			return o.waitAndPrint(cmd.Context(), c, ns, args[0], timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait")
	return cmd
}

func finished(j *vmafxv1.VmafxJob) bool {
	return j.Status.Phase.Finished()
}

// waitAndPrint watches the job until it finishes or timeout passes.
func (o *options) waitAndPrint(ctx context.Context, c client.WithWatch, ns, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	j := &vmafxv1.VmafxJob{}
	for {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("timed out after %s waiting for vmafxjob/%s", timeout, name)
			}
			return err
		}
		if finished(j) {
			break
		}
		w, err := c.Watch(ctx, &vmafxv1.VmafxJobList{}, client.InNamespace(ns), &client.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("metadata.name", name), Raw: &metav1.ListOptions{ResourceVersion: j.ResourceVersion}})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("timed out after %s waiting for vmafxjob/%s", timeout, name)
			}
			return err
		}
		done, err := watchUntilFinished(ctx, w, j)
		w.Stop()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("timed out after %s waiting for vmafxjob/%s (phase %q)", timeout, name, j.Status.Phase)
			}
			return err
		}
		if done {
			break
		}
		// The watch ended: read the job again and watch on.
	}
	if err := o.printJobs(j); err != nil {
		return err
	}
	if j.Status.Phase == vmafxv1.JobFailed {
		return fmt.Errorf("%w: vmafxjob/%s: %s", errJobFailed, name, j.Status.Message)
	}
	return nil
}

func watchUntilFinished(ctx context.Context, w watch.Interface, j *vmafxv1.VmafxJob) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return false, nil
			}
			if ev.Type == watch.Deleted {
				return false, apierrors.NewNotFound(vmafxv1.GroupVersion.WithResource("vmafxjobs").GroupResource(), j.Name)
			}
			if nj, ok := ev.Object.(*vmafxv1.VmafxJob); ok {
				*j = *nj
				if finished(j) {
					return true, nil
				}
			}
		}
	}
}

func (o *options) logsCmd() *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs JOB",
		Short: "Print the worker log of a VmafxJob's current (or last) attempt",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := o.client()
			if err != nil {
				return err
			}
			j := &vmafxv1.VmafxJob{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: args[0]}, j); err != nil {
				return err
			}
			if j.Status.PodName == "" {
				return fmt.Errorf("vmafxjob/%s has no worker Pod yet (phase %q): try again once it runs", args[0], j.Status.Phase)
			}
			cfg, err := o.flags.ToRESTConfig()
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			rc, err := cs.CoreV1().Pods(ns).GetLogs(j.Status.PodName, &corev1.PodLogOptions{Follow: follow}).Stream(cmd.Context())
			if err != nil {
				return fmt.Errorf("logs of pod/%s: %w", j.Status.PodName, err)
			}
			defer rc.Close()
			_, err = io.Copy(o.streams.Out, rc)
			return err
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "stream the log while the worker runs")
	return cmd
}

func (o *options) cancelCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cancel JOB...",
		Short: "Cancel VmafxJobs: delete them, which stops their worker Pods",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := o.client()
			if err != nil {
				return err
			}
			for _, name := range args {
				j := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
				if err := c.Delete(cmd.Context(), j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
					return err
				}
				fmt.Fprintf(o.streams.Out, "vmafxjob.vmafx.dev/%s cancelled\n", name)
			}
			return nil
		},
	}
}

func (o *options) nodesCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "Show the scoring nodes: slots free and used per node and vendor, heartbeat age",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validOutput(); err != nil {
				return err
			}
			c, ns, err := o.client()
			if err != nil {
				return err
			}
			// VmafxNodes live in the system namespace unless -n says otherwise.
			if o.flags.Namespace == nil || *o.flags.Namespace == "" {
				ns = vmafxv1.SystemNamespace
			}
			opts := []client.ListOption{client.InNamespace(ns)}
			if all {
				opts = nil
			}
			var l vmafxv1.VmafxNodeList
			if err := c.List(cmd.Context(), &l, opts...); err != nil {
				return err
			}
			return o.printNodes(l.Items, nodeLeases(cmd.Context(), c, opts))
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "VmafxNodes of every namespace")
	return cmd
}

// printJobs prints jobs per -o.
func (o *options) printJobs(jobs ...*vmafxv1.VmafxJob) error {
	objs := make([]k8sruntime.Object, len(jobs))
	for i, j := range jobs {
		j.APIVersion, j.Kind = vmafxv1.GroupVersion.String(), "VmafxJob"
		j.ManagedFields = nil
		objs[i] = j
	}
	if done, err := o.printStructured(objs); done {
		return err
	}
	tw := printers.GetNewTabWriter(o.streams.Out)
	wide := o.output == "wide"
	header := "NAME\tPHASE\tSCORE\tNODE\tAGE"
	if wide {
		header += "\tATTEMPTS\tMODEL\tBACKEND\tREFERENCE\tDISTORTED\tMESSAGE"
	}
	fmt.Fprintln(tw, header)
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s", j.Name, j.Status.Phase, j.Status.Score, j.Status.Node, o.age(j.CreationTimestamp.Time))
		if wide {
			fmt.Fprintf(tw, "\t%d\t%s\t%s\t%s\t%s\t%s", j.Status.Attempts, j.Spec.Model, j.Spec.Backend, j.Spec.Reference, j.Spec.Distorted, j.Status.Message)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// nodeLeases returns the node heartbeat Leases that opts select, by namespace/name. A user
// who may not list Leases gets none, and the heartbeat column falls back to the
// VmafxNodes' status.lastHeartbeat (which only device plugins of an earlier release keep
// fresh).
func nodeLeases(ctx context.Context, c client.Client, opts []client.ListOption) map[string]*coordinationv1.Lease {
	var l coordinationv1.LeaseList
	opts = append(slices.Clone(opts), client.MatchingLabels{vmafxv1.LabelComponent: vmafxv1.ComponentNodeHeartbeat})
	if err := c.List(ctx, &l, opts...); err != nil {
		return nil
	}
	leases := make(map[string]*coordinationv1.Lease, len(l.Items))
	for i := range l.Items {
		leases[l.Items[i].Namespace+"/"+l.Items[i].Name] = &l.Items[i]
	}
	return leases
}

// printNodes prints nodes per -o; the HEARTBEAT column is the age of each node's latest
// heartbeat, its Lease's or its status's (vmafxv1.NodeHeartbeat).
func (o *options) printNodes(nodes []vmafxv1.VmafxNode, leases map[string]*coordinationv1.Lease) error {
	objs := make([]k8sruntime.Object, len(nodes))
	for i := range nodes {
		nodes[i].APIVersion, nodes[i].Kind = vmafxv1.GroupVersion.String(), "VmafxNode"
		nodes[i].ManagedFields = nil
		objs[i] = &nodes[i]
	}
	if done, err := o.printStructured(objs); done {
		return err
	}
	tw := printers.GetNewTabWriter(o.streams.Out)
	wide := o.output == "wide"
	header := "NAME\tVENDOR\tHEALTHY\tSLOTS\tUSED\tFREE\tHEARTBEAT"
	if wide {
		header += "\tNODE\tDEVICE\tJOBS\tUNHEALTHY-SLOTS"
	}
	fmt.Fprintln(tw, header)
	for _, n := range nodes {
		var total, healthy, used int32
		if s := n.Status.Slots; s != nil {
			total, healthy, used = s.Total, s.Healthy, s.Allocated
		}
		heartbeat := "never"
		leaseName, _ := vmafxv1.NodeLeaseName(n.Name)
		if hb := vmafxv1.NodeHeartbeat(&n, leases[n.Namespace+"/"+leaseName]); !hb.IsZero() {
			heartbeat = o.age(hb) + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%t\t%d\t%d\t%d\t%s", n.Name, n.Spec.GPUVendor, n.Status.Healthy, total, used, max(healthy-used, 0), heartbeat)
		if wide {
			fmt.Fprintf(tw, "\t%s\t%s\t%d\t%d", n.Spec.NodeName, n.Status.Device, n.Status.Jobs, total-healthy)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// printStructured prints objs for -o json|yaml|name (one object alone, several as a
// List, as kubectl does) and reports whether it did.
func (o *options) printStructured(objs []k8sruntime.Object) (bool, error) {
	var p printers.ResourcePrinter
	switch o.output {
	case "json":
		p = &printers.JSONPrinter{}
	case "yaml":
		p = &printers.YAMLPrinter{}
	case "name":
		p = &printers.NamePrinter{}
	default:
		return false, nil
	}
	if len(objs) == 1 {
		return true, p.PrintObj(objs[0], o.streams.Out)
	}
	list := &metav1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, obj := range objs {
		raw, err := json.Marshal(obj)
		if err != nil {
			return true, err
		}
		list.Items = append(list.Items, k8sruntime.RawExtension{Raw: raw, Object: obj})
	}
	return true, p.PrintObj(list, o.streams.Out)
}

func (o *options) age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(o.now().Sub(t))
}
