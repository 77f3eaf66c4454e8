package job

import (
	"fmt"
	"path"
	"slices"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

// checkVolume refuses a job volume that reaches into a node or a network share the
// operator's configuration does not allow. Creating a VmafxJob creates a Pod with the
// operator's rights, so without this check anyone who may create a job could mount any
// directory of any node.
func checkVolume(v *vmafxv1.JobVolume, policy config.VolumePolicy) error {
	switch {
	case v == nil:
		return nil
	case v.HostPath != nil:
		p := v.HostPath.Path
		if !path.IsAbs(p) {
			return fmt.Errorf("spec.volume.hostPath.path %q is not an absolute path", p)
		}
		p = path.Clean(p)
		for _, allowed := range policy.HostPaths {
			if p == allowed || allowed == "/" || strings.HasPrefix(p, allowed+"/") {
				return nil
			}
		}
		return fmt.Errorf("spec.volume.hostPath.path %s is not allowed: the operator allows host paths under %s (%s)",
			p, listOrNone(policy.HostPaths), config.EnvAllowedHostPaths)
	case v.NFS != nil:
		if slices.Contains(policy.NFSServers, "*") || slices.Contains(policy.NFSServers, v.NFS.Server) {
			return nil
		}
		return fmt.Errorf("spec.volume.nfs.server %s is not allowed: the operator allows the NFS servers %s (%s)",
			v.NFS.Server, listOrNone(policy.NFSServers), config.EnvAllowedNFSServers)
	}
	return nil
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
