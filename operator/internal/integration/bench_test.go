package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// BenchmarkThousandJobsToPods applies 1000 VmafxJobs at once (16 concurrent clients) and
// measures the time until every job has its worker Pod, with the operator's default
// QPS, burst and concurrency. Run with:
//
//	make test-bins && KUBEBUILDER_ASSETS=... go test -run '^$' -bench ThousandJobs -benchtime 1x ./operator/internal/integration/
func BenchmarkThousandJobsToPods(b *testing.B) {
	const jobs = 1000
	startOperator(b, operatorEnv())
	c := testenv.Client()
	for b.Loop() {
		ns := testenv.CreateNamespace(b)
		start := time.Now()
		var wg sync.WaitGroup
		work := make(chan int)
		for range 16 {
			wg.Go(func() {
				for i := range work {
					if err := c.Create(context.Background(), newJob(ns, fmt.Sprintf("bench-%04d", i))); err != nil {
						b.Error(err)
					}
				}
			})
		}
		for i := range jobs {
			work <- i
		}
		close(work)
		wg.Wait()
		applied := time.Since(start)
		err := testutil.Wait(context.Background(), 2*time.Minute, func(ctx context.Context) error {
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(pods.Items) < jobs {
				return fmt.Errorf("%d of %d Pods", len(pods.Items), jobs)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s-to-all-pods")
		b.ReportMetric(applied.Seconds(), "s-to-apply")
	}
}
