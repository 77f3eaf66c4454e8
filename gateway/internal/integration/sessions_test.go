package integration

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmafx/vmafx/gateway/internal/mcpserver"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// initialize is an MCP initialize request, which opens a session.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"0"}}}`

// openSession sends an initialize with token and returns the status, the session id
// (when one was opened) and the body.
func openSession(c *http.Client, url, token string) (int, string, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b), err
}

// sessionsGauge reads vmafx_mcp_sessions from the door's registry.
func sessionsGauge(t *testing.T, d *door) int {
	t.Helper()
	mfs, err := d.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "vmafx_mcp_sessions" {
			return int(mf.GetMetric()[0].GetGauge().GetValue())
		}
	}
	t.Fatal("vmafx_mcp_sessions is not exported")
	return 0
}

// flood sends n session attempts, 16 at a time, the i-th with tokens[i%len(tokens)], and
// counts the answers by status and the sessions opened by token.
func flood(t *testing.T, d *door, n int, tokens []string) (byCode map[int]int, opened map[string][]string, bodies map[int]string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var mu sync.Mutex
	byCode, opened, bodies = map[int]int{}, map[string][]string{}, map[int]string{}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				tok := tokens[i%len(tokens)]
				code, id, body, err := openSession(c, d.url, tok)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				byCode[code]++
				if id != "" {
					opened[tok] = append(opened[tok], id)
				}
				bodies[code] = body
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return byCode, opened, bodies
}

func heapAndGoroutines() (uint64, int) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

// TestMCPSessionsAreCapped: 10 000 session attempts by one user, then 10 000 by many,
// stay at the caps (per user and in all), with the door's memory and goroutines bounded;
// a closed session frees its slot, and so does an idle one.
func TestMCPSessionsAreCapped(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	const perUser, total = 10, 100
	d := startMCPWith(t, ns, mcpserver.SessionLimits{PerUser: perUser, Total: total, IdleTimeout: time.Hour})
	heap0, gr0 := heapAndGoroutines()

	one := tokenFor(t, ns, "one")
	byCode, opened, bodies := flood(t, d, 10_000, []string{one})
	if len(opened[one]) != perUser || byCode[http.StatusTooManyRequests] != 10_000-perUser {
		t.Errorf("one user's 10 000 attempts: %d sessions, answers %v; want %d and the rest 429", len(opened[one]), byCode, perUser)
	}
	if b := bodies[http.StatusTooManyRequests]; !strings.Contains(b, "at most 10 per user") || !strings.Contains(b, `"jsonrpc":"2.0"`) {
		t.Errorf("the per-user refusal says %s", b)
	}
	if n := sessionsGauge(t, d); n != perUser {
		t.Errorf("vmafx_mcp_sessions = %d after one user's flood; want %d", n, perUser)
	}

	// A closed session gives its slot back.
	req, _ := http.NewRequest(http.MethodDelete, d.url, nil)
	req.Header.Set("Authorization", "Bearer "+one)
	req.Header.Set("Mcp-Session-Id", opened[one][0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitFor(t, "the closed session's slot", func() bool { return sessionsGauge(t, d) == perUser-1 })
	if code, id, body, err := openSession(http.DefaultClient, d.url, one); err != nil || id == "" {
		t.Errorf("a new session after closing one: %d %s %v; want one", code, body, err)
	}

	// Many users: 15 of them could hold 150; the replica holds 100.
	var tokens []string
	for i := range 15 {
		tokens = append(tokens, tokenFor(t, ns, fmt.Sprintf("user-%d", i)))
	}
	byCode, opened, bodies = flood(t, d, 10_000, tokens)
	sum := 0
	for _, ids := range opened {
		if len(ids) > perUser {
			t.Errorf("a user opened %d sessions; at most %d", len(ids), perUser)
		}
		sum += len(ids)
	}
	if sum != total-perUser || byCode[http.StatusServiceUnavailable] == 0 {
		t.Errorf("many users' 10 000 attempts: %d sessions, answers %v; want %d (the replica's cap less the first user's) and 503s", sum, byCode, total-perUser)
	}
	if b := bodies[http.StatusServiceUnavailable]; !strings.Contains(b, "holds its most sessions, 100") {
		t.Errorf("the replica's refusal says %s", b)
	}
	if n := sessionsGauge(t, d); n != total {
		t.Errorf("vmafx_mcp_sessions = %d after the floods; want %d", n, total)
	}
	heap1, gr1 := heapAndGoroutines()
	t.Logf("20 000 attempts: %d sessions open; heap %.1f → %.1f MiB, goroutines %d → %d", sessionsGauge(t, d), float64(heap0)/(1<<20), float64(heap1)/(1<<20), gr0, gr1)
	// Each open session holds a few goroutines and some KiB; refused attempts hold nothing.
	if gr1-gr0 > 10*total {
		t.Errorf("goroutines grew from %d to %d for %d sessions", gr0, gr1, total)
	}
	if heap1 > heap0+64<<20 {
		t.Errorf("heap grew from %d to %d bytes", heap0, heap1)
	}

	// Idle sessions close and free their slots.
	idle := startMCPWith(t, ns, mcpserver.SessionLimits{PerUser: perUser, Total: total, IdleTimeout: time.Second})
	_, opened, _ = flood(t, idle, 50, []string{one})
	if len(opened[one]) != perUser {
		t.Errorf("%d sessions opened on the idle door; want %d", len(opened[one]), perUser)
	}
	waitFor(t, "idle sessions to close", func() bool { return sessionsGauge(t, idle) == 0 })
	if code, id, body, err := openSession(http.DefaultClient, idle.url, one); err != nil || id == "" {
		t.Errorf("a new session after the idle ones closed: %d %s %v; want one", code, body, err)
	}
}
