package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/modelregistry"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/trainer/train"
	"github.com/vmafx/vmafx/vmaf"
)

// What a trainer reads: its run, the jobs of the data source's namespaces, and the
// labels of the nodes that scored them, Node and VmafxNode. Bound to the vmafx-trainer
// ServiceAccount.
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxmodeltrainings,verbs=get
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxjobs,verbs=list
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes,verbs=list
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get

// Config is what a trainer needs besides its run's spec, which it reads from the API.
type Config struct {
	// Namespace and Name of the VmafxModelTraining.
	Namespace, Name string
	// Listen is the address of /status, /metrics and /healthz.
	Listen string
	// Poll is how often the API server is asked for new samples.
	Poll time.Duration
	// OutputDir is where the jobs' file:///output/... outputs are found: the mount of
	// dataSource.outputClaim, /output.
	OutputDir string
	// CredentialsDir holds the object store keys of dataSource.credentials.
	CredentialsDir string
	// RegistryCredentials is the .dockerconfigjson file of spec.registryCredentials.
	RegistryCredentials string
	// PlainHTTP lists registries reached over plain HTTP.
	PlainHTTP []string
	// Clock is the trainer's clock; nil means the real one.
	Clock clock.Clock
	// RegistryTransport, when not nil, carries the registry's requests (tests: a run's
	// public registry name answered by a local server).
	RegistryTransport http.RoundTripper
}

// Trainer runs one training run.
type Trainer struct {
	cfg      Config
	kube     client.Client
	registry *modelregistry.Client
	clock    clock.Clock
	metrics  *metrics

	mu     sync.Mutex
	status vmafxv1.TrainerStatus

	// Set by start.
	run       *vmafxv1.VmafxModelTraining
	repo      modelregistry.Reference
	base      *vmaf.Model
	baseDoc   []byte
	learner   *train.Learner
	version   int
	lastCkpt  time.Time
	sinceCkpt int64
	skipped   map[string]bool
	interval  time.Duration
	minNew    int64
}

// New returns a trainer of the run cfg names.
func New(cfg Config, kube client.Client, reg prometheus.Registerer) (*Trainer, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 15 * time.Second
	}
	rc := &modelregistry.Client{PlainHTTP: cfg.PlainHTTP, Transport: cfg.RegistryTransport}
	if cfg.RegistryCredentials != "" {
		if _, err := os.Stat(cfg.RegistryCredentials); err == nil {
			store, err := modelregistry.LoadDockerConfig(cfg.RegistryCredentials)
			if err != nil {
				return nil, err
			}
			rc.Credentials = store
		}
	}
	t := &Trainer{cfg: cfg, kube: kube, registry: rc, clock: cfg.Clock, metrics: newMetrics(reg), skipped: map[string]bool{}}
	t.status = vmafxv1.TrainerStatus{Version: vmafxv1.TrainerStatusVersion, Phase: vmafxv1.TrainingInitializing, Reason: vmafxv1.ReasonResuming}
	return t, nil
}

// Status returns a copy of the trainer's status.
func (t *Trainer) Status() vmafxv1.TrainerStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.status
	if s.LastCheckpoint != nil {
		s.LastCheckpoint = s.LastCheckpoint.DeepCopy()
	}
	return s
}

func (t *Trainer) update(f func(s *vmafxv1.TrainerStatus)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.status)
}

// Handler serves /status, /metrics and /healthz.
func (t *Trainer) Handler(gatherer prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+vmafxv1.TrainerStatusPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(t.Status())
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	return mux
}

// Serve runs the HTTP server until ctx ends, then shuts it down.
func (t *Trainer) Serve(ctx context.Context, gatherer prometheus.Gatherer) error {
	ln, err := net.Listen("tcp", t.cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: t.Handler(gatherer), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// Run trains until ctx ends: it resumes (retrying while the API server or the registry
// cannot be reached), then polls for samples and checkpoints. It returns nil when ctx
// ends and an error only when the run cannot train as written.
func (t *Trainer) Run(ctx context.Context) error {
	log := klog.FromContext(ctx)
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: time.Second, Factor: 2, Steps: math.MaxInt32, Cap: time.Minute},
		func(ctx context.Context) (bool, error) {
			err := t.start(ctx)
			var perm permanentError
			switch {
			case errors.As(err, &perm):
				return false, err
			case err != nil:
				log.Info("Cannot resume yet; retrying", "err", err)
				t.update(func(s *vmafxv1.TrainerStatus) {
					s.Reason, s.Message = vmafxv1.ReasonRegistryUnavailable, err.Error()
				})
				return false, nil
			}
			return true, nil
		})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		t.update(func(s *vmafxv1.TrainerStatus) {
			s.Phase, s.Reason, s.Message = vmafxv1.TrainingFailed, "InvalidRun", err.Error()
		})
		return err
	}
	all, held := t.learner.Samples()
	log.Info("Training", "run", klog.KRef(t.cfg.Namespace, t.cfg.Name), "baseModel", t.base.Name, "repository", t.repo.Registry+"/"+t.repo.Repository,
		"version", t.version, "samples", all, "heldOut", held)
	t.update(func(s *vmafxv1.TrainerStatus) {
		s.Phase, s.Reason, s.Message = vmafxv1.TrainingRunning, vmafxv1.ReasonTraining, "reading samples"
	})
	for {
		if err := t.poll(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Polling for samples failed; retrying")
		}
		t.maybeCheckpoint(ctx)
		select {
		case <-ctx.Done():
			log.Info("Stopping; samples since the last checkpoint are read again on resume", "sinceCheckpoint", t.sinceCkpt)
			return nil
		case <-t.clock.After(t.cfg.Poll):
		}
	}
}

// permanentError is a run that cannot train as written.
type permanentError struct{ error }

func parseFraction(field, s string, def float64) (float64, error) {
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, permanentError{fmt.Errorf("spec.%s %q: %w", field, s, err)}
	}
	return v, nil
}

// start reads the run and resumes from its last model version in the registry.
func (t *Trainer) start(ctx context.Context) error {
	run := &vmafxv1.VmafxModelTraining{}
	if err := t.kube.Get(ctx, client.ObjectKey{Namespace: t.cfg.Namespace, Name: t.cfg.Name}, run); err != nil {
		return fmt.Errorf("reading the run: %w", err)
	}
	spec := run.Spec
	repo, err := modelregistry.ParseRepository(string(spec.OutputRegistry))
	if err != nil {
		return permanentError{err}
	}
	doc, err := vmaf.BuiltinModelJSON(spec.BaseModel)
	if err != nil {
		return permanentError{err}
	}
	base, err := vmaf.ParseModel(doc, spec.BaseModel)
	if err != nil {
		return permanentError{err}
	}
	lr, err := parseFraction("learningRate", spec.LearningRate, 0.05)
	if err != nil {
		return err
	}
	decay, err := parseFraction("emaDecay", spec.EMADecay, 0.9)
	if err != nil {
		return err
	}
	held := 20
	if spec.HeldOutPercent != nil {
		held = int(*spec.HeldOutPercent)
	}
	learner, err := train.New(base, train.Config{LearningRate: lr, EMADecay: decay, HeldOutPercent: held})
	if err != nil {
		return permanentError{err}
	}
	interval := 5 * time.Minute
	if spec.Checkpoint.Interval != "" {
		if interval, err = time.ParseDuration(spec.Checkpoint.Interval); err != nil {
			return permanentError{fmt.Errorf("spec.checkpoint.interval: %w", err)}
		}
	}
	minNew := int64(100)
	if spec.Checkpoint.MinSamples > 0 {
		minNew = int64(spec.Checkpoint.MinSamples)
	}

	// Resume from the highest version <run>-v<N> in the repository.
	tags, err := t.registry.Tags(ctx, repo, tagPrefix(run.Name))
	if err != nil {
		return err
	}
	version, last := 0, ""
	for _, tag := range tags {
		if n, err := strconv.Atoi(strings.TrimPrefix(tag, tagPrefix(run.Name))); err == nil && n > version {
			version, last = n, tag
		}
	}
	var ckpt *vmafxv1.Checkpoint
	if last != "" {
		ref := repo
		ref.Reference = last
		a, err := t.registry.Pull(ctx, ref, true)
		if err != nil {
			return err
		}
		if a.State == nil {
			return permanentError{fmt.Errorf("%s has no training state to resume from", ref)}
		}
		if err := learner.Restore(a.State); err != nil {
			return permanentError{fmt.Errorf("resuming from %s: %w", ref, err)}
		}
		samples, _ := strconv.ParseInt(a.Annotations[modelregistry.AnnotationSamples], 10, 64)
		ckpt = &vmafxv1.Checkpoint{Reference: ref.String(), Digest: a.Digest, Samples: samples}
		if created, err := time.Parse(time.RFC3339, a.Annotations["org.opencontainers.image.created"]); err == nil {
			ckpt.Time = &metav1.Time{Time: created}
		}
	}
	t.run, t.repo, t.base, t.baseDoc, t.learner, t.version = run, repo, base, doc, learner, version
	t.interval, t.minNew, t.lastCkpt = interval, minNew, t.clock.Now()
	all, heldOut := learner.Samples()
	t.metrics.samples.Add(float64(all))
	t.update(func(s *vmafxv1.TrainerStatus) {
		s.Samples, s.HeldOut = all, heldOut
		if ckpt != nil {
			s.ModelVersion, s.LastCheckpoint = last, ckpt
		}
	})
	t.setErrors()
	return nil
}

func tagPrefix(run string) string {
	// A tag has at most 128 characters; the run's name may have 253.
	if len(run) > 100 {
		run = run[:100]
	}
	return run + "-v"
}

// poll reads the samples that arrived since the last poll.
func (t *Trainer) poll(ctx context.Context) error {
	log := klog.FromContext(ctx)
	cands, err := candidates(ctx, t.kube, t.run.Namespace, t.run.Spec.DataSource)
	if err != nil {
		return err
	}
	r := &reader{outputDir: t.cfg.OutputDir, credentialsDir: t.cfg.CredentialsDir, limits: fetch.HTTPOptions{Timeout: 30 * time.Second, Attempts: 3, MaxBytes: 1 << 30}}
	defer r.close()
	for _, c := range cands {
		if ctx.Err() != nil {
			return nil
		}
		id := string(c.job.UID)
		if t.learner.Seen(id) || t.skipped[id] {
			continue
		}
		s, err := r.sample(ctx, c, t.base)
		if err != nil {
			var fe *fetch.Error
			if errors.As(err, &fe) && !errors.Is(err, fetch.ErrNotFound) {
				// The store may be back at the next poll.
				log.Info("Cannot read a sample yet", "job", klog.KObj(c.job), "err", err)
				continue
			}
			t.skipped[id] = true
			t.metrics.skipped.Inc()
			log.Info("Skipping a labelled job", "job", klog.KObj(c.job), "err", err)
			t.update(func(st *vmafxv1.TrainerStatus) { st.SkippedJobs++ })
			continue
		}
		start := t.clock.Now()
		held, err := t.learner.Add(s)
		if err != nil {
			t.skipped[id] = true
			log.Info("Skipping a labelled job", "job", klog.KObj(c.job), "err", err)
			continue
		}
		t.metrics.stepSeconds.Observe(t.clock.Since(start).Seconds())
		t.metrics.samples.Inc()
		if held {
			t.metrics.heldOut.Inc()
		}
		t.sinceCkpt++
		log.V(2).Info("Sample", "job", klog.KObj(c.job), "label", s.Label, "frames", len(s.Frames), "heldOut", held)
		all, heldOut := t.learner.Samples()
		t.update(func(st *vmafxv1.TrainerStatus) { st.Samples, st.HeldOut = all, heldOut })
	}
	t.setErrors()
	return nil
}

// setErrors publishes the learner's errors.
func (t *Trainer) setErrors() {
	e := t.learner.Evaluate()
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', 6, 64)
	}
	if !math.IsNaN(e.Training) {
		t.metrics.rmse.WithLabelValues("training").Set(e.Training)
	}
	if !math.IsNaN(e.HeldOut) {
		t.metrics.rmse.WithLabelValues("held-out").Set(e.HeldOut)
		t.metrics.rmse.WithLabelValues("base-held-out").Set(e.Base)
	}
	t.update(func(s *vmafxv1.TrainerStatus) {
		s.TrainingError, s.HeldOutError, s.BaseHeldOutError = f(e.Training), f(e.HeldOut), f(e.Base)
	})
}

// maybeCheckpoint pushes a model version when one is due and may be published.
func (t *Trainer) maybeCheckpoint(ctx context.Context) {
	log := klog.FromContext(ctx)
	now := t.clock.Now()
	if now.Sub(t.lastCkpt) < t.interval {
		return
	}
	if t.sinceCkpt < t.minNew {
		t.update(func(s *vmafxv1.TrainerStatus) {
			if s.PublishReason == "" || s.PublishReason == vmafxv1.ReasonWaitingForSamples {
				s.PublishReason = vmafxv1.ReasonWaitingForSamples
				s.PublishMessage = fmt.Sprintf("%d of %d new samples for the next checkpoint", t.sinceCkpt, t.minNew)
			}
		})
		return
	}
	t.lastCkpt = now
	e := t.learner.Evaluate()
	all, heldOut := t.learner.Samples()
	withhold := func(reason, msg string) {
		t.metrics.checkpoints.WithLabelValues("withheld").Inc()
		log.Info("Checkpoint withheld", "reason", reason, "message", msg)
		t.update(func(s *vmafxv1.TrainerStatus) { s.PublishReason, s.PublishMessage = reason, msg })
	}
	held := t.run.Spec.HeldOutPercent == nil || *t.run.Spec.HeldOutPercent > 0
	switch {
	case held && heldOut == 0:
		withhold(vmafxv1.ReasonNoHeldOutSamples, "no sample is held out yet to compare the model with the base model")
		return
	case held && e.HeldOut > e.Base:
		withhold(vmafxv1.ReasonHeldOutWorseThanBase, fmt.Sprintf("held-out RMSE %.3f is worse than the base model's %.3f on %d samples", e.HeldOut, e.Base, heldOut))
		return
	}
	model, err := t.learner.Model(t.baseDoc)
	if err == nil {
		// The version must load as the model it is, or it is not pushed.
		_, err = vmaf.ParseModel(model, "checkpoint")
	}
	var state []byte
	if err == nil {
		state, err = t.learner.MarshalState()
	}
	if err != nil {
		withhold(vmafxv1.ReasonPushFailed, err.Error())
		return
	}
	tag := tagPrefix(t.run.Name) + strconv.Itoa(t.version+1)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
	ann := map[string]string{
		modelregistry.AnnotationBaseModel:    t.base.Name,
		modelregistry.AnnotationBaseModelSHA: t.base.SHA256,
		modelregistry.AnnotationSamples:      strconv.FormatInt(all, 10),
		modelregistry.AnnotationRun:          t.run.Namespace + "/" + t.run.Name,
		"org.opencontainers.image.created":   now.UTC().Format(time.RFC3339),
	}
	if !math.IsNaN(e.Training) {
		ann[modelregistry.AnnotationTrainingError] = f(e.Training)
	}
	if !math.IsNaN(e.HeldOut) {
		ann[modelregistry.AnnotationHeldOutError], ann[modelregistry.AnnotationBaseHeldOutErr] = f(e.HeldOut), f(e.Base)
	}
	digest, err := t.registry.Push(ctx, t.repo, modelregistry.Version{Tag: tag, Model: model, State: state, Annotations: ann})
	if err != nil {
		t.metrics.checkpoints.WithLabelValues("failed").Inc()
		log.Error(err, "Pushing a checkpoint failed; retrying at the next interval")
		t.update(func(s *vmafxv1.TrainerStatus) {
			s.PublishReason, s.PublishMessage = vmafxv1.ReasonPushFailed, err.Error()
		})
		return
	}
	t.version++
	t.sinceCkpt = 0
	t.metrics.checkpoints.WithLabelValues("published").Inc()
	ref := t.repo
	ref.Reference = tag
	log.Info("Checkpoint written", "reference", ref.String(), "digest", digest, "samples", all, "heldOutRMSE", e.HeldOut, "baseHeldOutRMSE", e.Base)
	t.update(func(s *vmafxv1.TrainerStatus) {
		s.ModelVersion = tag
		s.LastCheckpoint = &vmafxv1.Checkpoint{Reference: ref.String(), Digest: digest, Samples: all, Time: &metav1.Time{Time: now}}
		s.PublishReason = vmafxv1.ReasonPublished
		s.PublishMessage = fmt.Sprintf("%s from %d samples", tag, all)
	})
}

// RegistryCredentialsFile is where the operator mounts spec.registryCredentials.
var RegistryCredentialsFile = filepath.Join(vmafxv1.TrainerRegistryCredentialsPath, vmafxv1.DockerConfigKey)
