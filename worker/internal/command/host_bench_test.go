package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel"
	"github.com/vmafx/vmafx/worker/internal/backend"
)

// BenchmarkHostSide times the whole worker as a GPU run drives it, less the device: the
// command in-process on a raw 8-bit 4:2:0 file from the page cache, with a backend whose
// device costs nothing (freeDevice). Its frames/s is the most any device could make of
// this host's side of a run: reading both inputs, the scene detector and the alignment
// check beside them, the frame slots, each frame's staging copy, the model, the pooling
// and the per-frame output. On the H200 the process scored about 400 frames/s at 1080p
// where the kernel alone sustained 656 (docs/benchmarks.md): this says how much of that
// gap the host side is, on a machine without the GPU; cpu-ms/frame is the host's CPU
// time a frame, which a machine of few cores shows better than frames/s. A fake device, since none can run
// here; the scores it makes are canned, not VMAF's, and only their being finite is
// checked.
func BenchmarkHostSide(b *testing.B) {
	defer func(orig func(string, string) (backend.Backend, string, error)) { selectBackend = orig }(selectBackend)
	selectBackend = func(string, string) (backend.Backend, string, error) { return freeDevice{}, "", nil }
	dir := b.TempDir()
	for _, sz := range []struct{ w, h, frames int }{{1920, 1080, 96}, {3840, 2160, 24}} {
		info := vmaf.VideoInfo{Width: sz.w, Height: sz.h, Format: vmaf.YUV420P}
		var clip string
		for _, threads := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%dx%d/threads=%d", sz.w, sz.h, threads), func(b *testing.B) {
				if clip == "" {
					clip = writeRawClip(b, filepath.Join(dir, fmt.Sprintf("%dx%d.yuv", sz.w, sz.h)), info, sz.frames)
				}
				out := filepath.Join(b.TempDir(), "scores.json")
				url := "file://" + clip
				args := []string{"score", "--reference", url, "--distorted", url,
					"--width", strconv.Itoa(sz.w), "--height", strconv.Itoa(sz.h),
					"--threads", strconv.Itoa(threads), "--output", "file://" + out}
				env := map[string]string{vmafxv1.EnvBackend: "cpu", "VMAFX_TERMINATION_LOG": filepath.Join(b.TempDir(), "term")}
				cpu0 := testutil.ProcessCPU()
				for b.Loop() {
					var sink discard
					if code := Run(context.Background(), args, func(k string) string { return env[k] }, &sink, &sink); code != 0 {
						b.Fatalf("exit %d", code)
					}
				}
				b.StopTimer()
				cpu := testutil.ProcessCPU() - cpu0
				res, err := os.ReadFile(env["VMAFX_TERMINATION_LOG"])
				if err != nil {
					b.Fatal(err)
				}
				r, err := vmafxv1.ParseWorkerResult(res)
				if err != nil || r.Error != nil || r.Score != r.Score {
					b.Fatalf("result %q: %v", res, err)
				}
				b.ReportMetric(float64(b.N*sz.frames)/b.Elapsed().Seconds(), "frames/s")
				b.ReportMetric(cpu.Seconds()*1e3/float64(b.N*sz.frames), "cpu-ms/frame")
			})
		}
	}
}

// discard is io.Discard as a writer the command may log to from several goroutines.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// freeDevice is a GPU backend whose device costs nothing: its FrameOffload's workers
// copy each frame's planes into staging of their own, as the Vulkan kernel's do, and
// hand back canned sums at once.
type freeDevice struct{}

func (freeDevice) Name() string                  { return string(vmafxv1.BackendVulkan) }
func (freeDevice) Device() *vmafxv1.WorkerDevice { return nil }
func (freeDevice) Close()                        {}

func (freeDevice) Score(ctx context.Context, ref, dist vmaf.FrameSource, opts vmaf.Options) (*vmaf.Result, error) {
	opts.Offload = freeOffload{}
	return vmaf.Score(ctx, ref, dist, opts)
}

type freeOffload struct{}

func (freeOffload) FramesInFlight(w, h int) int { return vkkernel.FramesInFlight(w, h) }

func (freeOffload) NewWorker(cfg vmaf.OffloadConfig) (vmaf.OffloadWorker, error) {
	n := cfg.Width * cfg.Height
	w := &freeWorker{staging: make([][3][]byte, vkkernel.FramesInFlight(cfg.Width, cfg.Height)), last: -1, planes: cfg.Planes}
	for i := range w.staging {
		for p := range w.staging[i] {
			w.staging[i][p] = make([]byte, n)
		}
	}
	// Sums whose scores are finite: VIF 1 at every scale, ADM below 1.
	for s := range 4 {
		w.sums.VIF[s] = vmaf.VIFSums{NumLog: 1 << 30, DenLog: 1 << 30}
		for t := range 3 {
			w.sums.ADM.Den[s][t], w.sums.ADM.Num[s][t] = 1<<40, 1<<39
		}
	}
	w.sums.VIFOK, w.sums.ADMOK = true, true
	return w, nil
}

type freeWorker struct {
	staging [][3][]byte
	next    int // the staging frame the next Queue copies into
	queued  int
	last    int // the Index of the frame queued last, whose reference stays staged
	sums    vmaf.OffloadSums
	// planes is the Score's block of frame planes (vmaf.OffloadConfig.Planes),
	// which a device that imports host memory copies from itself.
	planes []byte
}

var errFreeOneFrame = errors.New("freeWorker takes frames through Queue")

func (w *freeWorker) MotionSAD(prev, cur []uint16) (uint64, error) { return 0, errFreeOneFrame }
func (w *freeWorker) VIF(ref, dis []uint16) ([4]vmaf.VIFSums, bool, error) {
	return [4]vmaf.VIFSums{}, false, errFreeOneFrame
}
func (w *freeWorker) ADM(ref, dis []uint16) (*vmaf.ADMRows, bool, error) {
	return nil, false, errFreeOneFrame
}
func (w *freeWorker) Close() {}

// Queue copies the planes as the Vulkan worker stages them: bytes copied, 16-bit
// samples narrowed, the previous reference only when it is not the frame queued last
// (which the Vulkan worker keeps on the device), and none that lies in the Score's
// block of planes, which the Vulkan worker's device copies from there.
func (w *freeWorker) Queue(f *vmaf.OffloadFrame) error {
	st := &w.staging[w.next]
	w.next = (w.next + 1) % len(w.staging)
	for p, pl := range []struct {
		y  []uint16
		y8 []byte
	}{{f.Ref, f.Ref8}, {f.Dis, f.Dis8}, {f.Prev, f.Prev8}} {
		switch {
		case p == 2 && f.PrevIndex == w.last && w.last >= 0:
		case inside(w.planes, pl.y8):
		case pl.y8 != nil:
			vmaf.CopyPlane8(st[p], pl.y8)
		case pl.y != nil:
			vmaf.Narrow8(st[p], pl.y)
		}
	}
	w.queued++
	w.last = f.Index
	return nil
}

func (w *freeWorker) Next() (*vmaf.OffloadSums, error) {
	if w.queued == 0 {
		return nil, errors.New("no frame queued")
	}
	w.queued--
	s := w.sums
	return &s, nil
}

// inside says whether plane p lies in block.
func inside(block, p []byte) bool {
	if len(block) == 0 || len(p) == 0 {
		return false
	}
	base, at := uintptr(unsafe.Pointer(&block[0])), uintptr(unsafe.Pointer(&p[0]))
	return at >= base && at-base+uintptr(len(p)) <= uintptr(len(block))
}
