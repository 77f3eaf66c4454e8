// Package serve runs a front door's HTTP listeners: the door itself (plain HTTP or TLS
// from certificate files) and a second listener for /healthz, /readyz and /metrics, and
// shuts both down cleanly when its context ends (SIGTERM): readiness fails first, open
// long polls and event streams are answered, then in-flight requests finish.
package serve
