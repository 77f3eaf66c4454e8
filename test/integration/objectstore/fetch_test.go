package objectstore_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/vmafx/vmafx/internal/testutil"
	"io"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vmafx/vmafx/media/fetch"
)

// rootKeys are the server's credentials as a job's Secret holds them.
func rootKeys() map[string]string {
	return map[string]string{
		fetch.KeyAWSAccessKeyID:     accessKey,
		fetch.KeyAWSSecretAccessKey: secretKey,
		fetch.KeyAWSRegion:          "us-east-1",
		fetch.KeyAWSPathStyle:       "true",
	}
}

// stores returns the fetcher under test for endpoint with the given credentials.
func stores(t *testing.T, endpoint string, keys map[string]string) *fetch.Stores {
	t.Helper()
	keys["AWS_ENDPOINT_URL"] = endpoint
	s := fetch.NewStores(fetch.StoreOptions{
		CredentialsDir: testutil.CredentialsDir(t, keys),
		Limits:         fetch.HTTPOptions{Timeout: 5 * time.Second, Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond},
	})
	t.Cleanup(func() { s.Close() })
	return s
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := fetch.ParseURI(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// randomData is incompressible test content of n bytes.
func randomData(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestFetch(t *testing.T) {
	bucket := s3.bucket(t)
	data := randomData(3<<20 + 17)
	s3.put(t, bucket, "videos/ref clip.mkv", data)
	obj, err := stores(t, s3.endpoint(), rootKeys()).Open(context.Background(), mustParse(t, "s3://"+bucket+"/videos/ref%20clip.mkv"))
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
		t.Fatalf("read %d bytes that differ from the %d uploaded", len(got), len(data))
	}
}

// A connection cut in the middle of the body is resumed at its offset with a ranged
// read, and the bytes delivered are the object's.
func TestFetchResumesACutConnection(t *testing.T) {
	bucket := s3.bucket(t)
	data := randomData(4 << 20)
	s3.put(t, bucket, "big.bin", data)
	proxy := startCutProxy(t, s3.addr, 1<<20)
	obj, err := stores(t, proxy.endpoint(), rootKeys()).Open(context.Background(), mustParse(t, "s3://"+bucket+"/big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !proxy.cut.Load() {
		t.Fatal("the proxy never cut a connection: the test proves nothing")
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes that differ from the %d uploaded", len(got), len(data))
	}
	if n := proxy.conns.Load(); n < 2 {
		t.Errorf("%d connections, want a second one for the resume", n)
	}
}

func TestFetchFailures(t *testing.T) {
	bucket := s3.bucket(t)
	s3.put(t, bucket, "present.bin", []byte("data"))
	wrong := rootKeys()
	wrong[fetch.KeyAWSSecretAccessKey] = "wrong-secret-value-must-not-leak"
	unknown := rootKeys()
	unknown[fetch.KeyAWSAccessKeyID] = "NOSUCHKEYID"
	tests := []struct {
		name     string
		uri      string
		keys     map[string]string
		want     error
		wantText string
		secret   string
	}{
		{name: "missing key", uri: "s3://" + bucket + "/absent.bin", keys: rootKeys(), want: fetch.ErrNotFound, wantText: "not found"},
		{name: "missing bucket", uri: "s3://no-such-bucket-here/x.bin", keys: rootKeys(), want: fetch.ErrNotFound, wantText: "not found"},
		{name: "wrong secret", uri: "s3://" + bucket + "/present.bin", keys: wrong, wantText: "access denied", secret: "wrong-secret-value-must-not-leak"},
		// versitygw answers an unknown key with 404 XAdminUserNotFound (AWS: 403 InvalidAccessKeyId).
		{name: "unknown access key", uri: "s3://" + bucket + "/present.bin", keys: unknown, wantText: "access key", secret: secretKey},
		{name: "no key in the URI", uri: "s3://" + bucket, keys: rootKeys(), wantText: "want s3://BUCKET/KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := stores(t, s3.endpoint(), tc.keys).Open(context.Background(), mustParse(t, tc.uri))
			var fe *fetch.Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *fetch.Error", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.wantText) || strings.Contains(msg, "\n") {
				t.Errorf("err = %q, want one line mentioning %q", msg, tc.wantText)
			}
			if tc.secret != "" && strings.Contains(msg, tc.secret) {
				t.Errorf("err = %q quotes the secret", msg)
			}
			t.Logf("%s: %v", tc.name, err)
		})
	}
}

func TestStore(t *testing.T) {
	bucket := s3.bucket(t)
	s := stores(t, s3.endpoint(), rootKeys())
	w, err := s.Create(context.Background(), mustParse(t, "s3://"+bucket+"/out/scores.json"), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(`{"frames": []}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := s3.get(t, bucket, "out/scores.json"); string(got) != `{"frames": []}` {
		t.Errorf("stored %q", got)
	}
}

// Delete removes an object; removing it again, as a retried merge removes its chunk
// parts, is no error.
func TestDelete(t *testing.T) {
	bucket := s3.bucket(t)
	s3.put(t, bucket, "out/scores.json.chunk-000", []byte("part"))
	s := stores(t, s3.endpoint(), rootKeys())
	u := mustParse(t, "s3://"+bucket+"/out/scores.json.chunk-000")
	for i := range 2 {
		if err := s.Delete(context.Background(), u); err != nil {
			t.Fatalf("delete %d: %v", i+1, err)
		}
	}
	if keys := s3.keys(t, bucket, "out/"); len(keys) != 0 {
		t.Errorf("the bucket still holds %v", keys)
	}
	keys := rootKeys()
	keys[fetch.KeyAWSSecretAccessKey] = secretKey + "-but-wrong"
	s3.put(t, bucket, "out/kept", []byte("x"))
	err := stores(t, s3.endpoint(), keys).Delete(context.Background(), mustParse(t, "s3://"+bucket+"/out/kept"))
	if err == nil || !strings.Contains(err.Error(), "access denied") || strings.Contains(err.Error(), "-but-wrong") {
		t.Errorf("delete with a wrong key: %v, want access denied without the secret", err)
	}
}
