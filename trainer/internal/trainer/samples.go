package trainer

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/trainer/train"
	"github.com/vmafx/vmafx/vmaf"
)

// candidate is a labelled job that may become a sample.
type candidate struct {
	job   *vmafxv1.VmafxJob
	label float64
}

// candidates lists the Succeeded jobs with a subjective score and a JSON output that
// match ds, in the namespaces it names (the run's own by default), oldest first (then by
// namespace and name), so that samples arrive in the same order on every poll and restart.
func candidates(ctx context.Context, c client.Reader, runNamespace string, ds vmafxv1.TrainingDataSource) ([]candidate, error) {
	namespaces := ds.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{runNamespace}
	}
	sel := labels.Everything()
	if ds.JobSelector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(ds.JobSelector); err != nil {
			return nil, fmt.Errorf("dataSource.jobSelector: %w", err)
		}
	}
	nodeSel := labels.SelectorFromSet(ds.NodeSelector)
	nodeOK := map[string]bool{}
	var out []candidate
	for _, ns := range namespaces {
		var jobs vmafxv1.VmafxJobList
		if err := c.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("listing the jobs of namespace %s: %w", ns, err)
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if j.Status.Phase != vmafxv1.JobSucceeded || j.Spec.SubjectiveScore == nil || j.Spec.Output == nil {
				continue
			}
			if len(ds.NodeSelector) > 0 {
				ok, seen := nodeOK[j.Status.Node]
				if !seen {
					set, err := nodeLabels(ctx, c, j.Status.Node)
					if err != nil {
						return nil, err
					}
					ok = nodeSel.Matches(set)
					nodeOK[j.Status.Node] = ok
				}
				if !ok {
					continue
				}
			}
			out = append(out, candidate{job: j, label: j.Spec.SubjectiveScore.AsApproximateFloat64()})
		}
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		if c := a.job.CreationTimestamp.Compare(b.job.CreationTimestamp.Time); c != 0 {
			return c
		}
		if c := strings.Compare(a.job.Namespace, b.job.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.job.Name, b.job.Name)
	})
	return out, nil
}

// nodeLabels are the labels a dataSource.nodeSelector is matched against for jobs scored
// on the node name: the Node's own, and those of its VmafxNode, where the device plugin
// keeps gpu.vendor=<vendor> (so the original README's `gpu.vendor: nvidia` selects the
// jobs scored on NVIDIA nodes with no Node labelled by hand). Where both have a key, the
// Node's value counts: the cluster administrator's labels are the authority. A node that
// is gone has no labels left and matches only an empty selector; so does a job whose node
// is unknown.
func nodeLabels(ctx context.Context, c client.Reader, name string) (labels.Set, error) {
	set := labels.Set{}
	if name == "" {
		return set, nil
	}
	// The VmafxNode lives in the namespace VMAFX is installed in, which the trainer need
	// not know: it is found by name in every namespace (list, not get, in the trainer's
	// ClusterRole).
	var vnodes vmafxv1.VmafxNodeList
	if err := c.List(ctx, &vnodes, client.MatchingFields{"metadata.name": name}); err != nil {
		return nil, fmt.Errorf("reading the VmafxNode of node %s: %w", name, err)
	}
	for _, vn := range vnodes.Items {
		maps.Copy(set, vn.Labels)
	}
	var node corev1.Node
	switch err := c.Get(ctx, client.ObjectKey{Name: name}, &node); {
	case err == nil:
		maps.Copy(set, node.Labels)
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading node %s: %w", name, err)
	}
	return set, nil
}

// reader opens jobs' outputs with the run's credentials and each job's own S3 options.
type reader struct {
	// outputDir is where the jobs' file:///output/... outputs are (the mounted
	// dataSource.outputClaim).
	outputDir      string
	credentialsDir string
	limits         fetch.HTTPOptions
	stores         map[vmafxv1.S3Options]*fetch.Stores
}

func (r *reader) close() {
	for _, s := range r.stores {
		s.Close()
	}
}

// sample reads the job's per-frame output and returns it as a sample of model's features.
func (r *reader) sample(ctx context.Context, cand candidate, model *vmaf.Model) (train.Sample, error) {
	j := cand.job
	u, err := url.Parse(string(*j.Spec.Output))
	if err != nil {
		return train.Sample{}, err
	}
	if rest, ok := strings.CutPrefix(u.Path, vmafxv1.OutputMountPath+"/"); ok && u.Scheme == "file" && r.outputDir != "" {
		u.Path = path.Join(r.outputDir, path.Clean("/"+rest))
	}
	var s3 vmafxv1.S3Options
	if j.Spec.S3 != nil {
		s3 = *j.Spec.S3
	}
	stores := r.stores[s3]
	if stores == nil {
		opts := fetch.StoreOptions{CredentialsDir: r.credentialsDir, S3Endpoint: s3.Endpoint, S3Region: s3.Region, Limits: r.limits}
		if s3.PathStyle {
			opts.S3PathStyle = &s3.PathStyle
		}
		stores = fetch.NewStores(opts)
		if r.stores == nil {
			r.stores = map[vmafxv1.S3Options]*fetch.Stores{}
		}
		r.stores[s3] = stores
	}
	obj, err := fetch.NewMux(fetch.NewHTTP(r.limits), stores).Open(ctx, u)
	if err != nil {
		return train.Sample{}, err
	}
	defer obj.Close()
	frames, err := train.ReadFrames(obj, model)
	if err != nil {
		return train.Sample{}, fmt.Errorf("%s: %w", fetch.Redact(u), err)
	}
	return train.Sample{ID: string(j.UID), Frames: frames, Label: cand.label}, nil
}
