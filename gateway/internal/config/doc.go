// Package config binds the front doors' flags, each with a VMAFX_<DOOR>_* environment
// variable twin (flag beats environment beats default), and builds their API clients.
package config
