package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/align"
	"github.com/vmafx/vmafx/worker/internal/source"
	"github.com/vmafx/vmafx/worker/internal/worstframes"
)

// BenchmarkReadSide times what a plain score does to each input before the kernel's
// threads see a frame, one side at a time: reading a raw 8-bit 4:2:0 file from the page
// cache as the worker opens it (source.Open: luma only, the chroma skipped) and
// converting its luma (raw), and on the reference the scene histogram, with the
// alignment check's thumbnails on both (which a long input takes of its first frames
// only). The kernel reads the two sides at once, so the slower side's ms/frame bounds
// the frames/s of any thread count; read in turn, as before, their sum did. The /bytes
// forms read the luma as bytes, as for a GPU backend (vmaf.Frame.Packed); the /10-bit
// form reads a 10-bit file (yuv420p10le) instead.
func BenchmarkReadSide(b *testing.B) {
	const frames = 32
	dir := b.TempDir() // the sub-benchmarks' own are removed between their runs
	for _, sz := range []struct{ w, h int }{{1920, 1080}, {3840, 2160}} {
		clips := map[vmaf.PixelFormat]string{}
		for _, side := range []string{"raw", "reference", "distorted", "raw/bytes", "reference/bytes", "distorted/bytes", "raw/10-bit"} {
			side, form, _ := strings.Cut(side, "/")
			info := vmaf.VideoInfo{Width: sz.w, Height: sz.h, Format: vmaf.YUV420P}
			if form == "10-bit" {
				info.Format = vmaf.YUV420P10LE
			}
			b.Run(fmt.Sprintf("%dx%d/%s", sz.w, sz.h, strings.TrimSuffix(side+"/"+form, "/")), func(b *testing.B) {
				path := clips[info.Format]
				if path == "" {
					path = writeRawClip(b, filepath.Join(dir, fmt.Sprintf("%dx%d-%v.yuv", sz.w, sz.h, info.Format)), info, frames)
					clips[info.Format] = path
				}
				for b.Loop() {
					in, err := source.Open(context.Background(), fetch.File{}, &url.URL{Scheme: "file", Path: path},
						source.Options{Raw: source.Raw{Width: sz.w, Height: sz.h, Format: info.Format}})
					if err != nil {
						b.Fatal(err)
					}
					rec := align.NewRecorder(info, align.DefaultWindow)
					var src vmaf.FrameSource = in
					switch side {
					case "reference":
						src = worstframes.NewCuts(rec.Wrap(0, in))
					case "distorted":
						src = rec.Wrap(1, in)
					}
					fr := vmaf.Frame{Packed: form == "bytes"} // as a GPU backend reads 8-bit frames
					n := 0
					for ; ; n++ {
						if err := src.ReadFrame(&fr); err != nil {
							if !errors.Is(err, io.EOF) {
								b.Fatal(err)
							}
							break
						}
					}
					in.Close()
					if n != frames {
						b.Fatalf("read %d frames, want %d", n, frames)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*frames), "ms/frame")
			})
		}
	}
}

// writeRawClip writes frames raw frames of info, noise over a gradient, to path and
// returns it; the file is in the page cache when the benchmark reads it.
func writeRawClip(b *testing.B, path string, info vmaf.VideoInfo, frames int) string {
	b.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	frame := make([]byte, info.Format.FrameBytes(info.Width, info.Height))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for i := range frames {
		for j := range frame {
			frame[j] = byte(j%info.Width/8 + i + rng.IntN(16))
		}
		if _, err := f.Write(frame); err != nil {
			b.Fatal(err)
		}
	}
	return path
}
