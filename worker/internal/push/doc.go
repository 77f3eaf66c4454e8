// Package push sends a finished score's metrics to a Prometheus Pushgateway, for one-shot
// batch Jobs that no Prometheus scrapes while they run (the chart's job workload).
package push
