package vmaf

// TEMPORARY: stand-ins for the option types the v1 kernels bring (adm_options.go,
// motion_options.go, cambi_options.go, speed.go), so the model and pipeline wiring
// compiles before they land. Removed when they merge.

import "fmt"

type motionOptions struct{}

func parseMotionOptions(opts map[string]any) (motionOptions, error) {
	if len(opts) > 0 {
		return motionOptions{}, fmt.Errorf("unsupported motion options %v", opts)
	}
	return motionOptions{}, nil
}

func (motionOptions) suffix() string { return "" }

type cambiOptions struct{}

func parseCAMBIOptions(opts map[string]any) (cambiOptions, error) {
	if len(opts) > 0 {
		return cambiOptions{}, fmt.Errorf("unsupported cambi options %v", opts)
	}
	return cambiOptions{}, nil
}

func (cambiOptions) suffix() string { return "" }

type speedOptions struct{}

func parseSpeedOptions(opts map[string]any) (speedOptions, error) {
	if len(opts) > 0 {
		return speedOptions{}, fmt.Errorf("unsupported speed options %v", opts)
	}
	return speedOptions{}, nil
}

func (speedOptions) suffix() string { return "" }
