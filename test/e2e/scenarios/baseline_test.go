package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// requireBaseline waits, bounded, until the platform is as `make deploy` leaves it: the
// operator and vmafx-scheduler available, the device plugin ready, the node offering
// slots and its VmafxNode healthy. Every scenario starts with it, so that none depends on
// which ran before it (go test runs them in file order) or on how quickly the one before
// had its disturbance undone.
func requireBaseline(t *testing.T) {
	t.Helper()
	eventually(t, 3*time.Minute, "the platform at its baseline", baseline)
}

func baseline(ctx context.Context) error {
	for _, name := range []string{"vmafx-operator", "vmafx-scheduler"} {
		var d appsv1.Deployment
		if err := c.Get(ctx, types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: name}, &d); err != nil {
			return err
		}
		if d.Status.AvailableReplicas < 1 || d.Status.UpdatedReplicas != d.Status.Replicas || d.Status.AvailableReplicas != d.Status.Replicas {
			return fmt.Errorf("Deployment %s: %d of %d replicas available, %d updated", name,
				d.Status.AvailableReplicas, d.Status.Replicas, d.Status.UpdatedReplicas)
		}
	}
	var ds appsv1.DaemonSet
	if err := c.Get(ctx, types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: "vmafx-device-plugin"}, &ds); err != nil {
		return err
	}
	if ds.Status.DesiredNumberScheduled != 1 || ds.Status.NumberReady != 1 || ds.Status.UpdatedNumberScheduled != 1 {
		return fmt.Errorf("DaemonSet vmafx-device-plugin: %d of %d Pods ready, %d updated",
			ds.Status.NumberReady, ds.Status.DesiredNumberScheduled, ds.Status.UpdatedNumberScheduled)
	}
	var n corev1.Node
	if err := c.Get(ctx, types.NamespacedName{Name: nodeName}, &n); err != nil {
		return err
	}
	if a := n.Status.Allocatable[vmafxv1.ResourceSlot]; a.Value() < 1 {
		return fmt.Errorf("node %s: allocatable %s %s", nodeName, vmafxv1.ResourceSlot, a.String())
	}
	var vn vmafxv1.VmafxNode
	if err := c.Get(ctx, types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: nodeName}, &vn); err != nil {
		return err
	}
	if !vn.Status.Healthy {
		return fmt.Errorf("VmafxNode %s not healthy", nodeName)
	}
	return nil
}
