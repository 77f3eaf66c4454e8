package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

// The S3 and Azure writers stream through pipeUpload: what is written arrives whole,
// a failed upload's error reaches the next Write and Close, and a cancelled context ends
// an upload that waits for bytes.
func TestPipeUpload(t *testing.T) {
	var got bytes.Buffer
	w := newPipeUpload(t.Context(), func(body io.Reader) error { _, err := io.Copy(&got, body); return err })
	for _, p := range []string{"one ", "", "two"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil || got.String() != "one two" {
		t.Fatalf("Close: %v, uploaded %q", err, got.String())
	}

	refused := errors.New("AccessDenied")
	w = newPipeUpload(t.Context(), func(body io.Reader) error {
		_, _ = body.Read(make([]byte, 1))
		return refused
	})
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = w.Write([]byte("data"))
	}
	if !errors.Is(err, refused) {
		t.Errorf("Write after a failed upload: %v, want %v", err, refused)
	}
	if err := w.Close(); !errors.Is(err, refused) {
		t.Errorf("Close: %v, want %v", err, refused)
	}

	ctx, cancel := context.WithCancel(t.Context())
	w = newPipeUpload(ctx, func(body io.Reader) error { _, err := io.Copy(io.Discard, body); return err })
	if _, err := w.Write([]byte("some")); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-w.done // the upload ends without Close
	if !errors.Is(w.err, context.Canceled) {
		t.Errorf("upload error %v, want context.Canceled", w.err)
	}
}
