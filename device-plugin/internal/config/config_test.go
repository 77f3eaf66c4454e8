package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
)

func resolve(t *testing.T, args []string, env map[string]string) (Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	l := Bind(fs)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	return l.Resolve(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const fileHeader = "apiVersion: config.vmafx.dev/v1\nkind: DevicePluginConfig\n"

func TestPrecedence(t *testing.T) {
	file := writeFile(t, fileHeader+"slotsPerDevice: 2\ncpusPerSlot: 3\nvendor: amd\nrecoveryDelay: 5s\ncdi: true\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want func(*Config)
	}{
		{
			name: "defaults",
			want: func(c *Config) {},
		},
		{
			name: "file over default",
			args: []string{"--config", file},
			want: func(c *Config) {
				c.File, c.SlotsPerDevice, c.CPUsPerSlot, c.Vendor, c.RecoveryDelay, c.CDI = file, 2, 3, "amd", 5*time.Second, true
			},
		},
		{
			name: "file named by env",
			env:  map[string]string{"VMAFX_CONFIG": file},
			want: func(c *Config) {
				c.File, c.SlotsPerDevice, c.CPUsPerSlot, c.Vendor, c.RecoveryDelay, c.CDI = file, 2, 3, "amd", 5*time.Second, true
			},
		},
		{
			name: "env over file",
			args: []string{"--config", file},
			env:  map[string]string{"VMAFX_SLOTS_PER_DEVICE": "6", "VMAFX_CDI": "false", "NODE_NAME": "node-a", "POD_NAMESPACE": "other"},
			want: func(c *Config) {
				c.File, c.SlotsPerDevice, c.CPUsPerSlot, c.Vendor, c.RecoveryDelay, c.CDI = file, 6, 3, "amd", 5*time.Second, false
				c.NodeName, c.Namespace = "node-a", "other"
			},
		},
		{
			name: "flag over env over file",
			args: []string{"--config", file, "--slots-per-device=8", "--vendor", "intel", "--cdi"},
			env:  map[string]string{"VMAFX_SLOTS_PER_DEVICE": "6", "VMAFX_CDI": "false", "VMAFX_VENDOR": "nvidia"},
			want: func(c *Config) {
				c.File, c.SlotsPerDevice, c.CPUsPerSlot, c.Vendor, c.RecoveryDelay, c.CDI = file, 8, 3, "intel", 5*time.Second, true
			},
		},
		{
			name: "empty env is unset",
			env:  map[string]string{"VMAFX_SLOTS_PER_DEVICE": ""},
			want: func(c *Config) {},
		},
		{
			name: "heartbeat off needs no node name",
			args: []string{"--heartbeat-interval=0"},
			env:  map[string]string{"NODE_NAME": ""},
			want: func(c *Config) { c.HeartbeatInterval = 0 },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"NODE_NAME": "node-1"}
			for k, v := range tc.env {
				env[k] = v
			}
			want := Default()
			want.NodeName = env["NODE_NAME"]
			tc.want(&want)
			got, err := resolve(t, tc.args, env)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Config{}, "Origins")); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOrigins(t *testing.T) {
	file := writeFile(t, fileHeader+"slotsPerDevice: 2\ncpusPerSlot: 3\nvendor: amd\n")
	got, err := resolve(t, []string{"--config=" + file, "--vendor=cpu"}, map[string]string{"NODE_NAME": "n", "VMAFX_CPUS_PER_SLOT": "1"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Source{"slotsPerDevice": SourceFile, "cpusPerSlot": SourceEnv, "vendor": SourceFlag, "nodeName": SourceEnv}
	if diff := cmp.Diff(want, got.Origins); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	kv := got.KeysAndValues()
	if len(kv) != 2*len(options) {
		t.Fatalf("KeysAndValues has %d entries, want %d", len(kv), 2*len(options))
	}
	var line string
	for i := 0; i < len(kv); i += 2 {
		line += kv[i].(string) + "=" + kv[i+1].(string) + " "
	}
	for _, wantPart := range []string{"vendor=cpu (flag)", "slotsPerDevice=2 (file)", "cpusPerSlot=1 (env)", "hostRoot=/ (default)"} {
		if !strings.Contains(line, wantPart) {
			t.Errorf("KeysAndValues %q lacks %q", line, wantPart)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		file     string
		wantText string
	}{
		{name: "bad flag value", args: []string{"--slots-per-device=many"}, wantText: "not an integer"},
		{name: "bad env value", env: map[string]string{"VMAFX_RECOVERY_DELAY": "3"}, wantText: "VMAFX_RECOVERY_DELAY"},
		{name: "wrong file version", file: "apiVersion: config.vmafx.dev/v2\nkind: DevicePluginConfig\n", wantText: "unsupported apiVersion"},
		{name: "missing file version", file: "slotsPerDevice: 2\n", wantText: "unsupported apiVersion"},
		{name: "unknown file key", file: fileHeader + "slotsPerGPU: 2\n", wantText: `unknown field "slotsPerGPU"`},
		{name: "bad file value", file: fileHeader + "healthCheckInterval: fast\n", wantText: "field healthCheckInterval"},
		{name: "zero slots", args: []string{"--slots-per-device=0"}, wantText: "slotsPerDevice"},
		{name: "too many slots", args: []string{"--slots-per-device=65"}, wantText: "slotsPerDevice"},
		{name: "unknown vendor", args: []string{"--vendor=matrox"}, wantText: "vendor"},
		{name: "zero cpus per slot", args: []string{"--cpus-per-slot=0"}, wantText: "cpusPerSlot"},
		{name: "negative cpu slots", args: []string{"--cpu-slots=-1"}, wantText: "cpuSlots"},
		{name: "bad cdi kind", args: []string{"--cdi-kind=gpu"}, wantText: "cdiKind"},
		{name: "zero health interval", args: []string{"--health-check-interval=0s"}, wantText: "healthCheckInterval"},
		{name: "heartbeat without node", env: map[string]string{"NODE_NAME": ""}, wantText: "nodeName"},
		{name: "bad node name", env: map[string]string{"NODE_NAME": "Node_1"}, wantText: "nodeName"},
		{name: "missing file", args: []string{"--config=/nonexistent/vmafx.yaml"}, wantText: "reading config file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"NODE_NAME": "node-1"}
			for k, v := range tc.env {
				env[k] = v
			}
			args := tc.args
			if tc.file != "" {
				args = append(args, "--config", writeFile(t, tc.file))
			}
			_, err := resolve(t, args, env)
			if err == nil {
				t.Fatalf("Resolve succeeded, want an error mentioning %q", tc.wantText)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not mention %q", err, tc.wantText)
			}
		})
	}
}

func TestOptionsDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range Options() {
		for _, name := range []string{"--" + o.Flag, "env " + o.Env, "key " + o.Key} {
			if seen[name] && !strings.HasSuffix(name, " ") {
				t.Errorf("%s appears twice", name)
			}
			seen[name] = true
		}
		if o.Usage == "" {
			t.Errorf("option %s has no usage", o.Flag)
		}
	}
}
