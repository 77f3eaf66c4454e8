package selftest

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"
)

// TestPairsUnchanged: the built-in pair is the same bytes on every machine and in
// every build (it is made from integer arithmetic alone), so a device's verdict
// means the same everywhere. These are the bytes the self-test was written with.
func TestPairsUnchanged(t *testing.T) {
	want := map[string][2]string{
		"vmaf_v0.6.1 128x72":        {"5fa68a7b27085d16151f4c093abba8281cd5920f4d2cafa01a708e95c6c0ce5e", "7c9ab91dfb777bba60987d3d19eb6adfa8b2376170d684929b192fe8f23ec33e"},
		"vmaf_v1.0.16_3d0h 352x320": {"42c738b939bd830cb5f5124761a619a483f2f7a23dbe2cdd706682298badb3ed", "8b1044e8f58b70ac9369c2b44a8cb7968ec4f8c8034848a3f7cad052e9850fe2"},
	}
	for _, c := range cases {
		ref, dist := c.pair()
		r, d := sha256.Sum256(ref), sha256.Sum256(dist)
		if got := [2]string{hex.EncodeToString(r[:]), hex.EncodeToString(d[:])}; got != want[c.name()] {
			t.Errorf("%s: pair's SHA-256 %v, want %v", c.name(), got, want[c.name()])
		}
	}
}

// TestPrepareScoresTheCPU: Prepare alone scores the CPU's side, on goroutines of its
// own, so that it is done while the device opens; the self-test after it reuses
// those scores (once a process).
func TestPrepareScoresTheCPU(t *testing.T) {
	Prepare()
	for deadline := time.Now().Add(time.Minute); cpuScorings.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Prepare did not start the CPU's side of the self-test")
		}
	}
	cpus := cpuScores()
	for i, c := range cases {
		if cpus[i].err != nil {
			t.Fatalf("%s on the CPU: %v", c.name(), cpus[i].err)
		}
		if got := len(cpus[i].res.Frames); got != c.frames {
			t.Errorf("%s: %d frames scored on the CPU, want %d", c.name(), got, c.frames)
		}
	}
	Prepare()
	cpuScores()
	if n := cpuScorings.Load(); n != 1 {
		t.Errorf("the CPU's side was scored %d times, want once a process", n)
	}
}
