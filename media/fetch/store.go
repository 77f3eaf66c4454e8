package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/go-logr/logr"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
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
	// SDKs' default chains (environment, shared files, workload identity,
	// instance metadata). Off by default: those are the node's or the worker
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

// Stores fetches objects from, and writes outputs to, object storage through
// gocloud.dev/blob. It is safe for concurrent use; Close it when done.
type Stores struct {
	opts StoreOptions

	mu      sync.Mutex
	creds   Credentials
	loaded  error // from loading the credentials, once
	once    bool
	buckets map[string]*blob.Bucket
}

// NewStores returns a Stores; credentials are read on first use.
func NewStores(o StoreOptions) *Stores {
	o.Limits = o.Limits.withDefaults()
	return &Stores{opts: o, buckets: map[string]*blob.Bucket{}}
}

// Close closes the buckets opened.
func (s *Stores) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for k, b := range s.buckets {
		errs = append(errs, b.Close())
		delete(s.buckets, k)
	}
	return errors.Join(errs...)
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
func (s *Stores) bucket(ctx context.Context, u *url.URL) (*blob.Bucket, string, error) {
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
	var b *blob.Bucket
	switch u.Scheme {
	case SchemeS3:
		b, err = s.openS3(ctx, name)
	case SchemeGCS:
		b, err = s.openGCS(ctx, name)
	case SchemeAzure:
		b, err = s.openAzure(ctx, name)
	default:
		err = fmt.Errorf("%w %s://", ErrUnsupportedScheme, u.Scheme)
	}
	if err != nil {
		return nil, "", err
	}
	s.buckets[id] = b
	return b, key, nil
}

// httpClient is the SDKs' HTTP client: a timeout on every wait, none on
// the whole transfer (see DefaultTimeout).
func (s *Stores) httpClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSHandshakeTimeout = s.opts.Limits.Timeout
	t.ResponseHeaderTimeout = s.opts.Limits.Timeout
	return &http.Client{Transport: t}
}

// S3Config is the S3 client configuration the credentials and options
// give: what openS3 uses, exported for tests.
type S3Config struct {
	Region, Endpoint string
	PathStyle        bool
	// Static is set when the credentials name an access key.
	Static bool
}

func (s *Stores) s3Config() (S3Config, error) {
	c := S3Config{Region: s.creds[KeyAWSRegion], Endpoint: s.creds[KeyAWSEndpointURL]}
	if v := s.creds[KeyAWSPathStyle]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("credential %s: want true or false", KeyAWSPathStyle)
		}
		c.PathStyle = b
	}
	if s.opts.S3Region != "" {
		c.Region = s.opts.S3Region
	}
	if s.opts.S3Endpoint != "" {
		c.Endpoint = s.opts.S3Endpoint
	}
	if s.opts.S3PathStyle != nil {
		c.PathStyle = *s.opts.S3PathStyle
	}
	id, secret := s.creds[KeyAWSAccessKeyID], s.creds[KeyAWSSecretAccessKey]
	if (id == "") != (secret == "") {
		return c, fmt.Errorf("credentials: %s and %s go together, only one is set", KeyAWSAccessKeyID, KeyAWSSecretAccessKey)
	}
	c.Static = id != ""
	return c, nil
}

func (s *Stores) openS3(ctx context.Context, name string) (*blob.Bucket, error) {
	c, err := s.s3Config()
	if err != nil {
		return nil, err
	}
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.TLSHandshakeTimeout = s.opts.Limits.Timeout
		t.ResponseHeaderTimeout = s.opts.Limits.Timeout
	})
	opts := []func(*config.LoadOptions) error{config.WithHTTPClient(hc)}
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	switch {
	case c.Static:
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(
			s.creds[KeyAWSAccessKeyID], s.creds[KeyAWSSecretAccessKey], s.creds[KeyAWSSessionToken])))
	case !s.opts.DefaultCredentials:
		// Unsigned requests: a public bucket reads, anything else answers AccessDenied.
		opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("S3 configuration: %s", s.creds.scrub(err.Error()))
	}
	if cfg.Region == "" {
		// SigV4 needs a region; S3-compatible servers mostly take any.
		cfg.Region = "us-east-1"
	}
	// S3-compatible servers may not know the newer checksum headers.
	cfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	cfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		o.UsePathStyle = c.PathStyle
	})
	return s3blob.OpenBucket(ctx, client, name, &s3blob.Options{RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired})
}

func (s *Stores) openGCS(ctx context.Context, name string) (*blob.Bucket, error) {
	var ts gcp.TokenSource
	if j := s.creds[KeyGCSCredentialsJSON]; j != "" {
		creds, err := google.CredentialsFromJSONWithType(ctx, []byte(j), google.ServiceAccount, "https://www.googleapis.com/auth/devstorage.read_write")
		if err != nil {
			// The parser's errors may quote the file: say only what it is.
			return nil, fmt.Errorf("credential %s is not a Google service account key file (JSON)", KeyGCSCredentialsJSON)
		}
		ts = creds.TokenSource
	} else if !s.opts.DefaultCredentials {
		return gcsblob.OpenBucket(ctx, gcp.NewAnonymousHTTPClient(gcp.DefaultTransport()), name, nil)
	} else {
		creds, err := gcp.DefaultCredentials(ctx)
		if err != nil {
			return nil, fmt.Errorf("no Google credentials: give %s in the credentials or run with workload identity: %w", KeyGCSCredentialsJSON, err)
		}
		ts = creds.TokenSource
	}
	client, err := gcp.NewHTTPClient(gcp.DefaultTransport(), ts)
	if err != nil {
		return nil, err
	}
	return gcsblob.OpenBucket(ctx, client, name, nil)
}

func (s *Stores) openAzure(ctx context.Context, name string) (*blob.Bucket, error) {
	account := s.creds[KeyAzureAccount]
	if account == "" {
		return nil, fmt.Errorf("azure:// needs the storage account: credential %s", KeyAzureAccount)
	}
	svc, err := azureblob.NewServiceURL(&azureblob.ServiceURLOptions{
		AccountName:   account,
		StorageDomain: s.creds[KeyAzureDomain],
		Protocol:      s.creds[KeyAzureProtocol],
	})
	if err != nil {
		return nil, err
	}
	containerURL, err := url.JoinPath(string(svc), name)
	if err != nil {
		return nil, err
	}
	opts := &container.ClientOptions{}
	opts.Transport = s.httpClient()
	var client *container.Client
	switch {
	case s.creds[KeyAzureKey] != "":
		cred, err := azblob.NewSharedKeyCredential(account, s.creds[KeyAzureKey])
		if err != nil {
			return nil, fmt.Errorf("credential %s is not a storage account key", KeyAzureKey)
		}
		client, err = container.NewClientWithSharedKeyCredential(containerURL, cred, opts)
		if err != nil {
			return nil, errors.New(s.creds.scrub(err.Error()))
		}
	case s.creds[KeyAzureSASToken] != "":
		client, err = container.NewClientWithNoCredential(containerURL+"?"+strings.TrimPrefix(s.creds[KeyAzureSASToken], "?"), opts)
		if err != nil {
			return nil, errors.New(s.creds.scrub(err.Error()))
		}
	case !s.opts.DefaultCredentials:
		// Anonymous: a container with public access reads, anything else is refused.
		client, err = container.NewClientWithNoCredential(containerURL, opts)
		if err != nil {
			return nil, errors.New(s.creds.scrub(err.Error()))
		}
	default:
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("no Azure credentials: give %s or %s in the credentials, or run with a managed identity: %w", KeyAzureKey, KeyAzureSASToken, err)
		}
		if client, err = container.NewClient(containerURL, cred, opts); err != nil {
			return nil, err
		}
	}
	return azureblob.OpenBucket(ctx, client, nil)
}

// storeCause turns an object storage error into a short cause for people:
// the service's error code and message, without secrets.
func (s *Stores) storeCause(err error) error {
	var (
		api   smithy.APIError
		az    *azcore.ResponseError
		gerr  *googleapi.Error
		cause string
	)
	switch {
	case errors.As(err, &api):
		cause = api.ErrorCode() + ": " + api.ErrorMessage()
	case errors.As(err, &az):
		cause = az.ErrorCode + " (HTTP " + strconv.Itoa(az.StatusCode) + ")"
	case errors.As(err, &gerr):
		cause = gerr.Message + " (HTTP " + strconv.Itoa(gerr.Code) + ")"
	default:
		cause = err.Error()
	}
	cause = strings.TrimSuffix(strings.TrimSpace(s.creds.scrub(cause)), ":")
	status := httpStatus(err)
	switch {
	case gcerrors.Code(err) == gcerrors.NotFound:
		return fmt.Errorf("%w: %s", ErrNotFound, cause)
	case gcerrors.Code(err) == gcerrors.PermissionDenied || status == http.StatusUnauthorized || status == http.StatusForbidden:
		if len(s.creds) == 0 && !s.opts.DefaultCredentials {
			// Say why the request was anonymous: a job that names no Secret no longer
			// borrows the node's credentials (docs/security.md).
			return fmt.Errorf("access denied to an anonymous request (the job names no credentials, and the default credential chain is off: name a Secret in spec.credentials): %s", cause)
		}
		return fmt.Errorf("access denied (check the credentials and the bucket's policy): %s", cause)
	case gcerrors.Code(err) == gcerrors.DeadlineExceeded:
		return fmt.Errorf("%w: %s", ErrTimeout, cause)
	}
	return errors.New(cause)
}

// httpStatus is the HTTP status of a service's error response, or 0.
func httpStatus(err error) int {
	var (
		aws  *awshttp.ResponseError
		az   *azcore.ResponseError
		gerr *googleapi.Error
	)
	switch {
	case errors.As(err, &aws):
		return aws.HTTPStatusCode()
	case errors.As(err, &az):
		return az.StatusCode
	case errors.As(err, &gerr):
		return gerr.Code
	}
	return 0
}

// permanent reports whether a store error is not worth a retry: the
// service refused the request itself (4xx other than 408 and 429).
func permanent(err error) bool {
	switch gcerrors.Code(err) {
	case gcerrors.NotFound, gcerrors.PermissionDenied, gcerrors.InvalidArgument, gcerrors.FailedPrecondition, gcerrors.Unimplemented:
		return true
	}
	status := httpStatus(err)
	return status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
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
	s    *Stores
	ctx  context.Context
	b    *blob.Bucket
	key  string
	u    *url.URL
	size int64 // -1 until the first read
	etag string
	mod  time.Time

	r      *blob.Reader
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
		br, err := r.b.NewRangeReader(rctx, r.key, r.off, -1, &blob.ReaderOptions{BeforeRead: r.ifMatch})
		if err != nil {
			cancel(nil)
			if r.ctx.Err() != nil {
				return r.ctx.Err()
			}
			if permanent(err) {
				return fail(r.u, r.s.storeCause(err))
			}
			last = r.s.storeCause(err)
			continue
		}
		if r.size < 0 {
			// The first read: the object's size and version, for the resumes.
			r.size, r.mod = br.Size(), br.ModTime()
			var out s3.GetObjectOutput
			if br.As(&out) {
				r.etag = aws.ToString(out.ETag)
			}
		} else if !br.ModTime().Equal(r.mod) || br.Size() != r.size {
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

// ifMatch makes an S3 resume fail rather than read a replaced object.
func (r *rangeReader) ifMatch(as func(any) bool) error {
	var in *s3.GetObjectInput
	if r.off > 0 && r.etag != "" && as(&in) {
		in.IfMatch = aws.String(r.etag)
	}
	return nil
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
	w, err := b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: contentType})
	if err != nil {
		return nil, &Error{Op: "store", URI: Redact(u), Err: s.storeCause(err)}
	}
	return &storeWriter{w: w, s: s, u: u}, nil
}

// storeWriter reports its failures as *Error without secrets.
type storeWriter struct {
	w *blob.Writer
	s *Stores
	u *url.URL
}

func (w *storeWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		err = &Error{Op: "store", URI: Redact(w.u), Err: w.s.storeCause(err)}
	}
	return n, err
}

func (w *storeWriter) Close() error {
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
	if err := b.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return &Error{Op: "delete", URI: Redact(u), Err: s.storeCause(err)}
	}
	return nil
}
