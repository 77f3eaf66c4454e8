package vmaf

import (
	"bufio"
	"io"
)

// Skipper is an input that can pass over bytes without copying them: a regular file
// seeks. The raw and Y4M readers skip the chroma planes of a frame that does not ask
// for them (Frame.Chroma) when their input is one, where they would otherwise read a
// third of a 4:2:0 frame's bytes for nothing.
type Skipper interface {
	io.Reader
	// Skip passes over the next n bytes and returns how many it passed: fewer than n
	// only where the input ends first, which is then no error.
	Skip(n int64) (int64, error)
}

// SkipThrough returns a reader of br that is a Skipper when under, the input br reads
// from, is one: it skips what br holds by discarding it and the rest by skipping
// under. Otherwise it returns br.
func SkipThrough(br *bufio.Reader, under io.Reader) io.Reader {
	if s, ok := under.(Skipper); ok {
		return bufferedSkipper{br, s}
	}
	return br
}

type bufferedSkipper struct {
	*bufio.Reader
	under Skipper
}

func (b bufferedSkipper) Skip(n int64) (int64, error) {
	held := min(n, int64(b.Buffered()))
	if _, err := b.Discard(int(held)); err != nil {
		return held, err // no error is possible: br holds these bytes
	}
	k, err := b.under.Skip(n - held)
	return held + k, err
}

// skip passes over n bytes of r, by Skip when r is a Skipper, else by reading them
// into scratch (which must hold n bytes), and returns how many it passed with
// io.ReadFull's error.
func skip(r io.Reader, n int, scratch []byte) (int, error) {
	s, ok := r.(Skipper)
	if !ok {
		return io.ReadFull(r, scratch[:n])
	}
	k, err := s.Skip(int64(n))
	if err == nil && int(k) < n {
		err = io.ErrUnexpectedEOF
		if k == 0 {
			err = io.EOF
		}
	}
	return int(k), err
}
