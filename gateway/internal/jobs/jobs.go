package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/access"
)

// DefaultGenerateName prefixes the names the API server generates for jobs submitted
// without a name.
const DefaultGenerateName = "vmafx-"

// MaxWait bounds a wait or a phase stream, so that a forgotten client does not hold a
// watch for ever; a client that needs longer asks again.
const MaxWait = 10 * time.Minute

// firstAnswerTimeout bounds the reviews and the get that give a wait its first answer.
const firstAnswerTimeout = 10 * time.Second

// Store runs the doors' actions on VmafxJobs, each as the caller (Clients.For): the API
// server's RBAC and admission decide, and its refusals reach the caller as they are.
type Store struct {
	clients Clients
	checker access.Checker
}

// New returns a Store that acts through clients for the users checker authenticates.
func New(clients Clients, checker access.Checker) *Store {
	return &Store{clients: clients, checker: checker}
}

// Checker returns the Store's authenticator.
func (s *Store) Checker() access.Checker { return s.checker }

// Submit creates job in ns. Its metadata may carry a name (else generateName is used),
// labels and annotations; everything else of the metadata is ignored. Validation is the
// API server's: a refused spec returns its Invalid error, field messages included.
func (s *Store) Submit(ctx context.Context, u access.User, ns string, job *vmafxv1.VmafxJob, dryRun bool) (*vmafxv1.VmafxJob, error) {
	c, err := s.clients.For(u)
	if err != nil {
		return nil, err
	}
	obj := &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    ns,
			Name:         job.Name,
			GenerateName: job.GenerateName,
			Labels:       job.Labels,
			Annotations:  job.Annotations,
		},
		Spec: job.Spec,
	}
	if obj.Name == "" && obj.GenerateName == "" {
		obj.GenerateName = DefaultGenerateName
	}
	var opts []client.CreateOption
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := c.Create(ctx, obj, opts...); err != nil {
		return nil, err
	}
	return obj, nil
}

// Get returns the job ns/name.
func (s *Store) Get(ctx context.Context, u access.User, ns, name string) (*vmafxv1.VmafxJob, error) {
	c, err := s.clients.For(u)
	if err != nil {
		return nil, err
	}
	j := &vmafxv1.VmafxJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		return nil, err
	}
	return j, nil
}

// ListOptions select and page a list.
type ListOptions struct {
	// Selector is a label selector in kubectl's syntax (app=x,tier!=y).
	Selector string
	// Limit is the page size; 0 returns all.
	Limit int64
	// Continue is the token of the previous page's metadata.continue.
	Continue string
}

// List returns the jobs of ns that match opts, one page at a time.
func (s *Store) List(ctx context.Context, u access.User, ns string, opts ListOptions) (*vmafxv1.VmafxJobList, error) {
	c, err := s.clients.For(u)
	if err != nil {
		return nil, err
	}
	sel, err := labels.Parse(opts.Selector)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("labelSelector: %v", err))
	}
	if opts.Limit < 0 {
		return nil, apierrors.NewBadRequest("limit must be 0 or more")
	}
	list := &vmafxv1.VmafxJobList{}
	err = c.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel},
		client.Limit(opts.Limit), client.Continue(opts.Continue))
	if err != nil {
		return nil, err
	}
	return list, nil
}

// Cancel deletes the job ns/name, which stops its worker Pod (the operator's owner
// reference takes the Pod with it). It returns the job as it was.
func (s *Store) Cancel(ctx context.Context, u access.User, ns, name string) (*vmafxv1.VmafxJob, error) {
	c, err := s.clients.For(u)
	if err != nil {
		return nil, err
	}
	j := &vmafxv1.VmafxJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		return nil, err
	}
	if err := c.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return nil, err
	}
	return j, nil
}

// Finished reports whether j has reached Succeeded or Failed.
func Finished(j *vmafxv1.VmafxJob) bool {
	return j.Status.Phase.Finished()
}

// Wait returns the job ns/name once it has finished, or as it is when timeout passes (or
// ctx ends: a server shutting down answers its long polls).
func (s *Store) Wait(ctx context.Context, u access.User, ns, name string, timeout time.Duration) (*vmafxv1.VmafxJob, error) {
	var last *vmafxv1.VmafxJob
	err := s.Follow(ctx, u, ns, name, timeout, func(j *vmafxv1.VmafxJob) error {
		last = j
		return nil
	})
	if last == nil {
		return nil, err
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	return last, nil
}

// Follow calls each with the job ns/name now and at every change of its status, until it
// has finished (nil), timeout passes (context.DeadlineExceeded), ctx ends or each fails.
func (s *Store) Follow(ctx context.Context, u access.User, ns, name string, timeout time.Duration, each func(*vmafxv1.VmafxJob) error) error {
	// The first answer is given even when ctx ends meanwhile (a server shutting down):
	// a long poll then returns the job as it is rather than an error.
	first, cancelFirst := context.WithTimeout(context.WithoutCancel(ctx), firstAnswerTimeout)
	defer cancelFirst()
	c, err := s.clients.For(u)
	if err != nil {
		return err
	}
	j := &vmafxv1.VmafxJob{}
	if err := c.Get(first, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		return err
	}
	if err := each(j); err != nil {
		return err
	}
	timeout = min(max(timeout, 0), MaxWait)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := j.Status
	rv := j.ResourceVersion
	for !Finished(j) {
		w, err := c.Watch(ctx, &vmafxv1.VmafxJobList{}, client.InNamespace(ns),
			&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name), Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		next, gone, err := drain(ctx, w, &rv, func(nj *vmafxv1.VmafxJob) error {
			j = nj
			if sameStatus(last, nj.Status) {
				return nil
			}
			last = nj.Status
			return each(nj)
		})
		w.Stop()
		if err != nil {
			return err
		}
		if gone {
			return apierrors.NewNotFound(vmafxv1.GroupVersion.WithResource(access.ResourceJobs).GroupResource(), name)
		}
		if next {
			// The watch ended or its resourceVersion expired: start again from a fresh get.
			j = &vmafxv1.VmafxJob{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
				return err
			}
			rv = j.ResourceVersion
			if !sameStatus(last, j.Status) {
				last = j.Status
				if err := each(j); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// drain reads w until the job finishes (done), it is deleted (gone), the watch closes or
// expires (restart), or ctx ends.
func drain(ctx context.Context, w watch.Interface, rv *string, each func(*vmafxv1.VmafxJob) error) (restart, gone bool, err error) {
	for {
		select {
		case <-ctx.Done():
			return false, false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return true, false, nil
			}
			switch ev.Type {
			case watch.Error:
				return true, false, nil
			case watch.Deleted:
				return false, true, nil
			case watch.Added, watch.Modified:
				nj, ok := ev.Object.(*vmafxv1.VmafxJob)
				if !ok {
					continue
				}
				*rv = nj.ResourceVersion
				if err := each(nj); err != nil {
					return false, false, err
				}
				if Finished(nj) {
					return false, false, nil
				}
			}
		}
	}
}

// sameStatus reports whether a status change is worth a new event: phase, score,
// attempts, node or message.
func sameStatus(a, b vmafxv1.VmafxJobStatus) bool {
	return a.Phase == b.Phase && a.Score == b.Score && a.Attempts == b.Attempts && a.Node == b.Node && a.Message == b.Message
}

// Model is a model a job can name in spec.model.
type Model struct {
	// Name is what spec.model takes: a built-in model's name, or a trained version's
	// oci://<registry>/<repository>:<tag> reference.
	Name string `json:"name"`
	// Pinned is a trained version by digest, oci://<registry>/<repository>@sha256:...,
	// which names exactly this version even if the tag moves.
	Pinned string `json:"pinned,omitempty"`
	// Source is "builtin" (carried by every worker) or "trained" (a VmafxModelTraining's
	// latest version).
	Source string `json:"source"`
	// Training names the VmafxModelTraining of a trained model.
	Training string `json:"training,omitempty"`
	// Version is a trained model's status.modelVersion.
	Version string `json:"version,omitempty"`
	// Registry is where a trained model's versions are published.
	Registry string `json:"registry,omitempty"`
	// Default marks the model used when a job names none.
	Default bool `json:"default,omitempty"`
}

// Models lists the built-in models and, when the caller may list VmafxModelTrainings
// in ns, the trained ones that have a version.
func (s *Store) Models(ctx context.Context, u access.User, ns string) ([]Model, error) {
	var out []Model
	for _, m := range vmafxv1.BuiltinModels {
		out = append(out, Model{Name: m, Source: "builtin", Default: m == vmafxv1.DefaultModel})
	}
	c, err := s.clients.For(u)
	if err != nil {
		return nil, err
	}
	var trainings vmafxv1.VmafxModelTrainingList
	if err := c.List(ctx, &trainings, client.InNamespace(ns)); err != nil {
		if apierrors.IsForbidden(err) {
			// A caller who may not list trainings sees the built-in models.
			return out, nil
		}
		return nil, err
	}
	for _, t := range trainings.Items {
		cp := t.Status.LastCheckpoint
		if t.Status.ModelVersion == "" || cp == nil || cp.Reference == "" {
			continue
		}
		out = append(out, Model{Name: cp.Reference, Pinned: pinned(cp.Reference, cp.Digest), Source: "trained",
			Training: t.Name, Version: t.Status.ModelVersion, Registry: string(t.Spec.OutputRegistry)})
	}
	slices.SortStableFunc(out[len(vmafxv1.BuiltinModels):], func(a, b Model) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// pinned turns a tag reference into its digest form; "" without a digest.
func pinned(ref, digest string) string {
	if digest == "" {
		return ""
	}
	repo := ref
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repo = ref[:i]
	}
	return repo + "@" + digest
}

// Read gets the object ns/name of obj's kind as u: the console reads comparisons,
// ladders and the Secret of a job's output through it, each with the caller's own rights.
func (s *Store) Read(ctx context.Context, u access.User, ns, name string, obj client.Object) error {
	c, err := s.clients.For(u)
	if err != nil {
		return err
	}
	return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
}

// ReadList lists the objects of list's kind in ns as u, at most limit (0: all).
func (s *Store) ReadList(ctx context.Context, u access.User, ns string, list client.ObjectList, limit int64) error {
	c, err := s.clients.For(u)
	if err != nil {
		return err
	}
	return c.List(ctx, list, client.InNamespace(ns), client.Limit(limit))
}
