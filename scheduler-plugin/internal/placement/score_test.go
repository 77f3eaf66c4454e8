package placement

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/scheduler-plugin/apis/config"
)

// scoreNodes runs PreFilter, PreScore, Score and NormalizeScore for pod over the nodes and
// returns the normalized scores by node name.
func scoreNodes(t *testing.T, p *Placement, pod *v1.Pod, nodes ...fwk.NodeInfo) map[string]int64 {
	t.Helper()
	cs := framework.NewCycleState()
	if _, s := p.PreFilter(ctx(t), cs, pod, nodes); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	if s := p.PreScore(ctx(t), cs, pod, nodes); !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	var list fwk.NodeScoreList
	for _, n := range nodes {
		score, s := p.Score(ctx(t), cs, pod, n)
		if !s.IsSuccess() {
			t.Fatalf("Score(%s): %v", n.Node().Name, s)
		}
		list = append(list, fwk.NodeScore{Name: n.Node().Name, Score: score})
	}
	if s := p.ScoreExtensions().NormalizeScore(ctx(t), cs, pod, list); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	got := map[string]int64{}
	for _, ns := range list {
		if ns.Score < fwk.MinScore || ns.Score > fwk.MaxScore {
			t.Errorf("normalized score of %s = %d, outside [%d, %d]", ns.Name, ns.Score, fwk.MinScore, fwk.MaxScore)
		}
		got[ns.Name] = ns.Score
	}
	return got
}

func TestScore(t *testing.T) {
	fresh := t0
	args := func(mutate func(*config.VmafxPlacementArgs)) *config.VmafxPlacementArgs {
		a := defaultArgs()
		if mutate != nil {
			mutate(a)
		}
		return a
	}
	slotsOnly := func(a *config.VmafxPlacementArgs) { a.Weights = config.ScoreWeights{Slots: 1} }
	tests := map[string]struct {
		args       *config.VmafxPlacementArgs
		pod        *v1.Pod
		vmafxNodes []*vmafxv1.VmafxNode
		nodes      []fwk.NodeInfo
		want       map[string]int64
	}{
		"spread prefers the emptier node": {
			args: args(slotsOnly), pod: workerPod("cuda"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("a", vmafxv1.VendorNVIDIA, fresh), vmafxNode("b", vmafxv1.VendorNVIDIA, fresh)},
			nodes:      []fwk.NodeInfo{nodeInfo("a", 4, 0), nodeInfo("b", 4, 2)},
			// After placing the pod: a has 3 of 4 free, b 1 of 4.
			want: map[string]int64{"a": 75, "b": 25},
		},
		"spread compares shares, not counts": {
			args: args(slotsOnly), pod: workerPod("cuda"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("a", vmafxv1.VendorNVIDIA, fresh), vmafxNode("b", vmafxv1.VendorNVIDIA, fresh)},
			nodes:      []fwk.NodeInfo{nodeInfo("a", 8, 4), nodeInfo("b", 2, 0)},
			want:       map[string]int64{"a": 37, "b": 50},
		},
		"bin-pack prefers the fuller node": {
			args: args(func(a *config.VmafxPlacementArgs) { slotsOnly(a); a.ScoringStrategy = config.BinPack }), pod: workerPod("cuda"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("a", vmafxv1.VendorNVIDIA, fresh), vmafxNode("b", vmafxv1.VendorNVIDIA, fresh)},
			nodes:      []fwk.NodeInfo{nodeInfo("a", 4, 0), nodeInfo("b", 4, 2)},
			want:       map[string]int64{"a": 25, "b": 75},
		},
		"pod overrides spread with bin-pack": {
			args: args(slotsOnly), pod: withAnnotation(workerPod("cuda"), vmafxv1.AnnotationScoringStrategy, "BinPack"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("a", vmafxv1.VendorNVIDIA, fresh), vmafxNode("b", vmafxv1.VendorNVIDIA, fresh)},
			nodes:      []fwk.NodeInfo{nodeInfo("a", 4, 0), nodeInfo("b", 4, 2)},
			want:       map[string]int64{"a": 25, "b": 75},
		},
		"pod overrides bin-pack with spread, any letter case": {
			args:       args(func(a *config.VmafxPlacementArgs) { slotsOnly(a); a.ScoringStrategy = config.BinPack }),
			pod:        withAnnotation(workerPod("cuda"), vmafxv1.AnnotationScoringStrategy, "spread"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("a", vmafxv1.VendorNVIDIA, fresh), vmafxNode("b", vmafxv1.VendorNVIDIA, fresh)},
			nodes:      []fwk.NodeInfo{nodeInfo("a", 4, 0), nodeInfo("b", 4, 2)},
			want:       map[string]int64{"a": 75, "b": 25},
		},
		"unknown override keeps the configured strategy": {
			args: args(slotsOnly), pod: withAnnotation(workerPod("cuda"), vmafxv1.AnnotationScoringStrategy, "Random"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("a", vmafxv1.VendorNVIDIA, fresh), vmafxNode("b", vmafxv1.VendorNVIDIA, fresh)},
			nodes:      []fwk.NodeInfo{nodeInfo("a", 4, 0), nodeInfo("b", 4, 2)},
			want:       map[string]int64{"a": 75, "b": 25},
		},
		"fresher heartbeat wins between equal nodes": {
			args: args(func(a *config.VmafxPlacementArgs) { a.Weights = config.ScoreWeights{Freshness: 1} }), pod: workerPod("cuda"),
			vmafxNodes: []*vmafxv1.VmafxNode{
				vmafxNode("a", vmafxv1.VendorNVIDIA, t0.Add(-30*time.Second)),
				vmafxNode("b", vmafxv1.VendorNVIDIA, t0),
				vmafxNode("c", vmafxv1.VendorNVIDIA, t0.Add(10*time.Second)),
			},
			nodes: []fwk.NodeInfo{nodeInfo("a", 4, 0), nodeInfo("b", 4, 0), nodeInfo("c", 4, 0)},
			want:  map[string]int64{"a": 50, "b": 100, "c": 100},
		},
		"vendor preference orders GPUs for auto": {
			args: args(func(a *config.VmafxPlacementArgs) { a.Weights = config.ScoreWeights{Vendor: 1} }), pod: workerPod("auto"),
			vmafxNodes: []*vmafxv1.VmafxNode{
				vmafxNode("a", vmafxv1.VendorNVIDIA, fresh), vmafxNode("b", vmafxv1.VendorAMD, fresh), vmafxNode("c", vmafxv1.VendorIntel, fresh),
			},
			nodes: []fwk.NodeInfo{nodeInfo("a", 4, 0), nodeInfo("b", 4, 0), nodeInfo("c", 4, 0)},
			want:  map[string]int64{"a": 100, "b": 66, "c": 33},
		},
		"cpu last for auto": {
			// Equal load and freshness: every GPU vendor before the cpu node.
			args: defaultArgs(), pod: workerPod("auto"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("intel", vmafxv1.VendorIntel, fresh), vmafxNode("cpu", vmafxv1.VendorCPU, fresh)},
			nodes:      []fwk.NodeInfo{nodeInfo("intel", 4, 1), nodeInfo("cpu", 4, 1)},
			want:       map[string]int64{"intel": 58, "cpu": 50},
		},
		"vendor preference as configured, unlisted last": {
			args: args(func(a *config.VmafxPlacementArgs) {
				a.Weights = config.ScoreWeights{Vendor: 1}
				a.VendorPreference = []vmafxv1.GPUVendor{vmafxv1.VendorIntel, vmafxv1.VendorAMD}
			}),
			pod: workerPod("vulkan"),
			vmafxNodes: []*vmafxv1.VmafxNode{
				vmafxNode("a", vmafxv1.VendorNVIDIA, fresh), vmafxNode("b", vmafxv1.VendorAMD, fresh), vmafxNode("c", vmafxv1.VendorIntel, fresh),
			},
			nodes: []fwk.NodeInfo{nodeInfo("a", 4, 0), nodeInfo("b", 4, 0), nodeInfo("c", 4, 0)},
			want:  map[string]int64{"a": 0, "b": 50, "c": 100},
		},
		"vendor weight is left out for a backend with one vendor": {
			// Weights 2:1:1, but for cuda the vendor part is out: (2*75 + 1*100) / 3.
			args: defaultArgs(), pod: workerPod("cuda"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("a", vmafxv1.VendorNVIDIA, fresh)},
			nodes:      []fwk.NodeInfo{nodeInfo("a", 4, 0)},
			want:       map[string]int64{"a": 83},
		},
		"default weights combine the parts": {
			// amd node: slots 75, freshness 100, vendor 66 -> (150 + 100 + 66) / 4 = 79.
			// nvidia node: slots 25, freshness 50, vendor 100 -> (50 + 50 + 100) / 4 = 50.
			args: defaultArgs(), pod: workerPod("auto"),
			vmafxNodes: []*vmafxv1.VmafxNode{
				vmafxNode("amd", vmafxv1.VendorAMD, t0), vmafxNode("nvidia", vmafxv1.VendorNVIDIA, t0.Add(-30*time.Second)),
			},
			nodes: []fwk.NodeInfo{nodeInfo("amd", 4, 0), nodeInfo("nvidia", 4, 2)},
			want:  map[string]int64{"amd": 79, "nvidia": 50},
		},
		"missing data scores the minimum": {
			args: defaultArgs(), pod: workerPod("cuda"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("a", vmafxv1.VendorNVIDIA, fresh), vmafxNode("noheartbeat", vmafxv1.VendorNVIDIA, time.Time{})},
			nodes: []fwk.NodeInfo{
				nodeInfo("a", 4, 0), nodeInfo("noslots", -1, 0), nodeInfo("novmafxnode", 4, 0), nodeInfo("noheartbeat", -1, 0),
			},
			want: map[string]int64{"a": 83, "noslots": 0, "novmafxnode": 0, "noheartbeat": 0},
		},
		"overfull node scores zero on slots": {
			args: args(slotsOnly), pod: workerPod("cuda"),
			vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("a", vmafxv1.VendorNVIDIA, fresh)},
			nodes:      []fwk.NodeInfo{nodeInfo("a", 2, 3)},
			want:       map[string]int64{"a": 0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			p := testPlugin(tc.args, newTestTable(t, clk, time.Minute, tc.vmafxNodes...), clk)
			if diff := cmp.Diff(tc.want, scoreNodes(t, p, tc.pod, tc.nodes...)); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func withAnnotation(pod *v1.Pod, key, value string) *v1.Pod {
	pod.Annotations[key] = value
	return pod
}

func TestPreScoreSkipsPodsThatAreNotOurs(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute), clk)
	pod := workerPod("")
	cs := framework.NewCycleState()
	if _, s := p.PreFilter(ctx(t), cs, pod, nil); !s.IsSkip() {
		t.Fatalf("PreFilter = %v, want Skip", s)
	}
	if s := p.PreScore(ctx(t), cs, pod, nil); !s.IsSkip() {
		t.Errorf("PreScore = %v, want Skip", s)
	}
}

func TestPreScoreSkipsWhenNoWeightApplies(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	args := defaultArgs()
	args.Weights = config.ScoreWeights{Vendor: 1} // and a cuda pod has no vendor choice
	p := testPlugin(args, newTestTable(t, clk, time.Minute), clk)
	pod := workerPod("cuda")
	cs := framework.NewCycleState()
	p.PreFilter(ctx(t), cs, pod, nil)
	if s := p.PreScore(ctx(t), cs, pod, nil); !s.IsSkip() {
		t.Errorf("PreScore = %v, want Skip", s)
	}
}

func TestStrategyFormulas(t *testing.T) {
	tests := []struct {
		allocatable, requested int64
		spread, binPack        int64
	}{
		{4, 1, 75, 25},
		{4, 4, 0, 100},
		{4, 5, 0, 0}, // over-requested: no room at all
		{0, 1, 0, 0}, // no slots
		{-1, 0, 0, 0},
		{3, 1, 66, 33},
	}
	for _, tc := range tests {
		if got := spreadScore(tc.allocatable, tc.requested); got != tc.spread {
			t.Errorf("spreadScore(%d, %d) = %d, want %d", tc.allocatable, tc.requested, got, tc.spread)
		}
		if got := binPackScore(tc.allocatable, tc.requested); got != tc.binPack {
			t.Errorf("binPackScore(%d, %d) = %d, want %d", tc.allocatable, tc.requested, got, tc.binPack)
		}
	}
}

func TestFreshnessScore(t *testing.T) {
	const stale = int64(60 * time.Second)
	now := t0.UnixNano()
	tests := []struct {
		heartbeat int64
		want      int64
	}{
		{0, 0},
		{now, 100},
		{now + int64(time.Hour), 100},
		{now - stale/2, 50},
		{now - stale, 0},
		{now - 2*stale, 0},
		{now - 10*int64(time.Second), 83},
	}
	for _, tc := range tests {
		if got := freshnessScore(now, tc.heartbeat, stale); got != tc.want {
			t.Errorf("freshnessScore(age %v) = %d, want %d", time.Duration(now-tc.heartbeat), got, tc.want)
		}
	}
}

func TestSignPod(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute), clk)
	a, _ := p.SignPod(ctx(t), withAnnotation(workerPod("cuda"), vmafxv1.AnnotationScoringStrategy, "BinPack"))
	b, _ := p.SignPod(ctx(t), workerPod("cuda"))
	c, _ := p.SignPod(ctx(t), workerPod("hip"))
	if cmp.Equal(a, b) || cmp.Equal(b, c) {
		t.Errorf("pods that score differently sign alike: %v, %v, %v", a, b, c)
	}
	d, _ := p.SignPod(ctx(t), workerPod("cuda"))
	if !cmp.Equal(b, d) {
		t.Errorf("alike pods sign differently: %v, %v", b, d)
	}
}
