// Package config reads the operator's settings from its environment. Every setting has a
// default that is safe for a single-replica install; an invalid value stops the operator
// at start with a message naming the variable.
package config
