package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

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

func (s *Stores) openS3(ctx context.Context, name string) (bucket, error) {
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
	// The transfer manager uploads in parts, so an output of any length streams through
	// a bounded buffer; its own checksum setting takes precedence over the client's.
	tm := transfermanager.New(client, func(o *transfermanager.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	})
	return &s3Bucket{name: name, client: client, tm: tm}, nil
}

// s3Bucket is an S3 bucket.
type s3Bucket struct {
	name   string
	client *s3.Client
	tm     *transfermanager.Client
}

func (b *s3Bucket) read(ctx context.Context, key string, off int64, version string) (io.ReadCloser, objectInfo, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)}
	if off > 0 {
		in.Range = aws.String("bytes=" + strconv.FormatInt(off, 10) + "-")
	}
	if version != "" {
		in.IfMatch = aws.String(version)
	}
	out, err := b.client.GetObject(ctx, in)
	if err != nil {
		return nil, objectInfo{}, s3Error(err)
	}
	info := objectInfo{size: aws.ToInt64(out.ContentLength), version: aws.ToString(out.ETag)}
	if cr := aws.ToString(out.ContentRange); cr != "" {
		if total, ok := rangeTotal(cr); ok {
			info.size = total
		}
	}
	return out.Body, info, nil
}

func (b *s3Bucket) write(ctx context.Context, key, contentType string) (io.WriteCloser, error) {
	return newPipeUpload(ctx, func(body io.Reader) error {
		_, err := b.tm.UploadObject(ctx, &transfermanager.UploadObjectInput{
			Bucket: aws.String(b.name), Key: aws.String(key), ContentType: aws.String(contentType), Body: body,
		})
		return s3Error(err)
	}), nil
}

func (b *s3Bucket) delete(ctx context.Context, key string) error {
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	return s3Error(err)
}

// s3Error turns an S3 error response into a *serviceError, with the codes that say "not
// found" and "denied" as gocloud.dev's s3blob read them; other errors stay as they are.
func s3Error(err error) error {
	var re *awshttp.ResponseError
	if err == nil || !errors.As(err, &re) {
		return err
	}
	status := re.HTTPStatusCode()
	se := &serviceError{status: status, cause: "HTTP " + strconv.Itoa(status), err: err}
	var api smithy.APIError
	if errors.As(err, &api) {
		code := api.ErrorCode()
		se.cause = code + ": " + api.ErrorMessage()
		switch code {
		case "NoSuchBucket", "NoSuchKey", "NotFound", "ObjectNotInActiveTierError":
			se.notFound = true
		case "AccessDenied", "Forbidden":
			se.denied = true
		}
	} else if status == http.StatusNotFound || status == http.StatusMovedPermanently {
		// A HEAD's error has no body; 301 is a bucket in another region.
		se.notFound = true
	}
	return se
}

// rangeTotal is the object's length in a Content-Range header (bytes a-b/total).
func rangeTotal(cr string) (int64, bool) {
	_, total, ok := strings.Cut(cr, "/")
	if !ok || total == "*" {
		return 0, false
	}
	n, err := strconv.ParseInt(total, 10, 64)
	return n, err == nil && n >= 0
}

// pipeUpload is a writer that streams what is written to an upload running in its own
// goroutine; Close waits for the upload and returns its error.
type pipeUpload struct {
	ctx    context.Context
	pr     *io.PipeReader
	pw     *io.PipeWriter
	upload func(io.Reader) error
	done   chan struct{}
	err    error
}

// newPipeUpload returns a writer for upload, which starts with the first byte written
// (or at Close, for an empty object). Cancelling ctx ends the upload even while it waits
// for bytes, so a writer dropped without Close leaves no goroutine behind.
func newPipeUpload(ctx context.Context, upload func(body io.Reader) error) *pipeUpload {
	return &pipeUpload{ctx: ctx, upload: upload, done: make(chan struct{})}
}

func (w *pipeUpload) start(body io.Reader) {
	if w.pr != nil {
		go func() {
			select {
			case <-w.ctx.Done():
				// The upload's reads end with the cause (and Write says it).
				w.pw.CloseWithError(w.ctx.Err())
			case <-w.done:
			}
		}()
	}
	go func() {
		defer close(w.done)
		w.err = w.upload(body)
		if w.pr != nil {
			// A failed upload stops reading: the next Write returns its error.
			w.pr.CloseWithError(uploadFailed{w.err})
		}
	}()
}

func (w *pipeUpload) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if w.pw == nil {
		w.pr, w.pw = io.Pipe()
		w.start(w.pr)
	}
	n, err := w.pw.Write(p)
	if err != nil && w.ctx.Err() != nil {
		return n, w.ctx.Err()
	}
	var uf uploadFailed
	if errors.As(err, &uf) && uf.err != nil {
		err = uf.err
	}
	return n, err
}

func (w *pipeUpload) Close() error {
	if w.pw == nil {
		w.start(http.NoBody)
	} else {
		w.pw.Close()
	}
	<-w.done
	return w.err
}

// uploadFailed carries an upload's error to the writer's side of the pipe; a nil err
// means the upload ended without reading everything.
type uploadFailed struct{ err error }

func (u uploadFailed) Error() string {
	if u.err == nil {
		return "the upload ended before the data did"
	}
	return u.err.Error()
}
