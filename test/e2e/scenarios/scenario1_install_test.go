package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestInstall is scenario 1: after `make deploy`, the CRDs are established, the operator,
// vmafx-scheduler and the device plugin are ready, the node offers vmafx.dev/slot, the
// device plugin has created the node's VmafxNode and keeps its heartbeat going, and
// `kubectl get vmafx` lists it.
func TestInstall(t *testing.T) {
	t.Run("CRDs established", func(t *testing.T) {
		for _, name := range []string{"vmafxjobs.vmafx.dev", "vmafxnodes.vmafx.dev", "vmafxmodeltrainings.vmafx.dev", "vmafxcomparisons.vmafx.dev", "vmafxladders.vmafx.dev"} {
			eventually(t, 30*time.Second, name+" Established", func(ctx context.Context) error {
				var crd apiextensionsv1.CustomResourceDefinition
				if err := c.Get(ctx, types.NamespacedName{Name: name}, &crd); err != nil {
					return err
				}
				for _, cond := range crd.Status.Conditions {
					if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
						return nil
					}
				}
				return errors.New("not Established")
			})
		}
	})

	t.Run("components ready", func(t *testing.T) {
		for _, name := range []string{"vmafx-operator", "vmafx-scheduler"} {
			eventually(t, 2*time.Minute, "Deployment "+name+" available", func(ctx context.Context) error {
				var d appsv1.Deployment
				if err := c.Get(ctx, types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: name}, &d); err != nil {
					return err
				}
				if d.Status.AvailableReplicas < 1 || d.Status.AvailableReplicas != d.Status.Replicas {
					return fmt.Errorf("%d of %d replicas available", d.Status.AvailableReplicas, d.Status.Replicas)
				}
				return nil
			})
		}
		eventually(t, 2*time.Minute, "DaemonSet vmafx-device-plugin ready", func(ctx context.Context) error {
			var ds appsv1.DaemonSet
			if err := c.Get(ctx, types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: "vmafx-device-plugin"}, &ds); err != nil {
				return err
			}
			if ds.Status.DesiredNumberScheduled != 1 || ds.Status.NumberReady != 1 {
				return fmt.Errorf("%d of %d Pods ready", ds.Status.NumberReady, ds.Status.DesiredNumberScheduled)
			}
			return nil
		})
	})

	t.Run("node offers slots", func(t *testing.T) {
		eventually(t, time.Minute, "node "+nodeName+" has "+vmafxv1.ResourceSlot, func(ctx context.Context) error {
			var n corev1.Node
			if err := c.Get(ctx, types.NamespacedName{Name: nodeName}, &n); err != nil {
				return err
			}
			capacity, allocatable := n.Status.Capacity[vmafxv1.ResourceSlot], n.Status.Allocatable[vmafxv1.ResourceSlot]
			if capacity.Value() < 1 || allocatable.Value() < 1 {
				return fmt.Errorf("capacity %s, allocatable %s", capacity.String(), allocatable.String())
			}
			return nil
		})
	})

	t.Run("VmafxNode heartbeat advances", func(t *testing.T) {
		key := types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: nodeName}
		eventually(t, time.Minute, "VmafxNode "+key.String()+" with its status", func(ctx context.Context) error {
			var vn vmafxv1.VmafxNode
			if err := c.Get(ctx, key, &vn); err != nil {
				return err
			}
			if vn.Spec.NodeName != nodeName {
				return fmt.Errorf("spec.nodeName %q, want %q", vn.Spec.NodeName, nodeName)
			}
			if vn.Status.Slots == nil {
				return errors.New("no status.slots yet")
			}
			return nil
		})
		// The heartbeat is the node's Lease, renewed every 10 s by default; three periods
		// leave margin for a busy machine.
		leaseName, _ := vmafxv1.NodeLeaseName(nodeName)
		leaseKey := types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: leaseName}
		var first time.Time
		eventually(t, time.Minute, "Lease "+leaseKey.String()+" held by the node", func(ctx context.Context) error {
			var lease coordinationv1.Lease
			if err := c.Get(ctx, leaseKey, &lease); err != nil {
				return err
			}
			if h := lease.Spec.HolderIdentity; h == nil || *h != nodeName || lease.Spec.RenewTime == nil {
				return fmt.Errorf("holder %v, renewTime %v; want %s and a renewal", lease.Spec.HolderIdentity, lease.Spec.RenewTime, nodeName)
			}
			first = lease.Spec.RenewTime.Time
			return nil
		})
		eventually(t, 30*time.Second, "a later renewal", func(ctx context.Context) error {
			var lease coordinationv1.Lease
			if err := c.Get(ctx, leaseKey, &lease); err != nil {
				return err
			}
			if !lease.Spec.RenewTime.After(first) {
				return fmt.Errorf("renewTime still %s", first.Format(time.RFC3339Nano))
			}
			return nil
		})
	})

	t.Run("API priority and fairness for VMAFX", func(t *testing.T) {
		if err := c.Get(t.Context(), types.NamespacedName{Name: "vmafx"}, &flowcontrolv1.PriorityLevelConfiguration{}); err != nil {
			t.Errorf("PriorityLevelConfiguration vmafx: %v", err)
		}
		for _, name := range []string{"vmafx-node-heartbeats", "vmafx-operator-writes"} {
			eventually(t, 30*time.Second, "FlowSchema "+name+" matched to its level", func(ctx context.Context) error {
				var fs flowcontrolv1.FlowSchema
				if err := c.Get(ctx, types.NamespacedName{Name: name}, &fs); err != nil {
					return err
				}
				// Dangling is False once the API server has found the schema's level.
				for _, cond := range fs.Status.Conditions {
					if cond.Type == flowcontrolv1.FlowSchemaConditionDangling && cond.Status == flowcontrolv1.ConditionFalse {
						return nil
					}
				}
				return fmt.Errorf("conditions %+v", fs.Status.Conditions)
			})
		}
	})

	t.Run("kubectl get vmafx lists the node", func(t *testing.T) {
		// A fresh discovery cache: kubectl expands categories from a cache that may predate
		// the CRDs (it lives for hours and is not refreshed for an unknown category), as it
		// does on a fresh machine where `make cluster-up` ran kubectl before `make deploy`.
		out := kubectl(t, "get", "vmafx", "--all-namespaces", "--output=name", "--cache-dir="+t.TempDir())
		want := "vmafxnode.vmafx.dev/" + nodeName
		for _, line := range strings.Split(out, "\n") {
			if strings.TrimSpace(line) == want {
				return
			}
		}
		t.Errorf("kubectl get vmafx -A does not list %s:\n%s", want, out)
	})
}
