package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
)

// File opens file:// URIs on the local file system. Pipes and devices
// (e.g. /dev/stdin) stream like files, with an unknown size.
type File struct{}

// Open opens the file at u.Path.
func (File) Open(ctx context.Context, u *url.URL) (*Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(u.Path)
	if err != nil {
		return nil, fail(u, fileCause(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fail(u, fileCause(err))
	}
	if fi.IsDir() {
		f.Close()
		return nil, fail(u, errors.New("is a directory"))
	}
	if !fi.Mode().IsRegular() {
		return &Object{ReadCloser: &fileReader{f: f, u: u}, Size: -1}, nil
	}
	return &Object{ReadCloser: &regularFile{fileReader{f: f, u: u}}, Size: fi.Size()}, nil
}

// fileCause drops the path from a file system error, which the URI already
// names, and maps a missing file to ErrNotFound.
func fileCause(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileReader turns read errors into *Error; io.EOF passes through.
type fileReader struct {
	f *os.File
	u *url.URL
}

func (r *fileReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fail(r.u, fmt.Errorf("read: %w", fileCause(err)))
	}
	return n, err
}

func (r *fileReader) Close() error { return r.f.Close() }

// regularFile is a fileReader that can skip bytes by seeking (Skip): the frame readers
// pass over the chroma planes a luma-only model does not ask for without copying them.
type regularFile struct{ fileReader }

// Skip seeks over the next n bytes, or to the end of the file where it is nearer, and
// returns how many bytes it passed.
func (r *regularFile) Skip(n int64) (int64, error) {
	pos, err := r.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, fail(r.u, fmt.Errorf("seek: %w", fileCause(err)))
	}
	fi, err := r.f.Stat()
	if err != nil {
		return 0, fail(r.u, fmt.Errorf("stat: %w", fileCause(err)))
	}
	k := max(0, min(n, fi.Size()-pos))
	if _, err := r.f.Seek(k, io.SeekCurrent); err != nil {
		return 0, fail(r.u, fmt.Errorf("seek: %w", fileCause(err)))
	}
	return k, nil
}
