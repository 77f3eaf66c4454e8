package placement

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/scheduler-plugin/apis/config"
	"github.com/vmafx/vmafx/scheduler-plugin/apis/config/validation"
)

// The plugin lists and watches VmafxNodes twice: through its own informer, and through the
// scheduler's event handlers for the cluster event it registers.
// +kubebuilder:rbac:groups=vmafx.dev,resources=vmafxnodes,verbs=get;list;watch
// It lists and watches the node heartbeat Leases of the system namespace (nodes.go).
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch,namespace=vmafx-system

var (
	_ fwk.PreFilterPlugin   = &Placement{}
	_ fwk.FilterPlugin      = &Placement{}
	_ fwk.PreScorePlugin    = &Placement{}
	_ fwk.ScorePlugin       = &Placement{}
	_ fwk.ScoreExtensions   = &Placement{}
	_ fwk.EnqueueExtensions = &Placement{}
	_ fwk.SignPlugin        = &Placement{}
)

const (
	// Name is the plugin's name in a KubeSchedulerConfiguration.
	Name = "VmafxPlacement"

	preFilterStateKey fwk.StateKey = "PreFilter" + Name
	preScoreStateKey  fwk.StateKey = "PreScore" + Name
)

// The reasons Filter gives, as they appear (with a count before them) in a Pod's
// FailedScheduling event. They are constants because Filter runs for every node of every
// cycle and formatting there would allocate; only a stale heartbeat, which carries its age,
// is formatted.
const (
	ErrReasonNoVmafxNode        = "node(s) had no VmafxNode"
	ErrReasonDuplicateVmafxNode = "node(s) had more than one VmafxNode"
	ErrReasonUnknownVendor      = "node(s) had a VmafxNode with an unknown gpuVendor"
	ErrReasonNoHeartbeat        = "node(s) had no VMAFX heartbeat yet"
	ErrReasonNoFreeSlot         = vmafxv1.SchedulerReasonNoFreeSlot
	errReasonStaleHeartbeat     = "node(s) had a stale VMAFX heartbeat (last %ds ago)"
)

// errNotSynced is returned when the VmafxNode informer's initial list has not been handled
// within maxSyncWait: the framework then retries the Pod after its backoff rather than
// rejecting every node for want of a VmafxNode.
var errNotSynced = errors.New("VmafxNode informer has not synced yet")

// errNodeNotFound is the framework's own answer to a NodeInfo without its Node.
var errNodeNotFound = errors.New("node not found")

// Placement is the VmafxPlacement plugin. Everything in it but the node index is fixed in
// New; per-Pod facts live in the cycle state.
type Placement struct {
	nodes      *nodeTable
	clock      clock.PassiveClock
	staleAfter int64 // heartbeatStaleAfter in nanoseconds
	strategy   config.ScoringStrategy
	weights    config.ScoreWeights
	// vendorScores are the vendor part of a node's score, 0 to 100, for backends that any
	// GPU can run: from vendorPreference, first = 100, each next one less, unlisted = 0.
	vendorScores [numVendors]int64

	// index finds nodes' facts by NodeInfo; PreFilter refreshes it, Filter and Score read it.
	index atomic.Pointer[infoIndex]

	// For waking Pods when a node starts to offer something (see activate).
	profile   string
	pods      corelisters.PodLister
	activator fwk.PodActivator
}

// preFilterState is what PreFilter learns of a worker Pod, for Filter.
type preFilterState struct {
	backend backendIndex
	// fits says which vendors can run the Pod's backend.
	fits *[numVendors]bool
	// slots is how many vmafx.dev/slot the Pod requests.
	slots int64
	// now is the cycle's time on the scheduler's clock, in Unix nanoseconds.
	now int64
}

// Clone returns the state itself: it is never modified after PreFilter.
func (s *preFilterState) Clone() fwk.StateData { return s }

// preScoreState is what PreScore works out for Score and NormalizeScore.
type preScoreState struct {
	slots      int64
	now        int64
	staleAfter int64
	slotScore  func(allocatable, requested int64) int64
	weights    config.ScoreWeights
	// totalWeight is the sum of the weights in use, which NormalizeScore divides by.
	totalWeight  int64
	vendorScores *[numVendors]int64
}

// Clone returns the state itself: it is never modified after PreScore.
func (s *preScoreState) Clone() fwk.StateData { return s }

// Name returns the plugin's name.
func (p *Placement) Name() string { return Name }

// New builds the plugin from its (already defaulted) args and the framework handle.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, ok := obj.(*config.VmafxPlacementArgs)
	if !ok {
		return nil, fmt.Errorf("want args to be of type VmafxPlacementArgs, got %T", obj)
	}
	if errs := validation.ValidateVmafxPlacementArgs(field.NewPath("pluginConfig").Key(Name).Child("args"), args); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	logger := klog.FromContext(ctx).WithValues("plugin", Name)
	clk := clock.RealClock{}
	nodes, err := newNodeTable(logger, h.KubeConfig(), h.SharedInformerFactory(), clk, args.HeartbeatStaleAfter.Duration)
	if err != nil {
		return nil, err
	}
	p := newPlacement(args, nodes, clk)
	p.profile = h.ProfileName()
	p.pods = h.SharedInformerFactory().Core().V1().Pods().Lister()
	p.activator = h
	nodes.offered = p.activate
	logger.V(2).Info("VmafxPlacement ready", "profile", p.profile, "heartbeatStaleAfter", args.HeartbeatStaleAfter.Duration,
		"scoringStrategy", args.ScoringStrategy, "weights", args.Weights, "vendorPreference", args.VendorPreference)
	return p, nil
}

// newPlacement derives the plugin's lookup tables from valid args.
func newPlacement(args *config.VmafxPlacementArgs, nodes *nodeTable, clk clock.PassiveClock) *Placement {
	p := &Placement{
		nodes:      nodes,
		clock:      clk,
		staleAfter: args.HeartbeatStaleAfter.Nanoseconds(),
		strategy:   args.ScoringStrategy,
		weights:    args.Weights,
	}
	n := int64(len(args.VendorPreference))
	for i, v := range args.VendorPreference {
		p.vendorScores[lookupVendor(v)] = fwk.MaxScore * (n - int64(i)) / n
	}
	return p
}

// PreFilter reads the Pod's backend. A Pod without the backend annotation is not a VMAFX
// worker Pod: the plugin skips it (Filter is then not called for it). An annotation naming
// no known backend can never fit anywhere, so the Pod is refused outright, saying why.
func (p *Placement) PreFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	value, ok := pod.Annotations[vmafxv1.AnnotationBackend]
	if !ok {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	b, ok := lookupBackend(value)
	if !ok {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("pod has an unknown %s %q (want one of %s)", vmafxv1.AnnotationBackend, value, backendNames()))
	}
	if !p.nodes.waitSynced(ctx) {
		return nil, fwk.AsStatus(errNotSynced)
	}
	last := p.index.Load()
	if idx := p.nodes.index(last, nodes); idx != last {
		p.index.Store(idx)
	}
	cs.Write(preFilterStateKey, &preFilterState{
		backend: b,
		fits:    &backendFits[b],
		slots:   podSlots(pod),
		now:     p.clock.Now().UnixNano(),
	})
	return nil, nil
}

// PreFilterExtensions returns nil: the plugin's per-Pod state does not depend on other Pods.
func (p *Placement) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// podSlots returns how many vmafx.dev/slot the Pod requests (an extended resource's request
// equals its limit).
func podSlots(pod *v1.Pod) int64 {
	q, ok := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})[vmafxv1.ResourceSlot]
	if !ok {
		return 0
	}
	return q.Value()
}

func getPreFilterState(cs fwk.CycleState) (*preFilterState, error) {
	data, err := cs.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycle state: %w", preFilterStateKey, err)
	}
	s, ok := data.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v cannot be converted to placement.preFilterState", data)
	}
	return s, nil
}

// Filter keeps the Pod off nodes that cannot run it; see filter.
func (p *Placement) Filter(_ context.Context, cs fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if nodeInfo.Node() == nil {
		return fwk.AsStatus(errNodeNotFound)
	}
	code, reason := filter(s, p.nodes.lookup(p.index.Load(), nodeInfo), freeSlots(nodeInfo), p.staleAfter)
	if code == fwk.Success {
		return nil
	}
	return fwk.NewStatus(code, reason)
}

// filter decides one node for one Pod: the Pod's facts s, the node's VmafxNode facts f and
// its free slots. What no preemption can fix (no VmafxNode, wrong
// vendor, no or stale heartbeat) is UnschedulableAndUnresolvable; a full node is
// Unschedulable, since evicting a lower-priority worker would free a slot.
//
// A heartbeat exactly heartbeatStaleAfter old is still fresh; one from the future is fresh.
func filter(s *preFilterState, f nodeFacts, free, staleAfter int64) (fwk.Code, string) {
	switch {
	case !f.present:
		return fwk.UnschedulableAndUnresolvable, ErrReasonNoVmafxNode
	case f.conflict:
		return fwk.UnschedulableAndUnresolvable, ErrReasonDuplicateVmafxNode
	case !s.fits[f.vendor]:
		return fwk.UnschedulableAndUnresolvable, mismatchReasons[s.backend][f.vendor]
	case f.heartbeat == 0:
		return fwk.UnschedulableAndUnresolvable, ErrReasonNoHeartbeat
	}
	if age := s.now - f.heartbeat; age > staleAfter {
		return fwk.UnschedulableAndUnresolvable, fmt.Sprintf(errReasonStaleHeartbeat, age/int64(time.Second))
	}
	if s.slots > 0 && free < s.slots {
		return fwk.Unschedulable, ErrReasonNoFreeSlot
	}
	return fwk.Success, ""
}

// freeSlots is the node's allocatable vmafx.dev/slot minus what the Pods on it (including
// those the scheduler has assumed but not yet bound) request.
func freeSlots(nodeInfo fwk.NodeInfo) int64 {
	return slotsOf(nodeInfo.GetAllocatable()) - slotsOf(nodeInfo.GetRequested())
}

func slotsOf(r fwk.Resource) int64 {
	return r.GetScalarResources()[vmafxv1.ResourceSlot]
}

// PreScore works out the Pod's scoring: its strategy (the plugin's, or the Pod's
// vmafx.dev/scoring-strategy annotation when that names one) and the weights in play. The
// vendor part counts only for backends that leave a choice of vendor (vulkan, auto).
func (p *Placement) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	pf, err := getPreFilterState(cs)
	if err != nil {
		// PreFilter skipped the Pod: not a worker Pod.
		return fwk.NewStatus(fwk.Skip)
	}
	strategy := p.strategy
	if value, ok := pod.Annotations[vmafxv1.AnnotationScoringStrategy]; ok {
		if s, ok := parseStrategy(value); ok {
			strategy = s
		} else {
			klog.FromContext(ctx).V(2).Info("Ignoring an unknown scoring strategy; using the configured one", "plugin", Name,
				"pod", klog.KObj(pod), "annotation", vmafxv1.AnnotationScoringStrategy, "value", value, "strategy", p.strategy)
		}
	}
	s := &preScoreState{
		slots:        pf.slots,
		now:          p.clock.Now().UnixNano(),
		staleAfter:   p.staleAfter,
		slotScore:    spreadScore,
		weights:      p.weights,
		vendorScores: &p.vendorScores,
	}
	if strategy == config.BinPack {
		s.slotScore = binPackScore
	}
	if _, pinned := backends[pf.backend].Vendor(); pinned {
		s.weights.Vendor = 0
	}
	s.totalWeight = s.weights.Slots + s.weights.Freshness + s.weights.Vendor
	if s.totalWeight == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	cs.Write(preScoreStateKey, s)
	return nil
}

// parseStrategy reads a strategy name, in any letter case.
func parseStrategy(value string) (config.ScoringStrategy, bool) {
	for _, s := range config.ScoringStrategies {
		if strings.EqualFold(value, string(s)) {
			return s, true
		}
	}
	return "", false
}

func getPreScoreState(cs fwk.CycleState) (*preScoreState, error) {
	data, err := cs.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycle state: %w", preScoreStateKey, err)
	}
	s, ok := data.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v cannot be converted to placement.preScoreState", data)
	}
	return s, nil
}

// Score rates a node as the weighted sum of its parts, each 0 to 100: free slots (by the
// strategy), heartbeat freshness, and vendor preference. NormalizeScore divides by the sum
// of the weights. A node with no usable VmafxNode scores the minimum, never an error.
func (p *Placement) Score(_ context.Context, cs fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s, err := getPreScoreState(cs)
	if err != nil {
		return fwk.MinScore, fwk.AsStatus(err)
	}
	if nodeInfo.Node() == nil {
		return fwk.MinScore, nil
	}
	return s.score(p.nodes.lookup(p.index.Load(), nodeInfo), nodeInfo), nil
}

func (s *preScoreState) score(f nodeFacts, nodeInfo fwk.NodeInfo) int64 {
	if !f.present || f.conflict {
		return fwk.MinScore
	}
	var total int64
	if s.weights.Slots > 0 {
		allocatable := slotsOf(nodeInfo.GetAllocatable())
		total += s.weights.Slots * s.slotScore(allocatable, slotsOf(nodeInfo.GetRequested())+s.slots)
	}
	if s.weights.Freshness > 0 {
		total += s.weights.Freshness * freshnessScore(s.now, f.heartbeat, s.staleAfter)
	}
	if s.weights.Vendor > 0 {
		total += s.weights.Vendor * s.vendorScores[f.vendor]
	}
	return total
}

// ScoreExtensions returns the plugin itself, for NormalizeScore.
func (p *Placement) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore brings the weighted sums back to the framework's range, 0 to 100, by
// dividing by the total weight (rounding to nearest).
func (p *Placement) NormalizeScore(_ context.Context, cs fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	s, err := getPreScoreState(cs)
	if err != nil {
		return fwk.AsStatus(err)
	}
	for i := range scores {
		scores[i].Score = (scores[i].Score + s.totalWeight/2) / s.totalWeight
	}
	return nil
}

// SignPod tells the scheduler which of the Pod's fields this plugin's results depend on, so
// that consecutive Pods alike in them can reuse one scoring (opportunistic batching): its
// backend and scoring strategy annotations. (Its slot request is in NodeResourcesFit's
// fragment already.) A plugin that scores but does not sign turns batching off for all Pods.
func (p *Placement) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{
		{Key: vmafxv1.AnnotationBackend, Value: pod.Annotations[vmafxv1.AnnotationBackend]},
		{Key: vmafxv1.AnnotationScoringStrategy, Value: pod.Annotations[vmafxv1.AnnotationScoringStrategy]},
	}, nil
}

// activate wakes the pending worker Pods of this profile that node now offers something to.
//
// The scheduler learns of a VmafxNode change from its own watch and requeues the Pods that
// isSchedulableAfterVmafxNodeChange says it helps. This plugin reads VmafxNodes through a
// second watch; when the scheduler's runs ahead, a requeued Pod can be filtered against the
// older copy here, be rejected once more, and then wait for a next event that may never
// come. Activating the Pods once this copy has the change too closes that gap. It runs only
// when a node starts to offer something (appears, turns fresh, changes vendor), not on
// routine heartbeats.
func (p *Placement) activate(logger klog.Logger, node string, f nodeFacts) {
	if p.pods == nil || p.activator == nil {
		return
	}
	pods, err := p.pods.List(labels.Everything())
	if err != nil {
		return
	}
	var wake map[string]*v1.Pod
	for _, pod := range pods {
		if pod.Spec.NodeName != "" || pod.Spec.SchedulerName != p.profile || pod.DeletionTimestamp != nil {
			continue
		}
		b, ok := lookupBackend(pod.Annotations[vmafxv1.AnnotationBackend])
		if !ok || !backendFits[b][f.vendor] {
			continue
		}
		if wake == nil {
			wake = make(map[string]*v1.Pod)
		}
		wake[pod.Namespace+"/"+pod.Name] = pod
	}
	if len(wake) > 0 {
		logger.V(4).Info("Node now offers VMAFX slots; activating pending worker Pods", "node", node, "pods", len(wake))
		p.activator.Activate(logger, wake)
	}
}
