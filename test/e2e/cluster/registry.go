package cluster

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
)

// hostsTOML is containerd's hosts.toml for a registry served over plain HTTP: pull and
// resolve from http://<host>, as containerd's docs/hosts.md describes.
const hostsTOML = `# Written by vmafx-cluster registry-http: pull from this registry over plain HTTP.
server = "http://%[1]s"

[host."http://%[1]s"]
  capabilities = ["pull", "resolve"]
`

// RegistryHTTP lets the cluster's containerd pull from the registry at host (host:port)
// over plain HTTP, writing <config_path>/<host>/hosts.toml; remove takes it away again.
// containerd reads the folder at every pull, so it needs no restart.
func RegistryHTTP(cfg Config, host string, remove bool, out io.Writer) error {
	if _, _, err := net.SplitHostPort(host); err != nil {
		return fmt.Errorf("registry %q: want host:port: %w", host, err)
	}
	dir := filepath.Join(Layout{Root: cfg.StateDir}.RegistryHosts(), host)
	if remove {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		fmt.Fprintf(out, "containerd no longer pulls from %s over plain HTTP\n", host)
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "hosts.toml"), fmt.Appendf(nil, hostsTOML, host), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "containerd pulls from %s over plain HTTP (%s)\n", host, filepath.Join(dir, "hosts.toml"))
	return nil
}
