package fftest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FakeHW writes a FAKE ffmpeg, for tests of hardware decoding on machines that have no
// GPU decoder: a script in front of the real ffmpeg that logs each call to the returned
// log file (one line of arguments per call), answers -hwaccels with the methods in
// hwaccels, and, given -hwaccel, either fails to start as a missing CUDA or VA-API
// driver does (works false: its error names libcuda.so.1) or drops the hardware options
// and decodes with the real ffmpeg in software (works true). Everything else is the real
// ffmpeg's work. It skips the test without a real ffmpeg, as Tools does.
func FakeHW(t testing.TB, hwaccels []string, works bool) (ffmpeg, log string) {
	t.Helper()
	real := Tools(t)
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	ok := "0"
	if works {
		ok = "1"
	}
	script := `#!/bin/sh
echo "$*" >> '` + log + `'
if [ "$2" = "-hwaccels" ]; then
	echo "Hardware acceleration methods:"
	for m in ` + strings.Join(hwaccels, " ") + `; do echo "$m"; done
	echo
	exit 0
fi
case " $* " in
*" -hwaccel "*)
	if [ ` + ok + ` = 0 ]; then
		echo "Device creation failed: -542398533. [AVHWDeviceContext] Cannot load libcuda.so.1" >&2
		exit 1
	fi
	# Drop "-hwaccel X" and "-hwaccel_device Y".
	for a in "$@"; do
		shift
		case "$skip$a" in
		-hwaccel|-hwaccel_device) skip=1; continue ;;
		1*) skip=; continue ;;
		esac
		set -- "$@" "$a"
	done
	;;
esac
exec '` + real.FFmpeg + `' "$@"
`
	ffmpeg = filepath.Join(dir, "ffmpeg")
	if err := os.WriteFile(ffmpeg, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return ffmpeg, log
}

// Calls reads a FakeHW log: the arguments of each call, one string per call.
func Calls(t testing.TB, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var calls []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			calls = append(calls, l)
		}
	}
	return calls
}
