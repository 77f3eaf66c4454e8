package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Google Cloud Storage is reached through its JSON API over net/http rather than
// cloud.google.com/go/storage, which with its gRPC transport was two thirds of the
// worker's binary; the three calls Stores makes (a ranged GET of the media, a resumable
// upload and a DELETE) are a small, stable part of that API
// (https://cloud.google.com/storage/docs/json_api).
const (
	// gcsEndpoint is the JSON API's root.
	gcsEndpoint = "https://storage.googleapis.com"
	// gcsEmulatorEnv names an emulator (host:port, or a URL) that takes the place of
	// gcsEndpoint without credentials, as Google's own clients read it.
	gcsEmulatorEnv = "STORAGE_EMULATOR_HOST"
	// gcsScope is the OAuth scope of a service account key's tokens.
	gcsScope = "https://www.googleapis.com/auth/devstorage.read_write"
	// gcsDefaultScope is the scope of the default credentials, as gocloud.dev asked.
	gcsDefaultScope = "https://www.googleapis.com/auth/cloud-platform"
	// gcsChunk is the resumable upload's chunk, a multiple of the 256 KiB the API wants:
	// the most an output holds in memory.
	gcsChunk = 8 << 20
	// gcsErrorBody bounds the error response read for its message.
	gcsErrorBody = 64 << 10
)

// openGCS opens a bucket with the credentials' service account key, else anonymously,
// else (DefaultCredentials) with Google's application default credentials: the file
// GOOGLE_APPLICATION_CREDENTIALS names, gcloud's own file, then the metadata server
// (GKE workload identity, the node's service account).
func (s *Stores) openGCS(ctx context.Context, name string) (bucket, error) {
	base := http.RoundTripper(s.transport())
	endpoint := gcsEndpoint
	if s.gcsEndpoint != "" {
		endpoint = s.gcsEndpoint
	}
	if host := os.Getenv(gcsEmulatorEnv); host != "" {
		endpoint = strings.TrimSuffix(host, "/")
		if !strings.Contains(endpoint, "://") {
			endpoint = "http://" + endpoint
		}
		return &gcsBucket{name: name, endpoint: endpoint, client: &http.Client{Transport: base}, limits: s.opts.Limits}, nil
	}
	var ts oauth2.TokenSource
	switch {
	case s.creds[KeyGCSCredentialsJSON] != "":
		creds, err := google.CredentialsFromJSONWithType(ctx, []byte(s.creds[KeyGCSCredentialsJSON]), google.ServiceAccount, gcsScope)
		if err != nil {
			// The parser's errors may quote the file: say only what it is.
			return nil, fmt.Errorf("credential %s is not a Google service account key file (JSON)", KeyGCSCredentialsJSON)
		}
		ts = creds.TokenSource
	case s.opts.DefaultCredentials:
		creds, err := google.FindDefaultCredentials(ctx, gcsDefaultScope)
		if err != nil {
			return nil, fmt.Errorf("no Google credentials: give %s in the credentials or run with workload identity: %w", KeyGCSCredentialsJSON, err)
		}
		ts = creds.TokenSource
	}
	client := &http.Client{Transport: base}
	if ts != nil {
		client.Transport = &oauth2.Transport{Source: ts, Base: base}
	}
	return &gcsBucket{name: name, endpoint: endpoint, client: client, limits: s.opts.Limits}, nil
}

// gcsBucket is a Google Cloud Storage bucket.
type gcsBucket struct {
	name, endpoint string
	client         *http.Client
	// limits are the attempts and backoff of an upload's chunks.
	limits HTTPOptions
}

// objectURL is the JSON API's URL of key, with the query q.
func (b *gcsBucket) objectURL(key string, q url.Values) string {
	return b.endpoint + "/storage/v1/b/" + url.PathEscape(b.name) + "/o/" + url.PathEscape(key) + "?" + q.Encode()
}

func (b *gcsBucket) do(req *http.Request) (*http.Response, error) {
	req.Header.Set("User-Agent", "vmafx")
	return b.client.Do(req)
}

func (b *gcsBucket) read(ctx context.Context, key string, off int64, version string) (io.ReadCloser, objectInfo, error) {
	q := url.Values{"alt": {"media"}}
	if version != "" {
		q.Set("ifGenerationMatch", version)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.objectURL(key, q), nil)
	if err != nil {
		return nil, objectInfo{}, err
	}
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
	}
	// The stored bytes as they are: net/http would otherwise ask for gzip and, when the
	// object is stored compressed, hand back other bytes than the ranges count.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := b.do(req)
	if err != nil {
		return nil, objectInfo{}, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		defer resp.Body.Close()
		return nil, objectInfo{}, gcsError(resp)
	}
	info := objectInfo{size: resp.ContentLength, version: resp.Header.Get("X-Goog-Generation")}
	if resp.StatusCode == http.StatusPartialContent {
		total, ok := rangeTotal(resp.Header.Get("Content-Range"))
		if !ok {
			resp.Body.Close()
			return nil, objectInfo{}, fmt.Errorf("the response to a ranged read has no object length (Content-Range %q)", resp.Header.Get("Content-Range"))
		}
		info.size = total
	}
	if info.size < 0 {
		resp.Body.Close()
		return nil, objectInfo{}, errors.New("the response has no Content-Length")
	}
	return resp.Body, info, nil
}

func (b *gcsBucket) delete(ctx context.Context, key string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.objectURL(key, nil), nil)
	if err != nil {
		return err
	}
	resp, err := b.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return gcsError(resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, gcsErrorBody))
	return nil
}

// write starts a resumable upload (https://cloud.google.com/storage/docs/performing-resumable-uploads):
// the object appears when its last chunk is sent, at Close; an upload left unfinished
// expires on the service's side.
func (b *gcsBucket) write(ctx context.Context, key, contentType string) (io.WriteCloser, error) {
	q := url.Values{"uploadType": {"resumable"}, "name": {key}}
	meta, err := json.Marshal(map[string]string{"name": key, "contentType": contentType})
	if err != nil {
		return nil, err
	}
	u := b.endpoint + "/upload/storage/v1/b/" + url.PathEscape(b.name) + "/o?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(meta))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	req.Header.Set("X-Upload-Content-Type", contentType)
	resp, err := b.do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, gcsError(resp)
	}
	session := resp.Header.Get("Location")
	if session == "" {
		return nil, errors.New("the resumable upload's response names no session (Location)")
	}
	return &gcsWriter{b: b, ctx: ctx, session: session, buf: make([]byte, 0, gcsChunk)}, nil
}

// gcsWriter sends what is written in chunks of gcsChunk bytes, the last one at Close.
type gcsWriter struct {
	b       *gcsBucket
	ctx     context.Context
	session string
	buf     []byte
	sent    int64 // bytes the service holds
	err     error
}

func (w *gcsWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if w.err != nil {
			return n, w.err
		}
		k := min(len(p), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(w.buf) == cap(w.buf) {
			w.err = w.send(false)
		}
	}
	return n, w.err
}

func (w *gcsWriter) Close() error {
	if w.err == nil {
		w.err = w.send(true)
		if w.err == nil {
			w.err = errors.New("closed")
			return nil
		}
	}
	return w.err
}

// send sends the buffer as the next chunk; the last one states the object's length,
// which completes the upload. A chunk whose answer is lost or transient (a broken
// connection, 408, 429, 5xx) is retried within the attempts, with backoff, after asking
// the service how much it holds, since it may have kept the chunk before failing.
func (w *gcsWriter) send(last bool) error {
	query, tries := false, 1
	for {
		end := w.sent + int64(len(w.buf))
		total := "*"
		if last {
			total = strconv.FormatInt(end, 10)
		}
		body, cr := w.buf, "bytes */"+total // an empty last chunk, or a status query
		if query {
			body = nil
		} else if len(w.buf) > 0 {
			cr = "bytes " + strconv.FormatInt(w.sent, 10) + "-" + strconv.FormatInt(end-1, 10) + "/" + total
		}
		req, err := http.NewRequestWithContext(w.ctx, http.MethodPut, w.session, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Range", cr)
		resp, err := w.b.do(req)
		if err == nil && retryableStatus(resp.StatusCode) {
			err = gcsError(resp)
			resp.Body.Close()
		}
		if err != nil {
			if w.ctx.Err() != nil || tries >= w.b.limits.Attempts {
				return err
			}
			if err := sleep(w.ctx, w.b.limits.backoff(tries)); err != nil {
				return err
			}
			query, tries = true, tries+1
			continue
		}
		query = false
		switch {
		case last && (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated):
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, gcsErrorBody))
			resp.Body.Close()
			w.sent, w.buf = end, w.buf[:0]
			return nil
		case resp.StatusCode == http.StatusPermanentRedirect: // 308: the service wants more
			resp.Body.Close()
			// Range says what the service holds (bytes=0-N); it may have kept less than
			// was sent, and the rest goes again.
			held := int64(0)
			if r := resp.Header.Get("Range"); r != "" {
				_, hi, ok := strings.Cut(strings.TrimPrefix(r, "bytes="), "-")
				n, err := strconv.ParseInt(hi, 10, 64)
				if !ok || err != nil {
					return fmt.Errorf("the resumable upload answered an unreadable Range %q", r)
				}
				held = n + 1
			}
			if held < w.sent || held > end {
				return fmt.Errorf("the resumable upload holds %d bytes, %d were sent", held, end)
			}
			w.buf = append(w.buf[:0], w.buf[held-w.sent:]...)
			w.sent = held
			if !last && len(w.buf) < cap(w.buf) {
				return nil
			}
		default:
			defer resp.Body.Close()
			return gcsError(resp)
		}
	}
}

// retryableStatus reports whether a response's status is worth another try.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// gcsError reads the JSON API's error response ({"error": {"code", "message"}}); a body
// of another shape gives its first line.
func gcsError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, gcsErrorBody))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil {
		msg = e.Error.Message
	}
	if msg == "" {
		msg, _, _ = strings.Cut(strings.TrimSpace(string(body)), "\n")
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &serviceError{status: resp.StatusCode, notFound: resp.StatusCode == http.StatusNotFound, cause: msg + " (HTTP " + strconv.Itoa(resp.StatusCode) + ")"}
}

// closeIdle closes the bucket's idle connections (Stores.Close).
func (b *gcsBucket) closeIdle() { b.client.CloseIdleConnections() }
