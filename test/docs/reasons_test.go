// Package docs checks that the user documentation keeps up with the code: every reason
// the platform writes into a condition or event is explained in docs/troubleshooting.md.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vmafx/vmafx/internal/testutil"
)

// TestTroubleshootingCoversEveryReason: every string constant named Reason* in the
// components' code stands in docs/troubleshooting.md as `Value`.
func TestTroubleshootingCoversEveryReason(t *testing.T) {
	root := testutil.RepoRoot()
	page, err := os.ReadFile(filepath.Join(root, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := reasonConstants(t, root)
	if len(reasons) < 20 {
		t.Fatalf("found only %d Reason constants: is the search broken?", len(reasons))
	}
	var missing []string
	for value, where := range reasons {
		if !strings.Contains(string(page), "`"+value+"`") {
			missing = append(missing, value+" ("+where+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("docs/troubleshooting.md does not explain reason %s", m)
	}
}

// reasonConstants returns the value and position of every string constant whose name
// starts with Reason, in the non-test Go files of the components and apis.
func reasonConstants(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range []string{"apis", "operator", "worker", "device-plugin", "scheduler-plugin", "gateway", "kubectl-vmafx"} {
		base := filepath.Join(root, dir)
		if _, err := os.Stat(base); err != nil {
			continue
		}
		err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), "fake")) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !strings.HasPrefix(name.Name, "Reason") || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						if err != nil {
							return err
						}
						rel, _ := filepath.Rel(root, path)
						out[v] = rel + ": " + name.Name
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
