package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Events writes server-sent events to a response. The first event answers 200 with the
// event-stream headers; until then (Started false) a handler can still answer an error
// of its own.
type Events struct {
	w       http.ResponseWriter
	flusher http.Flusher
	started bool
}

// NewEvents returns the event writer of w.
func NewEvents(w http.ResponseWriter) *Events {
	f, _ := w.(http.Flusher)
	return &Events{w: w, flusher: f}
}

// Started says whether an event was sent, and with it the response's status.
func (e *Events) Started() bool { return e.started }

// Send writes one event, its value v as JSON, and flushes it.
func (e *Events) Send(event string, v any) error {
	if !e.started {
		e.w.Header().Set("Content-Type", "text/event-stream")
		e.w.Header().Set("Cache-Control", "no-cache")
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, data); err != nil {
		return err
	}
	if e.flusher != nil {
		e.flusher.Flush()
	}
	return nil
}
