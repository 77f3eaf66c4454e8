package heartbeat

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
)

// The plugin reads and creates its own VmafxNode, patches its spec when discovery
// disagrees with it, and patches status; it never lists, updates or deletes.
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes,verbs=get;create;patch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes/status,verbs=patch

// Counts are the node's slots by state.
type Counts struct {
	Total, Healthy, Allocated int32
	// AllocatedKnown is false when the kubelet could not say; status.slots.allocated
	// then keeps its last value rather than claiming 0.
	AllocatedKnown bool
}

// Options configure a Heartbeat.
type Options struct {
	// Namespace and NodeName name the VmafxNode.
	Namespace, NodeName string
	// Interval is the heartbeat period.
	Interval time.Duration
	// Spec is what discovery says the VmafxNode's spec is (NodeName is filled in).
	Spec vmafxv1.VmafxNodeSpec
	// Device describes the node's devices for status.device.
	Device string
	// Clock defaults to the real clock.
	Clock clock.WithTicker
	// Metrics counts heartbeats; nil for none.
	Metrics *metrics.Metrics
}

// minBackoff is the first retry delay after a failed beat; retries double up to the
// interval, so a returning API server sees a beat within a second or two while a long
// outage costs one attempt per interval.
const minBackoff = time.Second

// beatTimeout bounds one beat (a Get, maybe a Create, a status patch); a beat slower
// than a default interval is treated as failed.
const beatTimeout = 10 * time.Second

// Heartbeat writes the node's VmafxNode.
type Heartbeat struct {
	client  client.Client
	counts  func(context.Context) Counts
	opts    Options
	trigger chan struct{}

	specSynced bool // the VmafxNode exists with the discovered spec
}

// New returns a Heartbeat writing through c, with slot counts from counts.
func New(c client.Client, counts func(context.Context) Counts, opts Options) *Heartbeat {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.Discard()
	}
	opts.Spec.NodeName = opts.NodeName
	return &Heartbeat{client: c, counts: counts, opts: opts, trigger: make(chan struct{}, 1)}
}

// Trigger asks Run for a beat now, e.g. after a health change, without waiting.
func (h *Heartbeat) Trigger() {
	select {
	case h.trigger <- struct{}{}:
	default:
	}
}

// Run beats every interval until ctx ends, retrying failures with backoff.
func (h *Heartbeat) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("vmafxnode", klog.KRef(h.opts.Namespace, h.opts.NodeName))
	start := min(minBackoff, h.opts.Interval)
	backoff := start
	failing := false
	timer := h.opts.Clock.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-h.trigger:
			timer.Stop()
		}
		bctx, cancel := context.WithTimeout(ctx, beatTimeout)
		err := h.Beat(bctx)
		cancel()
		next := h.opts.Interval
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			h.opts.Metrics.Heartbeats.WithLabelValues(metrics.ResultError).Inc()
			h.opts.Metrics.HeartbeatFailures.Inc()
			logger.Error(err, "Heartbeat failed, the plugin keeps serving the kubelet", "retryIn", backoff)
			next, backoff, failing = backoff, min(2*backoff, h.opts.Interval), true
		default:
			h.opts.Metrics.Heartbeats.WithLabelValues(metrics.ResultSuccess).Inc()
			h.opts.Metrics.LastHeartbeat.Set(float64(h.opts.Clock.Now().Unix()))
			if failing {
				logger.Info("Heartbeat restored")
			}
			logger.V(4).Info("Heartbeat written")
			backoff, failing = start, false
		}
		timer.Reset(next)
	}
}

// Beat writes one heartbeat, creating the VmafxNode first if it is missing.
func (h *Heartbeat) Beat(ctx context.Context) error {
	if !h.specSynced {
		if err := h.ensure(ctx); err != nil {
			return err
		}
	}
	err := h.patchStatus(ctx)
	if apierrors.IsNotFound(err) {
		// Deleted since we last looked: make it again.
		h.specSynced = false
		if err := h.ensure(ctx); err != nil {
			return err
		}
		err = h.patchStatus(ctx)
	}
	return err
}

// ensure creates the VmafxNode, or brings its spec in line with discovery.
func (h *Heartbeat) ensure(ctx context.Context) error {
	key := client.ObjectKey{Namespace: h.opts.Namespace, Name: h.opts.NodeName}
	var node vmafxv1.VmafxNode
	err := h.client.Get(ctx, key, &node)
	if apierrors.IsNotFound(err) {
		node = vmafxv1.VmafxNode{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: h.labels()},
			Spec:       h.opts.Spec,
		}
		err = h.client.Create(ctx, &node)
		if err == nil {
			klog.FromContext(ctx).Info("Created the node's VmafxNode", "vmafxnode", klog.KObj(&node), "gpuVendor", node.Spec.GPUVendor, "capacity", node.Spec.Capacity)
			h.specSynced = true
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating VmafxNode: %w", err)
		}
		err = h.client.Get(ctx, key, &node)
	}
	if err != nil {
		return fmt.Errorf("reading VmafxNode: %w", err)
	}
	want := h.opts.Spec
	vendorLabel := node.Labels[vmafxv1.LabelGPUVendor] == string(want.GPUVendor)
	if node.Spec.GPUVendor != want.GPUVendor || node.Spec.Capacity != want.Capacity || node.Spec.Image != want.Image || !vendorLabel {
		// Spelled out (not marshalled from the struct), so that an empty image
		// clears a stale one instead of being omitted. The merge patch sets only the
		// vendor label and keeps any others a user put on the VmafxNode; it also labels a
		// VmafxNode that a device plugin of an earlier release created without it.
		patch, _ := json.Marshal(map[string]any{
			"metadata": map[string]any{"labels": h.labels()},
			"spec": map[string]any{
				"gpuVendor": want.GPUVendor, "capacity": want.Capacity, "image": want.Image,
			},
		})
		if err := h.client.Patch(ctx, &node, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("updating VmafxNode spec: %w", err)
		}
		klog.FromContext(ctx).Info("Updated the VmafxNode spec to what discovery found", "vmafxnode", klog.KObj(&node), "gpuVendor", want.GPUVendor, "capacity", want.Capacity)
	}
	h.specSynced = true
	return nil
}

// labels are the labels the device plugin keeps on its VmafxNode: the vendor, which a
// training run's dataSource.nodeSelector (gpu.vendor: nvidia) and kubectl's -l select on.
func (h *Heartbeat) labels() map[string]string {
	return map[string]string{vmafxv1.LabelGPUVendor: string(h.opts.Spec.GPUVendor)}
}

// patchStatus writes the agent's three status fields with a merge patch. The patch is
// a map, not the status struct: the struct's omitempty would drop a count of 0, and a
// merge patch without a field keeps the old value, so "0 healthy" would never arrive.
func (h *Heartbeat) patchStatus(ctx context.Context) error {
	c := h.counts(ctx)
	slots := map[string]any{"total": c.Total, "healthy": c.Healthy}
	if c.AllocatedKnown {
		slots["allocated"] = c.Allocated
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"lastHeartbeat": metav1.NewTime(h.opts.Clock.Now()),
		"device":        h.opts.Device,
		"slots":         slots,
	}})
	if err != nil {
		return err
	}
	node := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: h.opts.Namespace, Name: h.opts.NodeName}}
	if err := h.client.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("patching VmafxNode status: %w", err)
	}
	return nil
}
