package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// VMAFX_CPU_PROFILE's profile is written (a gzipped profile) once stopped; without a path
// nothing is, and a path that cannot be created skips the profile without failing.
func TestCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	stop := cpuProfile(path)
	x := 0
	for i := range 1 << 20 {
		x ^= i * i
	}
	_ = x
	stop()
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("profile: %d bytes (%v), want a gzipped profile", len(b), err)
	}
	cpuProfile("")()
	cpuProfile(filepath.Join(t.TempDir(), "missing", "cpu.prof"))()
}
