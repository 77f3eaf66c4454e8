package hoststate

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// Snapshot is the host state the cluster may change, in a form that compares equal when
// nothing changed: mounts, network links and addresses, routes, iptables rules, the
// kernel parameters of Sysctls, the kubepods cgroups, which HostPaths exist, and the
// processes whose command line names the cluster's state folder or binary folder.
type Snapshot struct {
	Mounts    []string          `json:"mounts"`
	Links     []string          `json:"links"`
	Addresses []string          `json:"addresses"`
	Routes    []string          `json:"routes"`
	IPTables  map[string]string `json:"iptables"`
	Sysctls   map[string]string `json:"sysctls"`
	Cgroups   []string          `json:"cgroups"`
	HostPaths []string          `json:"hostPaths"`
	Processes []string          `json:"processes"`
}

// Take records a snapshot. iptables is given the rule dumps per family (netfilter's
// Snapshot), processes the command lines of the cluster's own processes; both come from
// other packages so that this one stays free of them.
func Take(ctx context.Context, iptables map[string]string, processes []string) (Snapshot, error) {
	var s Snapshot
	ms, err := Mounts()
	if err != nil {
		return s, err
	}
	for _, m := range ms {
		s.Mounts = append(s.Mounts, m.Point+" "+m.FSType)
	}
	sort.Strings(s.Mounts)
	links, err := Links(ctx)
	if err != nil {
		return s, err
	}
	for _, l := range links {
		s.Links = append(s.Links, strings.TrimSpace(l.Name+" "+l.Kind+" "+l.Master))
	}
	if s.Addresses, err = lines(ctx, "ip", "-o", "addr", "show"); err != nil {
		return s, err
	}
	for i, a := range s.Addresses {
		// "2: eth0    inet 192.0.2.2/24 brd ... valid_lft forever preferred_lft forever": the
		// lifetimes count down on a DHCP lease; keep the address part.
		if j := strings.Index(a, " valid_lft"); j > 0 {
			s.Addresses[i] = strings.Join(strings.Fields(a[:j]), " ")
		}
	}
	v4, err := lines(ctx, "ip", "-4", "route", "show", "table", "all")
	if err != nil {
		return s, err
	}
	v6, err := lines(ctx, "ip", "-6", "route", "show", "table", "all")
	if err != nil {
		return s, err
	}
	s.Routes = append(v4, v6...)
	s.IPTables = iptables
	if s.Sysctls, err = ReadSysctls(Sysctls); err != nil {
		return s, err
	}
	if s.Cgroups, err = CgroupDirs("kubepods"); err != nil {
		return s, err
	}
	s.HostPaths = Existing(HostPaths)
	s.Processes = processes
	return s, nil
}

func lines(ctx context.Context, name string, args ...string) ([]string, error) {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	var ls []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ls = append(ls, l)
		}
	}
	sort.Strings(ls)
	return ls, nil
}
