package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// Object is an opened input. Read it once, from the start, then Close it.
type Object struct {
	io.ReadCloser
	// Size is the length in bytes, or -1 when the source does not say.
	Size int64
}

// Fetcher opens the inputs of one or more URI schemes.
type Fetcher interface {
	// Open starts reading the object at u. Errors, from Open and from the
	// Object's Read, are *Error; a cancelled ctx yields ctx's error instead.
	Open(ctx context.Context, u *url.URL) (*Object, error)
}

// Sentinel causes, wrapped by *Error. Test them with errors.Is.
var (
	// ErrUnsupportedScheme reports a URI scheme this build cannot fetch.
	ErrUnsupportedScheme = errors.New("unsupported scheme")
	// ErrNotFound reports a missing file or an HTTP 404 or 410.
	ErrNotFound = errors.New("not found")
	// ErrTooLarge reports an object larger than the size limit.
	ErrTooLarge = errors.New("larger than the size limit")
	// ErrTimeout reports a server that did not answer, or stopped sending,
	// within the timeout.
	ErrTimeout = errors.New("timed out")
)

// Error is a failure to fetch one input (or to store one output).
type Error struct {
	// Op is "fetch" when empty, or another verb such as "store".
	Op string
	// URI is the input, redacted (see Redact).
	URI string
	// Err is the cause. It never wraps io.EOF or io.ErrUnexpectedEOF, so that
	// a frame reader does not mistake a lost connection for the end of a video.
	Err error
}

func (e *Error) Error() string {
	op := e.Op
	if op == "" {
		op = "fetch"
	}
	return op + " " + e.URI + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// fail returns an *Error for u.
func fail(u *url.URL, err error) *Error { return &Error{URI: Redact(u), Err: err} }

// schemeRE matches a URI's scheme and "://", as the VmafxJob API's validation does.
var schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://`)

// ParseURI parses an input or output location. A string without "scheme://"
// is a path on the local file system and becomes an absolute file:// URL;
// file:// URLs must name an absolute local path (host empty or localhost).
func ParseURI(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("empty URI")
	}
	if !schemeRE.MatchString(s) {
		p, err := filepath.Abs(s)
		if err != nil {
			return nil, fmt.Errorf("path %q: %w", s, err)
		}
		return &url.URL{Scheme: "file", Path: p}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Error repeats the whole URI, which may hold credentials.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("URI %s: %w", redactString(s), err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme == "file" {
		if (u.Host != "" && u.Host != "localhost") || !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("URI %s: a file:// URI needs an absolute path, e.g. file:///data/ref.y4m", Redact(u))
		}
		u.Host = ""
	}
	return u, nil
}

// Redact returns u without its user information, query and fragment, which
// may hold credentials (basic auth, presigned URL signatures).
func Redact(u *url.URL) string {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	if u.Scheme == "file" {
		return "file://" + u.Path
	}
	return r.String()
}

// redactString cuts what may be credentials out of a URI that did not parse.
func redactString(s string) string {
	scheme, rest, _ := strings.Cut(s, "://")
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	return scheme + "://" + rest
}

// Mux routes each URI to the Fetcher registered for its scheme.
type Mux struct {
	fetchers map[string]Fetcher
}

// NewMux returns a Mux for file, http and https URIs, and for s3, gs and
// azure URIs when stores is not nil.
func NewMux(h *HTTP, stores *Stores) *Mux {
	m := &Mux{fetchers: map[string]Fetcher{
		"file":  File{},
		"http":  h,
		"https": h,
	}}
	if stores != nil {
		for _, s := range []string{SchemeS3, SchemeGCS, SchemeAzure} {
			m.fetchers[s] = stores
		}
	}
	return m
}

// Open opens u with the Fetcher for its scheme.
func (m *Mux) Open(ctx context.Context, u *url.URL) (*Object, error) {
	f, ok := m.fetchers[u.Scheme]
	if !ok {
		return nil, fail(u, fmt.Errorf("%w %s://", ErrUnsupportedScheme, u.Scheme))
	}
	return f.Open(ctx, u)
}
