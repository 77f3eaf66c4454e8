package vmaf

// TEMPORARY: stand-ins for the option types the v1 kernels bring (adm_options.go,
// motion_options.go, cambi_options.go, speed.go), so the model and pipeline wiring
// compiles before they land. Removed when they merge.

import "fmt"

type admOptions struct{ egl float64 }

func parseADMOptions(opts map[string]any) (admOptions, error) {
	o := admOptions{egl: defaultEnhnGainLimit}
	for k, v := range opts {
		x, ok := v.(float64)
		if k != "adm_enhn_gain_limit" || !ok || x < 1 || x > defaultEnhnGainLimit {
			return o, fmt.Errorf("unsupported option %s=%v", k, v)
		}
		o.egl = x
	}
	return o, nil
}

func (o admOptions) suffix() string { return eglSuffix(o.egl) }

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
