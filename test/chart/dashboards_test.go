package chart_test

import (
	"encoding/json"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	render "github.com/vmafx/vmafx/internal/chartrender"
	"github.com/vmafx/vmafx/internal/testutil"
)

// metricSources are the packages whose metric declarations the dashboards and alerts may
// name: every VMAFX component's own, and the libraries' whose metrics the components
// serve: controller-runtime's (the operator's reconciles and work queues) and
// kube-scheduler's (vmafx-scheduler is kube-scheduler with a plugin).
var metricSources = struct{ repo, modules []string }{
	repo: []string{"operator", "device-plugin", "worker", "trainer", "scheduler-plugin", "gateway", "internal"},
	modules: []string{
		"sigs.k8s.io/controller-runtime/pkg/internal/controller/metrics",
		"sigs.k8s.io/controller-runtime/pkg/internal/metrics",
		"sigs.k8s.io/controller-runtime/pkg/metrics",
		"k8s.io/kubernetes/pkg/scheduler/metrics",
	},
}

// exportedMetrics lists the metric names the components export, from their source: each
// Prometheus (or component-base) CounterOpts, GaugeOpts, HistogramOpts and SummaryOpts
// literal, with its Namespace, Subsystem and Name resolved through the package's
// constants, and each NewDesc; a histogram adds its _bucket, _sum and _count series. The
// Go packages that declare them are internal to each component, so the test reads the
// declarations rather than the registries (each component's own docs test checks its
// registry against its docs page).
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	var dirs []string
	root := testutil.RepoRoot()
	for _, d := range metricSources.repo {
		err := filepath.WalkDir(filepath.Join(root, d), func(path string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && (e.Name() == "testdata" || strings.HasPrefix(e.Name(), ".")) {
				return filepath.SkipDir
			}
			if e.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	goCmd, err := testutil.GoCommand()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(goCmd, append([]string{"list", "-f", "{{.Dir}}"}, metricSources.modules...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", metricSources.modules, err)
	}
	dirs = append(dirs, strings.Fields(string(out))...)
	// Two passes: a package may name another's constants (controller-runtime's work
	// queue metrics take theirs from pkg/metrics).
	fset := token.NewFileSet()
	var parsed []map[string]*ast.Package //nolint:staticcheck // go/packages would type-check three modules' worth
	global := map[string]string{}
	for _, d := range dirs {
		pkgs, err := parser.ParseDir(fset, d, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0) //nolint:staticcheck // as above
		if err != nil {
			t.Fatalf("parsing %s: %v", d, err)
		}
		parsed = append(parsed, pkgs)
		for _, pkg := range pkgs {
			for k, v := range stringConsts(pkg) {
				global[k] = v
			}
		}
	}
	names := map[string]bool{}
	for _, pkgs := range parsed {
		for _, pkg := range pkgs {
			scanMetrics(pkg, global, names)
		}
	}
	return names
}

// stringConsts are the string constants and variables pkg declares with a literal.
func stringConsts(pkg *ast.Package) map[string]string { //nolint:staticcheck // ast.Package is what parser.ParseDir gives
	consts := map[string]string{}
	for _, f := range pkg.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, id := range vs.Names {
					if i < len(vs.Values) {
						if s, ok := stringLit(vs.Values[i]); ok {
							consts[id.Name] = s
						}
					}
				}
			}
			return true
		})
	}
	return consts
}

// scanMetrics adds the metrics pkg declares; global are the constants of every package
// scanned, for a name taken from another package (metrics.DepthKey).
func scanMetrics(pkg *ast.Package, global map[string]string, names map[string]bool) { //nolint:staticcheck // as above
	consts := stringConsts(pkg)
	value := func(e ast.Expr) (string, bool) {
		if s, ok := stringLit(e); ok {
			return s, true
		}
		switch e := e.(type) {
		case *ast.Ident:
			if s, ok := consts[e.Name]; ok {
				return s, true
			}
			if v, ok := global[e.Name]; ok {
				return v, true
			}
		case *ast.SelectorExpr:
			v, ok := global[e.Sel.Name]
			return v, ok
		}
		return "", false
	}
	for _, f := range pkg.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				sel, ok := n.Type.(*ast.SelectorExpr)
				if !ok || !slices.Contains([]string{"CounterOpts", "GaugeOpts", "HistogramOpts", "SummaryOpts"}, sel.Sel.Name) {
					return true
				}
				var parts [3]string
				complete := true
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					key, _ := kv.Key.(*ast.Ident)
					if key == nil {
						continue
					}
					i := slices.Index([]string{"Namespace", "Subsystem", "Name"}, key.Name)
					if i < 0 {
						continue
					}
					v, ok := value(kv.Value)
					if !ok {
						// A name made at run time: "vmafx_batch_" + name in a helper whose
						// calls give the rest (worker/internal/push).
						if b, isBin := kv.Value.(*ast.BinaryExpr); isBin && i == 2 {
							if prefix, ok := stringLit(b.X); ok {
								for _, rest := range helperArgs(f, n) {
									add(names, sel.Sel.Name, join(parts[0], parts[1], prefix+rest))
								}
							}
						}
						complete = false
						continue
					}
					parts[i] = v
				}
				if complete && parts[2] != "" {
					add(names, sel.Sel.Name, join(parts[0], parts[1], parts[2]))
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewDesc" && len(n.Args) > 0 {
					if s, ok := value(n.Args[0]); ok {
						names[s] = true
					}
				}
			}
			return true
		})
	}
}

// helperArgs returns the first string arguments of the calls, in f, of the function
// literal that holds lit and is assigned to a variable: gauge("score", ...).
func helperArgs(f *ast.File, lit *ast.CompositeLit) []string {
	var helper string
	ast.Inspect(f, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		fl, ok := as.Rhs[0].(*ast.FuncLit)
		id, isID := as.Lhs[0].(*ast.Ident)
		if !ok || !isID || lit.Pos() < fl.Pos() || lit.End() > fl.End() {
			return true
		}
		helper = id.Name
		return false
	})
	var out []string
	if helper == "" {
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == helper && len(c.Args) > 0 {
				if s, ok := stringLit(c.Args[0]); ok {
					out = append(out, s)
				}
			}
		}
		return true
	})
	return out
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	v := constant.MakeFromLiteral(b.Value, b.Kind, 0)
	return constant.StringVal(v), v.Kind() == constant.String
}

func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "_")
}

func add(names map[string]bool, opts, name string) {
	names[name] = true
	switch opts {
	case "HistogramOpts":
		names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
	case "SummaryOpts":
		names[name+"_sum"], names[name+"_count"] = true, true
	}
}

// promqlNoise are the parts of an expression that are not metric names: strings, label
// matchers, ranges, grouping clauses, then function calls and keywords.
var (
	promqlStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlNumbers  = regexp.MustCompile(`\b[0-9][0-9a-zA-Z.]*`)
	promqlIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promqlKeywords = []string{"and", "or", "unless", "bool", "offset", "le", "inf", "nan", "Inf", "NaN"}
)

// metricNames returns the metric names expr reads.
func metricNames(expr string) []string {
	e := promqlStrings.ReplaceAllString(expr, `""`)
	e = promqlMatchers.ReplaceAllString(e, " ")
	e = promqlGrouping.ReplaceAllString(e, " ")
	e = promqlNumbers.ReplaceAllString(e, " ")
	var out []string
	for _, m := range promqlIdent.FindAllStringSubmatch(e, -1) {
		if m[1] != "" || slices.Contains(promqlKeywords, m[0]) {
			continue // a function, or a keyword
		}
		if _, err := strconv.ParseFloat(m[0], 64); err == nil {
			continue
		}
		out = append(out, m[0])
	}
	return out
}

func TestMetricNames(t *testing.T) {
	got := metricNames(`histogram_quantile(0.95, sum by (le, phase) (rate(vmafx_job_completion_seconds_bucket{phase="Failed", x=~"a(b)"}[30m]))) > 900 and on () time() - vmafx_build_info offset 5m`)
	if want := []string{"vmafx_job_completion_seconds_bucket", "vmafx_build_info"}; !slices.Equal(got, want) {
		t.Errorf("metricNames = %q, want %q", got, want)
	}
}

// TestDashboardsAndAlertsUseExportedMetrics renders the dashboards and the alerts,
// checks that each dashboard is JSON Grafana loads (a uid, a title, panels with
// queries) with a unique uid, and that every query and alert names only metrics the
// components export.
func TestDashboardsAndAlertsUseExportedMetrics(t *testing.T) {
	exported := exportedMetrics(t)
	for _, must := range []string{"vmafx_jobs", "vmafx_job_attempts_total", "vmafx_device_plugin_slots", "vmafx_batch_fps", "controller_runtime_reconcile_time_seconds_bucket", "scheduler_schedule_attempts_total", "workqueue_depth"} {
		if !exported[must] {
			t.Fatalf("the source scan missed %s: it finds %d metrics", must, len(exported))
		}
	}
	check := func(where, expr string) {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q reads no metric", where, expr)
		}
		for _, n := range names {
			if !exported[n] {
				t.Errorf("%s: %s is no metric a component exports (query %q)", where, n, expr)
			}
		}
	}

	res := mustRender(t, map[string]any{"monitoring": map[string]any{
		"grafanaDashboards": map[string]any{"enabled": true},
		"prometheusRule":    map[string]any{"enabled": true},
	}}, func(o *render.Options) { o.APIVersions = append(o.APIVersions, "monitoring.coreos.com/v1") })
	uids := map[string]string{}
	dashboards := 0
	for _, o := range ofKind(res.Objects, "ConfigMap") {
		if o.GetLabels()["grafana_dashboard"] != "1" {
			continue
		}
		cm := mustGet[*corev1.ConfigMap](t, res.Objects, "ConfigMap", o.GetName())
		for file, data := range cm.Data {
			dashboards++
			var d struct {
				UID, Title string
				Panels     []struct {
					Title   string
					Targets []struct{ Expr string }
				}
			}
			dec := json.NewDecoder(strings.NewReader(data))
			if err := dec.Decode(&d); err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
				t.Errorf("%s: uid %q, title %q, %d panels: want all three", file, d.UID, d.Title, len(d.Panels))
			}
			if other, dup := uids[d.UID]; dup {
				t.Errorf("%s and %s share the uid %q", file, other, d.UID)
			}
			uids[d.UID] = file
			for _, p := range d.Panels {
				if len(p.Targets) == 0 {
					t.Errorf("%s: panel %q has no query", file, p.Title)
				}
				for _, q := range p.Targets {
					check(file+": "+p.Title, q.Expr)
				}
			}
		}
	}
	if dashboards != 5 {
		t.Errorf("%d dashboards rendered, want 5: operator, scheduler, device plugin, workers, front doors", dashboards)
	}

	rule := find(res.Objects, "PrometheusRule", "vmafx")
	if rule == nil {
		t.Fatal("no PrometheusRule vmafx rendered")
	}
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	alerts := 0
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			r := r.(map[string]any)
			alerts++
			expr, _ := r["expr"].(string)
			check("alert "+r["alert"].(string), expr)
		}
	}
	if alerts < 3 {
		t.Errorf("%d alerts, want at least the heartbeat, failure-rate and pending ones", alerts)
	}

	// Off by default.
	for _, o := range mustRender(t, nil, func(o *render.Options) { o.APIVersions = append(o.APIVersions, "monitoring.coreos.com/v1") }).Objects {
		if o.GetKind() == "PrometheusRule" || o.GetLabels()["grafana_dashboard"] != "" {
			t.Errorf("%s rendered by default", id(o))
		}
	}
}
