// Package proc starts the cluster's daemons detached from the command that starts them,
// and stops exactly those processes later, from a record of each one's PID and start
// time, never by name: a recycled PID is recognised as someone else's process and left
// alone.
package proc
