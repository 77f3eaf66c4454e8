package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/text"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
)

// maxOutputError bounds the output error in the result, which shares the
// 4 KiB termination message with everything else.
const maxOutputError = 512

// output is the --output destination. A file:// output is a temporary file
// next to the final one, created before scoring so that an unwritable
// destination fails in milliseconds rather than after the whole video, and
// renamed into place once complete, so no reader sees half a document. An
// object storage output is written in one piece after scoring; the object
// appears only when complete.
type output struct {
	name   string // the URI, redacted
	format string // "json" or "csv"

	path string
	tmp  *os.File

	u      *url.URL
	stores *fetch.Stores

	// part writes a chunk's part, the partFormat.
	part func(io.Writer, *vmaf.Result) error
}

// openOutput prepares the output at uri, in format.
func openOutput(uri, format string, stores *fetch.Stores) (*output, error) {
	u, err := fetch.ParseURI(uri)
	if err != nil {
		return nil, badRequest("--output: %v", err)
	}
	o := &output{name: fetch.Redact(u), format: format}
	switch u.Scheme {
	case "file":
	case fetch.SchemeS3, fetch.SchemeGCS, fetch.SchemeAzure:
		o.u, o.stores = u, stores
		return o, nil
	default:
		return nil, badRequest("--output %s: outputs go to file://, s3://, gs:// or azure:// URIs", o.name)
	}
	p := filepath.Clean(u.Path)
	if p == vmafxv1.DataMountPath || strings.HasPrefix(p, vmafxv1.DataMountPath+"/") {
		return nil, badRequest("--output %s: %s is the job's read-only input volume; write to a writable volume or to object storage", o.name, vmafxv1.DataMountPath)
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return nil, badRequest("--output %s: is a directory", o.name)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*.tmp")
	if err != nil {
		return nil, badRequest("--output %s: %v", o.name, pathCause(err))
	}
	o.path, o.tmp = p, tmp
	return o, nil
}

// write writes res in the output's format.
func (o *output) write(w io.Writer, res *vmaf.Result) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var err error
	switch o.format {
	case partFormat:
		err = o.part(bw, res)
	case "csv":
		err = writeCSV(bw, res)
	default:
		err = res.WriteJSON(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// commit writes res and moves it into place.
func (o *output) commit(ctx context.Context, res *vmaf.Result) error {
	if o.u != nil {
		return o.commitObject(ctx, res)
	}
	err := o.write(o.tmp, res)
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
		o.tmp = nil
		return fmt.Errorf("output %s: %w", o.name, pathCause(err))
	}
	o.tmp = nil
	return nil
}

// commitObject uploads res to object storage.
func (o *output) commitObject(ctx context.Context, res *vmaf.Result) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	contentType := "application/json"
	switch o.format {
	case "csv":
		contentType = "text/csv"
	case partFormat:
		contentType = "application/octet-stream"
	}
	w, err := o.stores.Create(ctx, o.u, contentType)
	if err != nil {
		return err
	}
	if err := o.write(w, res); err != nil {
		cancel() // abandons the upload: no partial object
		w.Close()
		var fe *fetch.Error
		if errors.As(err, &fe) {
			return err
		}
		return &fetch.Error{Op: "store", URI: o.name, Err: err}
	}
	return w.Close()
}

// abort removes the temporary file unless commit ran.
func (o *output) abort() {
	if o == nil || o.tmp == nil {
		return
	}
	o.tmp.Close()
	os.Remove(o.tmp.Name())
}

// writeCSV writes res in libvmaf's CSV layout (output.c,
// vmaf_write_output_csv): a header "Frame," and each metric name followed by
// a comma, then one line per frame, its number and each value with six
// decimals, each followed by a comma.
func writeCSV(w *bufio.Writer, res *vmaf.Result) error {
	names := res.Metrics()
	w.WriteString("Frame,")
	for _, n := range names {
		w.WriteString(n + ",")
	}
	w.WriteString("\n")
	var num []byte
	for i := range res.Frames {
		w.WriteString(strconv.Itoa(res.Frames[i].Index) + ",")
		for _, n := range names {
			v, _ := res.Metric(i, n)
			num = strconv.AppendFloat(num[:0], v, 'f', 6, 64)
			w.Write(num)
			w.WriteString(",")
		}
		w.WriteString("\n")
	}
	return nil
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

// oneLine folds s to one line of at most limit bytes (text.OneLine).
func oneLine(s string, limit int) string { return text.OneLine(s, limit) }
