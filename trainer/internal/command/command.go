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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/trainer/internal/trainer"
)

// Exit codes: the same numbers as the worker's for the same reasons. A run that cannot
// train keeps serving its Failed status instead of exiting; a trainer that exits (no API
// server, a configuration it cannot start with) is restarted by the kubelet, and the
// operator shows its exit code and the end of its log (its Pod's termination message,
// FallbackToLogsOnError) in the run's TrainerRestarting condition.
const (
	ExitOK       = 0
	ExitInternal = 1
	ExitBadInput = 2
)

// Name is the program's name in usage lines and errors.
const Name = "vmafx-trainer"

// summary is the first paragraph of "vmafx-trainer --help".
const summary = `vmafx-trainer is the trainer of one VmafxModelTraining, which the operator runs as a
Deployment; it runs until SIGTERM and needs the API server (in a Pod, or through
KUBECONFIG) (docs/training.md).`

// Flags are the trainer's flags, each with its environment twin.
type Flags struct {
	set       *cli.Set
	c         trainer.Config
	verbosity int
}

// envName is the environment twin of a flag: VMAFX_ and the flag's name in upper case
// with dashes as underscores, as the worker's; -v is VMAFX_VERBOSITY. The operator sets
// VMAFX_REGISTRY_PLAIN_HTTP (vmafxv1.EnvRegistryPlainHTTP) on both.
func envName(flagName string) string { return cli.EnvName("VMAFX_", flagName) }

// NewFlags returns the trainer's flags with their defaults.
func NewFlags() *Flags {
	f := &Flags{set: cli.New(Name, summary)}
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

// Set is the flags as the configuration reference reads them.
func (f *Flags) Set() *cli.Set { return f.set }

// Run runs the trainer with the command line args (without the program name) and the
// environment env until ctx ends, and returns the exit code.
func Run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	f := NewFlags()
	// An empty variable counts as unset, as the kubelet passes a variable whose source
	// is empty.
	if err := f.set.Parse(args, cli.Getenv(env), stdout); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return ExitOK
		}
		fmt.Fprintf(stderr, "%s: %v\n", Name, strings.TrimPrefix(err.Error(), Name+": "))
		return ExitBadInput
	}
	return train(ctx, f.c, f.verbosity, stderr)
}

// train runs the trainer cfg, until ctx ends. A run that cannot train as written keeps
// serving its Failed status, so that the operator can show why, rather than restarting
// in a loop.
func train(ctx context.Context, cfg trainer.Config, verbosity int, stderr io.Writer) int {
	log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(stderr), textlogger.Verbosity(verbosity)))
	ctx = klog.NewContext(ctx, log)
	log.Info("Starting", "version", version.Get().String(), "training", cfg.Namespace+"/"+cfg.Name, "listen", cfg.Listen, "poll", cfg.Poll)

	kube, err := kubeClient()
	if err != nil {
		log.Error(err, "No API server")
		return ExitInternal
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), version.Collector())
	t, err := trainer.New(cfg, kube, reg)
	if err != nil {
		log.Error(err, "Cannot start the trainer")
		return ExitBadInput
	}
	served := make(chan error, 1)
	go func() { served <- t.Serve(ctx, reg) }()
	if err := t.Run(ctx); err != nil {
		log.Error(err, "The run cannot train as written; serving its status until stopped")
		<-ctx.Done()
	}
	if err := <-served; err != nil {
		log.Error(err, "Status server failed")
		return ExitInternal
	}
	log.Info("Trainer stopped")
	return ExitOK
}

// kubeClient reaches the API server from inside a Pod, or through KUBECONFIG.
func kubeClient() (client.Client, error) {
	cfg, err := ctrlconfig.GetConfig()
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = Name
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := vmafxv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}
