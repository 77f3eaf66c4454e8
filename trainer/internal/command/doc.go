// Package command is the command line of vmafx-trainer: its flags with their
// environment twins (internal/cli, as every binary), the API client, and the run of
// one VmafxModelTraining (package trainer) with its status server until SIGTERM.
package command
