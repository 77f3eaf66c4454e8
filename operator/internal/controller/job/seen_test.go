package job

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vmafx/vmafx/operator/internal/attempt"
)

// TestSeenStates: a Pod's state counts from when it was first seen so; another state, or
// the same Pod bound, starts the count again; a finished job's Pods are forgotten.
func TestSeenStates(t *testing.T) {
	var s seenStates
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	if got := s.since("a", attempt.Pending, false, at(0)); !got.Equal(at(0)) {
		t.Errorf("first sight: %v, want %v", got, at(0))
	}
	if got := s.since("a", attempt.Pending, false, at(3*time.Second)); !got.Equal(at(0)) {
		t.Errorf("the same state seen again: %v, want the first sight %v", got, at(0))
	}
	if got := s.since("b", attempt.Pending, false, at(4*time.Second)); !got.Equal(at(4 * time.Second)) {
		t.Errorf("another Pod: %v, want %v", got, at(4*time.Second))
	}
	if got := s.since("a", attempt.Pending, true, at(5*time.Second)); !got.Equal(at(5 * time.Second)) {
		t.Errorf("bound: %v, want %v", got, at(5*time.Second))
	}
	if got := s.since("a", attempt.Running, true, at(6*time.Second)); !got.Equal(at(6 * time.Second)) {
		t.Errorf("running: %v, want %v", got, at(6*time.Second))
	}
	s.forget("a", types.UID("unknown"))
	if got := s.since("a", attempt.Running, true, at(9*time.Second)); !got.Equal(at(9 * time.Second)) {
		t.Errorf("after forget: %v, want %v", got, at(9*time.Second))
	}
	if got := s.since("b", attempt.Pending, false, at(9*time.Second)); !got.Equal(at(4 * time.Second)) {
		t.Errorf("the other Pod is kept: %v, want %v", got, at(4*time.Second))
	}
}
