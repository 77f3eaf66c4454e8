package config

import (
	goflag "flag"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
	"github.com/vmafx/vmafx/internal/cli"
)

// Defaults, each in one place.
const (
	// DefaultAddr is the door's listener.
	DefaultAddr = ":8443"
	// DefaultProbeAddr serves /healthz, /readyz and /metrics.
	DefaultProbeAddr = ":8081"
	// DefaultShutdownTimeout is what a Pod's default 30 s grace period leaves after the
	// endpoints controller has taken the Pod out of its Service (a few seconds).
	DefaultShutdownTimeout = 20 * time.Second
	// DefaultAudience is the token audience the doors accept unless told otherwise: a
	// client asks for a token for the doors (kubectl create token NAME --audience vmafx),
	// and a token meant for the API server, such as any Pod's own, is refused.
	DefaultAudience = "vmafx"
	// DefaultDrainPeriod is a few seconds for the endpoints controller and kube-proxy
	// (or an ingress) to stop sending new requests after the Pod began terminating;
	// with DefaultShutdownTimeout it stays within the default 30 s grace period.
	DefaultDrainPeriod = 5 * time.Second
	// DefaultReadTimeout bounds reading a request with its body (at most 1 MiB).
	DefaultReadTimeout = 30 * time.Second
	// DefaultIdleTimeout closes kept-alive connections that send nothing.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultRequestTimeout is an answer's deadline; waits and event streams extend theirs
	// to the longest wait (10 min).
	DefaultRequestTimeout = time.Minute
)

// Config is a door's effective configuration.
type Config struct {
	Serve serve.Options
	// Kubeconfig is a kubeconfig file; empty: in-cluster, else the default loading rules.
	Kubeconfig string
	// Context is the kubeconfig context; empty: its current one.
	Context string
	// Audiences are the token audiences accepted; DefaultAudience unless set.
	Audiences []string
}

// Parse reads a door's settings from args and the environment (each flag's twin is
// prefix plus its name, e.g. VMAFX_API_ADDR for --addr) after extra has added the door's
// own; it returns cli.ErrHelp after writing --help to stdout. klog's flags (-v) come too.
func Parse(name, prefix, summary string, args []string, lookup cli.Lookup, stdout io.Writer, extra func(s *cli.Set, env func(flag string) string)) (*Config, error) {
	c := &Config{}
	env := func(flag string) string { return cli.EnvName(prefix, flag) }
	s := cli.New(name, summary)
	s.Addr(&c.Serve.Addr, "addr", env("addr"), DefaultAddr, false, "address to serve on")
	s.Addr(&c.Serve.ProbeAddr, "probe-addr", env("probe-addr"), DefaultProbeAddr, false, "address of /healthz, /readyz and /metrics")
	s.String(&c.Serve.TLSCertFile, "tls-cert-file", env("tls-cert-file"), "", "TLS certificate (PEM); with --tls-key-file serves HTTPS, else plain HTTP")
	s.String(&c.Serve.TLSKeyFile, "tls-key-file", env("tls-key-file"), "", "TLS private key (PEM)")
	s.String(&c.Kubeconfig, "kubeconfig", env("kubeconfig"), "", "kubeconfig file; empty: in-cluster configuration")
	s.String(&c.Context, "context", env("context"), "", "kubeconfig context")
	s.List(&c.Audiences, "token-audiences", env("token-audiences"), "token audiences to accept; empty: "+DefaultAudience+" (list the API server's own to accept Pods' default tokens)")
	s.DurationOrZero(&c.Serve.ShutdownTimeout, "shutdown-timeout", env("shutdown-timeout"), DefaultShutdownTimeout, "how long in-flight requests may finish after SIGTERM")
	s.DurationOrZero(&c.Serve.DrainPeriod, "drain-period", env("drain-period"), DefaultDrainPeriod, "how long the door keeps serving after SIGTERM with /readyz failing, before it stops accepting requests")
	s.Duration(&c.Serve.ReadTimeout, "read-timeout", env("read-timeout"), DefaultReadTimeout, "how long a client may take to send a request, body included")
	s.Duration(&c.Serve.IdleTimeout, "idle-timeout", env("idle-timeout"), DefaultIdleTimeout, "how long a kept-alive connection may stay idle")
	s.Duration(&c.Serve.RequestTimeout, "request-timeout", env("request-timeout"), DefaultRequestTimeout, "a request's deadline for its answer; waits and event streams extend theirs")
	if extra != nil {
		extra(s, env)
	}
	klogFlags := goflag.NewFlagSet(name, goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	s.AddGoFlagSet(klogFlags)
	if err := s.Parse(args, lookup, stdout); err != nil {
		return nil, err
	}
	if len(c.Audiences) == 0 {
		c.Audiences = []string{DefaultAudience}
	}
	if (c.Serve.TLSCertFile == "") != (c.Serve.TLSKeyFile == "") {
		return nil, fmt.Errorf("invalid %s configuration: set --tls-cert-file (%s) and --tls-key-file (%s) together", name, env("tls-cert-file"), env("tls-key-file"))
	}
	return c, nil
}

// KeysAndValues is the configuration for one log line.
func (c *Config) KeysAndValues() []any {
	return []any{"addr", c.Serve.Addr, "probeAddr", c.Serve.ProbeAddr, "tls", c.Serve.TLSCertFile != "",
		"kubeconfig", c.Kubeconfig, "context", c.Context, "audiences", c.Audiences, "shutdownTimeout", c.Serve.ShutdownTimeout,
		"drainPeriod", c.Serve.DrainPeriod, "readTimeout", c.Serve.ReadTimeout, "idleTimeout", c.Serve.IdleTimeout, "requestTimeout", c.Serve.RequestTimeout}
}

// RESTConfig is the API server's address and the door's own credentials.
func (c *Config) RESTConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.Kubeconfig != "" {
		rules.ExplicitPath = c.Kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.Context}).ClientConfig()
	if err != nil {
		return nil, err
	}
	// Every request costs a TokenReview besides its own calls (none while it is cached),
	// all users' calls sharing this budget: allow bursts well above client-go's 5 QPS
	// default.
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// Namespace is the kubeconfig context's namespace ("default" when it names none, or
// in-cluster).
func (c *Config) Namespace() string {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.Kubeconfig != "" {
		rules.ExplicitPath = c.Kubeconfig
	}
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.Context}).Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

// Scheme knows the vmafx.dev/v1 kinds.
func Scheme() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	if err := vmafxv1.AddToScheme(s); err != nil {
		panic(err)
	}
	// The MCP server reads the VmafxJob CRD for its tools' input schemas.
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	// The console reads the Secret a job names for its output, as the caller.
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Connect returns the door's clients for the configured API server.
func (c *Config) Connect() (*jobs.Impersonating, *access.Reviewer, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("loading the API server's configuration: %w", err)
	}
	return Clients(cfg, c.Audiences)
}

// Clients returns the door's clients, its own and those acting as each caller, over cfg
// (the door's own credentials), and the token reviewer.
func Clients(cfg *rest.Config, audiences []string) (*jobs.Impersonating, *access.Reviewer, error) {
	c, err := jobs.NewImpersonating(cfg, Scheme())
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return c, access.NewReviewer(cs.AuthenticationV1(), audiences), nil
}
