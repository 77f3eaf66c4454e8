package netfilter

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// Family is one address family's iptables commands.
type Family struct {
	Name    string
	Cmd     string
	Save    string
	Restore string
	// NFTFamily is the nftables family that iptables-nft keeps this family's tables in.
	NFTFamily string
}

var (
	// IPv4 is iptables.
	IPv4 = Family{Name: "IPv4", Cmd: "iptables", Save: "iptables-save", Restore: "iptables-restore", NFTFamily: "ip"}
	// IPv6 is ip6tables.
	IPv6 = Family{Name: "IPv6", Cmd: "ip6tables", Save: "ip6tables-save", Restore: "ip6tables-restore", NFTFamily: "ip6"}
)

// Available reports whether the family's commands are installed.
func (f Family) Available() bool {
	for _, c := range []string{f.Cmd, f.Save, f.Restore} {
		if _, err := exec.LookPath(c); err != nil {
			return false
		}
	}
	return true
}

// Chain names of the guard.
const (
	ForwardChain = "VMAFX-FORWARD"
	InputChain   = "VMAFX-INPUT"
	OutputChain  = "VMAFX-OUTPUT"
	comment      = "vmafx local cluster"
)

// ClusterChainPrefixes name every chain a local cluster adds: the guard's, the kubelet's
// and kube-proxy's, and the CNI bridge and portmap plugins'.
var ClusterChainPrefixes = []string{"VMAFX-", "KUBE-", "CNI-"}

// Guard keeps the cluster's traffic on this machine: pods reach each other and this
// machine's own addresses but nothing beyond it, nothing beyond it reaches a pod, the
// ports the cluster serves on the node address (kube-apiserver, kubelet) answer only this
// machine and its pods, and a connection from this machine to a Service address that
// kube-proxy has not (yet) translated is refused rather than sent out of the default route.
type Guard struct {
	PodCIDR     string
	ServiceCIDR string
	Ports       []int
}

// Script is the iptables-restore input that creates (or refills) the guard chains.
// Traffic to this machine's own addresses takes INPUT, not FORWARD, so a pod still reaches
// the node address (kube-apiserver behind the kubernetes Service); with the bridge's
// netfilter hook on, traffic between two pods on the bridge passes FORWARD too.
func (g Guard) Script() string {
	ports := make([]string, len(g.Ports))
	for i, p := range g.Ports {
		ports[i] = strconv.Itoa(p)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*filter\n")
	fmt.Fprintf(&b, ":%s - [0:0]\n:%s - [0:0]\n:%s - [0:0]\n", ForwardChain, InputChain, OutputChain)
	fmt.Fprintf(&b, "-A %s -s %s -d %s -m comment --comment %q -j RETURN\n", ForwardChain, g.PodCIDR, g.PodCIDR, comment+": pod to pod")
	fmt.Fprintf(&b, "-A %s -s %s -m comment --comment %q -j DROP\n", ForwardChain, g.PodCIDR, comment+": pods reach no other machine")
	fmt.Fprintf(&b, "-A %s -d %s -m comment --comment %q -j DROP\n", ForwardChain, g.PodCIDR, comment+": no other machine reaches pods")
	if len(ports) > 0 {
		fmt.Fprintf(&b, "-A %s -p tcp -m multiport --dports %s ! -s %s -m addrtype ! --src-type LOCAL -m comment --comment %q -j DROP\n",
			InputChain, strings.Join(ports, ","), g.PodCIDR, comment+": cluster ports answer this machine only")
	}
	if g.ServiceCIDR != "" {
		// filter OUTPUT sees a packet after nat OUTPUT, where kube-proxy rewrites a Service
		// address to an endpoint's: one still addressed to the range was not translated.
		fmt.Fprintf(&b, "-A %s -d %s -p tcp -m comment --comment %q -j REJECT --reject-with tcp-reset\n",
			OutputChain, g.ServiceCIDR, comment+": untranslated Service address")
		fmt.Fprintf(&b, "-A %s -d %s -m comment --comment %q -j REJECT\n",
			OutputChain, g.ServiceCIDR, comment+": untranslated Service address")
	}
	fmt.Fprintf(&b, "COMMIT\n")
	return b.String()
}

// Apply creates or refills the guard chains and makes the jumps to them the first rules
// of FORWARD, INPUT and OUTPUT, ahead of the jumps kube-proxy and the kubelet insert, so that no
// ACCEPT of theirs can let traffic past the guard. Apply is idempotent.
func (g Guard) Apply(ctx context.Context) error {
	if _, err := run(ctx, strings.NewReader(g.Script()), IPv4.Restore, "--noflush"); err != nil {
		return err
	}
	for _, j := range []struct{ builtin, chain string }{{"FORWARD", ForwardChain}, {"INPUT", InputChain}, {"OUTPUT", OutputChain}} {
		if err := jumpFirst(ctx, j.builtin, j.chain); err != nil {
			return err
		}
	}
	return nil
}

// jumpFirst makes "-A builtin -j chain" the first rule of builtin, and the only jump to chain.
func jumpFirst(ctx context.Context, builtin, chain string) error {
	out, err := run(ctx, nil, IPv4.Cmd, "-w", "-t", "filter", "-S", builtin)
	if err != nil {
		return err
	}
	want := fmt.Sprintf("-A %s -j %s", builtin, chain)
	var rules []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "-A ") {
			rules = append(rules, l)
		}
	}
	n := 0
	for _, r := range rules {
		if r == want {
			n++
		}
	}
	if n == 1 && rules[0] == want {
		return nil
	}
	for range n {
		if _, err := run(ctx, nil, IPv4.Cmd, "-w", "-t", "filter", "-D", builtin, "-j", chain); err != nil {
			return err
		}
	}
	_, err = run(ctx, nil, IPv4.Cmd, "-w", "-t", "filter", "-I", builtin, "1", "-j", chain)
	return err
}

// Sweep removes, in every table of family f, the chains whose names start with one of
// prefixes and every rule in another chain that jumps to one of them. It returns the
// chains it removed as "table/chain".
func Sweep(ctx context.Context, f Family, prefixes []string) ([]string, error) {
	if !f.Available() {
		return nil, nil
	}
	saved, err := run(ctx, nil, f.Save)
	if err != nil {
		return nil, err
	}
	script, removed := sweepScript(parseSave(saved), prefixes)
	if script == "" {
		return nil, nil
	}
	if _, err := run(ctx, strings.NewReader(script), f.Restore, "--noflush"); err != nil {
		return nil, fmt.Errorf("%w; script:\n%s", err, script)
	}
	return removed, nil
}

// Snapshot is the family's rules as iptables-save prints them, without the comment lines
// and packet counters that change on their own, for before/after comparisons.
func Snapshot(ctx context.Context, f Family) (string, error) {
	if !f.Available() {
		return "", nil
	}
	out, err := run(ctx, nil, f.Save)
	if err != nil {
		return "", err
	}
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, ":") {
			if i := strings.LastIndexByte(l, '['); i > 0 {
				l = strings.TrimSpace(l[:i])
			}
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n"), nil
}

// Tables lists the tables of family f that hold rules or non-default chains, as iptables-
// save shows them. A table that a cluster made appear is dropped again by DropEmptyTables.
func Tables(ctx context.Context, f Family) ([]string, error) {
	if !f.Available() {
		return nil, nil
	}
	out, err := run(ctx, nil, f.Save)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range parseSave(out) {
		names = append(names, t.name)
	}
	return names, nil
}

// DropEmptyTables deletes the tables of family f that are not in keep and hold nothing
// but empty built-in chains with the ACCEPT policy. With the nf_tables flavour of iptables
// (Debian's default) a table exists once anything has used it, and teardown removes the
// tables that the cluster made exist. With the legacy flavour the kernel keeps them anyway
// and this does nothing.
func DropEmptyTables(ctx context.Context, f Family, keep []string) ([]string, error) {
	if !f.Available() {
		return nil, nil
	}
	version, err := run(ctx, nil, f.Cmd, "--version")
	if err != nil || !strings.Contains(version, "nf_tables") {
		return nil, err
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return nil, nil
	}
	out, err := run(ctx, nil, f.Save)
	if err != nil {
		return nil, err
	}
	var dropped []string
	for _, t := range parseSave(out) {
		if slices.Contains(keep, t.name) || !t.empty() {
			continue
		}
		if _, err := run(ctx, nil, "nft", "delete", "table", f.NFTFamily, t.name); err != nil {
			return dropped, err
		}
		dropped = append(dropped, t.name)
	}
	return dropped, nil
}

type table struct {
	name   string
	chains []chain
	rules  []rule
}

type chain struct {
	name   string
	policy string // "-" for a user chain
}

type rule struct {
	chain  string
	text   string // the whole "-A chain ..." line
	target string // after -j or -g, if any
}

func (t table) empty() bool {
	if len(t.rules) > 0 {
		return false
	}
	for _, c := range t.chains {
		if c.policy != "ACCEPT" {
			return false
		}
	}
	return true
}

// parseSave reads iptables-save output.
func parseSave(out string) []table {
	var tables []table
	var cur *table
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "*"):
			tables = append(tables, table{name: l[1:]})
			cur = &tables[len(tables)-1]
		case cur == nil:
		case strings.HasPrefix(l, ":"):
			f := strings.Fields(l[1:])
			if len(f) >= 2 {
				cur.chains = append(cur.chains, chain{name: f[0], policy: f[1]})
			}
		case strings.HasPrefix(l, "-A "):
			toks := tokens(l)
			r := rule{chain: toks[1], text: l}
			for i := 2; i+1 < len(toks); i++ {
				if toks[i] == "-j" || toks[i] == "-g" || toks[i] == "--jump" || toks[i] == "--goto" {
					r.target = toks[i+1]
				}
			}
			cur.rules = append(cur.rules, r)
		}
	}
	return tables
}

// sweepScript is the iptables-restore input that removes the chains matching prefixes and
// the rules elsewhere that jump to them; empty when there is nothing to remove.
func sweepScript(tables []table, prefixes []string) (string, []string) {
	ours := func(name string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	var removed []string
	for _, t := range tables {
		var del, flush []string
		for _, r := range t.rules {
			if !ours(r.chain) && ours(r.target) {
				del = append(del, "-D"+strings.TrimPrefix(r.text, "-A"))
			}
		}
		for _, c := range t.chains {
			if c.policy == "-" && ours(c.name) {
				flush = append(flush, c.name)
			}
		}
		if len(del) == 0 && len(flush) == 0 {
			continue
		}
		fmt.Fprintf(&b, "*%s\n", t.name)
		for _, d := range del {
			fmt.Fprintln(&b, d)
		}
		// Flush all first: our chains jump to each other, and a chain that is still a
		// target cannot be deleted.
		for _, c := range flush {
			fmt.Fprintf(&b, "-F %s\n", c)
		}
		for _, c := range flush {
			fmt.Fprintf(&b, "-X %s\n", c)
			removed = append(removed, t.name+"/"+c)
		}
		fmt.Fprintf(&b, "COMMIT\n")
	}
	return b.String(), removed
}

// tokens splits a rule line as iptables-save quotes it: words separated by spaces, double
// quotes around a word with spaces, backslash escaping a quote inside.
func tokens(line string) []string {
	var out []string
	var cur strings.Builder
	inQuote, escaped, have := false, false, false
	for _, r := range line {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && inQuote:
			escaped = true
		case r == '"':
			inQuote = !inQuote
			have = true
		case r == ' ' && !inQuote:
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}

func run(ctx context.Context, stdin *strings.Reader, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
