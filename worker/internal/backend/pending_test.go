package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel"
	"github.com/vmafx/vmafx/vmaf/vkkernel/selftest"
)

// gate is a FrameSource that closes open when the frame at index at is read, and
// reads the next once wait returns.
type gate struct {
	vmaf.FrameSource
	at, n int
	open  chan struct{}
	wait  func()
}

func (g *gate) ReadFrame(f *vmaf.Frame) error {
	if g.n == g.at+1 {
		g.wait()
	}
	err := g.FrameSource.ReadFrame(f)
	if err == nil {
		if g.n == g.at {
			close(g.open)
		}
		g.n++
	}
	return err
}

// clip opens a 176x144 4:2:0 clip of the kernel's testdata.
func clip(t *testing.T, name string) vmaf.FrameSource {
	t.Helper()
	f, err := os.Open("../../../vmaf/testdata/clips/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := vmaf.OpenRaw(f, 176, 144, vmaf.YUV420P)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// cpuOrSkip skips the test without a usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails
// instead) and returns the CPU kernel's scores of the first frames of p02. Its Select
// leaves the device's verdict and the self-test's CPU side made: the process's later
// opens of the device start no scoring on the CPU beside the test's frames.
func cpuOrSkip(t *testing.T, frames int) *vmaf.Result {
	t.Helper()
	b, _, err := Select("vulkan", "")
	if err != nil {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" {
			t.Skipf("no usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
		}
		t.Fatal(err)
	}
	b.Close()
	cpu, err := CPU{}.Score(context.Background(), clip(t, "p02_ref.yuv"), clip(t, "p02_dist.yuv"), vmaf.Options{Count: frames})
	if err != nil {
		t.Fatal(err)
	}
	return cpu
}

// TestPendingScoreAtOnce: a Pending backend scores on the CPU until its device is open and
// on the device from then on (lavapipe in CI, its open held until the reader reaches
// frame 12 of 24, the reader held there until the threads may take the device over), with the CPU's numbers on every frame; opened hears of the open.
// A selection that fails fails the run with its error; one that falls back to the CPU
// scores everything there.
func TestPendingScoreAtOnce(t *testing.T) {
	const frames = 24
	cpu := cpuOrSkip(t, frames)
	for _, threads := range []int{1, 2} {
		ref := &gate{FrameSource: clip(t, "p02_ref.yuv"), at: 12, open: make(chan struct{})}
		heard := make(chan string, 1)
		p := Start("vulkan", func() (Backend, string, error) {
			<-ref.open
			return Select("vulkan", "")
		}, func(b Backend, _ string, err error) { heard <- b.Name() })
		ref.wait = func() { <-p.opening.Ready }
		if p.Name() != "vulkan" || p.Device() != nil {
			t.Errorf("pending: name %q, device %v; want vulkan and none yet", p.Name(), p.Device())
		}
		res, err := p.Score(context.Background(), ref, clip(t, "p02_dist.yuv"), vmaf.Options{Count: frames, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(cpu.Frames, res.Frames); diff != "" {
			t.Errorf("%d threads: frames (-cpu +cpu then device):\n%s", threads, diff)
		}
		if res.Offloaded == 0 || res.Offloaded == frames {
			t.Errorf("%d threads: the device scored %d of %d frames, want some, not all", threads, res.Offloaded, frames)
		}
		b, _, err := p.Wait()
		if err != nil || b.Device() == nil {
			t.Fatalf("Wait: %v, %v; want the open device", b, err)
		}
		// The memory check before the open counts at least what the device maps.
		for _, name := range []string{"vmaf_v0.6.1", "vmaf_v1.0.16_3d0h"} {
			m, err := vmaf.LoadModel(name)
			if err != nil {
				t.Fatal(err)
			}
			info := vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P}
			before, inFlight := p.Staging(m, info, vmaf.Encode{})
			open, openInFlight := b.(*Vulkan).Staging(m, info, vmaf.Encode{})
			if before < open || open <= 0 || inFlight != openInFlight {
				t.Errorf("%s: staging %d and %d frames in flight before the open, %d and %d after", name, before, inFlight, open, openInFlight)
			}
		}
		if name := <-heard; name != "vulkan" {
			t.Errorf("opened heard of %q, want vulkan", name)
		}
		p.Close()
	}

	// A device open before Score starts (as when the model loads longer): the open's
	// goroutine reads the run's options at once, beside Score.
	p := Start("vulkan", func() (Backend, string, error) { return Select("vulkan", "") }, nil)
	if _, _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	res, err := p.Score(context.Background(), clip(t, "p02_ref.yuv"), clip(t, "p02_dist.yuv"), vmaf.Options{Count: frames, Threads: 2})
	if err != nil || !cmp.Equal(cpu.Frames, res.Frames) {
		t.Errorf("open not held: err %v; want the CPU's frames", err)
	}
	p.Close()

	errNo := errors.New("no device")
	p = Start("vulkan", func() (Backend, string, error) { return nil, "", errNo }, nil)
	if _, err := p.Score(context.Background(), clip(t, "p02_ref.yuv"), clip(t, "p02_dist.yuv"), vmaf.Options{Count: frames}); !errors.Is(err, errNo) {
		t.Errorf("failed selection: Score returned %v, want its error", err)
	}
	p = Start("auto", func() (Backend, string, error) { return CPU{}, "", nil }, nil)
	res, err = p.Score(context.Background(), clip(t, "p02_ref.yuv"), clip(t, "p02_dist.yuv"), vmaf.Options{Count: frames, Threads: 2})
	if err != nil || res.Offloaded != 0 || !cmp.Equal(cpu.Frames, res.Frames) {
		t.Errorf("fell back to the CPU: err %v, %d frames offloaded; want the CPU's frames, none offloaded", err, res.Offloaded)
	}
	p.Close()
}

// TestOverlaps: only the GPU backends open beside the run.
func TestOverlaps(t *testing.T) {
	for b, want := range map[string]bool{"": false, "cpu": false, "auto": false, "tpu": false, "vulkan": true, "cuda": true, "hip": true, "sycl": true} {
		if got := Overlaps(b); got != want {
			t.Errorf("Overlaps(%q) = %v, want %v", b, got, want)
		}
	}
}

// deviceInUse waits, at most a minute, until a Score has taken frames to k's device,
// which it reports.
func deviceInUse(k *vkkernel.Kernel) bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if staged, imported, _ := k.HostCopies(); staged > 0 || imported > 0 {
			return true
		}
	}
	return false
}

// TestPendingScoresBesideSelfTestAtOnce: once the device is open, the run takes frames to it
// while its self-test is still running (here one that ends only when the run's frames
// have reached the device, lavapipe in CI; the reader held at frame 12 until the
// threads may take the open device over), and the result is the CPU's numbers. A
// device that fails its self-test meanwhile fails the run with the self-test's error,
// whatever it scored, and is closed by Close after the run; a Vulkan backend's own
// Score refuses it.
func TestPendingScoresBesideSelfTestAtOnce(t *testing.T) {
	const frames = 24
	cpu := cpuOrSkip(t, frames)
	errWrong := fmt.Errorf("%w on device X: frame 3 integer_adm2 differs", selftest.ErrFailed)
	for _, verdict := range []error{nil, errWrong} {
		inUse := make(chan bool, 1)
		useSelfTest(t, func(_ context.Context, k *vkkernel.Kernel) error {
			inUse <- deviceInUse(k)
			return verdict
		})
		heard := make(chan error, 1)
		p := Start("vulkan", func() (Backend, string, error) { return SelectBeside("vulkan", "") }, func(_ Backend, _ string, err error) { heard <- err })
		// The reader waits at frame 12 for the open, not for the verdict.
		ref := &gate{FrameSource: clip(t, "p02_ref.yuv"), at: 12, open: make(chan struct{})}
		ref.wait = func() { <-p.opening.Ready }
		res, err := p.Score(context.Background(), ref, clip(t, "p02_dist.yuv"), vmaf.Options{Count: frames, Threads: 2})
		if !<-inUse {
			t.Fatalf("verdict %v: the run took no frame to the device before its self-test ended", verdict)
		}
		if verdict == nil {
			if err != nil || res.Offloaded == 0 || !cmp.Equal(cpu.Frames, res.Frames) {
				t.Errorf("self-test passed: err %v, offloaded %d; want the CPU's frames, some from the device", err, res.Offloaded)
			}
		} else if res != nil || !errors.Is(err, selftest.ErrFailed) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "integer_adm2") {
			t.Errorf("self-test failed: Score = %v, %v; want no result and the self-test's error", res, err)
		}
		if herr := <-heard; !errors.Is(herr, verdict) {
			t.Errorf("opened heard %v, want %v", herr, verdict)
		}
		if b, _, werr := p.Wait(); b == nil || !errors.Is(werr, verdict) {
			t.Errorf("Wait = %v, %v; want the device and the verdict %v", b, werr, verdict)
		}
		if verdict != nil {
			// The failed device's own Score scores nothing.
			b, _, _ := p.Wait()
			if res, err := b.Score(context.Background(), clip(t, "p02_ref.yuv"), clip(t, "p02_dist.yuv"), vmaf.Options{Count: frames}); res != nil || !errors.Is(err, selftest.ErrFailed) {
				t.Errorf("Score of a device that failed its self-test = %v, %v; want its error", res, err)
			}
		}
		p.Close()
	}
}

// TestSelfTestBesideEveryWorkerAtOnce: a run on as many device threads as the kernel serves
// leaves room for the self-test's workers beside it. The real self-test runs here
// once the run's workers hold the device (the reader held until its verdict); had the
// run taken every worker, the self-test could not score, and its failure would mark a
// sound device Unhealthy.
func TestSelfTestBesideEveryWorkerAtOnce(t *testing.T) {
	const frames = 24
	cpu := cpuOrSkip(t, frames)
	useSelfTest(t, func(ctx context.Context, k *vkkernel.Kernel) error {
		if !deviceInUse(k) {
			return errors.New("the run took no frame to the device")
		}
		return selftest.Run(ctx, k)
	})
	p := Start("vulkan", func() (Backend, string, error) { return SelectBeside("vulkan", "") }, nil)
	defer p.Close()
	// Frames from 12 on wait for the device to be taken over, from 16 on for the verdict.
	verdict := &gate{FrameSource: clip(t, "p02_ref.yuv"), at: 15, open: make(chan struct{}), wait: func() { _, _, _ = p.Wait() }}
	ref := &gate{FrameSource: verdict, at: 11, open: make(chan struct{}), wait: func() { <-p.opening.Ready }}
	res, err := p.Score(context.Background(), ref, clip(t, "p02_dist.yuv"), vmaf.Options{Count: frames, Threads: 100})
	if err != nil {
		t.Fatalf("100 threads, the self-test beside: %v", err)
	}
	if res.Offloaded == 0 || !cmp.Equal(cpu.Frames, res.Frames) {
		t.Errorf("100 threads, the self-test beside: %d frames offloaded; want the CPU's frames, some from the device", res.Offloaded)
	}
}
