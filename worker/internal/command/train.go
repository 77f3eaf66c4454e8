package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/worker/internal/report"
	"github.com/vmafx/vmafx/worker/internal/trainer"
)

// train runs the train command: the trainer of one VmafxModelTraining, until SIGTERM.
// A run that cannot train as written keeps serving its Failed status, so that the
// operator can show why, rather than restarting in a loop.
func train(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vmafx-worker train", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	str := func(name, def, usage string) *string {
		if v := env(envName(name)); v != "" {
			def = v
		}
		return fs.String(name, def, usage+" (env "+envName(name)+")")
	}
	run := str("training", "", "the VmafxModelTraining to run, `NAMESPACE/NAME`")
	listen := str("listen", fmt.Sprintf(":%d", vmafxv1.TrainerPort), "`address` of /status, /metrics and /healthz")
	poll := str("poll", "15s", "how often the API server is asked for new samples (a Go `duration`)")
	outputDir := str("output-dir", vmafxv1.OutputMountPath, "`directory` holding the jobs' file:///output/... outputs (the mounted dataSource.outputClaim)")
	credentials := str("credentials-dir", "", "`directory` of the object store keys the jobs' outputs are read with (dataSource.credentials)")
	registryCreds := str("registry-credentials", trainer.RegistryCredentialsFile, "Docker config `file` with the registry's logins (the .dockerconfigjson of spec.registryCredentials); ignored when missing")
	plainHTTP := str("registry-plain-http", "", "comma-separated OCI `registries` (host:port) reached over plain HTTP")
	verbosity := fs.Int("v", 0, "log verbosity")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprint(stdout, "Usage of vmafx-worker train:\n")
			fs.PrintDefaults()
			return report.ExitOK
		}
		fmt.Fprintf(stderr, "vmafx-worker train: %v (see vmafx-worker train -h)\n", err)
		return report.ExitBadInput
	}
	ns, name, ok := strings.Cut(*run, "/")
	pollEvery, perr := time.ParseDuration(*poll)
	switch {
	case !ok || ns == "" || name == "":
		fmt.Fprintf(stderr, "vmafx-worker train: --training %q is not NAMESPACE/NAME\n", *run)
		return report.ExitBadInput
	case perr != nil || pollEvery <= 0:
		fmt.Fprintf(stderr, "vmafx-worker train: --poll %q is not a positive duration\n", *poll)
		return report.ExitBadInput
	}
	log := newLogger(stderr, *verbosity, false)
	ctx = klog.NewContext(ctx, log)

	kube, err := kubeClient()
	if err != nil {
		log.Error(err, "No API server")
		return report.ExitInternal
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), version.Collector())
	t, err := trainer.New(trainer.Config{
		Namespace: ns, Name: name, Listen: *listen, Poll: pollEvery, OutputDir: *outputDir, CredentialsDir: *credentials,
		RegistryCredentials: *registryCreds,
		PlainHTTP:           strings.FieldsFunc(*plainHTTP, func(r rune) bool { return r == ',' || r == ' ' }),
	}, kube, reg)
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
