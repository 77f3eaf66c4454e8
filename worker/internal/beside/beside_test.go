package beside

import (
	"slices"
	"testing"

	"github.com/vmafx/vmafx/vmaf"
)

// Results come back in read order whatever order the jobs finish in; a read waits for
// the jobs of the plane it overwrites (bytes or samples) and for no other.
func TestQueueOrderAndWaits(t *testing.T) {
	var q Queue[int]
	var held []func()
	q.Start = func(run func()) { held = append(held, run) }
	var got []int
	use := func(v int) { got = append(got, v) }
	frames := []vmaf.Frame{{Y8: make([]byte, 4)}, {Y: make([]uint16, 4)}, {Y8: make([]byte, 4)}}
	for i := range frames {
		q.BeforeRead(&frames[i], use)
		q.Go(&frames[i], func() int { return i })
	}
	if q.Pending() != 3 || len(got) != 0 {
		t.Fatalf("%d pending, %d folded; want 3 and 0", q.Pending(), len(got))
	}
	held[2]()
	held[1]()
	q.Fold(false, use) // job 0 is not done: nothing is handed back out of order
	if len(got) != 0 {
		t.Fatalf("folded %v before job 0 was done", got)
	}
	// A read into frame 1's plane waits for nothing now; one into frame 0's waits for
	// job 0, which a goroutine runs meanwhile.
	q.BeforeRead(&frames[1], use)
	go held[0]()
	q.BeforeRead(&frames[0], use)
	if !slices.Equal(got, []int{0, 1, 2}) || q.Pending() != 0 {
		t.Fatalf("folded %v with %d pending, want [0 1 2] and none", got, q.Pending())
	}
}

// A caller that reads into new frames never waits for a plane: MaxPending bounds the
// jobs, and BeforeRead waits for the oldest beyond it.
func TestQueueBound(t *testing.T) {
	var q Queue[int]
	var held []func()
	q.Start = func(run func()) { held = append(held, run) }
	n := 0
	for i := range MaxPending {
		f := vmaf.Frame{Y: make([]uint16, 1)}
		q.BeforeRead(&f, func(int) { n++ })
		q.Go(&f, func() int { return i })
	}
	go func() {
		for _, run := range held {
			run()
		}
	}()
	q.BeforeRead(&vmaf.Frame{}, func(int) { n++ })
	if q.Pending() >= MaxPending || n == 0 {
		t.Fatalf("%d pending after a read past the bound, %d folded; want fewer than %d", q.Pending(), n, MaxPending)
	}
}
