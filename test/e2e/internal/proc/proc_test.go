package proc

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/internal/testutil"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    stat
		wantErr bool
	}{
		{
			name: "plain",
			raw:  "1234 (etcd) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 987654 1000 10 18446744073709551615",
			want: stat{state: 'S', ppid: 1, startTime: 987654},
		},
		{
			name: "name with spaces and parentheses",
			raw:  "77 (a (b) c) Z 1 77 77 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 42 0 0",
			want: stat{state: 'Z', ppid: 1, startTime: 42},
		},
		{name: "truncated", raw: "1 (x) S 1 2 3", wantErr: true},
		{name: "no name", raw: "garbage", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.raw))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStat error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(stat{})); diff != "" {
				t.Errorf("parseStat (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStartStop starts a real process detached, finds it through its record and stops
// it, and checks that a record whose start time does not match is never signalled.
func TestStartStop(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	dir := t.TempDir()
	rec, err := Start(dir, Spec{Name: "sleeper", Path: sleep, Args: []string{"60"}, Log: filepath.Join(dir, "sleeper.log")})
	if err != nil {
		t.Fatal(err)
	}
	loaded, found, err := Load(dir, "sleeper")
	if err != nil || !found {
		t.Fatalf("Load = %v, %v", found, err)
	}
	if diff := cmp.Diff(rec, loaded); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	if !loaded.Alive() {
		t.Fatal("started process is not alive")
	}

	impostor := loaded
	impostor.StartTime++
	if impostor.Alive() {
		t.Error("a record with another start time counts as alive")
	}
	if err := Stop(context.Background(), impostor, time.Second); err != nil {
		t.Errorf("Stop(impostor) = %v", err)
	}
	if !loaded.Alive() {
		t.Fatal("Stop of a record with another start time stopped the process")
	}

	// Right after fork the child's cmdline is still the test binary's until it has
	// exec'd sleep, which on a loaded machine can take a moment: poll briefly.
	var pids []int
	err = testutil.Wait(context.Background(), 5*time.Second, func(context.Context) error {
		found2, err := Find(func(args []string) bool { return len(args) == 2 && args[0] == sleep && args[1] == "60" })
		if err != nil {
			return err
		}
		pids = pids[:0]
		for _, r := range found2 {
			pids = append(pids, r.PID)
		}
		if !contains(pids, rec.PID) {
			return fmt.Errorf("Find = %v, want it to include %d", pids, rec.PID)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}

	if err := Stop(context.Background(), loaded, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if loaded.Alive() {
		t.Error("process alive after Stop")
	}
	if err := Forget(dir, "sleeper"); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := Load(dir, "sleeper"); found {
		t.Error("record still there after Forget")
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
