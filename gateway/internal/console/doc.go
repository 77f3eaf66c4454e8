// Package console is vmafx-api's web console: server-rendered HTML pages, under /console/,
// of a namespace's jobs, a job's result with its per-frame VMAF curve, comparisons and
// ladders with their rate-quality curves, and a form that submits a job. It holds no
// rights of its own: the caller pastes a Kubernetes bearer token once, the console keeps
// it in an HttpOnly cookie and makes every API call as that caller (package jobs), so a
// page shows what the caller's RBAC allows and the API server's refusals as it words them.
// The pages work without JavaScript; a few lines of it keep the lists and a running job
// live. Everything is embedded in the binary: no CDN, no build step.
package console
