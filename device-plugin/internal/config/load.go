package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// The config file's type. Files of another apiVersion or kind are refused, so a future
// v2 can change meanings without being misread.
const (
	FileAPIVersion = "config.vmafx.dev/v1"
	FileKind       = "DevicePluginConfig"
)

// Loader binds the options to a FlagSet and, after parsing, resolves the effective
// Config.
type Loader struct {
	raw    map[string]*rawValue
	config *rawValue
}

// Bind registers every option's flag (and --config) on fs.
func Bind(fs *pflag.FlagSet) *Loader {
	l := &Loader{raw: map[string]*rawValue{}}
	for _, o := range options {
		scratchCfg := Default()
		scratch := o.bind(&scratchCfg)
		_, isBool := scratch.(*boolValue)
		rv := &rawValue{isBool: isBool, check: scratch}
		l.raw[o.key] = rv
		fs.Var(rv, o.flag, fmt.Sprintf("%s (env %s, file key %s)", o.usage, o.env, o.key))
		f := fs.Lookup(o.flag)
		f.DefValue = scratch.String()
		if isBool {
			f.NoOptDefVal = "true" // --cdi alone turns it on
		}
	}
	l.config = &rawValue{check: new(stringValue)}
	fs.Var(l.config, configFlag, fmt.Sprintf("Optional config file, apiVersion %s kind %s (env %s).", FileAPIVersion, FileKind, configEnv))
	return l
}

// Resolve builds the Config from defaults, then the config file, then the
// environment, then the flags given, and validates it. lookupEnv is os.LookupEnv
// outside tests; an empty environment variable counts as unset.
func (l *Loader) Resolve(lookupEnv func(string) (string, bool)) (Config, error) {
	cfg := Default()
	cfg.Origins = map[string]Source{}
	getenv := func(k string) string { v, _ := lookupEnv(k); return v }

	file := getenv(configEnv)
	if l.config.set {
		file = l.config.text
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return Config{}, fmt.Errorf("reading config file: %w", err)
		}
		if err := applyFile(&cfg, data); err != nil {
			return Config{}, fmt.Errorf("config file %s: %w", file, err)
		}
		cfg.File = file
	}
	for _, o := range options {
		if v := getenv(o.env); v != "" {
			if err := o.bind(&cfg).Set(v); err != nil {
				return Config{}, fmt.Errorf("environment variable %s: %w", o.env, err)
			}
			cfg.Origins[o.key] = SourceEnv
		}
	}
	for _, o := range options {
		if rv := l.raw[o.key]; rv.set {
			if err := o.bind(&cfg).Set(rv.text); err != nil {
				return Config{}, fmt.Errorf("flag --%s: %w", o.flag, err)
			}
			cfg.Origins[o.key] = SourceFlag
		}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("invalid configuration: %w", err)
	}
	return cfg, nil
}

// applyFile sets the options a config file names. Unknown keys are errors, so a typo
// never silently falls back to a default.
func applyFile(cfg *Config, data []byte) error {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(js))
	if err := dec.Decode(&fields); err != nil {
		return fmt.Errorf("must be a mapping: %w", err)
	}
	var version, kind string
	_ = json.Unmarshal(fields["apiVersion"], &version)
	_ = json.Unmarshal(fields["kind"], &kind)
	if version != FileAPIVersion || kind != FileKind {
		return fmt.Errorf("unsupported apiVersion %q kind %q: want apiVersion %s kind %s", version, kind, FileAPIVersion, FileKind)
	}
	delete(fields, "apiVersion")
	delete(fields, "kind")
	byKey := map[string]option{}
	for _, o := range options {
		byKey[o.key] = o
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o, ok := byKey[k]
		if !ok {
			return fmt.Errorf("unknown field %q", k)
		}
		raw := strings.TrimSpace(string(fields[k]))
		if raw == "null" {
			continue
		}
		text := raw
		if strings.HasPrefix(raw, `"`) {
			if err := json.Unmarshal(fields[k], &text); err != nil {
				return fmt.Errorf("field %s: %w", k, err)
			}
		}
		if err := o.bind(cfg).Set(text); err != nil {
			return fmt.Errorf("field %s: %w", k, err)
		}
		cfg.Origins[k] = SourceFile
	}
	return nil
}
