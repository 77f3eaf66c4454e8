package placement

import fwk "k8s.io/kube-scheduler/framework"

// freshnessScore falls linearly from 100 for a heartbeat received now (or stamped in the
// future) to 0 for one staleAfter old, so among nodes equal otherwise the one heard from
// last wins. With the default 60 s window and a 10 s heartbeat period, live nodes differ by
// at most about 17 points. No heartbeat scores 0.
func freshnessScore(now, heartbeat, staleAfter int64) int64 {
	if heartbeat == 0 {
		return fwk.MinScore
	}
	age := now - heartbeat
	switch {
	case age <= 0:
		return fwk.MaxScore
	case age >= staleAfter:
		return fwk.MinScore
	}
	return (staleAfter - age) * fwk.MaxScore / staleAfter
}
