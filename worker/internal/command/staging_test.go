package command

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel"
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
	cpu, err := scorer(limit).threads(info, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := scorer(limit).threads(info, nil, staging)
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
	if _, err := scorer(tight).threads(info, nil, 0); err != nil {
		t.Fatalf("one CPU thread under %d MiB: %v", tight>>20, err)
	}
	_, err = scorer(tight).threads(info, nil, staging)
	if !errors.Is(err, vmaf.ErrMemoryLimit) || !strings.Contains(err.Error(), "GPU backend's staging") {
		t.Errorf("one vulkan thread under %d MiB: %v, want ErrMemoryLimit naming the staging", tight>>20, err)
	}
}
