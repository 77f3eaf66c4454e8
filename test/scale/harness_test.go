package scale

import (
	"crypto/sha256"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWritesCountWritesOnly(t *testing.T) {
	counts := map[string]int{
		"create pods": 10, "patch pods": 9, "create pods/binding": 10, "patch vmafxjobs/status": 20,
		"create events": 20, "patch vmafxnodes/status": 3, "list pods": 4, "watch pods": 2, "get vmafxjobs": 7,
		"delete pods": 1, "update leases": 5,
	}
	if got := writes(counts); got != 78 {
		t.Errorf("writes = %d, want 78 (reads left out)", got)
	}
	if got := writes(counts, "events", "vmafxnodes"); got != 55 {
		t.Errorf("writes without events and VmafxNodes = %d, want 55", got)
	}
}

func TestDiff(t *testing.T) {
	got := diff(map[string]int{"create pods": 12, "list pods": 3, "patch pods": 1}, map[string]int{"create pods": 2, "list pods": 3})
	if d := cmp.Diff(map[string]int{"create pods": 10, "patch pods": 1}, got); d != "" {
		t.Errorf("diff (-want +got):\n%s", d)
	}
}

// TestProcessStats reads this test process's CPU time and memory the way the benchmark
// reads the operator's and the scheduler's.
func TestProcessStats(t *testing.T) {
	self := &process{name: "self", cmd: &exec.Cmd{Process: &os.Process{Pid: os.Getpid()}}}
	sum := sha256.Sum256(nil)
	for range 200_000 { // some CPU time to see
		sum = sha256.Sum256(sum[:])
	}
	cpu, err := self.cpu()
	if err != nil || cpu <= 0 {
		t.Errorf("cpu = %v, %v; want a positive time", cpu, err)
	}
	rss, peak, err := self.memory()
	if err != nil || rss <= 0 || peak < rss {
		t.Errorf("memory = %d, %d, %v; want 0 < rss <= peak", rss, peak, err)
	}
	if loadAverage() < 0 {
		t.Error("no load average")
	}
}

// TestCPUOfNamed: the control plane's CPU is summed over all its processes, or over those
// named (etcd's share, reported apart).
func TestCPUOfNamed(t *testing.T) {
	self := func(name string) *process {
		return &process{name: name, cmd: &exec.Cmd{Process: &os.Process{Pid: os.Getpid()}}}
	}
	ps := []*process{self("kube-apiserver"), self("etcd")}
	sum := sha256.Sum256(nil)
	for range 200_000 { // CPU time to see: /proc counts it in 10 ms ticks
		sum = sha256.Sum256(sum[:])
	}
	// etcd's first: CPU time only grows, so the sum read after it is at least twice it.
	etcd := cpuOf(ps, "etcd")
	all := cpuOf(ps)
	if etcd <= 0 || all < 2*etcd || all > 2*etcd+time.Second {
		t.Errorf("cpuOf = %v in all, %v for etcd; want etcd's to be half of all (both are this process)", all, etcd)
	}
	if none := cpuOf(ps, "kubelet"); none != 0 {
		t.Errorf("cpuOf(kubelet) = %v, want 0", none)
	}
}

// TestWriteKind: the proxy tells the operator's writes apart by what they carry.
func TestWriteKind(t *testing.T) {
	cases := []struct{ key, body, want string }{
		{"patch pods", `[{"op":"test","path":"/metadata/finalizers/0","value":"vmafx.dev/result"},{"op":"remove","path":"/metadata/finalizers/0"}]`, "release finalizer"},
		{"patch pods", `{"metadata":{"labels":{"a":"b"}}}`, "other"},
		{"patch vmafxjobs/status", `{"metadata":{"resourceVersion":"7"},"status":{"phase":"Succeeded","result":{"mean":"93.5"},` +
			`"conditions":[{"type":"Scheduled","status":"True","reason":"Scheduled"},{"type":"Running","status":"False","reason":"Finished"},{"type":"Complete","status":"True","reason":"Succeeded"}]}}`,
			"phase Succeeded, Scheduled True/Scheduled, Running False/Finished, +result"},
		{"patch vmafxjobs/status", `{"status":{"conditions":[{"type":"Scheduled","status":"False","reason":"Unschedulable"}]}}`, "phase -, Scheduled False/Unschedulable"},
		{"patch vmafxjobs/status", `not json`, "unreadable"},
	}
	for _, tc := range cases {
		if got := writeKind(tc.key, []byte(tc.body)); got != tc.want {
			t.Errorf("writeKind(%s, %s) = %q, want %q", tc.key, tc.body, got, tc.want)
		}
	}
}
