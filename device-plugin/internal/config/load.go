package config

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/vmafx/vmafx/internal/cli"
)

// Name is the program, as --help and errors name it.
const Name = "vmafx-device-plugin"

// Summary is the first paragraph of vmafx-device-plugin --help.
const Summary = `vmafx-device-plugin advertises a node's VMAF scoring slots (vmafx.dev/slot) to the
kubelet and keeps the node's VmafxNode heartbeat (docs/device-plugin.md). A setting comes
from its flag, else its environment variable, else the config file (--config), else the
default.`

// The config file's type. Files of another apiVersion or kind are refused, so a future
// v2 can change meanings without being misread.
const (
	FileAPIVersion = "config.vmafx.dev/v1"
	FileKind       = "DevicePluginConfig"
)

// Loader holds the settings bound to a Config and, after parsing, resolves it.
type Loader struct {
	set *cli.Set
	cfg *Config
}

// NewLoader declares every setting on a fresh Set, bound to a Config of defaults.
func NewLoader() *Loader {
	cfg := Default()
	l := &Loader{set: cli.New(Name, Summary), cfg: &cfg}
	l.set.File(&cfg.File, configFlag, configEnv, FileAPIVersion, FileKind, "Optional config file (apiVersion "+FileAPIVersion+", kind "+FileKind+").")
	for _, o := range options {
		o.add(l.set, &cfg)
	}
	return l
}

// Set is the settings, for the program to add its libraries' flags to (klog's) before Parse.
func (l *Loader) Set() *cli.Set { return l.set }

// Bind registers every setting's flag (and --config) on fs, for a caller that parses fs
// itself and then calls Resolve.
func Bind(fs *pflag.FlagSet) *Loader {
	l := NewLoader()
	fs.AddFlagSet(l.set.FlagSet())
	return l
}

// Parse reads the command line and the environment through lookup (os.LookupEnv in the
// binary), and resolves the Config; it returns cli.ErrHelp after writing --help to help.
func (l *Loader) Parse(args []string, lookup cli.Lookup, help io.Writer) (Config, error) {
	if err := l.set.Parse(args, emptyUnset(lookup), help); err != nil {
		return Config{}, err
	}
	return l.finish()
}

// Resolve builds the Config from the flags given, else the environment, else the config
// file, else the defaults, and validates it. lookup is os.LookupEnv outside tests; an
// empty environment variable counts as unset.
func (l *Loader) Resolve(lookup cli.Lookup) (Config, error) {
	if err := l.set.Resolve(emptyUnset(lookup)); err != nil {
		return Config{}, err
	}
	return l.finish()
}

func emptyUnset(lookup cli.Lookup) cli.Lookup {
	return cli.Getenv(func(name string) string { v, _ := lookup(name); return v })
}

// finish records where each value came from and validates the whole.
func (l *Loader) finish() (Config, error) {
	cfg := *l.cfg
	cfg.Origins = map[string]Source{}
	for _, o := range options {
		if src := l.set.Source(o.flag); src != SourceDefault {
			cfg.Origins[o.key] = src
		}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("invalid %s configuration: %w", Name, err)
	}
	return cfg, nil
}
