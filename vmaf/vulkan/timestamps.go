package vulkan

import (
	"errors"
	"fmt"
	"unsafe"
)

// ErrNoTimestamps says the device's compute queue writes no timestamps.
var ErrNoTimestamps = errors.New("the device's compute queue writes no timestamps")

// Timestamps is a pool of device timestamps: a stream writes one when every
// command recorded before it has finished (Stream.Timestamp), and Read gives
// them in nanoseconds once the submission is waited for. They say where a
// device's time goes, pass by pass, where a profiler cannot be run (the
// benchmarks of vmaf/vkkernel); scoring never uses them.
type Timestamps struct {
	d    *Device
	pool uint64
	n    int
}

// NewTimestamps makes a pool of n timestamps, or fails with ErrNoTimestamps.
func (d *Device) NewTimestamps(n int) (*Timestamps, error) {
	f := &d.fn
	if d.Info.TimestampBits == 0 || d.Info.TimestampPeriod <= 0 || f.createQueryPool == 0 || f.destroyQueryPool == 0 ||
		f.cmdResetQueryPool == 0 || f.cmdWriteTimestamp == 0 || f.getQueryPoolResults == 0 {
		return nil, ErrNoTimestamps
	}
	if n <= 0 {
		return nil, fmt.Errorf("a pool of %d timestamps", n)
	}
	t := &Timestamps{d: d, n: n}
	ci := &queryPoolCreateInfo{sType: stQueryPoolCreateInfo, queryType: queryTypeTimestamp, queryCount: uint32(n)}
	if err := call(f.createQueryPool, d.device, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&t.pool))); err != nil {
		return nil, fmt.Errorf("vkCreateQueryPool: %w", err)
	}
	return t, nil
}

// Len is the number of timestamps in the pool.
func (t *Timestamps) Len() int { return t.n }

// ResetTimestamps records the reset of t's timestamps, which must come before
// a submission writes them again.
func (s *Stream) ResetTimestamps(t *Timestamps) {
	callVoid(s.d.fn.cmdResetQueryPool, s.cmd, uintptr(t.pool), 0, uintptr(t.n))
}

// Timestamp records the writing of t's timestamp i when every command
// recorded before it has finished.
func (s *Stream) Timestamp(t *Timestamps, i int) {
	if i < 0 || i >= t.n {
		s.err = fmt.Errorf("timestamp %d of a pool of %d", i, t.n)
		return
	}
	callVoid(s.d.fn.cmdWriteTimestamp, s.cmd, stageBottomOfPipe, uintptr(t.pool), uintptr(i))
}

// Read returns the first n timestamps in nanoseconds, from the device's
// counter (only differences between them mean anything), waiting for them
// to be written: read them after the submission that writes them is waited
// for.
func (t *Timestamps) Read(n int) ([]float64, error) {
	if n < 0 || n > t.n {
		return nil, fmt.Errorf("%d timestamps of a pool of %d", n, t.n)
	}
	if n == 0 {
		return nil, nil
	}
	raw := make([]uint64, n)
	if err := call(t.d.fn.getQueryPoolResults, t.d.device, uintptr(t.pool), 0, uintptr(n), uintptr(8*n),
		uintptr(unsafe.Pointer(&raw[0])), 8, queryResult64|queryResultWait); err != nil {
		return nil, fmt.Errorf("vkGetQueryPoolResults: %w", err)
	}
	mask := ^uint64(0)
	if b := t.d.Info.TimestampBits; b < 64 {
		mask = 1<<b - 1
	}
	out := make([]float64, n)
	for i, v := range raw {
		out[i] = float64(v&mask) * float64(t.d.Info.TimestampPeriod)
	}
	return out, nil
}

// Close destroys the pool.
func (t *Timestamps) Close() {
	if t.pool != 0 {
		callVoid(t.d.fn.destroyQueryPool, t.d.device, uintptr(t.pool), 0)
		t.pool = 0
	}
}
