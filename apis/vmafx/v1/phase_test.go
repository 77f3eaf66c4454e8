package v1

import "testing"

func TestJobPhaseFinished(t *testing.T) {
	for p, want := range map[JobPhase]bool{"": false, JobPending: false, JobRunning: false, JobSucceeded: true, JobFailed: true} {
		if p.Finished() != want {
			t.Errorf("%q.Finished() = %v, want %v", p, !want, want)
		}
	}
}
