// Command vmafx-mcp is the VMAFX Model Context Protocol server: in the cluster it serves
// the streamable HTTP transport to clients that present a Kubernetes bearer token; on a
// workstation, with --transport=stdio, it talks to the API server with the user's
// kubeconfig (docs/gateway.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/klog/v2"

	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/config"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/mcpserver"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/version"
)

const summary = `vmafx-mcp is the VMAFX Model Context Protocol server: in the cluster it serves the
streamable HTTP transport to clients that present a Kubernetes bearer token; on a
workstation, with --transport=stdio, it talks to the API server with the user's kubeconfig
(docs/gateway.md).`

// readyPeriod is how often the door checks that the API server answers (/readyz reports
// the last check).
const readyPeriod = 10 * time.Second

func main() {
	version.HandleFlag(os.Args)
	os.Exit(run())
}

func run() int {
	transport, namespace := "", ""
	readOutputs := false
	var limits mcpserver.SessionLimits
	cfg, err := config.Parse("vmafx-mcp", "VMAFX_MCP_", summary, os.Args[1:], os.LookupEnv, os.Stdout, func(s *cli.Set, env func(string) string) {
		s.OneOf(&transport, "transport", env("transport"), "http", "http: streamable HTTP, bearer tokens checked with TokenReview; stdio: the kubeconfig's identity", "http", "stdio")
		s.String(&namespace, "namespace", env("namespace"), "", "namespace of calls that name none; empty: the kubeconfig context's")
		s.Int(&limits.PerUser, "max-sessions-per-user", env("max-sessions-per-user"), mcpserver.DefaultMaxSessionsPerUser, 1, 1_000_000, "open sessions one user may hold; a new one beyond is refused with 429")
		s.Int(&limits.Total, "max-sessions", env("max-sessions"), mcpserver.DefaultMaxSessions, 1, 10_000_000, "open sessions of all users in this replica; a new one beyond is refused with 503")
		s.Bool(&readOutputs, "read-outputs", env("read-outputs"), false,
			"let worst_frames return a job's pictures as images, read from the job's object store with the keys of the Secret the job names, that Secret read as the caller (the door's Pods then reach the jobs' stores)")
		s.Duration(&limits.IdleTimeout, "session-idle-timeout", env("session-idle-timeout"), mcpserver.DefaultSessionIdleTimeout, "a session that receives no request for this long is closed")
	})
	if errors.Is(err, cli.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmafx-mcp: %v\n", err)
		return 2
	}
	if namespace == "" {
		namespace = cfg.Namespace()
	}
	defer klog.Flush()
	// Logs go to stderr (klog's default): on stdio, stdout carries the protocol alone.
	logger := klog.Background().WithName("vmafx-mcp")
	logger.Info("Effective configuration", append(cfg.KeysAndValues(), "transport", transport, "namespace", namespace,
		"readOutputs", readOutputs, "maxSessionsPerUser", limits.PerUser, "maxSessions", limits.Total, "sessionIdleTimeout", limits.IdleTimeout)...)

	c, reviewer, err := cfg.Connect()
	if err != nil {
		logger.Error(err, "Creating API clients")
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx = klog.NewContext(ctx, logger)
	// The tools' schemas come from the VmafxJob CRD, read as the door itself (no user is
	// involved; vmafx-gateway-mcp allows it).
	spec, err := mcpserver.SpecSchema(ctx, c.Own())
	if err != nil {
		logger.Error(err, "Building the tools' schemas")
		return 1
	}
	opts := mcpserver.Options{Namespace: namespace, Version: "v1"}

	if transport == "stdio" {
		// The user's own credentials reach the API server, which authorizes each call.
		store := jobs.New(jobs.Self{C: c.Own()}, access.Direct{})
		if readOutputs {
			opts.Pictures = outputs.New(store)
		}
		server := mcpserver.New(store, spec, opts)
		if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			logger.Error(err, "MCP session failed")
			return 1
		}
		return 0
	}
	store := jobs.New(c, reviewer)
	if readOutputs {
		opts.Pictures = outputs.New(store)
	}
	server := mcpserver.New(store, spec, opts)
	reg := serve.NewRegistry()
	metrics := mcpserver.NewMetrics(reg)
	metrics.Instrument(server)
	door, probe, err := serve.Listen(cfg.Serve)
	if err != nil {
		logger.Error(err, "Listening")
		return 1
	}
	if err := serve.Serve(ctx, cfg.Serve, door, probe, mcpserver.HTTPHandler(server, reviewer, limits, metrics), reg, serve.Readiness(ctx, c.Ready, readyPeriod)); err != nil {
		logger.Error(err, "Server failed")
		return 1
	}
	return 0
}
