package testutil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// RequestCase is one case of apis/vmafx/v1/testdata/worker-requests.json: a worker
// command line the operator wrote before the typed worker request (Args) and the request
// that replaced it. The operator's tests check that it builds Request; the worker's that
// Request runs as Args did: together, that a spec becomes the same run as before.
type RequestCase struct {
	Name    string
	Args    []string
	Request *vmafxv1.WorkerRequest
	// JSON is the request as written in the file.
	JSON string
}

// WorkerRequestCases reads the cases, each request read as the worker reads it.
func WorkerRequestCases(t testing.TB) []RequestCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "apis/vmafx/v1/testdata/worker-requests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		Name    string          `json:"name"`
		Args    []string        `json:"args"`
		Request json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	out := make([]RequestCase, len(raw))
	for i, c := range raw {
		r, err := vmafxv1.ParseWorkerRequest(c.Request)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		out[i] = RequestCase{Name: c.Name, Args: c.Args, Request: r, JSON: string(c.Request)}
	}
	return out
}

// WorkerRequests are the requests of WorkerRequestCases by name.
func WorkerRequests(t testing.TB) map[string]*vmafxv1.WorkerRequest {
	t.Helper()
	out := map[string]*vmafxv1.WorkerRequest{}
	for _, c := range WorkerRequestCases(t) {
		out[c.Name] = c.Request
	}
	return out
}

// RequireWorkerRequests fails t for each worker command line of args, by case name, that
// read (the operator's workerpod.Request) reads as another request than the case's.
func RequireWorkerRequests(t testing.TB, args map[string][]string, read func([]string) (*vmafxv1.WorkerRequest, error)) {
	t.Helper()
	want := WorkerRequests(t)
	for name, a := range args {
		got, err := read(a)
		switch {
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case want[name] == nil:
			t.Errorf("%s: no such case", name)
		case !reflect.DeepEqual(want[name], got):
			w, _ := json.Marshal(want[name])
			g, _ := json.Marshal(got)
			t.Errorf("%s: request\n%s\nwant\n%s", name, g, w)
		}
	}
}
