package testutil

import "io"

// LoopReader yields Buf over and over, N bytes in all: raw frames at the speed of
// a copy, as a file in the page cache reads, for the readers' benchmarks.
type LoopReader struct {
	Buf []byte
	N   int
	off int
}

func (l *LoopReader) Read(p []byte) (int, error) {
	if l.N <= 0 {
		return 0, io.EOF
	}
	p = p[:min(len(p), l.N)]
	k := 0
	for k < len(p) {
		c := copy(p[k:], l.Buf[l.off:])
		k += c
		l.off = (l.off + c) % len(l.Buf)
	}
	l.N -= k
	return k, nil
}
