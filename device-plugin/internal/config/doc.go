// Package config resolves the device plugin's configuration from flags, environment
// variables and an optional versioned config file, in that order of precedence
// (flag > env > file > default). One table of options drives all three sources, so
// every setting has a flag, an environment twin and a file key.
package config
