package hoststate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// Link is a network interface as `ip -j link` describes it.
type Link struct {
	Name   string `json:"ifname"`
	Kind   string `json:"-"`
	Master string `json:"master,omitempty"`
}

// Links lists the network interfaces of this network namespace.
func Links(ctx context.Context) ([]Link, error) {
	out, err := exec.CommandContext(ctx, "ip", "-j", "-d", "link", "show").Output()
	if err != nil {
		return nil, fmt.Errorf("ip link show: %w", err)
	}
	var raw []struct {
		Name     string `json:"ifname"`
		Master   string `json:"master"`
		LinkInfo struct {
			Kind string `json:"info_kind"`
		} `json:"linkinfo"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, err
	}
	links := make([]Link, len(raw))
	for i, r := range raw {
		links[i] = Link{Name: r.Name, Kind: r.LinkInfo.Kind, Master: r.Master}
	}
	sort.Slice(links, func(i, j int) bool { return links[i].Name < links[j].Name })
	return links, nil
}

// DeleteLink deletes the named interface; a missing one is not an error.
func DeleteLink(ctx context.Context, name string) error {
	var errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", "link", "delete", name)
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		if strings.Contains(errb.String(), "Cannot find device") {
			return nil
		}
		return fmt.Errorf("ip link delete %s: %w: %s", name, err, strings.TrimSpace(errb.String()))
	}
	return nil
}
