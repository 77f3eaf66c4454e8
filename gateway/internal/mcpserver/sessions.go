package mcpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Session limits by default: a few agents per user, and a replica's memory bounded well
// below its limit (a session holds a few tens of KiB).
const (
	DefaultMaxSessionsPerUser = 10
	DefaultMaxSessions        = 1000
	DefaultSessionIdleTimeout = 5 * time.Minute
)

// SessionLimits bound the streamable HTTP transport's sessions.
type SessionLimits struct {
	// PerUser is the most sessions one user (as the TokenReview names it) holds open.
	PerUser int
	// Total is the most sessions the replica holds open.
	Total int
	// IdleTimeout closes a session that has received no request for this long (a wait
	// in progress counts as a request).
	IdleTimeout time.Duration
}

func (l SessionLimits) withDefaults() SessionLimits {
	if l.PerUser <= 0 {
		l.PerUser = DefaultMaxSessionsPerUser
	}
	if l.Total <= 0 {
		l.Total = DefaultMaxSessions
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultSessionIdleTimeout
	}
	return l
}

// sessionHeader is the streamable transport's session header.
const sessionHeader = "Mcp-Session-Id"

// sessions counts the open sessions per user and in all, and refuses a new one beyond
// either cap before the SDK allocates anything for it.
type sessions struct {
	server  *mcp.Server
	limits  SessionLimits
	metrics *Metrics

	mu     sync.Mutex
	total  int
	byUser map[string]int
}

// Open returns the number of sessions open (or being opened).
func (s *sessions) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// reserve takes a slot for user, or says which cap is full.
func (s *sessions) reserve(user string) (capName string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.byUser[user] >= s.limits.PerUser:
		return "user", false
	case s.total >= s.limits.Total:
		return "total", false
	}
	s.byUser[user]++
	s.total++
	if s.metrics != nil {
		s.metrics.sessions.Set(float64(s.total))
	}
	return "", true
}

func (s *sessions) release(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.byUser[user]--; s.byUser[user] <= 0 {
		delete(s.byUser, user)
	}
	if s.metrics != nil {
		s.metrics.sessions.Set(float64(s.total))
	}
}

// wrap serves next, which the bearer-token check has already let through: a POST without
// a session header opens a session, and takes a slot that is given back when the session
// closes (the client's DELETE, the idle timeout, a failed initialize or shutdown).
func (s *sessions) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(sessionHeader) != "" {
			next.ServeHTTP(w, r)
			return
		}
		user := ""
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			user = ti.UserID
		}
		if capName, ok := s.reserve(user); !ok {
			s.refuse(w, capName, user)
			return
		}
		next.ServeHTTP(w, r)
		id := w.Header().Get(sessionHeader)
		if id == "" {
			s.release(user)
			return
		}
		for ss := range s.server.Sessions() {
			if ss.ID() == id {
				go func() {
					_ = ss.Wait()
					s.release(user)
				}()
				return
			}
		}
		// Closed already (its initialize failed).
		s.release(user)
	})
}

// refuse answers a new session beyond a cap: 429 for the user's, 503 for the replica's,
// with a JSON-RPC error saying which (the request's id is not read: null).
func (s *sessions) refuse(w http.ResponseWriter, capName, user string) {
	if s.metrics != nil {
		s.metrics.refused.WithLabelValues(capName).Inc()
	}
	code, msg := http.StatusTooManyRequests, fmt.Sprintf("too many MCP sessions for user %q: at most %d per user; close one (DELETE with its Mcp-Session-Id) or wait until an idle one closes after %s",
		user, s.limits.PerUser, s.limits.IdleTimeout)
	if capName == "total" {
		code, msg = http.StatusServiceUnavailable, fmt.Sprintf("this MCP server holds its most sessions, %d; try again later", s.limits.Total)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32000, "message": msg, "data": map[string]any{"cap": capName}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(5))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
