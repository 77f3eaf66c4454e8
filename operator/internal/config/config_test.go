package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/internal/testutil"
)

var env = testutil.Env

func TestLoadDefaults(t *testing.T) {
	c, err := Load(env())
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.MetricsAddr, c.HealthProbeAddr, c.LeaderElection, c.LeaderElectionID, c.WebhookPort,
		c.GracefulShutdown, c.LogLevel, c.NodeStaleAfter, c.Worker.Image, c.MaxConcurrentReconciles}
	want := []any{":8081", ":8082", false, "vmafx-operator.vmafx.dev", 0,
		30 * time.Second, "info", 60 * time.Second, "vmafx-worker:dev", 16}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestLoadOverrides(t *testing.T) {
	c, err := Load(env(EnvMetricsAddr, "0", EnvLeaderElection, "true", EnvNodeStaleAfter, "90s",
		EnvWorkerImage, "registry.local/vmafx-worker:1.2", EnvWorkerPullPolicy, "Never", EnvLogLevel, "debug"))
	if err != nil {
		t.Fatal(err)
	}
	if c.MetricsAddr != "0" || !c.LeaderElection || c.NodeStaleAfter != 90*time.Second ||
		c.Worker.Image != "registry.local/vmafx-worker:1.2" || c.Worker.PullPolicy != "Never" || c.LogLevel != "debug" {
		t.Errorf("overrides not applied: %+v", c)
	}
}

func TestLoadRefusesInvalid(t *testing.T) {
	cases := map[string][]string{
		EnvMetricsAddr:                         {EnvMetricsAddr, "8081"},
		EnvHealthProbeAddr:                     {EnvHealthProbeAddr, "0"},
		EnvLeaderElection:                      {EnvLeaderElection, "yes please"},
		EnvWebhookPort:                         {EnvWebhookPort, "70000"},
		EnvGracefulShutdown:                    {EnvGracefulShutdown, "30"},
		EnvLogLevel:                            {EnvLogLevel, "verbose"},
		EnvNodeStaleAfter:                      {EnvNodeStaleAfter, "-5s"},
		EnvWorkerPullPolicy:                    {EnvWorkerPullPolicy, "Sometimes"},
		EnvWorkerCPURequest:                    {EnvWorkerCPURequest, "lots"},
		EnvMaxConcurrentReconciles:             {EnvMaxConcurrentReconciles, "0"},
		"VMAFX_OPERATOR_WORKER_MEMORY_REQUEST": {EnvWorkerMemoryRequest, "4Gi", EnvWorkerMemoryLimit, "1Gi"},
		EnvMaxRetryBackoff:                     {EnvRetryBackoff, "10m", EnvMaxRetryBackoff, "1m"},
		EnvAllowedHostPaths:                    {EnvAllowedHostPaths, "/srv/clips,data/clips"},
		EnvNamespace:                           {EnvNamespace, " "},
		EnvMaxWorkersPerNamespace:              {EnvMaxWorkersPerNamespace, "-1"},
		EnvKueueQueueName:                      {EnvKueueQueueName, "team a"},
		EnvUnhealthyThreshold:                  {EnvUnhealthyThreshold, "1.5"},
		EnvPendingDeadline:                     {EnvPendingDeadline, "-1m"},
		EnvPodStartTimeout:                     {EnvPodStartTimeout, "0"},
		EnvTerminatingTimeout:                  {EnvTerminatingTimeout, "soon"},
		EnvTTLAfterFinished:                    {EnvTTLAfterFinished, "forever"},
	}
	for name, kv := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load(env(kv...))
			if err == nil {
				t.Fatalf("accepted %v", kv)
			}
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name %s", err, name)
			}
		})
	}
}

func TestLoadReportsEveryInvalidVariable(t *testing.T) {
	_, err := Load(env(EnvLogLevel, "loud", EnvKubeAPIQPS, "fast"))
	if err == nil || !strings.Contains(err.Error(), EnvLogLevel) || !strings.Contains(err.Error(), EnvKubeAPIQPS) {
		t.Errorf("want both variables named, got %v", err)
	}
}

func TestLoadReliabilitySettings(t *testing.T) {
	c, err := Load(env())
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.Namespace, c.UnhealthyThreshold, c.PendingDeadline, c.PodStartTimeout, c.TerminatingTimeout,
		c.TTLAfterFinished, len(c.Volumes.HostPaths), len(c.Volumes.NFSServers)}
	want := []any{"vmafx-system", 0.55, time.Duration(0), 10 * time.Minute, 2 * time.Minute, 7 * 24 * time.Hour, 0, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}

	c, err = Load(env(EnvAllowedHostPaths, " /srv/clips/ , /var/lib/vmafx/../vmafx/x,", EnvAllowedNFSServers, "nas.local, 10.0.0.5",
		EnvNamespace, "scoring", EnvPendingDeadline, "0", EnvTTLAfterFinished, "never"))
	if err != nil {
		t.Fatal(err)
	}
	got = []any{c.Volumes.HostPaths, c.Volumes.NFSServers, c.Namespace, c.PendingDeadline, c.TTLAfterFinished}
	want = []any{[]string{"/srv/clips", "/var/lib/vmafx/x"}, []string{"nas.local", "10.0.0.5"}, "scoring", time.Duration(0), time.Duration(-1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}
}

func TestLoadFairSharing(t *testing.T) {
	c, err := Load(env())
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxWorkersPerNamespace != 0 || c.Worker.KueueQueueName != "" {
		t.Errorf("defaults: cap %d, queue %q; want no cap and no Kueue queue", c.MaxWorkersPerNamespace, c.Worker.KueueQueueName)
	}
	c, err = Load(env(EnvMaxWorkersPerNamespace, "8", EnvKueueQueueName, "vmafx"))
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxWorkersPerNamespace != 8 || c.Worker.KueueQueueName != "vmafx" {
		t.Errorf("cap %d, queue %q; want 8 and vmafx", c.MaxWorkersPerNamespace, c.Worker.KueueQueueName)
	}
}

func TestOldSettingsSet(t *testing.T) {
	env := map[string]string{"VMAFX_OPERATOR_LOG_LEVEL": "debug", "VMAFX_OPERATOR_WEBHOOKS_ENABLED": "false", EnvLogLevel: "info"}
	got := OldSettingsSet(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if len(got) != 2 || got[0].Name != "VMAFX_OPERATOR_LOG_LEVEL" || got[1].Name != "VMAFX_OPERATOR_WEBHOOKS_ENABLED" || !strings.Contains(got[0].Instead, EnvLogLevel) {
		t.Errorf("old settings %+v", got)
	}
	if got := OldSettingsSet(func(string) (string, bool) { return "", false }); len(got) != 0 {
		t.Errorf("nothing set, named %+v", got)
	}
}
