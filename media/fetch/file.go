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
	size := int64(-1)
	if fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return &Object{ReadCloser: &fileReader{f: f, u: u}, Size: size}, nil
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
