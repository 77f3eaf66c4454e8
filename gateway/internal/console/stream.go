package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
)

// The job list's live stream: server-sent events of a namespace's jobs, from a watch
// made as the caller through the same impersonating client as every other page.
const (
	// maxStreams bounds the streams open at once over all sessions: each holds a watch
	// on the API server. Past it a list page refreshes itself instead.
	maxStreams = 256
)

// streams holds the open stream of each session: a session has one, and a newer one
// (the list opened again, in this tab or another) replaces it.
type streams struct {
	mu   sync.Mutex
	open map[string]*stream
}

type stream struct {
	stop     context.CancelFunc
	replaced atomic.Bool
}

// start registers a stream for key, ending the session's previous one; false when the
// console holds maxStreams already.
func (ss *streams) start(key string, stop context.CancelFunc) (*stream, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if old, ok := ss.open[key]; ok {
		old.replaced.Store(true)
		old.stop()
		delete(ss.open, key)
	}
	if len(ss.open) >= maxStreams {
		return nil, false
	}
	st := &stream{stop: stop}
	ss.open[key] = st
	return st, true
}

// end forgets st, unless a newer stream of the session has replaced it.
func (ss *streams) end(key string, st *stream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.open[key] == st {
		delete(ss.open, key)
	}
}

// jobEvent is one row of the list: its HTML, rendered by rows.html as the page's own
// rows, or its removal.
type jobEvent struct {
	Name    string `json:"name"`
	Created string `json:"created,omitempty"`
	Row     string `json:"row,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

// jobStream sends the namespace's jobs as events: each job of a first list, then every
// change the watch sees ("job"), a comment every heartbeat, "end" when the stream's
// time (jobs.MaxWait) is up (the browser opens it again) and "replaced" when the
// session opened a newer one. The watch ends with the request.
func (c *Console) jobStream(w http.ResponseWriter, r *http.Request, s session) {
	ctx, cancel := context.WithTimeout(r.Context(), jobs.MaxWait)
	defer cancel()
	st, ok := c.streams.start(s.CSRF, cancel)
	if !ok {
		http.Error(w, "too many live lists are open; the page refreshes itself instead", http.StatusServiceUnavailable)
		return
	}
	defer c.streams.end(s.CSRF, st)

	list, err := c.store.List(ctx, s.User, s.Namespace, jobs.ListOptions{Limit: listLimit})
	if err != nil {
		http.Error(w, err.Error(), statusCode(err))
		return
	}
	wt, err := c.store.WatchAll(ctx, s.User, s.Namespace, list.ResourceVersion)
	if err != nil {
		http.Error(w, err.Error(), statusCode(err))
		return
	}
	defer wt.Stop()

	serve.Extend(w, jobs.MaxWait+30*time.Second)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: pass the events on as they come
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(format string, a ...any) bool {
		if _, err := fmt.Fprintf(w, format, a...); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	now := c.now()
	send := func(j *vmafxv1.VmafxJob, deleted bool) bool {
		ev := jobEvent{Name: j.Name, Deleted: deleted}
		if !deleted {
			row := rowOf(now, j)
			var b bytes.Buffer
			if err := c.pages["rows"].ExecuteTemplate(&b, "row", row); err != nil {
				return false
			}
			ev.Created, ev.Row = row.Created, b.String()
		}
		data, err := json.Marshal(ev)
		if err != nil {
			return false
		}
		return write("event: job\ndata: %s\n\n", data)
	}
	// The retry field: a browser whose stream drops opens it again after 2 s.
	if !write("retry: 2000\n\n") {
		return
	}
	for i := range list.Items {
		if !send(&list.Items[i], false) {
			return
		}
	}
	// stopped tells the browser why the stream ends once ctx is done: a newer stream of
	// the session replaced it, or its time is up (unless the browser itself went).
	stopped := func() {
		if st.replaced.Load() {
			write("event: replaced\ndata: {}\n\n")
		} else if r.Context().Err() == nil {
			write("event: end\ndata: {}\n\n")
		}
	}
	tick := time.NewTicker(c.opts.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			stopped()
			return
		case <-tick.C:
			if !write(": heartbeat\n\n") {
				return
			}
		case ev, ok := <-wt.ResultChan():
			if ctx.Err() != nil {
				// The watch closes with ctx, and may be seen closed first.
				stopped()
				return
			}
			if !ok || ev.Type == watch.Error {
				// The watch closed or its resourceVersion expired: the browser opens
				// the stream again, which lists afresh.
				write("event: end\ndata: {}\n\n")
				return
			}
			j, isJob := ev.Object.(*vmafxv1.VmafxJob)
			if !isJob || ev.Type == watch.Bookmark {
				continue
			}
			now = c.now()
			if !send(j, ev.Type == watch.Deleted) {
				return
			}
		}
	}
}
