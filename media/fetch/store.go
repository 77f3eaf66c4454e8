package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Object storage schemes.
const (
	SchemeS3    = "s3"    // s3://bucket/key: AWS S3 and S3-compatible servers
	SchemeGCS   = "gs"    // gs://bucket/object: Google Cloud Storage
	SchemeAzure = "azure" // azure://container/blob: Azure Blob Storage
)

// StoreOptions configures Stores. Zero fields take the HTTP defaults.
type StoreOptions struct {
	// CredentialsDir holds the credentials, one file per key (see
	// LoadCredentials); without it requests are anonymous, unless
	// DefaultCredentials is set.
	CredentialsDir string
	// DefaultCredentials lets a store without credentials of its own use the
	// default chains (environment, shared files, workload identity, instance
	// metadata). Off by default: those are the node's or the worker
	// ServiceAccount's rights, not the job author's, so any job that names no
	// Secret would act with them (docs/security.md).
	DefaultCredentials bool
	// S3Endpoint, S3Region and S3PathStyle override AWS_ENDPOINT_URL,
	// AWS_REGION and AWS_S3_USE_PATH_STYLE of the credentials.
	S3Endpoint, S3Region string
	S3PathStyle          *bool
	// Limits are the timeout on each wait, the size limit and the retries,
	// as for HTTP; Attempts counts the first read and the resumes together.
	Limits HTTPOptions
}

// Stores fetches objects from, and writes outputs to, object storage: S3 through the AWS
// SDK, Azure Blob Storage through the Azure SDK, and Google Cloud Storage through its
// JSON API over net/http (store_gcs.go), each behind the small interface bucket. It is
// safe for concurrent use; Close it when done.
type Stores struct {
	opts StoreOptions

	mu      sync.Mutex
	creds   Credentials
	loaded  error // from loading the credentials, once
	once    bool
	buckets map[string]bucket

	// gcsEndpoint replaces the GCS JSON API's root, with credentials kept (tests).
	gcsEndpoint string
}

// bucket is one bucket (or Azure container) of a service: the three calls Stores makes.
type bucket interface {
	// read opens key from byte off to its end. A resume (off > 0) passes the version
	// the first read saw, and the service refuses it (a *serviceError of status 412)
	// when the object was replaced since.
	read(ctx context.Context, key string, off int64, version string) (io.ReadCloser, objectInfo, error)
	// write returns a writer whose Close makes the object appear; cancelling ctx before
	// Close abandons it.
	write(ctx context.Context, key, contentType string) (io.WriteCloser, error)
	// delete removes key; a missing key is a *serviceError of status 404.
	delete(ctx context.Context, key string) error
}

// objectInfo is what a read says of the whole object.
type objectInfo struct {
	// size is the object's length in bytes, not the rest from the offset.
	size int64
	// version is the token a resume must match: S3's and Azure's ETag, GCS's generation.
	version string
}

// serviceError is a service's error response, in the terms every store shares.
type serviceError struct {
	// status is the HTTP status of the response.
	status int
	// notFound, denied: what the service says, by its own error code where it has
	// one (S3's NoSuchBucket; versitygw answers an unknown access key with 404
	// XAdminUserNotFound, which is no missing object), else by the status.
	notFound, denied bool
	// cause is the service's error code and message, for people.
	cause string
	err   error
}

func (e *serviceError) Error() string { return e.cause }
func (e *serviceError) Unwrap() error { return e.err }

// NewStores returns a Stores; credentials are read on first use.
func NewStores(o StoreOptions) *Stores {
	o.Limits = o.Limits.withDefaults()
	return &Stores{opts: o, buckets: map[string]bucket{}}
}

// Close forgets the buckets opened; their idle connections are closed with them.
func (s *Stores) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, b := range s.buckets {
		if c, ok := b.(interface{ closeIdle() }); ok {
			c.closeIdle()
		}
		delete(s.buckets, k)
	}
	return nil
}

// objectKey splits an object storage URI into bucket and key.
func objectKey(u *url.URL) (bucket, key string, err error) {
	key = strings.TrimPrefix(u.Path, "/")
	if u.Host == "" || key == "" {
		return "", "", fmt.Errorf("want %s://BUCKET/KEY", u.Scheme)
	}
	return u.Host, key, nil
}

// bucket returns the open bucket of u, opening it on first use.
func (s *Stores) bucket(ctx context.Context, u *url.URL) (bucket, string, error) {
	name, key, err := objectKey(u)
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.once {
		s.once = true
		s.creds, s.loaded = LoadCredentials(s.opts.CredentialsDir)
		if s.loaded == nil {
			logr.FromContextOrDiscard(ctx).V(2).Info("Loaded object storage credentials", "dir", s.opts.CredentialsDir, "keys", s.creds.Keys())
		}
	}
	if s.loaded != nil {
		return nil, "", s.loaded
	}
	id := u.Scheme + "://" + name
	if b, ok := s.buckets[id]; ok {
		return b, key, nil
	}
	var b bucket
	switch u.Scheme {
	case SchemeS3:
		b, err = s.openS3(ctx, name)
	case SchemeGCS:
		b, err = s.openGCS(ctx, name)
	case SchemeAzure:
		b, err = s.openAzure(name)
	default:
		err = fmt.Errorf("%w %s://", ErrUnsupportedScheme, u.Scheme)
	}
	if err != nil {
		return nil, "", err
	}
	s.buckets[id] = b
	return b, key, nil
}

// transport is the stores' HTTP transport: a timeout on every wait, none on the whole
// transfer (see DefaultTimeout).
func (s *Stores) transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSHandshakeTimeout = s.opts.Limits.Timeout
	t.ResponseHeaderTimeout = s.opts.Limits.Timeout
	return t
}

// storeCause turns an object storage error into a short cause for people:
// the service's error code and message, without secrets.
func (s *Stores) storeCause(err error) error {
	var se *serviceError
	cause := err.Error()
	if errors.As(err, &se) {
		cause = se.cause
	}
	cause = strings.TrimSuffix(strings.TrimSpace(s.creds.scrub(cause)), ":")
	switch {
	case notFound(err):
		return fmt.Errorf("%w: %s", ErrNotFound, cause)
	case se != nil && (se.denied || se.status == http.StatusUnauthorized || se.status == http.StatusForbidden):
		if len(s.creds) == 0 && !s.opts.DefaultCredentials {
			// Say why the request was anonymous: a job that names no Secret no longer
			// borrows the node's credentials (docs/security.md).
			return fmt.Errorf("access denied to an anonymous request (the job names no credentials, and the default credential chain is off: name a Secret in spec.credentials): %s", cause)
		}
		return fmt.Errorf("access denied (check the credentials and the bucket's policy): %s", cause)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %s", ErrTimeout, cause)
	}
	return errors.New(cause)
}

// notFound reports whether the service says the object or its bucket does not exist.
func notFound(err error) bool {
	var se *serviceError
	return errors.As(err, &se) && se.notFound
}

// permanent reports whether a store error is not worth a retry: the
// service refused the request itself (4xx other than 408 and 429, and 501).
func permanent(err error) bool {
	var se *serviceError
	if !errors.As(err, &se) {
		return false
	}
	if se.notFound || se.denied || se.status == http.StatusNotImplemented {
		return true
	}
	return se.status >= 400 && se.status < 500 && se.status != http.StatusRequestTimeout && se.status != http.StatusTooManyRequests
}

// Open reads the object at u with ranged reads: a read that breaks off is
// resumed at its offset, with backoff, within the attempts.
func (s *Stores) Open(ctx context.Context, u *url.URL) (*Object, error) {
	b, key, err := s.bucket(ctx, u)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fail(u, err)
	}
	// A GET rather than a HEAD first: a HEAD's error has no body, so it could not
	// say why it failed.
	r := &rangeReader{s: s, ctx: ctx, b: b, key: key, u: u, size: -1}
	if err := r.open(); err != nil {
		return nil, err
	}
	if max := s.opts.Limits.MaxBytes; max >= 0 && r.size > max {
		r.Close()
		return nil, fail(u, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, r.size, max))
	}
	return &Object{ReadCloser: r, Size: r.size}, nil
}

// rangeReader reads an object from offset off on, reopening at off when a
// read fails.
type rangeReader struct {
	s       *Stores
	ctx     context.Context
	b       bucket
	key     string
	u       *url.URL
	size    int64 // -1 until the first read
	version string

	r      io.ReadCloser
	cancel context.CancelCauseFunc
	rctx   context.Context
	timer  *time.Timer
	off    int64
	tries  int
	err    error
}

// open opens a range reader at r.off, retrying transient failures.
func (r *rangeReader) open() error {
	var last error
	for {
		if last != nil {
			if r.tries >= r.s.opts.Limits.Attempts {
				return fail(r.u, fmt.Errorf("%w (gave up after %d attempts)", last, r.tries))
			}
			wait := r.s.opts.Limits.backoff(r.tries)
			logr.FromContextOrDiscard(r.ctx).Info("Retrying fetch", "uri", Redact(r.u), "offset", r.off, "attempt", r.tries+1, "wait", wait, "err", last.Error())
			if err := sleep(r.ctx, wait); err != nil {
				return err
			}
		}
		r.tries++
		rctx, cancel := context.WithCancelCause(r.ctx)
		version := ""
		if r.off > 0 {
			version = r.version
		}
		br, info, err := r.b.read(rctx, r.key, r.off, version)
		if err != nil {
			cancel(nil)
			if r.ctx.Err() != nil {
				return r.ctx.Err()
			}
			var se *serviceError
			if r.size >= 0 && errors.As(err, &se) && se.status == http.StatusPreconditionFailed {
				return fail(r.u, fmt.Errorf("resuming at byte %d: the object changed since the transfer began", r.off))
			}
			if permanent(err) {
				return fail(r.u, r.s.storeCause(err))
			}
			last = r.s.storeCause(err)
			continue
		}
		if r.size < 0 {
			// The first read: the object's size and version, for the resumes.
			r.size, r.version = info.size, info.version
		} else if info.size != r.size || (r.version != "" && info.version != r.version) {
			br.Close()
			cancel(nil)
			return fail(r.u, fmt.Errorf("resuming at byte %d: the object changed since the transfer began", r.off))
		}
		r.r, r.rctx, r.cancel = br, rctx, cancel
		r.timer = time.AfterFunc(r.s.opts.Limits.Timeout, func() { cancel(errStalled) })
		r.timer.Stop()
		return nil
	}
}

// Read reads from the current range, resuming at the offset when it breaks.
func (r *rangeReader) Read(p []byte) (int, error) {
	for {
		if r.err != nil {
			return 0, r.err
		}
		if r.r == nil {
			if err := r.open(); err != nil {
				r.err = err
				return 0, err
			}
		}
		r.timer.Reset(r.s.opts.Limits.Timeout)
		n, err := r.r.Read(p)
		r.timer.Stop()
		r.off += int64(n)
		if err == nil {
			return n, nil
		}
		stalled := errors.Is(context.Cause(r.rctx), errStalled)
		r.release()
		switch {
		case errors.Is(err, io.EOF) && r.off >= r.size:
			r.err = io.EOF
			return n, io.EOF
		case r.ctx.Err() != nil:
			r.err = r.ctx.Err()
			return n, nil
		}
		cause := fmt.Errorf("connection lost after %d of %d bytes: %s", r.off, r.size, describe(err))
		if stalled {
			cause = fmt.Errorf("%w: no data for %v after %d of %d bytes", ErrTimeout, r.s.opts.Limits.Timeout, r.off, r.size)
		}
		if r.tries >= r.s.opts.Limits.Attempts {
			r.err = fail(r.u, fmt.Errorf("%s (gave up after %d attempts)", r.s.creds.scrub(cause.Error()), r.tries))
			return n, nil
		}
		logr.FromContextOrDiscard(r.ctx).Info("Resuming fetch", "uri", Redact(r.u), "offset", r.off, "err", r.s.creds.scrub(cause.Error()))
		if n > 0 {
			return n, nil
		}
	}
}

func (r *rangeReader) release() {
	if r.r == nil {
		return
	}
	r.timer.Stop()
	r.cancel(nil)
	r.r.Close()
	r.r = nil
}

// Close ends the transfer.
func (r *rangeReader) Close() error {
	r.release()
	if r.err == nil {
		r.err = fail(r.u, errors.New("read after close"))
	}
	return nil
}

// Create returns a writer for the object at u; the object appears when the
// writer is closed without error. Cancelling ctx before Close abandons it.
func (s *Stores) Create(ctx context.Context, u *url.URL, contentType string) (io.WriteCloser, error) {
	b, key, err := s.bucket(ctx, u)
	if err != nil {
		return nil, &Error{Op: "store", URI: Redact(u), Err: err}
	}
	// An abandoned upload must not complete: the writers' own goroutines stop with wctx.
	wctx, cancel := context.WithCancel(ctx)
	w, err := b.write(wctx, key, contentType)
	if err != nil {
		cancel()
		return nil, &Error{Op: "store", URI: Redact(u), Err: s.storeCause(err)}
	}
	return &storeWriter{w: w, s: s, u: u, cancel: cancel}, nil
}

// storeWriter reports its failures as *Error without secrets.
type storeWriter struct {
	w      io.WriteCloser
	s      *Stores
	u      *url.URL
	cancel context.CancelFunc
}

func (w *storeWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		err = &Error{Op: "store", URI: Redact(w.u), Err: w.s.storeCause(err)}
	}
	return n, err
}

func (w *storeWriter) Close() error {
	defer w.cancel()
	if err := w.w.Close(); err != nil {
		return &Error{Op: "store", URI: Redact(w.u), Err: w.s.storeCause(err)}
	}
	return nil
}

// Delete removes the object at u. An object that is already gone is no error, so that a
// second removal (a retried step) succeeds.
func (s *Stores) Delete(ctx context.Context, u *url.URL) error {
	b, key, err := s.bucket(ctx, u)
	if err != nil {
		return &Error{Op: "delete", URI: Redact(u), Err: err}
	}
	if err := b.delete(ctx, key); err != nil && !notFound(err) {
		return &Error{Op: "delete", URI: Redact(u), Err: s.storeCause(err)}
	}
	return nil
}
