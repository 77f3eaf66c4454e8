// Package fftest gives tests the ffmpeg tools and the encoded test videos.
// Tests that need ffmpeg skip, with a message, where it is not installed,
// and fail instead when VMAFX_REQUIRE_FFMPEG=1 (as make test sets), so that
// CI cannot pass by skipping them.
package fftest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vmafx/vmafx/media/decode"
)

// EnvRequire makes a missing ffmpeg a test failure.
const EnvRequire = "VMAFX_REQUIRE_FFMPEG"

// Tools returns ffmpeg and ffprobe, or skips (fails under VMAFX_REQUIRE_FFMPEG) without them.
func Tools(t testing.TB) *decode.Tools {
	t.Helper()
	tools, err := decode.Find(os.Getenv)
	if err != nil {
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("%s is set: %v", EnvRequire, err)
		}
		t.Skipf("skipping: %v (install Debian's ffmpeg; %s=1 makes this a failure)", err, EnvRequire)
	}
	return tools
}

// Dir is media/testdata/encoded, made by hack/make-encoded-testdata.sh.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "media", "testdata", "encoded")
}

// Path returns the path of an encoded test video, e.g. Path("dist_h264.mp4").
func Path(name string) string { return filepath.Join(Dir(), name) }

// Clip returns the path of one of the kernel's raw reference clips, e.g. Clip("p01_ref.yuv").
func Clip(name string) string {
	return filepath.Join(Dir(), "..", "..", "..", "vmaf", "testdata", "clips", name)
}
