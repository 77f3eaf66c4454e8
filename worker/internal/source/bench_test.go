package source

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/vmaf"
)

// benchFrames is the length of the benchmark's 1080p pair: 2 s at 30 fps.
const benchFrames = 60

// BenchmarkDecodeScore1080p decodes and scores a 1080p H.264 pair as the worker does:
// both inputs streamed through ffmpeg (the reference at CRF 12, the distorted at CRF
// 35, made from ffmpeg's testsrc2 before the timer starts), every frame scored on
// GOMAXPROCS threads. It reports frames per second, the benchmark process's peak RSS
// (the worker's share: kernel, pipes, buffers) and the two ffmpeg processes' peaks.
//
//	go test -run '^$' -bench DecodeScore1080p -benchtime 1x -count 3 ./worker/internal/source
func BenchmarkDecodeScore1080p(b *testing.B) {
	tools := fftest.Tools(b)
	dir := b.TempDir()
	ref, dist := filepath.Join(dir, "ref.mp4"), filepath.Join(dir, "dist.mp4")
	for _, enc := range []struct {
		path string
		crf  int
	}{{ref, 12}, {dist, 35}} {
		cmd := exec.Command(tools.FFmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
			"-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30:duration="+strconv.Itoa(benchFrames/30),
			"-c:v", "libx264", "-preset", "veryfast", "-crf", strconv.Itoa(enc.crf), "-pix_fmt", "yuv420p",
			"-movflags", "+faststart", enc.path)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("making the pair: %v\n%s", err, out)
		}
	}
	model, err := vmaf.LoadModel(vmaf.DefaultModel)
	if err != nil {
		b.Fatal(err)
	}
	threads := runtime.GOMAXPROCS(0)
	b.ResetTimer()
	var frames int
	var rssPeak, ffmpegPeak int64
	var elapsed time.Duration
	for range b.N {
		resetPeakRSS(b)
		start := time.Now()
		o := Options{Tools: tools}
		r, err := Open(context.Background(), &streamed{}, uri(ref, true), o)
		if err != nil {
			b.Fatal(err)
		}
		o.Width, o.Height = 1920, 1080
		d, err := Open(context.Background(), &streamed{}, uri(dist, true), o)
		if err != nil {
			b.Fatal(err)
		}
		res, err := vmaf.Score(context.Background(), r, d, vmaf.Options{LoadedModel: model, Threads: threads})
		if err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		frames += len(res.Frames)
		r.Close()
		d.Close()
		rssPeak = max(rssPeak, peakRSS(b))
		ffmpegPeak = max(ffmpegPeak, r.FrameSource.(*decode.Decoder).MaxRSS()+d.FrameSource.(*decode.Decoder).MaxRSS())
	}
	b.ReportMetric(float64(frames)/elapsed.Seconds(), "frames/s")
	b.ReportMetric(float64(rssPeak)/(1<<20), "MiB-worker-peak-rss")
	b.ReportMetric(float64(ffmpegPeak)/(1<<20), "MiB-ffmpeg-peak-rss")
	b.ReportMetric(float64(threads), "threads")
}

// resetPeakRSS resets the process's peak RSS (VmHWM), as Linux allows.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak RSS: %v", err)
	}
}

// peakRSS reads the process's peak RSS from /proc/self/status, in bytes.
func peakRSS(b *testing.B) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
