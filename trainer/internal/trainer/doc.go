// Package trainer is the process behind `vmafx-trainer`: it runs one
// VmafxModelTraining. It resumes from the run's last model version in the registry (its
// model, parameters and sample ledger), then polls the API server for Succeeded jobs with
// a subjective score that match the run's data source, reads each new job's per-frame
// JSON output (the sample), learns from it once (package trainer/train), and pushes a
// model version every checkpoint interval once enough new samples arrived and the
// held-out error is no worse than the base model's. It serves its progress at /status
// (read by the operator), Prometheus metrics at /metrics and /healthz.
package trainer
