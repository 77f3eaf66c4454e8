package outputs

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/media/fetch"
)

// Timeout bounds one read: an output for its curve, or a picture.
const Timeout = 20 * time.Second

// maxReads is how many objects one door reads at once: with the size limits, it bounds
// the memory reads can take.
const maxReads = 4

// Reader opens a job's objects as its caller.
type Reader struct {
	store *jobs.Store
	// slots bounds the reads at once (maxReads).
	slots chan struct{}
}

// New returns a Reader that reads the Secrets of jobs through store, as each caller.
func New(store *jobs.Store) *Reader {
	return &Reader{store: store, slots: make(chan struct{}, maxReads)}
}

// fail is a refusal with its HTTP code, as the API server words its own: the doors answer
// it as they answer the API server's (a Status, a tool error, a console note).
func fail(code int32, reason metav1.StatusReason, msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
}

// notFound, badGateway and busy are fail's common cases.
func notFound(msg string) error { return fail(http.StatusNotFound, metav1.StatusReasonNotFound, msg) }

func badGateway(msg string) error {
	return fail(http.StatusBadGateway, metav1.StatusReasonInternalError, msg)
}

// ObjectStore reports whether uri is in object storage a door reads (s3://, gs://,
// azure://): a file:/// output is on the job's own volume, which no door mounts.
func ObjectStore(uri string) bool {
	u, err := fetch.ParseURI(uri)
	return err == nil && (u.Scheme == fetch.SchemeS3 || u.Scheme == fetch.SchemeGCS || u.Scheme == fetch.SchemeAzure)
}

// SecretRefused reports whether err is Open's refusal for the caller's want of the right
// to read the job's Secret (a 403), rather than a store that failed.
func SecretRefused(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st) && st.Status().Code == http.StatusForbidden
}

// Open opens the object at u with the job's store settings and the keys of the Secret
// it names, read as u, bounded to maxBytes; what names the object in errors. The error's
// message is for people (a console shows it as it is) and its code says whose it is: 403
// when the caller may not read the Secret, 404 when the store has no such object, 503
// when the door is busy, 502 when the store failed. done closes the object and frees the read's slot.
func (r *Reader) Open(ctx context.Context, u access.User, j *vmafxv1.VmafxJob, uri *url.URL, maxBytes int64, what string) (obj io.Reader, done func(), err error) {
	// A few reads at once: each may take tens of MiB of the door's memory while read.
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, fail(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "The door is busy reading other outputs; try again in a moment.")
	}
	var cleanup []func()
	release := func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
		<-r.slots
	}
	opts := fetch.StoreOptions{Limits: fetch.HTTPOptions{MaxBytes: maxBytes, Timeout: Timeout / 2, Attempts: 2}}
	if s3 := j.Spec.S3; s3 != nil {
		opts.S3Endpoint, opts.S3Region = s3.Endpoint, s3.Region
		if s3.PathStyle {
			opts.S3PathStyle = &s3.PathStyle
		}
	}
	if cr := j.Spec.Credentials; cr != nil {
		// The keys are the caller's to read or not: the Secret is read as the caller, so
		// the door shows nothing of the store its caller could not fetch with kubectl.
		var sec corev1.Secret
		if err := r.store.Read(ctx, u, j.Namespace, cr.SecretRef.Name, &sec); err != nil {
			release()
			if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
				return nil, nil, fail(http.StatusForbidden, metav1.StatusReasonForbidden,
					"Reading "+what+" takes the keys of the Secret "+cr.SecretRef.Name+", read as you, and you may not read it: "+err.Error())
			}
			return nil, nil, badGateway("Reading the Secret " + cr.SecretRef.Name + ": " + err.Error())
		}
		dir, err := writeCredentials(sec.Data)
		if err != nil {
			release()
			return nil, nil, badGateway("Preparing the keys of " + what + ": " + err.Error())
		}
		cleanup = append(cleanup, func() { _ = os.RemoveAll(dir) })
		opts.CredentialsDir = dir
	}
	stores := fetch.NewStores(opts)
	cleanup = append(cleanup, func() { _ = stores.Close() })
	o, err := stores.Open(ctx, uri)
	if err != nil {
		release()
		if errors.Is(err, fetch.ErrNotFound) {
			return nil, nil, notFound("Reading " + what + ": " + err.Error())
		}
		return nil, nil, badGateway("Reading " + what + ": " + err.Error())
	}
	cleanup = append(cleanup, func() { _ = o.Close() })
	// The store's size check is the object's declared size; the reader holds to it too.
	return io.LimitReader(o, maxBytes), release, nil
}

// writeCredentials lays a Secret's keys out as fetch.Stores reads them: one file per key
// in a directory only this process may read, removed by the caller once the object is
// read (a mounted Secret, as the worker gets it).
func writeCredentials(data map[string][]byte) (string, error) {
	dir, err := os.MkdirTemp("", "vmafx-door-keys-")
	if err != nil {
		return "", err
	}
	for k, v := range data {
		if strings.ContainsAny(k, `/\`) || k == "." || k == ".." {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			_ = os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}
