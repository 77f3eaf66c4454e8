package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// DefaultSpoolLimit is the largest input spooled by default: 20 GiB, an
// hour of 1080p at 45 Mbit/s, and what an emptyDir on a common node disk
// can hold. A worker Pod's ephemeral storage request must cover it.
const DefaultSpoolLimit = 20 << 30

// ErrSpoolLimit reports an input that needs spooling and is larger than the
// spool limit.
var ErrSpoolLimit = errors.New("larger than the spool limit")

// Spool is where inputs that need seeking are copied before decoding.
type Spool struct {
	// Dir is the directory, "" for the system's temporary directory (/tmp,
	// an emptyDir in a worker Pod).
	Dir string
	// Limit is the largest input spooled, in bytes; 0 means DefaultSpoolLimit
	// and a negative limit refuses to spool at all.
	Limit int64
}

// Copy copies r, of size bytes (-1 if unknown), to a new file in the spool
// directory and returns its path. The caller removes it (removeSpool).
func (s Spool) Copy(ctx context.Context, r io.Reader, size int64) (string, error) {
	limit := s.Limit
	if limit == 0 {
		limit = DefaultSpoolLimit
	}
	const hint = "an MP4/MOV with its index (moov) at the end must be spooled to local disk to be decoded; remux it with ffmpeg -movflags +faststart to stream it, or raise --spool-limit"
	if limit < 0 {
		return "", fmt.Errorf("%w: spooling is off (--spool-limit is negative); %s", ErrSpoolLimit, hint)
	}
	if size > limit {
		return "", fmt.Errorf("%w: %d bytes, spool limit %s; %s", ErrSpoolLimit, size, formatBytes(limit), hint)
	}
	f, err := os.CreateTemp(s.Dir, "vmafx-spool-*")
	if err != nil {
		return "", fmt.Errorf("spooling: %w", err)
	}
	// The context's end stops the copy at the next read of r (a fetch
	// honours it); a local reader is quick anyway.
	n, err := io.Copy(f, io.LimitReader(ctxReader{ctx, r}, limit+1))
	if err == nil && n > limit {
		err = fmt.Errorf("%w: more than %s; %s", ErrSpoolLimit, formatBytes(limit), hint)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("spooling: %w", cerr)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func removeSpool(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// ctxReader fails reads once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// formatBytes writes n with a binary suffix when it is a round number: 20Gi.
func formatBytes(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
