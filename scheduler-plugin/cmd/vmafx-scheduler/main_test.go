package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/scheduler-plugin/apis/config"
	"github.com/vmafx/vmafx/scheduler-plugin/plugins"
)

// shippedConfig is the KubeSchedulerConfiguration the Deployment mounts.
var shippedConfig = filepath.Join("..", "..", "..", "manifests", "helm", "vmafx", "files", "scheduler-config.yaml")

// profile returns the named profile of cfg.
func profile(t *testing.T, cfg *schedconfig.KubeSchedulerConfiguration, name string) *schedconfig.KubeSchedulerProfile {
	t.Helper()
	for i := range cfg.Profiles {
		if cfg.Profiles[i].SchedulerName == name {
			return &cfg.Profiles[i]
		}
	}
	t.Fatalf("no profile %q in the config", name)
	return nil
}

// placementArgs returns the VmafxPlacement args of a profile, as the plugin receives them.
func placementArgs(t *testing.T, prof *schedconfig.KubeSchedulerProfile) *config.VmafxPlacementArgs {
	t.Helper()
	for _, pc := range prof.PluginConfig {
		if pc.Name == "VmafxPlacement" {
			args, ok := pc.Args.(*config.VmafxPlacementArgs)
			if !ok {
				t.Fatalf("VmafxPlacement args decoded as %T, want *config.VmafxPlacementArgs", pc.Args)
			}
			return args
		}
	}
	t.Fatal("no pluginConfig for VmafxPlacement")
	return nil
}

func TestShippedConfigDecodes(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	cfg, err := options.LoadConfigFromFile(logger, shippedConfig)
	if err != nil {
		t.Fatalf("loading %s: %v", shippedConfig, err)
	}
	if got := cfg.LeaderElection; !got.LeaderElect || got.ResourceName != "vmafx-scheduler" || got.ResourceNamespace != vmafxv1.SystemNamespace {
		t.Errorf("leader election = %+v, want the lease %s/vmafx-scheduler", got, vmafxv1.SystemNamespace)
	}
	prof := profile(t, cfg, vmafxv1.SchedulerName)
	enabled := map[string]int32{}
	for _, p := range prof.Plugins.MultiPoint.Enabled {
		enabled[p.Name] = p.Weight
	}
	if w, ok := enabled["VmafxPlacement"]; !ok || w != 5 {
		t.Errorf("VmafxPlacement in multiPoint: enabled %v, weight %d; want enabled with weight 5", ok, w)
	}
	var queueSort []string
	for _, p := range prof.Plugins.QueueSort.Enabled {
		queueSort = append(queueSort, p.Name)
	}
	if diff := cmp.Diff([]string{"VmafxPriority"}, queueSort); diff != "" {
		t.Errorf("queueSort plugins (-want +got):\n%s", diff)
	}
	if _, ok := enabled["NodeResourcesFit"]; !ok {
		t.Errorf("NodeResourcesFit is not enabled: nothing would check vmafx.dev/slot capacity")
	}
	want := &config.VmafxPlacementArgs{
		HeartbeatStaleAfter: metav1.Duration{Duration: time.Minute},
		ScoringStrategy:     config.Spread,
		Weights:             config.ScoreWeights{Slots: 2, Freshness: 1, Vendor: 1},
		VendorPreference:    []vmafxv1.GPUVendor{vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD, vmafxv1.VendorIntel},
	}
	if diff := cmp.Diff(want, placementArgs(t, prof)); diff != "" {
		t.Errorf("VmafxPlacement args (-want +got):\n%s", diff)
	}
}

// writeConfig writes a KubeSchedulerConfiguration with one vmafx-scheduler profile whose
// VmafxPlacement pluginConfig entry is args (none when empty).
func writeConfig(t *testing.T, args string) string {
	t.Helper()
	cfg := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: vmafx-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: VmafxPlacement
`
	if args != "" {
		cfg += "    pluginConfig:\n      - name: VmafxPlacement\n        args:\n" + args
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestArgsDefaultedWhenAbsent(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	cfg, err := options.LoadConfigFromFile(logger, writeConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	args := placementArgs(t, profile(t, cfg, vmafxv1.SchedulerName))
	if args.HeartbeatStaleAfter.Duration != time.Minute || args.ScoringStrategy != config.Spread || args.Weights.Slots != 2 {
		t.Errorf("args without a pluginConfig entry = %+v, want the defaults", args)
	}
}

func TestArgsPartlySetAreDefaulted(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	cfg, err := options.LoadConfigFromFile(logger, writeConfig(t, "          scoringStrategy: BinPack\n          weights: {vendor: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := config.ScoreWeights{Slots: 2, Freshness: 1, Vendor: 0}
	args := placementArgs(t, profile(t, cfg, vmafxv1.SchedulerName))
	if args.ScoringStrategy != config.BinPack || args.Weights != want || args.HeartbeatStaleAfter.Duration != time.Minute {
		t.Errorf("args = %+v, want BinPack, weights %+v, staleness 1m", args, want)
	}
}

func TestUnknownArgsFieldRefused(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	_, err := options.LoadConfigFromFile(logger, writeConfig(t, "          heartbeatStaleAfterSeconds: 60\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown field "heartbeatStaleAfterSeconds"`) {
		t.Errorf("unknown field: err = %v, want a strict decoding error naming it", err)
	}
}

// TestInvalidArgsStopTheScheduler builds the scheduler the way the vmafx-scheduler command
// does (app.Setup with the plugins' options) from a config with invalid args: it must
// refuse to start, naming each bad field. No API server is contacted before that point.
func TestInvalidArgsStopTheScheduler(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := options.NewOptions()
	opts.ConfigFile = writeConfig(t, "          heartbeatStaleAfter: 0s\n          vendorPreference: [nvidia, cpu]\n")
	opts.Master = "http://127.0.0.1:1"
	opts.SecureServing.BindPort = 0
	_, _, err := app.Setup(ctx, opts, plugins.Options()...)
	if err == nil {
		t.Fatal("the scheduler started with invalid VmafxPlacement args")
	}
	for _, want := range []string{
		`initializing plugin "VmafxPlacement"`,
		"pluginConfig[VmafxPlacement].args.heartbeatStaleAfter",
		"pluginConfig[VmafxPlacement].args.vendorPreference[1]",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
