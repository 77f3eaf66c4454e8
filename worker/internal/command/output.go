package command

import (
	"bufio"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/vmafx/vmafx/worker/fetch"
	"github.com/vmafx/vmafx/worker/vmaf"
)

// output is the --output destination: a temporary file next to the final
// one, created before scoring so that an unwritable destination fails in
// milliseconds rather than after the whole video, and renamed into place
// once complete, so no reader sees half a JSON document.
type output struct {
	path string
	tmp  *os.File
}

// openOutput prepares the output at uri. Only file:// (and bare paths) are
// supported; s3:// fails as a fetch would, until the S3 issue adds it.
func openOutput(uri string) (*output, error) {
	u, err := fetch.ParseURI(uri)
	if err != nil {
		return nil, badRequest("--output: %v", err)
	}
	switch u.Scheme {
	case "file":
	case "s3":
		return nil, &fetch.Error{Op: "store", URI: fetch.Redact(u), Err: fetch.UnsupportedS3.Err()}
	default:
		return nil, badRequest("--output %s: only file:// outputs are supported", fetch.Redact(u))
	}
	if fi, err := os.Stat(u.Path); err == nil && fi.IsDir() {
		return nil, badRequest("--output %s: is a directory", fetch.Redact(u))
	}
	tmp, err := os.CreateTemp(filepath.Dir(u.Path), "."+filepath.Base(u.Path)+".*.tmp")
	if err != nil {
		return nil, badRequest("--output %s: %v", fetch.Redact(u), pathCause(err))
	}
	return &output{path: u.Path, tmp: tmp}, nil
}

// commit writes res as libvmaf JSON and moves it into place.
func (o *output) commit(res *vmaf.Result) error {
	bw := bufio.NewWriterSize(o.tmp, 1<<16)
	err := res.WriteJSON(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = o.tmp.Chmod(0o644)
	}
	if err == nil {
		err = o.tmp.Sync()
	}
	if cerr := o.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.tmp.Name(), o.path)
	}
	if err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("output %s: %w", (&url.URL{Scheme: "file", Path: o.path}).String(), err)
	}
	o.tmp = nil
	return nil
}

// abort removes the temporary file unless commit succeeded.
func (o *output) abort() {
	if o == nil || o.tmp == nil {
		return
	}
	o.tmp.Close()
	os.Remove(o.tmp.Name())
}

// pathCause drops the path from a file system error, which the message
// already names.
func pathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
