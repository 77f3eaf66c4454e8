package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// configFile is a Set's config file: the setting that names it and the type it must
// declare.
type configFile struct {
	opt              *option
	path             *string
	apiVersion, kind string
}

// File adds the setting that names a config file (flag and variable only, never the
// file itself), stored in p. The file is YAML of apiVersion and kind; the settings added
// after it with a Key may be set in it, below their flags and variables. Files of
// another apiVersion or kind are refused, so that a later version can change meanings
// without being misread, and so are unknown keys, so that a typo never silently falls
// back to a default.
func (s *Set) File(p *string, flag, env, apiVersion, kind, usage string) {
	s.Func(flag, env, "", usage, func(v string) error { *p = v; return nil })
	s.file = &configFile{opt: s.opts[len(s.opts)-1], path: p, apiVersion: apiVersion, kind: kind}
}

// fileName names the config file in errors.
func (s *Set) fileName() string {
	if s.file == nil {
		return ""
	}
	return "config file " + *s.file.path
}

// readFile returns the config file's values by key, as text the settings parse: a
// string as it is, any other value as JSON writes it (2, true); nil without a file.
func (s *Set) readFile() (map[string]string, error) {
	if s.file == nil || *s.file.path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(*s.file.path)
	if err != nil {
		return nil, fmt.Errorf("reading config file: %w", err)
	}
	values, err := s.fileValues(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.fileName(), err)
	}
	return values, nil
}

func (s *Set) fileValues(data []byte) (map[string]string, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(js)).Decode(&fields); err != nil {
		return nil, fmt.Errorf("must be a mapping: %w", err)
	}
	var version, kind string
	_ = json.Unmarshal(fields["apiVersion"], &version)
	_ = json.Unmarshal(fields["kind"], &kind)
	if version != s.file.apiVersion || kind != s.file.kind {
		return nil, fmt.Errorf("unsupported apiVersion %q kind %q: want apiVersion %s kind %s", version, kind, s.file.apiVersion, s.file.kind)
	}
	delete(fields, "apiVersion")
	delete(fields, "kind")
	known := map[string]bool{}
	for _, o := range s.opts {
		known[o.Key] = o.Key != ""
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values := map[string]string{}
	var errs []error
	for _, k := range keys {
		raw := strings.TrimSpace(string(fields[k]))
		switch {
		case !known[k]:
			errs = append(errs, fmt.Errorf("unknown field %q", k))
		case raw == "null": // as if not there
		case strings.HasPrefix(raw, `"`):
			var text string
			if err := json.Unmarshal(fields[k], &text); err != nil {
				errs = append(errs, fmt.Errorf("field %s: %w", k, err))
			}
			values[k] = strings.TrimSpace(text)
		default:
			values[k] = raw
		}
	}
	return values, errors.Join(errs...)
}
