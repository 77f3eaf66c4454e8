package scale

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// countingProxy sits between one component and the API server and counts its requests by
// verb and resource, as the API server's own request metrics would, but for that component
// alone. It passes every request on with the test's admin credentials; the component
// reaches it over plain HTTP on 127.0.0.1 through the kubeconfig it writes.
type countingProxy struct {
	mu     sync.Mutex
	counts map[string]int // "verb resource[/subresource]"
	// kinds counts the writes to Pods and job status by what they wrote and how the API
	// server answered (writeKind): where the writes per job beyond the least go.
	kinds map[string]int
	url   string
}

func startProxy(tb testing.TB) *countingProxy {
	tb.Helper()
	cfg := testenv.Config()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		tb.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	p := &countingProxy{counts: map[string]int{}, kinds: map[string]int{}}
	explain := os.Getenv("VMAFX_SCALE_EXPLAIN") != ""
	forward := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: transport,
		// Watches are streams: pass each event on at once.
		FlushInterval: -1,
	}
	parse := &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, err := parse.NewRequestInfo(r)
		if err != nil || !info.IsResourceRequest {
			forward.ServeHTTP(w, r)
			return
		}
		key := info.Verb + " " + info.Resource
		if info.Subresource != "" {
			key += "/" + info.Subresource
		}
		p.mu.Lock()
		p.counts[key]++
		p.mu.Unlock()
		if explain && key == "get pods" {
			// Which state of a Pod makes the operator read it around its cache.
			forward.ServeHTTP(w, r)
			kind := "get pods: the Pod then: " + podState(info.Namespace, info.Name)
			p.mu.Lock()
			p.kinds[kind]++
			p.mu.Unlock()
			return
		}
		if !writeVerbs[info.Verb] || (key != "patch vmafxjobs/status" && key != "patch pods" && key != "delete pods") {
			forward.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		forward.ServeHTTP(rec, r)
		kind := fmt.Sprintf("%s: %s -> %d", key, writeKind(key, body), rec.code)
		if explain {
			kind += podNow(info.Namespace, key, body)
		}
		p.mu.Lock()
		p.kinds[kind]++
		p.mu.Unlock()
	})}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	p.url = "http://" + ln.Addr().String()
	return p
}

// statusRecorder keeps the status code of a response.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets the reverse proxy flush through the recorder.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// writeKind says what a write of key carried: for a job's status merge patch, the phase it
// sets (or "-" when the phase is unchanged), the reasons of its Scheduled and Running
// conditions, and "+result" when it records a result; for a Pod patch, whether it
// releases the result finalizer.
func writeKind(key string, body []byte) string {
	switch key {
	case "patch pods":
		if bytes.Contains(body, []byte(`"remove"`)) && bytes.Contains(body, []byte("/metadata/finalizers/")) {
			return "release finalizer"
		}
		return "other"
	case "patch vmafxjobs/status":
		var patch struct {
			Status struct {
				Phase      string         `json:"phase"`
				Result     map[string]any `json:"result"`
				Conditions []struct {
					Type, Status, Reason string
				} `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal(body, &patch); err != nil {
			return "unreadable"
		}
		st := patch.Status
		out := "phase " + cmp.Or(st.Phase, "-")
		for _, c := range st.Conditions {
			if c.Type == vmafxv1.JobScheduled || c.Type == vmafxv1.JobRunningCondition {
				out += fmt.Sprintf(", %s %s/%s", c.Type, c.Status, c.Reason)
			}
		}
		if st.Result != nil {
			out += ", +result"
		}
		return out
	}
	return ""
}

// podNow says, for a job status patch that shows a state of the attempt's Pod rather than
// an outcome, what the Pod is on the API server right after the write: a state the Pod
// has already left was written from a lagging cache (VMAFX_SCALE_EXPLAIN; one Pod read
// per such write, which the round's API server CPU then includes).
func podNow(ns, key string, body []byte) string {
	var patch struct {
		Status struct {
			Phase   string `json:"phase"`
			PodName string `json:"podName"`
			Result  any    `json:"result"`
		} `json:"status"`
	}
	if key != "patch vmafxjobs/status" || json.Unmarshal(body, &patch) != nil || patch.Status.Result != nil ||
		patch.Status.PodName == "" || patch.Status.Phase == string(vmafxv1.JobSucceeded) || patch.Status.Phase == string(vmafxv1.JobFailed) {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var pod corev1.Pod
	if err := testenv.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: patch.Status.PodName}, &pod); err != nil {
		return "; the Pod then: " + string(apierrors.ReasonForError(err))
	}
	bound := ""
	if pod.Spec.NodeName != "" {
		bound = ", bound"
	}
	return "; the Pod then: " + string(pod.Status.Phase) + bound
}

// podState says what a Pod is on the API server: its phase, whether it is bound, and its
// PodScheduled condition when that is False, the scheduler's message with its numbers
// left out (so that verdicts of one kind count together).
func podState(ns, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var pod corev1.Pod
	if err := testenv.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pod); err != nil {
		return string(apierrors.ReasonForError(err))
	}
	out := string(pod.Status.Phase)
	if pod.Spec.NodeName != "" {
		out += ", bound"
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			out += fmt.Sprintf(", PodScheduled False/%s %q", c.Reason, strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return 'N'
				}
				return r
			}, c.Message))
		}
	}
	return out
}

// kinds returns the per-kind counts so far.
func (p *countingProxy) kindCounts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.kinds)
}

// kubeconfig writes a kubeconfig that reaches the API server through the proxy.
func (p *countingProxy) kubeconfig(tb testing.TB) string {
	tb.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["scale"] = &clientcmdapi.Cluster{Server: p.url}
	kc.AuthInfos["scale"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["scale"] = &clientcmdapi.Context{Cluster: "scale", AuthInfo: "scale"}
	kc.CurrentContext = "scale"
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// snapshot returns the counts so far.
func (p *countingProxy) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// writeVerbs are the verbs that change what the API server stores.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// writes sums the write requests of counts, leaving out the resources in skip.
func writes(counts map[string]int, skip ...string) int {
	n := 0
	for key, c := range counts {
		verb, resource, _ := strings.Cut(key, " ")
		if writeVerbs[verb] && !hasPrefixIn(resource, skip) {
			n += c
		}
	}
	return n
}

func hasPrefixIn(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// diff is after minus before, for keys with a change.
func diff(after, before map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// table prints counts per job, writes first.
func table(counts map[string]int, jobs int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		wi, wj := writeVerbs[strings.Fields(keys[i])[0]], writeVerbs[strings.Fields(keys[j])[0]]
		if wi != wj {
			return wi
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-40s %8d  %.3f/job\n", k, counts[k], float64(counts[k])/float64(jobs))
	}
	return b.String()
}

// kindTable prints writeKind counts per job, the most frequent first.
func kindTable(counts map[string]int, jobs int) string {
	keys := slices.Collect(maps.Keys(counts))
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-100s %8d  %.3f/job\n", k, counts[k], float64(counts[k])/float64(jobs))
	}
	return b.String()
}
