package config

// OldSetting is a variable of the original VMAFX operator README that this operator does
// not read: set, it would be ignored without a word, so the operator names it at start.
type OldSetting struct {
	// Name is the old variable.
	Name string
	// Instead says what replaces it, or why there is nothing to set.
	Instead string
}

// oldSettings are the original README's variables, renamed or gone.
var oldSettings = []OldSetting{
	{"VMAFX_CONTROLLER_GRPC_ADDR", "VMAFX has no controller process and no gRPC API: jobs are VmafxJob objects; the HTTP scoring API is vmafx-api (chart gateway.api, its --listen flag)"},
	{"VMAFX_CONTROLLER_HTTP_ADDR", "VMAFX has no controller process: the HTTP scoring API is vmafx-api (chart gateway.api, its --listen flag)"},
	{"VMAFX_OPERATOR_PROBE_ADDR", "renamed " + EnvHealthProbeAddr},
	{"VMAFX_OPERATOR_LEADER_ELECT", "renamed " + EnvLeaderElection},
	{"VMAFX_OPERATOR_LOG_LEVEL", "renamed " + EnvLogLevel + ", shared by every VMAFX program"},
	{"VMAFX_OPERATOR_WEBHOOKS_ENABLED", "gone: the CRDs validate every field (OpenAPI and CEL) and the chart's ValidatingAdmissionPolicy checks references, so there is no webhook to enable"},
}

// OldSettingsSet returns the old settings lookup has a value for, in a fixed order.
func OldSettingsSet(lookup Lookup) []OldSetting {
	var set []OldSetting
	for _, o := range oldSettings {
		if _, ok := lookup(o.Name); ok {
			set = append(set, o)
		}
	}
	return set
}
