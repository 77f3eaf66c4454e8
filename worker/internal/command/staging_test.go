package command

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel"
	"github.com/vmafx/vmafx/worker/internal/backend"
)

// TestThreadsCountStaging: on the vulkan backend each thread's worker maps its frames in
// flight (vkkernel.HostBytesPerWorker, 133 MB at 1080p) beside the heap that
// vmaf.MemoryEstimate counts: under a memory limit fewer threads fit than on the CPU,
// exactly as many as hold both, and a limit that cannot hold one thread's staging fails
// with ErrMemoryLimit saying so.
func TestThreadsCountStaging(t *testing.T) {
	info := vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P}
	staging := vkkernel.HostBytesPerWorker(info.Width, info.Height)
	scorer := func(limit int64) *scorer {
		env := map[string]string{vmafxv1.EnvMemoryLimit: strconv.FormatInt(limit, 10), "GOMEMLIMIT": "off"}
		return &scorer{cfg: &scoreConfig{threads: 16}, env: func(k string) string { return env[k] }, log: klog.Background()}
	}
	const limit = 2 << 30
	cpu, err := scorer(limit).threads(info, nil, kernelNeeds{})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := scorer(limit).threads(info, nil, kernelNeeds{hostPerThread: staging})
	if err != nil {
		t.Fatal(err)
	}
	budget := int64(limit) * memoryBudgetPercent / 100
	want := 0
	for n := 16; n >= 1; n-- {
		if vmaf.MemoryEstimate(info, n, nil)+int64(n)*staging <= budget {
			want = n
			break
		}
	}
	if gpu != want || gpu >= cpu || want == 0 {
		t.Errorf("threads under %d MiB: %d with the staging, %d on the CPU; want %d (< CPU's)", limit>>20, gpu, cpu, want)
	}

	tight := (vmaf.MemoryEstimate(info, 1, nil) + staging/2) * 100 / memoryBudgetPercent
	if _, err := scorer(tight).threads(info, nil, kernelNeeds{}); err != nil {
		t.Fatalf("one CPU thread under %d MiB: %v", tight>>20, err)
	}
	_, err = scorer(tight).threads(info, nil, kernelNeeds{hostPerThread: staging})
	if !errors.Is(err, vmaf.ErrMemoryLimit) || !strings.Contains(err.Error(), "GPU backend's staging") {
		t.Errorf("one vulkan thread under %d MiB: %v, want ErrMemoryLimit naming the staging", tight>>20, err)
	}
}

// TestThreadsCountTheModel: a VMAF v1 model (SpEED chroma's frames with their chroma,
// CAMBI) and a device's frames in flight take more memory than the default model on the
// CPU: under the same limit fewer threads fit, as many as vmaf.MemoryEstimateFor holds.
func TestThreadsCountTheModel(t *testing.T) {
	info := vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV444P10LE}
	v1, err := vmaf.LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	// A limit under which the default model fits fewer than 16 threads too.
	const limit = 384 << 20
	env := map[string]string{vmafxv1.EnvMemoryLimit: strconv.FormatInt(limit, 10), "GOMEMLIMIT": "off"}
	s := &scorer{cfg: &scoreConfig{threads: 16}, env: func(k string) string { return env[k] }, log: klog.Background()}
	budget := int64(limit) * memoryBudgetPercent / 100
	fits := func(needs kernelNeeds) int {
		for n := 16; n >= 1; n-- {
			if vmaf.MemoryEstimateFor(info, n, nil, needs.model, needs.inFlight)+int64(n)*needs.hostPerThread <= budget {
				return n
			}
		}
		return 0
	}
	def, err := s.threads(info, nil, kernelNeeds{})
	if err != nil {
		t.Fatal(err)
	}
	for name, needs := range map[string]kernelNeeds{
		"v1":                  {model: v1},
		"16 frames in flight": {inFlight: 16},
	} {
		got, err := s.threads(info, nil, needs)
		if err != nil {
			t.Fatal(err)
		}
		if want := fits(needs); got != want || got >= def || want == 0 {
			t.Errorf("%s: %d threads under %d MiB, want %d (fewer than the default model's %d)", name, got, limit>>20, want, def)
		}
	}
}

// TestThreadsDefaultOnGPU: without --threads a run scores on one thread per CPU, and on a
// GPU backend (here one still opening) on at most backend.DefaultGPUThreads; --threads is
// taken as given.
func TestThreadsDefaultOnGPU(t *testing.T) {
	info := vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P}
	m, err := vmaf.LoadModel(vmaf.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	opening := backend.Start("vulkan", func() (backend.Backend, string, error) { return backend.CPU{}, "", nil }, nil)
	defer opening.Close()
	env := func(string) string { return "" } // no memory limit
	// More CPUs than a GPU backend takes, whatever this machine has.
	const cpus = 16
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cpus))
	for _, c := range []struct {
		name    string
		threads int
		b       backend.Backend
		want    int
	}{
		{"cpu", 0, backend.CPU{}, cpus},
		{"vulkan", 0, opening, min(cpus, backend.DefaultGPUThreads)},
		{"vulkan, --threads 9", 9, opening, 9},
	} {
		s := &scorer{cfg: &scoreConfig{threads: c.threads}, env: env, log: klog.Background()}
		got, err := s.threads(info, nil, needsOf(c.b, m, info, vmaf.Encode{}))
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: %d threads, want %d", c.name, got, c.want)
		}
	}
}
