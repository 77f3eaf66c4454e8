package workerpod

import (
	"fmt"
	"path"
	"slices"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

// CheckVolume refuses a job volume that reaches into a node, a network share or a CSI
// driver the operator's configuration does not allow. Creating a VmafxJob or a VmafxLadder
// creates Pods with the operator's rights, so without this check anyone who may create
// one could mount any directory of any node, or hand any attributes to any CSI driver of
// the cluster (an NFS or SMB driver reaches any share, bypassing the NFS allow-list).
func CheckVolume(v *vmafxv1.JobVolume, policy config.VolumePolicy) error {
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
	case v.CSI != nil:
		if slices.Contains(policy.CSIDrivers, v.CSI.Driver) {
			return nil
		}
		return fmt.Errorf("spec.volume.csi.driver %s is not allowed: the operator allows the inline CSI drivers %s; an admin allows one by adding it to %s (chart value operator.allowedCSIDrivers)",
			v.CSI.Driver, listOrNone(policy.CSIDrivers), config.EnvAllowedCSIDrivers)
	}
	return nil
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
