package api

import (
	"fmt"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestIdleNodeColumns: an idle, unhealthy node prints JOBS 0 and HEALTHY false, as the
// seed's `kubectl get vmnode` example shows, not blanks (zero values must be serialized).
func TestIdleNodeColumns(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	c := testenv.Client()
	ctx := testenv.Context(t)

	node := validNode(ns, "idle")
	if err := c.Create(ctx, node); err != nil {
		t.Fatalf("create: %v", err)
	}
	node.Status = vmafxv1.VmafxNodeStatus{Healthy: false, Jobs: 0, Device: "cpu"}
	if err := c.Status().Update(ctx, node); err != nil {
		t.Fatalf("status update: %v", err)
	}
	table := getTable(t, fmt.Sprintf("/apis/vmafx.dev/v1/namespaces/%s/vmafxnodes/idle", ns))
	want := map[string]string{"Healthy": "false", "Jobs": "0"}
	for i, col := range table.ColumnDefinitions {
		w, ok := want[col.Name]
		if !ok {
			continue
		}
		if got := fmt.Sprint(table.Rows[0].Cells[i]); got != w {
			t.Errorf("column %s = %q, want %q", col.Name, got, w)
		}
		delete(want, col.Name)
	}
	if len(want) != 0 {
		t.Errorf("columns missing from the table: %v", want)
	}
}
