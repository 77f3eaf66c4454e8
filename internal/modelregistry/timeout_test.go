package modelregistry

import (
	"net"
	"testing"
	"time"
)

// TestSilentRegistryTimesOut: a registry that accepts connections and never answers
// fails each call within the client's Timeout instead of holding it forever.
func TestSilentRegistryTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	host := ln.Addr().String()
	c := &Client{PlainHTTP: []string{host}, Timeout: 300 * time.Millisecond}
	ref := Reference{Registry: host, Repository: "models/m", Reference: "v1"}
	calls := map[string]func() error{
		"Pull": func() error { _, err := c.Pull(t.Context(), ref, false); return err },
		"Tags": func() error { _, err := c.Tags(t.Context(), ref, ""); return err },
		"Push": func() error { _, err := c.Push(t.Context(), ref, Version{Tag: "v2", Model: []byte("{}")}); return err },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if took := time.Since(start); err == nil || took > 5*time.Second {
			t.Errorf("%s: %v after %v; want an error within the 300 ms timeout", name, err, took.Round(time.Millisecond))
		}
	}
}
