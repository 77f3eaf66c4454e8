package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseURI(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in       string
		want     string // Redact of the result
		wantPath string
		wantErr  bool
	}{
		{in: "clips/ref.y4m", want: "file://" + filepath.Join(cwd, "clips/ref.y4m"), wantPath: filepath.Join(cwd, "clips/ref.y4m")},
		{in: "/data/ref.yuv", want: "file:///data/ref.yuv", wantPath: "/data/ref.yuv"},
		{in: "/data/a?b#c.yuv", want: "file:///data/a?b#c.yuv", wantPath: "/data/a?b#c.yuv"},
		{in: "file:///data/my%20clip.y4m", want: "file:///data/my clip.y4m", wantPath: "/data/my clip.y4m"},
		{in: "FILE://localhost/data/x.y4m", want: "file:///data/x.y4m", wantPath: "/data/x.y4m"},
		{in: "https://user:secret@example.com/v/ref.y4m?X-Amz-Signature=abc#f", want: "https://example.com/v/ref.y4m", wantPath: "/v/ref.y4m"},
		{in: "s3://bucket/key.y4m", want: "s3://bucket/key.y4m", wantPath: "/key.y4m"},
		{in: "file://host/data/x.y4m", wantErr: true},
		{in: "file://relative", wantErr: true},
		{in: "http://[::1/x", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			u, err := ParseURI(tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("ParseURI(%q) = %v, want an error", tc.in, u)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, Redact(u)); diff != "" {
				t.Errorf("Redact (-want +got):\n%s", diff)
			}
			if u.Path != tc.wantPath {
				t.Errorf("Path = %q, want %q", u.Path, tc.wantPath)
			}
		})
	}
}

func TestParseURIRedactsUnparsable(t *testing.T) {
	_, err := ParseURI("http://user:secret@ex ample.com/%zz?sig=1")
	if err == nil || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "sig=") {
		t.Fatalf("err = %v, want an error without credentials", err)
	}
}

func TestFile(t *testing.T) {
	dir := t.TempDir()
	data := []byte("YUV4MPEG2 W2 H2\n")
	path := filepath.Join(dir, "ref.y4m")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		uri     string
		wantErr error
	}{
		{name: "bare path", uri: path},
		{name: "file URI", uri: "file://" + path},
		{name: "missing", uri: filepath.Join(dir, "missing.y4m"), wantErr: ErrNotFound},
		{name: "directory", uri: dir, wantErr: errIsDirectory},
	}
	m := NewMux(NewHTTP(HTTPOptions{}), nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ParseURI(tc.uri)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := m.Open(context.Background(), u)
			if tc.wantErr != nil {
				var fe *Error
				if !errors.As(err, &fe) || (!errors.Is(tc.wantErr, errIsDirectory) && !errors.Is(err, tc.wantErr)) {
					t.Fatalf("err = %v, want an *Error wrapping %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), "file://"+u.Path) {
					t.Errorf("err = %q, want it to name the URI", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			got, err := io.ReadAll(obj)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) || obj.Size != int64(len(data)) {
				t.Fatalf("read %q (size %d), want %q (size %d)", got, obj.Size, data, len(data))
			}
		})
	}
}

// A regular file skips bytes by seeking (the frame readers pass over chroma planes with
// it), never past its end; a pipe is no skipper: the readers read what they skip.
func TestFileSkip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clip.yuv")
	data := []byte("0123456789")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	obj, err := File{}.Open(context.Background(), &url.URL{Scheme: "file", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	s, ok := obj.ReadCloser.(interface{ Skip(int64) (int64, error) })
	if !ok {
		t.Fatalf("a regular file's reader %T cannot skip", obj.ReadCloser)
	}
	buf := make([]byte, 2)
	for _, step := range []struct {
		skip, want int64
		next       string
	}{{3, 3, "34"}, {0, 0, "56"}, {1, 1, "89"}, {5, 0, ""}} {
		k, err := s.Skip(step.skip)
		if err != nil || k != step.want {
			t.Fatalf("Skip(%d) = %d, %v; want %d", step.skip, k, err, step.want)
		}
		n, _ := io.ReadFull(obj, buf)
		if got := string(buf[:n]); got != step.next {
			t.Fatalf("after Skip(%d): read %q, want %q", step.skip, got, step.next)
		}
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	obj, err = File{}.Open(context.Background(), &url.URL{Scheme: "file", Path: fmt.Sprintf("/proc/self/fd/%d", r.Fd())})
	if err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}
	defer obj.Close()
	if _, ok := obj.ReadCloser.(interface{ Skip(int64) (int64, error) }); ok || obj.Size != -1 {
		t.Errorf("a pipe's reader %T can skip, size %d; want no skipper, size -1", obj.ReadCloser, obj.Size)
	}
}

// errIsDirectory stands for the directory error, which has no sentinel.
var errIsDirectory = errors.New("is a directory")

func TestUnsupportedSchemes(t *testing.T) {
	m := NewMux(NewHTTP(HTTPOptions{}), NewStores(StoreOptions{}))
	for uri, want := range map[string]string{
		"ftp://host/ref.y4m":    "fetch ftp://host/ref.y4m: unsupported scheme ftp://",
		"rclone://host/ref.y4m": "fetch rclone://host/ref.y4m: unsupported scheme rclone://",
	} {
		t.Run(uri, func(t *testing.T) {
			u, err := ParseURI(uri)
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Open(context.Background(), u)
			var fe *Error
			if !errors.As(err, &fe) || !errors.Is(err, ErrUnsupportedScheme) {
				t.Fatalf("err = %v, want an *Error wrapping ErrUnsupportedScheme", err)
			}
			if diff := cmp.Diff(want, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

// testOptions retry fast, so that the tests stay quick.
var testOptions = HTTPOptions{Timeout: 2 * time.Second, Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}

// video is the payload the test servers send: 1 MiB, enough for several reads.
var video = bytes.Repeat([]byte("0123456789abcdef"), 1<<16)

// serve starts a server on 127.0.0.1 whose handler gets the request's number
// (1, 2, ...), and returns the URL of /v/clip.yuv and the request counter.
func serve(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int64)) (*url.URL, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r, count.Add(1))
	}))
	t.Cleanup(srv.Close)
	u, err := ParseURI(srv.URL + "/v/clip.yuv")
	if err != nil {
		t.Fatal(err)
	}
	return u, &count
}

func TestHTTP(t *testing.T) {
	tests := []struct {
		name     string
		opts     HTTPOptions
		handler  func(w http.ResponseWriter, r *http.Request, n int64)
		wantOpen error // an error from Open, matched with errors.Is
		wantRead error // an error from reading the body
		requests int64
	}{{
		name: "success",
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			w.Write(video)
		},
		requests: 1,
	}, {
		name: "503 then success is retried",
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			if n == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			w.Write(video)
		},
		requests: 2,
	}, {
		name: "429 with Retry-After is retried",
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			w.Write(video)
		},
		requests: 2,
	}, {
		name: "5xx until the attempts run out",
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			http.Error(w, "broken", http.StatusBadGateway)
		},
		wantOpen: errStatus,
		requests: 3,
	}, {
		name: "404 is not retried",
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			http.NotFound(w, r)
		},
		wantOpen: ErrNotFound,
		requests: 1,
	}, {
		name: "403 is not retried",
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			http.Error(w, "no", http.StatusForbidden)
		},
		wantOpen: errStatus,
		requests: 1,
	}, {
		name: "declared size over the limit is refused",
		opts: HTTPOptions{MaxBytes: 1000},
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			w.Header().Set("Content-Length", strconv.Itoa(len(video)))
			w.Write(video)
		},
		wantOpen: ErrTooLarge,
		requests: 1,
	}, {
		name: "streamed size over the limit is refused",
		opts: HTTPOptions{MaxBytes: 100_000},
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			// Flushing first makes the response chunked, with no Content-Length.
			w.(http.Flusher).Flush()
			for i := 0; i < len(video); i += 4096 {
				if _, err := w.Write(video[i : i+4096]); err != nil {
					return
				}
			}
		},
		wantRead: ErrTooLarge,
		requests: 1,
	}, {
		name: "no response headers within the timeout",
		opts: HTTPOptions{Timeout: 50 * time.Millisecond, Attempts: 2},
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			<-r.Context().Done()
		},
		wantOpen: ErrTimeout,
		requests: 2,
	}, {
		name: "body stalls past the timeout",
		opts: HTTPOptions{Timeout: 100 * time.Millisecond},
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			w.Header().Set("Content-Length", strconv.Itoa(len(video)))
			w.Write(video[:1000])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
		wantRead: ErrTimeout,
		requests: 1,
	}, {
		name: "broken transfer without ranges fails",
		handler: func(w http.ResponseWriter, r *http.Request, n int64) {
			w.Header().Set("Content-Length", strconv.Itoa(len(video)))
			w.Write(video[:len(video)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		},
		wantRead: errLost,
		requests: 1,
	}, {
		name:     "broken transfer is resumed with a Range request",
		handler:  resumable(t),
		requests: 2,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, count := serve(t, tc.handler)
			opts := testOptions
			if tc.opts.MaxBytes != 0 {
				opts.MaxBytes = tc.opts.MaxBytes
			}
			if tc.opts.Timeout != 0 {
				opts.Timeout = tc.opts.Timeout
			}
			if tc.opts.Attempts != 0 {
				opts.Attempts = tc.opts.Attempts
			}
			obj, err := NewMux(NewHTTP(opts), nil).Open(context.Background(), u)
			if tc.wantOpen != nil {
				checkError(t, err, tc.wantOpen)
			} else {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				got, err := io.ReadAll(obj)
				obj.Close()
				if tc.wantRead != nil {
					checkError(t, err, tc.wantRead)
				} else {
					if err != nil {
						t.Fatalf("read: %v", err)
					}
					if !bytes.Equal(got, video) {
						t.Fatalf("read %d bytes, want the %d sent", len(got), len(video))
					}
				}
			}
			if got := count.Load(); got != tc.requests {
				t.Errorf("server saw %d requests, want %d", got, tc.requests)
			}
		})
	}
}

// Markers for errors that have no sentinel; checkError matches them by text.
var (
	errStatus = errors.New("HTTP ")
	errLost   = errors.New("connection lost")
)

// checkError fails t unless err is an *Error that names the URI path and
// wraps (or, for the markers above, mentions) want, and does not wrap io.EOF.
func checkError(t *testing.T, err, want error) {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want an *Error", err, err)
	}
	if errors.Is(want, errStatus) || errors.Is(want, errLost) {
		if !strings.Contains(err.Error(), want.Error()) {
			t.Fatalf("err = %v, want it to mention %q", err, want)
		}
	} else if !errors.Is(err, want) {
		t.Fatalf("err = %v, want it to wrap %v", err, want)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v wraps an EOF, which frame readers take for the end of the video", err)
	}
	if !strings.Contains(err.Error(), "/v/clip.yuv") {
		t.Fatalf("err = %v, want it to name the URI", err)
	}
}

// resumable returns a handler that breaks the first transfer halfway and
// serves the rest to a Range request that carries the right If-Range.
func resumable(t *testing.T) func(w http.ResponseWriter, r *http.Request, n int64) {
	const etag = `"v1"`
	return func(w http.ResponseWriter, r *http.Request, n int64) {
		w.Header().Set("Accept-Ranges", "bytes")
		w.Header().Set("ETag", etag)
		rng := r.Header.Get("Range")
		if rng == "" {
			w.Header().Set("Content-Length", strconv.Itoa(len(video)))
			w.Write(video[:len(video)/2+123])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		start, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rng, "bytes="), "-"))
		if err != nil || r.Header.Get("If-Range") != etag {
			t.Errorf("resume request has Range %q, If-Range %q", rng, r.Header.Get("If-Range"))
			http.Error(w, "bad range", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(video)-1, len(video)))
		w.Header().Set("Content-Length", strconv.Itoa(len(video)-start))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(video[start:])
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	u, err := ParseURI("http://" + addr + "/v/clip.yuv")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewHTTP(testOptions).Open(context.Background(), u)
	var fe *Error
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Fatalf("err = %v, want an *Error after 3 attempts", err)
	}
}

func TestHTTPCancel(t *testing.T) {
	u, _ := serve(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		w.Header().Set("Content-Length", strconv.Itoa(len(video)))
		w.Write(video[:1000])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	obj, err := NewHTTP(testOptions).Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	// Cancel in the middle of the body: the server has sent 1000 bytes and waits.
	if _, err := io.ReadFull(obj, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = io.ReadAll(obj)
	var fe *Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &fe) {
		t.Fatalf("err = %v, want context.Canceled and no fetch error", err)
	}
}

func TestHTTPRedactsCredentials(t *testing.T) {
	u, _ := serve(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		http.NotFound(w, r)
	})
	u.User = url.UserPassword("user", "secret")
	u.RawQuery = "X-Amz-Signature=deadbeef"
	_, err := NewHTTP(testOptions).Open(context.Background(), u)
	if err == nil || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "deadbeef") {
		t.Fatalf("err = %v, want an error without credentials", err)
	}
}
