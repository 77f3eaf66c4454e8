// Package config resolves the device plugin's configuration from flags, environment
// variables and an optional versioned config file, in that order of precedence
// (flag > env > file > default), through internal/cli, the configuration layer of every
// VMAFX binary. One table of options declares each setting once: its flag, environment
// twin and file key. Validate then checks the settings against each other.
package config
