// Package validation checks vmafx-scheduler's plugin args. A plugin's New calls it, so an
// invalid config stops kube-scheduler at start with the offending field named.
package validation
