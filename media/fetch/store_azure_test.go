package fetch

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmafx/vmafx/internal/testutil"
)

// The Azure tests run Stores against fakeAzure, an httptest server that speaks the part
// of the Blob Storage REST API the Azure SDK uses for these calls (Get Blob with x-ms-range
// and If-Match, Put Block and Put Block List, Delete Blob), addressed as a local emulator
// (AZURE_STORAGE_DOMAIN 127.0.0.1:port). It is a fake: Azurite, the emulator, needs
// Node.js, which this repository's tests do not run.

type azureBlob struct {
	data        []byte
	etag        string
	contentType string
}

type fakeAzure struct {
	srv *httptest.Server

	mu       sync.Mutex
	blobs    map[string]*azureBlob // container/blob
	blocks   map[string][]byte     // block ID
	n        int
	auth     []string
	cutAfter int
	gets     int
}

func newFakeAzure(t *testing.T) *fakeAzure {
	f := &fakeAzure{blobs: map[string]*azureBlob{}, blocks: map[string][]byte{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAzure) put(name string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	f.blobs[name] = &azureBlob{data: data, etag: fmt.Sprintf(`"0x8D%d"`, f.n)}
}

func azureFail(w http.ResponseWriter, status int, code string) {
	w.Header().Set("x-ms-error-code", code)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, code)
}

func (f *fakeAzure) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	// /acct/container/blob
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)
	if len(parts) != 2 || parts[0] != "acct" {
		azureFail(w, http.StatusBadRequest, "InvalidUri")
		return
	}
	name := parts[1]
	if strings.HasPrefix(name, "locked/") {
		azureFail(w, http.StatusForbidden, "AuthenticationFailed")
		return
	}
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodGet:
		f.gets++
		b, ok := f.blobs[name]
		if !ok {
			azureFail(w, http.StatusNotFound, "BlobNotFound")
			return
		}
		if m := r.Header.Get("If-Match"); m != "" && m != b.etag {
			azureFail(w, http.StatusPreconditionFailed, "ConditionNotMet")
			return
		}
		off := 0
		if rg := r.Header.Get("x-ms-range"); rg != "" {
			v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
			if err != nil {
				azureFail(w, http.StatusBadRequest, "InvalidRange")
				return
			}
			off = v
		}
		body := b.data[off:]
		w.Header().Set("ETag", b.etag)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("Last-Modified", time.Unix(1, 0).UTC().Format(http.TimeFormat))
		w.Header().Set("x-ms-blob-type", "BlockBlob")
		status := http.StatusOK
		if r.Header.Get("x-ms-range") != "" {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, len(b.data)-1, len(b.data)))
			status = http.StatusPartialContent
		}
		if f.cutAfter > 0 && f.cutAfter < len(body) {
			cut := f.cutAfter
			f.cutAfter = 0
			w.WriteHeader(status)
			_, _ = w.Write(body[:cut])
			w.(http.Flusher).Flush()
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	case r.Method == http.MethodPut && q.Get("comp") == "block":
		data, _ := io.ReadAll(r.Body)
		f.blocks[q.Get("blockid")] = data
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodPut && q.Get("comp") == "blocklist":
		var list struct {
			Latest []string `xml:"Latest"`
		}
		if err := xml.NewDecoder(r.Body).Decode(&list); err != nil {
			azureFail(w, http.StatusBadRequest, "InvalidXmlDocument")
			return
		}
		var data []byte
		for _, id := range list.Latest {
			data = append(data, f.blocks[id]...)
		}
		f.n++
		f.blobs[name] = &azureBlob{data: data, etag: fmt.Sprintf(`"0x8D%d"`, f.n), contentType: r.Header.Get("x-ms-blob-content-type")}
		w.Header().Set("ETag", f.blobs[name].etag)
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodPut:
		// Put Blob: one request for a whole blob.
		data, _ := io.ReadAll(r.Body)
		f.n++
		f.blobs[name] = &azureBlob{data: data, etag: fmt.Sprintf(`"0x8D%d"`, f.n), contentType: r.Header.Get("x-ms-blob-content-type")}
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodDelete:
		if _, ok := f.blobs[name]; !ok {
			azureFail(w, http.StatusNotFound, "BlobNotFound")
			return
		}
		delete(f.blobs, name)
		w.WriteHeader(http.StatusAccepted)
	default:
		azureFail(w, http.StatusMethodNotAllowed, "UnsupportedHttpVerb")
	}
}

func azureStores(t *testing.T, f *fakeAzure, extra map[string]string) *Stores {
	t.Helper()
	keys := map[string]string{KeyAzureAccount: "acct", KeyAzureDomain: strings.TrimPrefix(f.srv.URL, "http://"), KeyAzureProtocol: "http"}
	for k, v := range extra {
		keys[k] = v
	}
	s := NewStores(StoreOptions{CredentialsDir: testutil.CredentialsDir(t, keys),
		Limits: HTTPOptions{Timeout: 5 * time.Second, Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}})
	t.Cleanup(func() { s.Close() })
	return s
}

// A read that breaks off is resumed at its offset with If-Match on the first read's ETag.
func TestAzureFetchResumes(t *testing.T) {
	f := newFakeAzure(t)
	data := bytes.Repeat([]byte("azure blob bytes"), 1<<16)
	f.put("clips/videos/ref.mkv", data)
	f.cutAfter = 200 << 10
	obj, err := azureStores(t, f, nil).Open(t.Context(), mustURL(t, "azure://clips/videos/ref.mkv"))
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Size != int64(len(data)) || !bytes.Equal(got, data) {
		t.Fatalf("size %d, read %d bytes; want the %d stored", obj.Size, len(got), len(data))
	}
	if f.gets < 2 {
		t.Errorf("%d reads, want a resume: the test proves nothing", f.gets)
	}
}

func TestAzureFailures(t *testing.T) {
	f := newFakeAzure(t)
	s := azureStores(t, f, nil)
	_, err := s.Open(t.Context(), mustURL(t, "azure://clips/absent.mkv"))
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "BlobNotFound (HTTP 404)") {
		t.Errorf("missing blob: %v, want ErrNotFound naming BlobNotFound", err)
	}
	f.put("locked/a.mkv", []byte("x"))
	_, err = azureStores(t, f, map[string]string{KeyAzureSASToken: "sv=2022-11-02&sig=c2VjcmV0"}).Open(t.Context(), mustURL(t, "azure://locked/a.mkv"))
	if err == nil || !strings.Contains(err.Error(), "access denied (check the credentials") || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("refused: %v, want access denied without the SAS signature", err)
	}
}

// An output of two blocks arrives whole with its content type; removing it twice is no
// error; a shared key signs the requests.
func TestAzureStoreAndDelete(t *testing.T) {
	f := newFakeAzure(t)
	s := azureStores(t, f, map[string]string{KeyAzureKey: "c2VjcmV0LWtleQ=="})
	data := make([]byte, azureBlockSize+4321)
	for i := range data {
		data[i] = byte(i * 13)
	}
	u := mustURL(t, "azure://results/out/scores.json")
	w, err := s.Create(t.Context(), u, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	b := f.blobs["results/out/scores.json"]
	auth := append([]string(nil), f.auth...)
	f.mu.Unlock()
	if b == nil || !bytes.Equal(b.data, data) || b.contentType != "application/json" {
		t.Fatalf("stored %v", b != nil)
	}
	for _, a := range auth {
		if !strings.HasPrefix(a, "SharedKey acct:") {
			t.Errorf("Authorization %q, want a shared key signature", a)
		}
	}
	for i := range 2 {
		if err := s.Delete(t.Context(), u); err != nil {
			t.Fatalf("delete %d: %v", i+1, err)
		}
	}
}
