package attempt

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A released UID is recent for the memo's time and forgotten after; other UIDs are not
// recent; expired entries are dropped as the set grows.
func TestUIDMemo(t *testing.T) {
	u := &uidMemo{ttl: 30 * time.Second}
	t0 := time.Unix(1000, 0)
	u.add("a", t0)
	if !u.recent("a", t0.Add(29*time.Second)) {
		t.Error("a released 29 s ago is not recent")
	}
	if u.recent("a", t0.Add(30*time.Second)) {
		t.Error("a released 30 s ago is still recent")
	}
	if u.recent("b", t0) {
		t.Error("b was never released")
	}
	for i := range 4096 {
		u.add(types.UID(fmt.Sprint(i)), t0.Add(time.Minute))
	}
	if _, ok := u.m["a"]; ok {
		t.Error("the expired entry a was kept as the set grew")
	}
	if len(u.m) != 4096 {
		t.Errorf("%d entries, want the 4096 recent ones", len(u.m))
	}
}
