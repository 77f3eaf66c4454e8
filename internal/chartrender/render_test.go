package chartrender

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{"empty documents are skipped", "---\n# a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n", []string{"ConfigMap/a"}, ""},
		{"several objects", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: b\n", []string{"ServiceAccount/a", "ServiceAccount/b"}, ""},
		{"no kind", "apiVersion: v1\nmetadata:\n  name: a\n", nil, "no apiVersion, kind or metadata.name"},
		{"no name", "apiVersion: v1\nkind: ConfigMap\n", nil, "no apiVersion, kind or metadata.name"},
		{"not YAML", "apiVersion: [v1\n", nil, "document 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Decode([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotesJob(t *testing.T) {
	notes := "Submit:\n\n     kubectl apply -f - <<'YAML'\n     apiVersion: vmafx.dev/v1\n     kind: VmafxJob\n     metadata:\n       name: first\n     spec:\n       reference: file:///data/a.y4m\n       distorted: file:///data/b.y4m\n     YAML\n\nDone.\n"
	job, err := NotesJob(notes)
	if err != nil {
		t.Fatal(err)
	}
	if job.Name != "first" || job.Spec.Reference != "file:///data/a.y4m" {
		t.Errorf("job = %s, reference %s", job.Name, job.Spec.Reference)
	}
	if _, err := NotesJob("no job here"); err == nil {
		t.Error("notes without a here-document gave a job")
	}
	if _, err := NotesJob(strings.Replace(notes, "reference:", "referenc:", 1)); err == nil {
		t.Error("a misspelt field was accepted")
	}
}

func TestCases(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Cases() {
		names[c.Name()] = true
	}
	// Four vendors, 15 sets of workloads with the operator, two without, one with the
	// Pushgateway.
	if len(names) != 4*18 {
		t.Errorf("%d distinct cases, want 72: %v", len(names), names)
	}
}

// TestLintAndTemplate runs helm lint and helm template on every vendor and workload
// combination, and checks that each workload's objects render exactly when it is on.
func TestLintAndTemplate(t *testing.T) {
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"platform": "Deployment/vmafx-scheduler", "server": "Deployment/vmafx-api", "mcp": "StatefulSet/vmafx-mcp", "job": "Job/"}
	for _, tc := range Cases() {
		t.Run(tc.Name(), func(t *testing.T) {
			if err := Lint(tc.Values()); err != nil {
				t.Fatal(err)
			}
			res, err := Render(ch, Options{Values: tc.Values()})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range res.Objects {
				kinds = append(kinds, o.GetKind()+"/"+o.GetName())
			}
			all := strings.Join(kinds, " ")
			for w, obj := range want {
				if got := strings.Contains(all, obj); got != tc.Has(w) {
					t.Errorf("workload %s on: %v, but %s rendered: %v", w, tc.Has(w), obj, got)
				}
			}
			if got := strings.Contains(all, "Deployment/vmafx-pushgateway"); got != tc.Pushgateway {
				t.Errorf("pushgateway on: %v, but rendered: %v", tc.Pushgateway, got)
			}
		})
	}
}
