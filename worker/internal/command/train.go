package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/worker/internal/report"
	"github.com/vmafx/vmafx/worker/internal/trainer"
)

// trainSummary is the first paragraph of "vmafx-worker train --help".
const trainSummary = `train is the trainer of one VmafxModelTraining, which the operator runs as a
Deployment; it runs until SIGTERM and needs the API server (in a Pod, or through
KUBECONFIG) (docs/training.md).`

// trainFlags are the "train" flags.
type trainFlags struct {
	set       *cli.Set
	c         trainer.Config
	verbosity int
}

func newTrainFlags() *trainFlags {
	f := &trainFlags{set: newFlags("train", trainSummary)}
	s, c := f.set, &f.c
	str := func(p *string, name, def, usage string) { s.String(p, name, envName(name), def, usage) }
	s.Func("training", envName("training"), "", "the VmafxModelTraining to run, `NAMESPACE/NAME`", func(v string) error {
		ns, name, ok := strings.Cut(v, "/")
		if !ok || ns == "" || name == "" {
			return errors.New("want NAMESPACE/NAME")
		}
		c.Namespace, c.Name = ns, name
		return nil
	})
	s.Addr(&c.Listen, "listen", envName("listen"), fmt.Sprintf(":%d", vmafxv1.TrainerPort), false, "`address` of /status, /metrics and /healthz")
	s.Duration(&c.Poll, "poll", envName("poll"), 15*time.Second, "how often the API server is asked for new samples")
	str(&c.OutputDir, "output-dir", vmafxv1.OutputMountPath, "`directory` holding the jobs' file:///output/... outputs (the mounted dataSource.outputClaim)")
	str(&c.CredentialsDir, "credentials-dir", "", "`directory` of the object store keys the jobs' outputs are read with (dataSource.credentials)")
	str(&c.RegistryCredentials, "registry-credentials", trainer.RegistryCredentialsFile, "Docker config `file` with the registry's logins (the .dockerconfigjson of spec.registryCredentials); ignored when missing")
	s.List(&c.PlainHTTP, "registry-plain-http", envName("registry-plain-http"), "OCI `registries` (host:port) reached over plain HTTP")
	s.IntP(&f.verbosity, "v", "v", envName("v"), 0, 0, cli.NoMax, "log verbosity")
	return f
}

func (w *worker) trainCommand() *cobra.Command {
	f := newTrainFlags()
	return w.command(f.set, "train", "run the trainer of a VmafxModelTraining", trainSummary,
		[]string{"vmafx-worker train --training NAMESPACE/NAME [flags]"},
		func([]string) int {
			if err := f.set.Resolve(lookup(w.env)); err != nil {
				return w.trainUsage(err)
			}
			return train(w.ctx, f.c, f.verbosity, w.stderr)
		},
		w.trainUsage)
}

// trainUsage reports a command line the trainer cannot run, and returns the exit code;
// nothing reads a trainer's termination message, its status says why.
func (w *worker) trainUsage(err error) int {
	fmt.Fprintf(w.stderr, "vmafx-worker train: %v (see vmafx-worker train --help)\n", err)
	return report.ExitBadInput
}

// train runs the trainer cfg, until ctx ends. A run that cannot train as written keeps
// serving its Failed status, so that the operator can show why, rather than restarting
// in a loop.
func train(ctx context.Context, cfg trainer.Config, verbosity int, stderr io.Writer) int {
	log := newLogger(stderr, verbosity, false)
	ctx = klog.NewContext(ctx, log)

	kube, err := kubeClient()
	if err != nil {
		log.Error(err, "No API server")
		return report.ExitInternal
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), version.Collector())
	t, err := trainer.New(cfg, kube, reg)
	if err != nil {
		log.Error(err, "Cannot start the trainer")
		return report.ExitBadInput
	}
	served := make(chan error, 1)
	go func() { served <- t.Serve(ctx, reg) }()
	if err := t.Run(ctx); err != nil {
		log.Error(err, "The run cannot train as written; serving its status until stopped")
		<-ctx.Done()
	}
	if err := <-served; err != nil {
		log.Error(err, "Status server failed")
		return report.ExitInternal
	}
	log.Info("Trainer stopped")
	return report.ExitOK
}

// kubeClient reaches the API server from inside a Pod, or through KUBECONFIG.
func kubeClient() (client.Client, error) {
	cfg, err := ctrlconfig.GetConfig()
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "vmafx-trainer"
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := vmafxv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}
