package integration

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

// benchClients is how many callers hit the API at once: a CI fleet's burst.
const benchClients = 16

// BenchmarkAPI measures the HTTP scoring API against the integration apiserver: requests
// per second for submit and get from 16 concurrent callers with one token (TokenReview and
// SubjectAccessReview answers cached, as for a busy pipeline) and the p99 latency of a get.
// Run with:
//
//	make test-bins && KUBEBUILDER_ASSETS=... go test -run '^$' -bench BenchmarkAPI -benchtime 2000x ./gateway/internal/integration/
func BenchmarkAPI(b *testing.B) {
	ns := testenv.CreateNamespace(b)
	d := startAPI(b)
	token := tokenFor(b, ns, "bench", allVerbs...)
	base := d.url + "/v1/namespaces/" + ns + "/jobs"
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = benchClients

	var submitted atomic.Int64
	b.Run("submit", func(b *testing.B) {
		run(b, func(int) (int, error) {
			n := submitted.Add(1)
			code, body, err := send(http.MethodPost, base, token, jobBody(fmt.Sprintf("bench-%06d", n)))
			if err == nil && code != http.StatusCreated {
				err = fmt.Errorf("submit: %d %s", code, body)
			}
			return code, err
		})
	})
	b.Run("get", func(b *testing.B) {
		total := max(int(submitted.Load()), 1)
		run(b, func(i int) (int, error) {
			code, body, err := send(http.MethodGet, fmt.Sprintf("%s/bench-%06d", base, i%total+1), token, "")
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("get: %d %s", code, body)
			}
			return code, err
		})
	})
}

// run spreads b.N requests over benchClients callers and reports req/s and latency p99.
func run(b *testing.B, req func(i int) (int, error)) {
	var (
		next      atomic.Int64
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, b.N)
		wg        sync.WaitGroup
	)
	b.ResetTimer()
	start := time.Now()
	for range benchClients {
		wg.Go(func() {
			var mine []time.Duration
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					break
				}
				t0 := time.Now()
				if _, err := req(i); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
}
