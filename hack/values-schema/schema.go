package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// annotationMark starts the part of a comment that is JSON Schema, written in YAML.
const annotationMark = "@schema"

// comment is a key's comment split into its description and its annotation.
type comment struct {
	description string
	schema      map[string]any
}

// parseComment reads the comment lines yaml.v3 gives a node (each starting with #). The
// lines before the first one that starts with @schema are the description, joined into
// one line; from that line on, what follows @schema is a YAML mapping of JSON Schema
// keywords, on the same line (@schema {minimum: 1}) or indented on the lines below.
func parseComment(text string) (comment, error) {
	var c comment
	var desc, annotation []string
	inAnnotation := false
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "#")
		line = strings.TrimPrefix(line, " ")
		if !inAnnotation && strings.HasPrefix(line, annotationMark) {
			inAnnotation = true
			line = strings.TrimPrefix(line, annotationMark)
		}
		if inAnnotation {
			annotation = append(annotation, line)
			continue
		}
		if line = strings.TrimSpace(line); line != "" {
			desc = append(desc, line)
		}
	}
	c.description = strings.Join(desc, " ")
	if !inAnnotation {
		return c, nil
	}
	src := strings.Join(annotation, "\n")
	if strings.TrimSpace(src) == "" {
		return c, fmt.Errorf("%s without keywords", annotationMark)
	}
	if err := sigsyaml.Unmarshal([]byte(src), &c.schema); err != nil {
		return c, fmt.Errorf("%s: %w", annotationMark, err)
	}
	if c.schema == nil {
		return c, fmt.Errorf("%s: want a mapping of JSON Schema keywords", annotationMark)
	}
	return c, nil
}

// commentOf collects a key's comments: the lines above it and those at the end of its line.
func commentOf(key, value *yaml.Node) string {
	var parts []string
	for _, s := range []string{key.HeadComment, key.LineComment, value.LineComment} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// row is one line of the values reference.
type row struct {
	key, def, kind, description string
}

// generator turns annotated values into a schema and reference rows.
type generator struct {
	definitions map[string]any
	rows        []row
}

// generate reads values.yaml and returns the schema and the reference rows.
func generate(data []byte) (map[string]any, []row, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("values.yaml is not a mapping")
	}
	head, err := parseComment(doc.HeadComment)
	if err != nil {
		return nil, nil, fmt.Errorf("the file's header: %w", err)
	}
	g := &generator{definitions: map[string]any{}}
	if defs, ok := head.schema["definitions"].(map[string]any); ok {
		g.definitions = defs
	}
	root, err := g.object(doc.Content[0], "")
	if err != nil {
		return nil, nil, err
	}
	root = merge(root, head.schema)
	root["$schema"] = "http://json-schema.org/draft-07/schema#"
	if err := g.resolveRefs(root, "values.yaml"); err != nil {
		return nil, nil, err
	}
	return root, g.rows, nil
}

// object infers the schema of a non-empty mapping: its keys, and no others.
func (g *generator) object(n *yaml.Node, prefix string) (map[string]any, error) {
	props := map[string]any{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		path := prefix + key.Value
		s, err := g.property(key, value, path)
		if err != nil {
			return nil, err
		}
		props[key.Value] = s
	}
	return map[string]any{"type": "object", "additionalProperties": false, "properties": props}, nil
}

// property is the schema of one key: inferred from its default, then its annotation laid
// over. An annotation with $ref or oneOf replaces the inferred schema. It also records
// the key's reference row, or those of its children.
func (g *generator) property(key, value *yaml.Node, path string) (map[string]any, error) {
	c, err := parseComment(commentOf(key, value))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	replaced := c.schema != nil && (c.schema["$ref"] != nil || c.schema["oneOf"] != nil)
	var s map[string]any
	switch {
	case replaced:
		s = map[string]any{}
	case value.Kind == yaml.MappingNode && len(value.Content) > 0:
		if s, err = g.object(value, path+"."); err != nil {
			return nil, err
		}
	default:
		if s, err = infer(value); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	s = merge(s, c.schema)
	if c.description != "" {
		s["description"] = c.description
	}
	if _, typed := s["type"]; !typed && !replaced {
		return nil, fmt.Errorf("%s: its default (%s) gives no type: annotate it with %s {type: ...}", path, value.Tag, annotationMark)
	}
	if value.Kind != yaml.MappingNode || len(value.Content) == 0 || replaced {
		if c.description == "" {
			return nil, fmt.Errorf("%s has no comment: say what it is above it", path)
		}
		g.rows = append(g.rows, row{key: path, def: flow(value), kind: summary(s), description: c.description})
	}
	return s, nil
}

// infer is the schema a scalar, a list or an empty mapping says by itself.
func infer(n *yaml.Node) (map[string]any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		return map[string]any{"type": "object"}, nil
	case yaml.SequenceNode:
		s := map[string]any{"type": "array"}
		if len(n.Content) > 0 {
			items, err := infer(n.Content[0])
			if err != nil {
				return nil, err
			}
			s["items"] = items
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return map[string]any{"type": "string"}, nil
		case "!!int":
			return map[string]any{"type": "integer"}, nil
		case "!!float":
			return map[string]any{"type": "number"}, nil
		case "!!bool":
			return map[string]any{"type": "boolean"}, nil
		case "!!null":
			return map[string]any{}, nil
		}
	}
	return nil, fmt.Errorf("cannot infer a type from %s", n.Tag)
}

// merge lays over on base: mappings merge key by key, anything else is replaced.
func merge(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range over {
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = merge(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

// resolveRefs expands the short form $ref: NAME to #/definitions/NAME everywhere and
// fails on a reference to a definition that does not exist or with keywords beside it.
func (g *generator) resolveRefs(v any, where string) error {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/definitions/")
			if _, ok := g.definitions[name]; !ok {
				return fmt.Errorf("%s: $ref %q: no such definition (the header's %s definitions: %s)", where, ref, annotationMark, strings.Join(slices.Sorted(maps.Keys(g.definitions)), ", "))
			}
			v["$ref"] = "#/definitions/" + name
			// Draft-07 ignores a $ref's siblings: a limit written beside one would
			// silently not apply.
			for k := range v {
				if k != "$ref" && k != "description" {
					return fmt.Errorf("%s: %q beside $ref, which JSON Schema draft-07 ignores: put it in a definition", where, k)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := g.resolveRefs(v[k], where+"/"+k); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := g.resolveRefs(e, fmt.Sprintf("%s/%d", where, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// summary says in a few words what a schema accepts, for the reference's type column.
func summary(s map[string]any) string {
	if ref, ok := s["$ref"].(string); ok {
		return "`" + strings.TrimPrefix(ref, "#/definitions/") + "`"
	}
	if alts, ok := s["oneOf"].([]any); ok {
		var out []string
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				out = append(out, summary(m))
			}
		}
		return strings.Join(out, "; or ")
	}
	var parts []string
	switch t := s["type"].(type) {
	case string:
		parts = append(parts, t)
	case []any:
		var ts []string
		for _, e := range t {
			ts = append(ts, fmt.Sprint(e))
		}
		parts = append(parts, strings.Join(ts, " or "))
	}
	if enum, ok := s["enum"].([]any); ok {
		var vs []string
		for _, e := range enum {
			vs = append(vs, fmt.Sprintf("`%v`", e))
		}
		parts = append(parts, "one of "+strings.Join(vs, ", "))
	}
	if p, ok := s["pattern"].(string); ok {
		parts = append(parts, "matching `"+p+"`")
	}
	switch n := s["minLength"]; {
	case n == nil:
	case fmt.Sprint(n) == "1":
		parts = append(parts, "not empty")
	default:
		parts = append(parts, fmt.Sprintf("at least %v characters", n))
	}
	lo, hasLo := s["minimum"]
	if x, ok := s["exclusiveMinimum"]; ok {
		parts = append(parts, fmt.Sprintf("over %v", x))
	}
	hi, hasHi := s["maximum"]
	switch {
	case hasLo && hasHi:
		parts = append(parts, fmt.Sprintf("%v to %v", lo, hi))
	case hasLo:
		parts = append(parts, fmt.Sprintf("at least %v", lo))
	case hasHi:
		parts = append(parts, fmt.Sprintf("at most %v", hi))
	}
	if items, ok := s["items"].(map[string]any); ok {
		parts = append(parts, "of "+summary(items))
	}
	return strings.Join(parts, ", ")
}

// flow writes a default as one line of YAML, comments left out.
func flow(n *yaml.Node) string {
	c := stripped(n)
	out, err := yaml.Marshal(c)
	if err != nil {
		return n.Value
	}
	return strings.TrimSpace(string(out))
}

func stripped(n *yaml.Node) *yaml.Node {
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	if c.Kind == yaml.MappingNode || c.Kind == yaml.SequenceNode {
		c.Style = yaml.FlowStyle
	}
	c.Content = nil
	for _, e := range n.Content {
		c.Content = append(c.Content, stripped(e))
	}
	return &c
}
