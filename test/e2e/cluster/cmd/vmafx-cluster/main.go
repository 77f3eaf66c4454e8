// Command vmafx-cluster runs the project's local single-node Kubernetes cluster (see
// docs/local-cluster.md): `up`, `down`, `status`, `images` (build, pack and import the
// project's images), `wait-deployed` (after `kubectl apply -k`), and `collect` (gather
// logs and cluster state into .cluster/artifacts). The Makefile's cluster targets call it
// with the binary folder and versions; every flag has an environment twin.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vmafx/vmafx/test/e2e/cluster"
)

const usage = `usage: vmafx-cluster <up|down|status|images|image BINARY NAME|wait-deployed|collect|restart COMPONENT|demo|registry-http HOST> [flags]

  up             start the cluster (a no-op when it is up); restarts a part that died
  down           stop it and restore the host state it changed
  status         show its processes and node
  images         build the project's binaries static, pack them into images, import them
  image B N      pack the prebuilt static binary B (a test server) as image vmafx.local/N:dev, import it
  wait-deployed  wait until the vmafx-system Deployments and DaemonSets rolled out
  collect        gather every log and the cluster's state into .cluster/artifacts/<time>
  restart C      stop component C (e.g. kubelet) by its PID and start it again
                 (-down-for: after that long)
  demo           apply the demo VmafxJob (a clip pair of the repository), wait, show it
  registry-http H  let containerd pull from registry H (host:port) over plain HTTP
                 (-remove: no longer)

flags:
`

func main() {
	if len(os.Args) < 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprint(os.Stderr, usage)
		flagSet().PrintDefaults()
		os.Exit(2)
	}
	verb, args := os.Args[1], os.Args[2:]
	var component string
	if verb == "restart" {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			fmt.Fprint(os.Stderr, "restart needs a component name, e.g. kubelet\n")
			os.Exit(2)
		}
		component, args = args[0], args[1:]
	}
	var registryHost string
	if verb == "registry-http" {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			fmt.Fprint(os.Stderr, "registry-http needs a registry host:port\n")
			os.Exit(2)
		}
		registryHost, args = args[0], args[1:]
	}
	var binary, imageName string
	if verb == "image" {
		if len(args) < 2 || strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[1], "-") {
			fmt.Fprint(os.Stderr, "image needs a binary and an image name, e.g. image bin/versitygw versitygw\n")
			os.Exit(2)
		}
		binary, imageName, args = args[0], args[1], args[2:]
	}
	fs := flagSet()
	cfg := cluster.Config{}
	var timeout, downFor time.Duration
	bindFlags(fs, &cfg, &timeout)
	fs.DurationVar(&downFor, "down-for", 0, "restart: how long the component stays stopped")
	remove := fs.Bool("remove", false, "registry-http: remove the registry's configuration")
	if err := fs.Parse(args); err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch verb {
	case "up":
		err = cluster.Up(ctx, cfg, os.Stdout)
	case "down":
		err = cluster.Down(ctx, cfg, os.Stdout)
	case "status":
		err = cluster.Status(ctx, cfg, os.Stdout)
	case "images":
		err = cluster.Images(ctx, cfg, os.Stdout)
	case "image":
		err = cluster.ImageFromBinary(ctx, cfg, binary, imageName, os.Stdout)
	case "wait-deployed":
		err = cluster.WaitDeployed(ctx, cfg, os.Stdout, timeout)
	case "collect":
		_, err = cluster.Collect(ctx, cfg, os.Stdout)
	case "demo":
		err = cluster.Demo(ctx, cfg, os.Stdout)
	case "restart":
		err = cluster.Restart(ctx, cfg, component, downFor, os.Stdout)
	case "registry-http":
		err = cluster.RegistryHTTP(cfg, registryHost, *remove, os.Stdout)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n%s", verb, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmafx-cluster %s: %v\n", verb, err)
		os.Exit(1)
	}
}

func flagSet() *flag.FlagSet { return flag.NewFlagSet("vmafx-cluster", flag.ContinueOnError) }

// bindFlags declares the flags; each defaults to its environment twin.
func bindFlags(fs *flag.FlagSet, cfg *cluster.Config, timeout *time.Duration) {
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	str := func(p *string, name, env, def, help string) {
		if v := os.Getenv(env); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, help+" ($"+env+")")
	}
	str(&cfg.StateDir, "state-dir", "VMAFX_CLUSTER_STATE_DIR", filepath.Join(wd, ".cluster"), "folder holding all of the cluster's state")
	str(&cfg.RepoRoot, "repo", "VMAFX_CLUSTER_REPO", wd, "the project's work tree")
	str(&cfg.BinDir, "bin-dir", "VMAFX_CLUSTER_BIN_DIR", filepath.Join(home, ".cache", "vmafx", "bin"), "folder of the binaries built from module sources, named <name>-<version>")
	str(&cfg.K8sVersion, "k8s-version", "VMAFX_CLUSTER_K8S_VERSION", "", "Kubernetes version of the binaries")
	str(&cfg.EtcdVersion, "etcd-version", "VMAFX_CLUSTER_ETCD_VERSION", "", "etcd version of the binary")
	str(&cfg.ContainerdVersion, "containerd-version", "VMAFX_CLUSTER_CONTAINERD_VERSION", "", "containerd version of the binaries")
	str(&cfg.ImagesDir, "out", "VMAFX_CLUSTER_IMAGES_DIR", filepath.Join(wd, "_output", "images"), "folder for the built binaries and image archives")
	str(&cfg.NodeIP, "node-ip", "VMAFX_CLUSTER_NODE_IP", "", "node address (default: this machine's first non-loopback IPv4 address)")
	str(&cfg.NodeName, "node-name", "VMAFX_CLUSTER_NODE_NAME", "", "node name (default: the host name)")
	d := 5 * time.Minute
	if v, err := time.ParseDuration(os.Getenv("VMAFX_CLUSTER_TIMEOUT")); err == nil {
		d = v
	}
	fs.DurationVar(timeout, "timeout", d, "how long wait-deployed waits ($VMAFX_CLUSTER_TIMEOUT)")
}
