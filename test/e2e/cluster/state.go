package cluster

import (
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/vmafx/vmafx/test/e2e/internal/hoststate"
)

// State is what Up recorded before it changed anything on the host, and what Down needs
// to put the host back: the values and paths as they were, and a snapshot to compare
// with at the end.
type State struct {
	NodeIP   string    `json:"nodeIP"`
	NodeName string    `json:"nodeName"`
	Created  time.Time `json:"created"`
	// Sysctls are the values of hoststate.Sysctls before the cluster started.
	Sysctls map[string]string `json:"sysctls"`
	// HostPaths are the hoststate.HostPaths that existed before; Down removes the others.
	HostPaths []string `json:"hostPaths"`
	// IPTablesTables are the iptables tables per family that existed before; Down drops
	// the others once they are empty.
	IPTablesTables map[string][]string `json:"iptablesTables"`
	// Links are the network interfaces that existed before.
	Links []string `json:"links"`
	// Before is the host snapshot taken before anything changed.
	Before hoststate.Snapshot `json:"before"`
}

func loadState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *State) save(path string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
