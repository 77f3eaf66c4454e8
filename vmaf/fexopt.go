package vmaf

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// fexOption describes one option of a libvmaf feature extractor (a VmafOption):
// how a model's feature_opts_dicts value for it is read and checked, and how a
// non-default value names the extractor's metrics.
type fexOption struct {
	name  string
	alias string // the key in metric names; the name when empty
	kind  fexOptionKind
	// min and max bound int and double values, as libvmaf's opt.c checks them.
	min, max float64
	def      any // bool, int, float64 or string
	// param is VMAF_OPT_FLAG_FEATURE_PARAM: a non-default value adds
	// "_alias[_value]" to the metric names.
	param bool
}

type fexOptionKind int

const (
	fexBool fexOptionKind = iota
	fexInt
	fexDouble
	fexString
)

// parseFexOptions reads one feature_opts_dicts entry of feature against its
// option table and returns every option's value, the defaults included.
// Values become what libvmaf's model reader and opt.c make of them
// (read_json_model.c, parse_feature_opts_dicts; dict.c; opt.c): a JSON number
// is rounded to float, printed with "%g" and parsed back, so doubles keep six
// significant digits; booleans must be JSON booleans, strings JSON strings.
// Unlike libvmaf, which truncates, a fractional value of an int option is an
// error; so are unknown keys, wrong types and values out of range.
func parseFexOptions(feature string, table []fexOption, opts map[string]any) (map[string]any, error) {
	vals := make(map[string]any, len(table))
	for _, o := range table {
		vals[o.name] = o.def
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the first bad key deterministically
	for _, k := range keys {
		i := slices.IndexFunc(table, func(o fexOption) bool { return o.name == k })
		if i < 0 {
			return nil, fmt.Errorf("%s: unknown option %q", feature, k)
		}
		v, err := table[i].read(opts[k])
		if err != nil {
			return nil, fmt.Errorf("%s: option %s: %w", feature, k, err)
		}
		vals[k] = v
	}
	return vals, nil
}

// read converts one value as libvmaf would, or says why it cannot.
func (o fexOption) read(v any) (any, error) {
	switch o.kind {
	case fexBool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("want true or false, got %v (%T)", v, v)
		}
		return b, nil
	case fexString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %v (%T)", v, v)
		}
		return s, nil
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	default:
		return nil, fmt.Errorf("want a number, got %v (%T)", v, v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("want a finite number, got %v", f)
	}
	// VMAF_DICT_NORMALIZE_NUMERICAL_VALUES: strtof, then "%g".
	norm, err := strconv.ParseFloat(fexFormatG(float64(float32(f))), 64)
	if err != nil {
		return nil, err
	}
	if o.kind == fexInt {
		if norm != math.Trunc(norm) {
			return nil, fmt.Errorf("want an integer, got %v", f)
		}
	}
	if norm < o.min || norm > o.max {
		return nil, fmt.Errorf("%v is outside [%v, %v]", f, o.min, o.max)
	}
	if o.kind == fexInt {
		return int(norm), nil
	}
	return norm, nil
}

// fexFormatG is C's "%g": six significant digits, trailing zeros removed.
func fexFormatG(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

// fexSuffix is the suffix libvmaf gives an extractor's metric names for the
// option values vals (feature_name.c, vmaf_feature_name_from_options): for
// every feature parameter whose value differs from its default, in the
// alphabetical order of the option names, "_alias" for a boolean and
// "_alias_value" otherwise, doubles printed with "%g".
func fexSuffix(table []fexOption, vals map[string]any) string {
	opts := slices.Clone(table)
	slices.SortFunc(opts, func(a, b fexOption) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	for _, o := range opts {
		v, ok := vals[o.name]
		if !o.param || !ok || v == o.def {
			continue
		}
		key := o.alias
		if key == "" {
			key = o.name
		}
		b.WriteString("_" + key)
		switch x := v.(type) {
		case bool:
		case float64:
			b.WriteString("_" + fexFormatG(x))
		default:
			fmt.Fprintf(&b, "_%v", x)
		}
	}
	return b.String()
}
