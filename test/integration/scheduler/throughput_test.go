package scheduler

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// The throughput workload: the architecture brief's 1000 nodes and 5000 pods.
const (
	benchNodes     = 1000
	benchPods      = 5000
	benchSlots     = 8 // per node: 8000 slots, so every pod fits
	baselineName   = "vmafx-baseline"
	heartbeatEvery = 10 * time.Second // as the device plugin beats
)

// BenchmarkSchedulingThroughput measures what the VmafxPlacement plugin costs the whole
// scheduler: one scheduler (the shipped configuration plus a second profile,
// vmafx-baseline, identical but without the plugin) against one API server with 1000
// Nodes and their VmafxNodes (nvidia, amd and intel in turn, heartbeating every 10 s
// throughout, as device plugins do), schedules 5000 auto worker Pods per round, rounds in
// the order baseline, vmafx, vmafx, baseline so that neither profile always goes first.
//
// Each round creates its 5000 Pods while no scheduler runs, then starts the scheduler and
// times the binds from the first to the last, so the figure is the scheduler's (filter,
// score, bind) and not the rate at which the test can create Pods. The scheduler's client
// QPS is raised from kube-scheduler's default of 50 so that binding is not throttled.
//
// Run it with:
//
//	go test ./test/integration/scheduler/ -run '^$' -bench SchedulingThroughput -benchtime 1x
func BenchmarkSchedulingThroughput(b *testing.B) {
	cl := newCluster(b)
	ctx := cl.ctx
	vendors := []vmafxv1.GPUVendor{vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD, vmafxv1.VendorIntel}
	names := make([]string, benchNodes)
	if err := testutil.Parallel(benchNodes, func(i int) error {
		name, err := cl.createNode(fmt.Sprintf("n%04d", i), benchSlots)
		if err == nil {
			err = cl.createVmafxNode(name, vendors[i%len(vendors)], time.Now())
		}
		names[i] = name
		return err
	}); err != nil {
		b.Fatal(err)
	}
	beatCtx, stopBeats := context.WithCancel(ctx)
	defer stopBeats()
	testutil.Every(beatCtx, heartbeatEvery, func(now time.Time) {
		if err := testutil.Parallel(benchNodes, func(i int) error { return cl.beat(names[i], now) }); err != nil && beatCtx.Err() == nil {
			b.Error(err)
		}
	})

	cfg := throughputConfig(b)
	results := map[string][]roundResult{}
	rounds := []string{baselineName, vmafxv1.SchedulerName, vmafxv1.SchedulerName, baselineName}
	if only := os.Getenv("VMAFX_BENCH_PROFILE"); only != "" {
		// One profile alone, e.g. to take a CPU profile of it (-cpuprofile).
		rounds = []string{only, only}
	}
	for round, profile := range rounds {
		r := cl.throughputRound(b, ctx, cfg, profile, round)
		b.Logf("round %d, profile %s: %d pods at %.1f pods/s, %v CPU per pod", round, profile, benchPods, r.podsPerSecond, r.cpuPerPod)
		results[profile] = append(results[profile], r)
	}
	mean := func(rs []roundResult) (rate float64, cpu time.Duration) {
		for _, r := range rs {
			rate += r.podsPerSecond / float64(len(rs))
			cpu += r.cpuPerPod / time.Duration(len(rs))
		}
		return rate, cpu
	}
	vmafxRate, vmafxCPU := mean(results[vmafxv1.SchedulerName])
	baseRate, baseCPU := mean(results[baselineName])
	if len(results) < 2 {
		return
	}
	b.ReportMetric(vmafxRate, "vmafx-pods/s")
	b.ReportMetric(baseRate, "baseline-pods/s")
	b.ReportMetric(vmafxRate/baseRate, "ratio")
	b.ReportMetric(float64(vmafxCPU.Microseconds()), "vmafx-cpu-µs/pod")
	b.ReportMetric(float64(baseCPU.Microseconds()), "baseline-cpu-µs/pod")
	b.ReportMetric(float64(baseCPU)/float64(vmafxCPU), "cpu-ratio")
	b.Logf("vmafx-scheduler %.1f pods/s, %v CPU/pod; without VmafxPlacement %.1f pods/s, %v CPU/pod; throughput ratio %.3f, CPU ratio %.3f",
		vmafxRate, vmafxCPU, baseRate, baseCPU, vmafxRate/baseRate, float64(baseCPU)/float64(vmafxCPU))
}

// throughputConfig is the shipped configuration with a second profile that differs only in
// leaving VmafxPlacement out (it keeps the shared QueueSort, VmafxPriority), and with client QPS high enough not to throttle binding.
func throughputConfig(b *testing.B) map[string]any {
	cfg := schedulerConfig(b)
	cfg["clientConnection"].(map[string]any)["qps"] = 5000
	cfg["clientConnection"].(map[string]any)["burst"] = 5000
	profiles := cfg["profiles"].([]any)
	shipped := profiles[0].(map[string]any)
	baseline := map[string]any{"schedulerName": baselineName}
	if plugins, ok := shipped["plugins"].(map[string]any); ok && plugins["queueSort"] != nil {
		// All profiles share one queue, so kube-scheduler requires the same QueueSort in each.
		baseline["plugins"] = map[string]any{"queueSort": plugins["queueSort"]}
	}
	if pc, ok := shipped["pluginConfig"]; ok {
		// Other plugins' args, if the shipped profile had any, stay the same.
		var kept []any
		for _, c := range pc.([]any) {
			if c.(map[string]any)["name"] != "VmafxPlacement" {
				kept = append(kept, c)
			}
		}
		if kept != nil {
			baseline["pluginConfig"] = kept
		}
	}
	cfg["profiles"] = append(profiles, baseline)
	return cfg
}

// throughputRound creates benchPods pods for profile with no scheduler running, then runs
// the scheduler until all are bound and returns pods per second from first to last bind.
func (cl *cluster) throughputRound(b *testing.B, ctx context.Context, cfg map[string]any, profile string, round int) roundResult {
	b.Helper()
	// Start from an empty namespace, so every round sees the same cluster.
	if err := cl.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(cl.ns), client.GracePeriodSeconds(0)); err != nil {
		b.Fatal(err)
	}
	restCfg := testenv.Config()
	restCfg.QPS, restCfg.Burst = 2000, 2000
	cs := kubernetes.NewForConfigOrDie(restCfg)
	if err := testutil.Parallel(benchPods, func(i int) error {
		pod := newWorkerPod(cl.ns, fmt.Sprintf("r%d-%04d", round, i), "auto", nil)
		pod.Spec.SchedulerName = profile
		_, err := cs.CoreV1().Pods(cl.ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}); err != nil {
		b.Errorf("creating pod: %v", err)
	}

	// Watch binds from the test process.
	var mu sync.Mutex
	var bound []time.Time
	var cpuAtFirst, cpuAtLast time.Duration
	seen := map[string]bool{}
	var done atomic.Bool
	allBound := make(chan struct{})
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(cl.ns))
	onPod := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" || pod.Spec.SchedulerName != profile {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if seen[pod.Name] {
			return
		}
		seen[pod.Name] = true
		bound = append(bound, time.Now())
		switch {
		case len(bound) == 1:
			cpuAtFirst = processCPU()
		case len(bound) == benchPods && done.CompareAndSwap(false, true):
			cpuAtLast = processCPU()
			close(allBound)
		}
	}
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onPod,
		UpdateFunc: func(_, obj any) { onPod(obj) },
	}); err != nil {
		b.Fatal(err)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	factory.Start(watchCtx.Done())
	factory.WaitForCacheSync(watchCtx.Done())

	s := startSchedulerLogging(b, -1, cfg, "--leader-elect=false")
	defer s.Stop()
	select {
	case <-allBound:
	case <-time.After(10 * time.Minute):
		b.Fatalf("profile %s: only %d of %d pods bound in 10 minutes", profile, len(bound), benchPods)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(bound, func(x, y time.Time) int { return x.Compare(y) })
	return roundResult{
		podsPerSecond: float64(len(bound)-1) / bound[len(bound)-1].Sub(bound[0]).Seconds(),
		cpuPerPod:     (cpuAtLast - cpuAtFirst) / time.Duration(len(bound)-1),
	}
}

// roundResult is what one round measured.
type roundResult struct {
	podsPerSecond float64
	// cpuPerPod is the test process's CPU time (the scheduler, and the test's own watch and
	// heartbeats, which are the same in every round) per Pod bound. Unlike pods per second
	// it does not move when other processes compete for the machine's two cores.
	cpuPerPod time.Duration
}

// processCPU is the CPU time, user and system, this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
