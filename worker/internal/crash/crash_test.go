package crash

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a child instead of running tests.
const helperEnv = "VMAFX_CRASH_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "panic-in-goroutine":
		if err := Watch(); err != nil {
			os.Exit(10)
		}
		go func() {
			var s []int
			_ = s[3] // index out of range
		}()
		time.Sleep(time.Minute)
	case "exit":
		_ = Watch()
		os.Exit(2)
	case "killed":
		_ = Watch()
		syscall.Kill(os.Getpid(), syscall.SIGKILL) // as the OOM killer does
		time.Sleep(time.Minute)
	}
	os.Exit(11)
}

func TestSupervise(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		helper     string
		wantCode   int
		wantReport string
	}{
		{"panic-in-goroutine", 2, "panic: runtime error: index out of range [3] with length 0"},
		{"exit", 2, ""},
		{"killed", 128 + 9, ""},
	}
	for _, tc := range tests {
		t.Run(tc.helper, func(t *testing.T) {
			code, report, err := Supervise(exe, nil, append(os.Environ(), helperEnv+"="+tc.helper))
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode || !strings.HasPrefix(report, tc.wantReport) || (tc.wantReport == "" && report != "") {
				t.Fatalf("Supervise = %d, %q; want %d, %q", code, report, tc.wantCode, tc.wantReport)
			}
		})
	}
}
