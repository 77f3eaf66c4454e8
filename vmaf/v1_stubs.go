package vmaf

// TEMPORARY: stand-ins for the option types the v1 kernels bring (adm_options.go,
// motion_options.go, cambi_options.go, speed.go), so the model and pipeline wiring
// compiles before they land. Removed when they merge.

import "fmt"

type speedOptions struct{}

func parseSpeedOptions(opts map[string]any) (speedOptions, error) {
	if len(opts) > 0 {
		return speedOptions{}, fmt.Errorf("unsupported speed options %v", opts)
	}
	return speedOptions{}, nil
}

func (speedOptions) suffix() string { return "" }

func (m *Model) checkSpeed(VideoInfo) error { return nil }
