package job

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vmafx/vmafx/operator/internal/attempt"
)

// seenStates remembers, per worker Pod, the state the operator's cache showed of it last
// and when the cache first showed it so, on this process's clock. A state is shown once it
// has lasted its delay (showAfter) counted from the Pod's own timestamps, and also from
// when this operator first saw it: a Pod watch that lags the API server by seconds (a
// burst's apply floods it) otherwise makes states that ended long ago look due, and each
// such state costs a read of the Pod (podBehind) to find it over. Counted from when the
// cache showed it, the check waits as long as the watch lags, and by then the cache
// shows what followed. The node lifecycle controller times node heartbeats by when it
// saw them, for the same reason. Kept in memory only: after a restart a state waits its
// delay once more before it is shown, which changes no outcome.
type seenStates struct {
	mu sync.Mutex
	m  map[types.UID]seenState
}

type seenState struct {
	state attempt.State
	bound bool
	at    time.Time
}

// seenForget bounds how long an entry of a Pod no reconcile has forgotten is kept: far
// longer than any delay it times.
const seenForget = time.Hour

// since returns when the Pod uid was first seen in state (bound or not), now if this is
// the first time.
func (s *seenStates) since(uid types.UID, state attempt.State, bound bool, now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[uid]; ok && e.state == state && e.bound == bound {
		return e.at
	}
	if s.m == nil {
		s.m = map[types.UID]seenState{}
	}
	if n := len(s.m); n >= 4096 && n%1024 == 0 {
		for k, e := range s.m {
			if now.Sub(e.at) >= seenForget {
				delete(s.m, k)
			}
		}
	}
	s.m[uid] = seenState{state: state, bound: bound, at: now}
	return now
}

// forget drops the Pods' entries: their job is finished.
func (s *seenStates) forget(uids ...types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, uid := range uids {
		delete(s.m, uid)
	}
}
