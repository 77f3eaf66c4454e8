package fetch

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmafx/vmafx/internal/testutil"
)

// The GCS tests run Stores against fakeGCS, an httptest server that speaks the part of
// the Cloud Storage JSON API the client uses (media GET with Range and
// ifGenerationMatch, resumable uploads, DELETE, the OAuth token endpoint of a service
// account key). It is a fake: no Cloud Storage server or emulator runs here, and the
// client was never tested against the real service by this repository. It follows the
// documented protocol (https://cloud.google.com/storage/docs/json_api), including a 308
// that keeps less than a chunk, which the real service may answer.

type gcsObject struct {
	data        []byte
	generation  int64
	contentType string
}

type fakeGCS struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	objects  map[string]*gcsObject // bucket/object
	sessions map[string]*gcsSession
	gen      int64
	auth     []string // the Authorization header of every storage request
	// cutAfter, when above 0, breaks the body of the next media GET after so many bytes.
	cutAfter int
	// partial makes the first non-final chunk of every upload keep only half of it.
	partial bool
	// changeOnResume replaces the object when a ranged read arrives.
	changeOnResume bool
	// lose keeps the next chunk that is not the last and answers 503, as a response
	// lost on the way would look to the client.
	lose bool
	gets int
}

type gcsSession struct {
	name, contentType string
	data              []byte
	partialDone       bool
}

func newFakeGCS(t *testing.T) *fakeGCS {
	f := &fakeGCS{t: t, objects: map[string]*gcsObject{}, sessions: map[string]*gcsSession{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGCS) put(bucket, name string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	f.objects[bucket+"/"+name] = &gcsObject{data: data, generation: f.gen}
}

func (f *fakeGCS) object(bucket, name string) *gcsObject {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objects[bucket+"/"+name]
}

func (f *fakeGCS) authorizations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auth...)
}

func gcsFail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

func (f *fakeGCS) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	if path == "/token" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token": "token-from-the-key", "token_type": "Bearer", "expires_in": 3600}`))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if r.Header.Get("Authorization") == "Bearer denied" {
		gcsFail(w, http.StatusForbidden, "caller does not have storage.objects.get access")
		return
	}
	switch {
	case strings.HasPrefix(path, "/storage/v1/b/") && strings.Contains(path, "/o/"):
		rest := strings.TrimPrefix(path, "/storage/v1/b/")
		b, o, _ := strings.Cut(rest, "/o/")
		bucket, err1 := url.PathUnescape(b)
		name, err2 := url.PathUnescape(o)
		if err1 != nil || err2 != nil {
			gcsFail(w, http.StatusBadRequest, "bad path")
			return
		}
		switch r.Method {
		case http.MethodGet:
			f.get(w, r, bucket, name)
		case http.MethodDelete:
			if _, ok := f.objects[bucket+"/"+name]; !ok {
				gcsFail(w, http.StatusNotFound, "No such object: "+bucket+"/"+name)
				return
			}
			delete(f.objects, bucket+"/"+name)
			w.WriteHeader(http.StatusNoContent)
		default:
			gcsFail(w, http.StatusMethodNotAllowed, r.Method)
		}
	case strings.HasPrefix(path, "/upload/storage/v1/b/") && r.Method == http.MethodPost:
		if r.URL.Query().Get("uploadType") != "resumable" {
			gcsFail(w, http.StatusBadRequest, "want uploadType=resumable")
			return
		}
		bucket, _ := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(path, "/upload/storage/v1/b/"), "/o"))
		id := strconv.Itoa(len(f.sessions) + 1)
		f.sessions[id] = &gcsSession{name: bucket + "/" + r.URL.Query().Get("name"), contentType: r.Header.Get("X-Upload-Content-Type")}
		w.Header().Set("Location", f.srv.URL+"/session/"+id)
		w.WriteHeader(http.StatusOK)
	case strings.HasPrefix(path, "/session/") && r.Method == http.MethodPut:
		f.chunk(w, r, f.sessions[strings.TrimPrefix(path, "/session/")])
	default:
		gcsFail(w, http.StatusNotFound, "no route "+r.Method+" "+path)
	}
}

func (f *fakeGCS) get(w http.ResponseWriter, r *http.Request, bucket, name string) {
	f.gets++
	obj, ok := f.objects[bucket+"/"+name]
	if !ok {
		gcsFail(w, http.StatusNotFound, "No such object: "+bucket+"/"+name)
		return
	}
	if r.URL.Query().Get("alt") != "media" {
		gcsFail(w, http.StatusBadRequest, "want alt=media")
		return
	}
	off := int64(0)
	if rg := r.Header.Get("Range"); rg != "" {
		v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"), 10, 64)
		if err != nil {
			gcsFail(w, http.StatusBadRequest, "bad Range "+rg)
			return
		}
		off = v
		if f.changeOnResume {
			f.gen++
			obj.generation = f.gen
		}
	}
	if g := r.URL.Query().Get("ifGenerationMatch"); g != "" && g != strconv.FormatInt(obj.generation, 10) {
		gcsFail(w, http.StatusPreconditionFailed, "At least one of the pre-conditions you specified did not hold.")
		return
	}
	body := obj.data[off:]
	w.Header().Set("X-Goog-Generation", strconv.FormatInt(obj.generation, 10))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	status := http.StatusOK
	if off > 0 {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, len(obj.data)-1, len(obj.data)))
		status = http.StatusPartialContent
	}
	if f.cutAfter > 0 && f.cutAfter < len(body) {
		cut := f.cutAfter
		f.cutAfter = 0
		w.WriteHeader(status)
		_, _ = w.Write(body[:cut])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (f *fakeGCS) chunk(w http.ResponseWriter, r *http.Request, s *gcsSession) {
	if s == nil {
		gcsFail(w, http.StatusNotFound, "no such upload session")
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		gcsFail(w, http.StatusBadRequest, err.Error())
		return
	}
	// Content-Range: bytes FIRST-LAST/TOTAL, or bytes */TOTAL for an empty last chunk.
	spec, total, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Content-Range"), "bytes "), "/")
	if spec != "*" {
		first, _, _ := strings.Cut(spec, "-")
		if n, err := strconv.Atoi(first); err != nil || n != len(s.data) {
			gcsFail(w, http.StatusBadRequest, fmt.Sprintf("chunk at %s, the session holds %d", first, len(s.data)))
			return
		}
	}
	if total == "*" && f.partial && !s.partialDone {
		// Keep half, as the service may: the client must send the rest again.
		s.partialDone = true
		data = data[:len(data)/2]
	}
	if total == "*" && len(data)%(256<<10) != 0 {
		gcsFail(w, http.StatusBadRequest, "a chunk that is not the last must be a multiple of 256 KiB")
		return
	}
	s.data = append(s.data, data...)
	if total == "*" && len(data) > 0 && f.lose {
		f.lose = false
		gcsFail(w, http.StatusServiceUnavailable, "backend error")
		return
	}
	if total == "*" {
		if len(s.data) > 0 {
			w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", len(s.data)-1))
		}
		w.WriteHeader(http.StatusPermanentRedirect)
		return
	}
	if n, err := strconv.Atoi(total); err != nil || n != len(s.data) {
		gcsFail(w, http.StatusBadRequest, fmt.Sprintf("total %s, the session holds %d", total, len(s.data)))
		return
	}
	f.gen++
	f.objects[s.name] = &gcsObject{data: s.data, generation: f.gen, contentType: s.contentType}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(`{"kind": "storage#object"}`))
}

// gcsStores returns Stores reaching f, with the credentials keys.
func gcsStores(t *testing.T, f *fakeGCS, keys map[string]string, defaults bool) *Stores {
	t.Helper()
	s := NewStores(StoreOptions{CredentialsDir: testutil.CredentialsDir(t, keys), DefaultCredentials: defaults,
		Limits: HTTPOptions{Timeout: 5 * time.Second, Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}})
	s.gcsEndpoint = f.srv.URL
	t.Cleanup(func() { s.Close() })
	return s
}

// serviceAccountKey is a service account key file whose token endpoint is f's.
func serviceAccountKey(t *testing.T, f *fakeGCS) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "p", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "scorer@p.iam.gserviceaccount.com", "client_id": "1", "token_uri": f.srv.URL + "/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := ParseURI(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A read that breaks off is resumed at its offset, naming the generation the first read
// saw, and reads the same bytes; the object's name may hold slashes and spaces.
func TestGCSFetchResumes(t *testing.T) {
	f := newFakeGCS(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	f.put("clips", "videos/ref clip.mkv", data)
	f.cutAfter = 300 << 10
	obj, err := gcsStores(t, f, nil, false).Open(t.Context(), mustURL(t, "gs://clips/videos/ref%20clip.mkv"))
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if obj.Size != int64(len(data)) {
		t.Errorf("size %d, want %d", obj.Size, len(data))
	}
	got, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes that differ from the %d stored", len(got), len(data))
	}
	if f.gets < 2 {
		t.Errorf("%d reads, want a second one for the resume: the test proves nothing", f.gets)
	}
	for _, a := range f.authorizations() {
		if a != "" {
			t.Errorf("Authorization %q on a request without credentials; want none", a)
		}
	}
}

// A resume that finds another generation fails rather than splice two objects.
func TestGCSFetchObjectChanged(t *testing.T) {
	f := newFakeGCS(t)
	f.put("clips", "a.mkv", bytes.Repeat([]byte{7}, 1<<20))
	f.cutAfter, f.changeOnResume = 100<<10, true
	obj, err := gcsStores(t, f, nil, false).Open(t.Context(), mustURL(t, "gs://clips/a.mkv"))
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	_, err = io.ReadAll(obj)
	if err == nil || !strings.Contains(err.Error(), "the object changed since the transfer began") {
		t.Fatalf("read: %v, want the object changed", err)
	}
}

func TestGCSFetchFailures(t *testing.T) {
	f := newFakeGCS(t)
	f.put("clips", "present.mkv", []byte("data"))
	_, err := gcsStores(t, f, nil, false).Open(t.Context(), mustURL(t, "gs://clips/absent.mkv"))
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "No such object: clips/absent.mkv (HTTP 404)") {
		t.Errorf("missing object: %v, want ErrNotFound with the service's message", err)
	}
	if f.gets != 1 {
		t.Errorf("%d reads of a missing object, want 1: a 404 is not retried", f.gets)
	}
	s := gcsStores(t, f, nil, false)
	_, err = s.Open(t.Context(), mustURL(t, "gs://clips/present.mkv"))
	if err != nil {
		t.Fatalf("anonymous read of a readable object: %v", err)
	}
	// A caller whose requests the bucket refuses.
	denied := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer denied")
		return http.DefaultTransport.RoundTrip(r)
	})}
	b := &gcsBucket{name: "clips", endpoint: f.srv.URL, client: denied}
	_, _, err = b.read(t.Context(), "present.mkv", 0, "")
	if cause := s.storeCause(err); !strings.Contains(cause.Error(), "access denied to an anonymous request") || !permanent(err) {
		t.Errorf("403: %v (permanent %v), want access denied, not retried", cause, permanent(err))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// An output of several chunks, one of which the service keeps only in part and one
// whose answer is lost, arrives whole with its content type; so does an empty one.
func TestGCSStore(t *testing.T) {
	f := newFakeGCS(t)
	f.partial, f.lose = true, true
	s := gcsStores(t, f, nil, false)
	data := make([]byte, 2*gcsChunk+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"out/scores.json", data}, {"out/empty.json", nil}} {
		w, err := s.Create(t.Context(), mustURL(t, "gs://results/"+tc.name), "application/json")
		if err != nil {
			t.Fatal(err)
		}
		// Odd write sizes, as an encoder writes.
		for rest := tc.data; len(rest) > 0; {
			n := min(len(rest), 1000003)
			if _, err := w.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: Close: %v", tc.name, err)
		}
		obj := f.object("results", tc.name)
		if obj == nil || !bytes.Equal(obj.data, tc.data) || obj.contentType != "application/json" {
			t.Fatalf("%s: stored %v", tc.name, obj != nil)
		}
	}
	if f.lose {
		t.Error("no chunk's answer was lost: the test proves nothing")
	}
}

// Delete removes an object; removing it again is no error.
func TestGCSDelete(t *testing.T) {
	f := newFakeGCS(t)
	f.put("results", "out/part-000", []byte("part"))
	s := gcsStores(t, f, nil, false)
	for i := range 2 {
		if err := s.Delete(t.Context(), mustURL(t, "gs://results/out/part-000")); err != nil {
			t.Fatalf("delete %d: %v", i+1, err)
		}
	}
	if f.object("results", "out/part-000") != nil {
		t.Error("the object is still there")
	}
}

// The credentials' service account key signs every request with its token; without
// credentials the request is anonymous even where GOOGLE_APPLICATION_CREDENTIALS names a
// key (the node's or the ServiceAccount's rights), unless the default chain is on.
func TestGCSCredentials(t *testing.T) {
	f := newFakeGCS(t)
	f.put("clips", "a.mkv", []byte("data"))
	key := serviceAccountKey(t, f)
	envKey := filepath.Join(t.TempDir(), "adc.json")
	if err := os.WriteFile(envKey, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", envKey)
	for _, tc := range []struct {
		name     string
		keys     map[string]string
		defaults bool
		want     string
	}{
		{"the job's key", map[string]string{KeyGCSCredentialsJSON: key}, false, "Bearer token-from-the-key"},
		{"none, default chain off", nil, false, ""},
		{"none, default chain on", nil, true, "Bearer token-from-the-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			f.auth = nil
			f.mu.Unlock()
			obj, err := gcsStores(t, f, tc.keys, tc.defaults).Open(t.Context(), mustURL(t, "gs://clips/a.mkv"))
			if err != nil {
				t.Fatal(err)
			}
			obj.Close()
			if got := f.authorizations(); len(got) != 1 || got[0] != tc.want {
				t.Errorf("Authorization %q, want %q", got, tc.want)
			}
		})
	}
}
