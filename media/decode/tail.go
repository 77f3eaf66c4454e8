package decode

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
)

// Bounds on what is kept of a program's stderr and quoted in errors.
const (
	tailLines   = 8
	tailLineMax = 512
	quoteMax    = 400
)

// tail keeps the last lines a program writes to stderr.
type tail struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
}

func newTail() *tail { return &tail{} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			t.partial = append(t.partial, p[:min(len(p), tailLineMax-len(t.partial))]...)
			break
		}
		t.partial = append(t.partial, p[:min(i, tailLineMax-len(t.partial))]...)
		t.flush()
		p = p[i+1:]
	}
	return n, nil
}

// flush ends the partial line; the caller holds t.mu.
func (t *tail) flush() {
	if line := strings.TrimSpace(string(t.partial)); line != "" {
		t.lines = append(t.lines, line)
		if len(t.lines) > tailLines {
			t.lines = t.lines[len(t.lines)-tailLines:]
		}
	}
	t.partial = t.partial[:0]
}

// addressRE matches the context addresses in ffmpeg's log prefixes,
// "[h264 @ 0x55d0c0a0b2c0]", which change on every run.
var addressRE = regexp.MustCompile(` @ 0x[0-9a-f]+\]`)

// noise are the closing lines ffmpeg adds after the cause.
var noise = []string{"Conversion failed!", "Exiting normally", "received signal"}

// quote returns the last meaningful lines on one line, at most quoteMax
// bytes, later lines first cut: "[h264] Invalid NAL unit size (723 > 710); ...".
func (t *tail) quote() string {
	t.mu.Lock()
	t.flush()
	lines := append([]string(nil), t.lines...)
	t.mu.Unlock()
	var kept []string
	for _, l := range lines {
		skip := false
		for _, n := range noise {
			skip = skip || strings.Contains(l, n)
		}
		if !skip {
			kept = append(kept, addressRE.ReplaceAllString(l, "]"))
		}
	}
	if len(kept) > 3 {
		kept = kept[len(kept)-3:]
	}
	s := strings.Join(kept, "; ")
	if len(s) > quoteMax {
		s = s[:quoteMax] + "…"
	}
	return s
}

// failure is the error for a program that exited with err.
func (t *tail) failure(prog string, err error) error {
	var exit *exec.ExitError
	status := err.Error()
	if errors.As(err, &exit) {
		status = exit.ProcessState.String() // "exit status 1", "signal: killed"
	}
	if q := t.quote(); q != "" {
		return fmt.Errorf("%w: %s: %s (%s)", ErrUndecodable, prog, q, status)
	}
	return fmt.Errorf("%w: %s: %s", ErrUndecodable, prog, status)
}
