package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
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
// disagrees with it, and patches status; it never lists, updates or deletes. It reads,
// creates and renews (updates) its node's Lease; the admission policy
// vmafx-device-plugin-own-node keeps both to the plugin's own node.
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes,verbs=get;create;patch
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes/status,verbs=patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update

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
	// Interval is the heartbeat period: how often the Lease is renewed.
	Interval time.Duration
	// LeaseDuration is the Lease's spec.leaseDurationSeconds; zero: six intervals, the
	// default staleness window of the operator and vmafx-scheduler. It tells a reader of
	// the Lease how long the holder means to stay alive unrenewed; the operator and
	// vmafx-scheduler judge by their own window, as the node lifecycle controller judges
	// Node Leases by its grace period.
	LeaseDuration time.Duration
	// StatusHeartbeatFor is how long after the first beat the plugin also stamps
	// status.lastHeartbeat on every beat, for an operator and scheduler of the previous
	// release (see the package comment); zero for never. A node whose Lease name would be
	// too long (NodeLeaseName) always beats through the status.
	StatusHeartbeatFor time.Duration
	// StatusReportPeriod is the longest the plugin goes without patching the status, as
	// the kubelet posts its Node status at least every five minutes even when nothing
	// changed: a no-op patch costs the API server no write, and finds a VmafxNode deleted
	// while its Lease stayed (no garbage collector ran). Zero: only on change.
	StatusReportPeriod time.Duration
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

	specSynced bool      // the VmafxNode exists with the discovered spec
	nodeUID    types.UID // its UID, for the Lease's owner reference
	// lease is the Lease as last written, renewed with an update as the kubelet renews
	// its own; nil when it must be read (or created) first.
	lease *coordinationv1.Lease
	// written is the status last patched; nil before the first patch, or after a failed
	// one, when the next beat writes the status whatever it holds.
	written   *writtenStatus
	writtenAt time.Time
	// firstBeat is when the first beat was attempted, the start of StatusHeartbeatFor.
	firstBeat time.Time
}

// writtenStatus is what the plugin last wrote into the VmafxNode's status.
type writtenStatus struct {
	device string
	counts Counts
}

// New returns a Heartbeat writing through c, with slot counts from counts.
func New(c client.Client, counts func(context.Context) Counts, opts Options) *Heartbeat {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.Discard()
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = 6 * opts.Interval
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

// Beat writes one heartbeat: it creates the VmafxNode first if it is missing, renews the
// node's Lease, and patches the VmafxNode's status if what it reports changed.
func (h *Heartbeat) Beat(ctx context.Context) error {
	now := h.opts.Clock.Now()
	if h.firstBeat.IsZero() {
		h.firstBeat = now
	}
	if !h.specSynced {
		if err := h.ensure(ctx); err != nil {
			return err
		}
	}
	leaseName, hasLease := vmafxv1.NodeLeaseName(h.opts.NodeName)
	var leaseErr error
	if hasLease {
		leaseErr = h.renewLease(ctx, leaseName, now)
	}
	stamp := !hasLease || now.Sub(h.firstBeat) < h.opts.StatusHeartbeatFor
	err := h.writeStatus(ctx, now, stamp)
	if apierrors.IsNotFound(err) {
		// Deleted since we last looked: make it again.
		h.specSynced = false
		if err := h.ensure(ctx); err != nil {
			return err
		}
		err = h.writeStatus(ctx, now, stamp)
	}
	return errors.Join(leaseErr, err)
}

// renewLease stamps spec.renewTime on the node's Lease. Like the kubelet it updates the
// Lease it last wrote, and reads it again only when that fails (another writer, or the
// Lease gone); a missing Lease is created. A Lease that is gone may have gone with its
// VmafxNode (the garbage collector follows the owner reference): the VmafxNode is looked
// at again on the same beat.
func (h *Heartbeat) renewLease(ctx context.Context, name string, now time.Time) error {
	if h.lease != nil {
		lease := h.lease.DeepCopy()
		h.fillLease(lease, now)
		err := h.client.Update(ctx, lease)
		if err == nil {
			h.lease = lease
			return nil
		}
		h.lease = nil
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("renewing Lease %s: %w", name, err)
		}
		if apierrors.IsNotFound(err) {
			h.specSynced = false
			if err := h.ensure(ctx); err != nil {
				return err
			}
		}
	}
	lease := &coordinationv1.Lease{}
	err := h.client.Get(ctx, client.ObjectKey{Namespace: h.opts.Namespace, Name: name}, lease)
	switch {
	case apierrors.IsNotFound(err):
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: h.opts.Namespace, Name: name}}
		lease.Spec.AcquireTime = &metav1.MicroTime{Time: now}
		h.fillLease(lease, now)
		if err := h.client.Create(ctx, lease); err != nil {
			return fmt.Errorf("creating Lease %s: %w", name, err)
		}
		klog.FromContext(ctx).Info("Created the node's heartbeat Lease", "lease", klog.KObj(lease))
	case err != nil:
		return fmt.Errorf("reading Lease %s: %w", name, err)
	default:
		h.fillLease(lease, now)
		if err := h.client.Update(ctx, lease); err != nil {
			return fmt.Errorf("renewing Lease %s: %w", name, err)
		}
	}
	h.lease = lease
	return nil
}

// fillLease makes lease the node's heartbeat at now.
func (h *Heartbeat) fillLease(lease *coordinationv1.Lease, now time.Time) {
	if lease.Labels[vmafxv1.LabelComponent] != vmafxv1.ComponentNodeHeartbeat {
		if lease.Labels == nil {
			lease.Labels = map[string]string{}
		}
		lease.Labels[vmafxv1.LabelComponent] = vmafxv1.ComponentNodeHeartbeat
	}
	holder := h.opts.NodeName
	lease.Spec.HolderIdentity = &holder
	seconds := int32(h.opts.LeaseDuration.Round(time.Second) / time.Second)
	lease.Spec.LeaseDurationSeconds = &seconds
	lease.Spec.RenewTime = &metav1.MicroTime{Time: now}
	if h.nodeUID != "" && !slices.ContainsFunc(lease.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == h.nodeUID }) {
		// Owned by the VmafxNode, as the kubelet's Lease by its Node: deleting the
		// VmafxNode deletes its heartbeat. No blockOwnerDeletion: it would need the right
		// to delete the VmafxNode, which the plugin does not hold.
		lease.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: vmafxv1.GroupVersion.String(), Kind: "VmafxNode", Name: h.opts.NodeName, UID: h.nodeUID,
		}}
	}
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
			h.written = nil // a new VmafxNode has an empty status
			h.synced(&node)
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
	h.synced(&node)
	return nil
}

// labels are the labels the device plugin keeps on its VmafxNode: the vendor, which a
// training run's dataSource.nodeSelector (gpu.vendor: nvidia) and kubectl's -l select on.
func (h *Heartbeat) labels() map[string]string {
	return map[string]string{vmafxv1.LabelGPUVendor: string(h.opts.Spec.GPUVendor)}
}

// synced records that node, as read or created, has the discovered spec. Another
// VmafxNode than the one last seen (made anew by someone else) may lack the status the
// plugin wrote, which the next status write must fill.
func (h *Heartbeat) synced(node *vmafxv1.VmafxNode) {
	if node.UID != h.nodeUID {
		h.written = nil
	}
	h.specSynced, h.nodeUID = true, node.UID
}

// writeStatus patches the status fields the plugin owns when they differ from what it
// last wrote, when StatusReportPeriod has passed, or always when stamp asks for status.lastHeartbeat too. The patch is a map,
// not the status struct: the struct's omitempty would drop a count of 0, and a merge
// patch without a field keeps the old value, so "0 healthy" would never arrive.
func (h *Heartbeat) writeStatus(ctx context.Context, now time.Time, stamp bool) error {
	c := h.counts(ctx)
	want := writtenStatus{device: h.opts.Device, counts: c}
	if h.written != nil && !c.AllocatedKnown {
		// Unknown allocated slots keep the last value written.
		want.counts.Allocated, want.counts.AllocatedKnown = h.written.counts.Allocated, h.written.counts.AllocatedKnown
	}
	due := h.opts.StatusReportPeriod > 0 && now.Sub(h.writtenAt) >= h.opts.StatusReportPeriod
	if !stamp && !due && h.written != nil && *h.written == want {
		return nil
	}
	slots := map[string]any{"total": c.Total, "healthy": c.Healthy}
	if c.AllocatedKnown {
		slots["allocated"] = c.Allocated
	}
	fields := map[string]any{"device": h.opts.Device, "slots": slots}
	if stamp {
		fields["lastHeartbeat"] = metav1.NewTime(now)
	}
	patch, err := json.Marshal(map[string]any{"status": fields})
	if err != nil {
		return err
	}
	h.written = nil
	node := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: h.opts.Namespace, Name: h.opts.NodeName}}
	if err := h.client.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("patching VmafxNode status: %w", err)
	}
	h.written, h.writtenAt = &want, now
	return nil
}
