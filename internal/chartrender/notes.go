package chartrender

import (
	"errors"
	"strings"

	"sigs.k8s.io/yaml"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// NotesJob returns the VmafxJob that NOTES.txt tells the user to apply: the here-document
// between `kubectl apply -f - <<'YAML'` and the line `YAML`, decoded strictly.
func NotesJob(notes string) (*vmafxv1.VmafxJob, error) {
	const start, end = "<<'YAML'", "YAML"
	var doc []string
	indent := -1
	in := false
	for _, line := range strings.Split(notes, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && strings.HasSuffix(trimmed, start):
			in = true
		case in && trimmed == end:
			job := &vmafxv1.VmafxJob{}
			if err := yaml.UnmarshalStrict([]byte(strings.Join(doc, "\n")), job); err != nil {
				return nil, err
			}
			return job, nil
		case in:
			if indent < 0 {
				indent = len(line) - len(strings.TrimLeft(line, " "))
			}
			if len(line) >= indent {
				line = line[indent:]
			}
			doc = append(doc, line)
		}
	}
	return nil, errors.New("NOTES.txt has no kubectl apply here-document ending in a line YAML")
}
