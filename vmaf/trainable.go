package vmaf

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file opens a model's SVR to training (trainer/train): the trainer keeps the
// model's feature normalisation and support vectors and learns the SVR's coefficients
// and offset (libsvm's rho). Nothing here is on the scoring path.

// SVRParams are the parameters training changes: one coefficient per support vector and
// the offset rho, so that the SVR's output is sum_i Coef[i]*K_i(x) - Rho.
type SVRParams struct {
	Coef []float64
	Rho  float64
}

// Clone returns a deep copy of p.
func (p SVRParams) Clone() SVRParams {
	return SVRParams{Coef: append([]float64(nil), p.Coef...), Rho: p.Rho}
}

// SVR returns a copy of m's coefficients and offset.
func (m *Model) SVR() SVRParams {
	return SVRParams{Coef: append([]float64(nil), m.svm.coef...), Rho: m.svm.rho}
}

// SupportVectors returns the number of support vectors, the length of SVRParams.Coef.
func (m *Model) SupportVectors() int { return len(m.svm.sv) }

// FeatureMetrics returns the per-frame metric names (as Result.WriteJSON writes them,
// e.g. integer_vif_scale0 or integer_adm2_egl_1) of the model's features, in the model's
// order: the order KernelRow takes them in.
func (m *Model) FeatureMetrics() []string {
	names := make([]string, len(m.features))
	vif, adm := eglSuffix(m.vifEGL), eglSuffix(m.admEGL)
	for i, f := range m.features {
		switch {
		case f.kind <= featVIF3:
			names[i] = metricVIFScale + strconv.Itoa(int(f.kind-featVIF0)) + vif
		case f.kind == featADM2:
			names[i] = metricADM2 + adm
		case f.kind == featMotion2:
			names[i] = metricMotion2
		}
	}
	return names
}

// KernelRow writes K_i(x) = exp(-gamma |norm(x) - sv_i|^2) for every support vector i to
// dst (grown as needed) and returns it; x holds one frame's raw features in
// FeatureMetrics order.
func (m *Model) KernelRow(x, dst []float64) []float64 {
	dst = append(dst[:0], make([]float64, len(m.svm.sv))...)
	var norm [8]float64
	xn := norm[:0]
	for i, mf := range m.features {
		v := x[i]
		if m.linear {
			v = mf.slope*v + mf.intercept
		}
		xn = append(xn, v)
	}
	for i, sv := range m.svm.sv {
		var d2 float64
		for k, v := range sv {
			d := xn[k] - v
			d2 += d * d
		}
		dst[i] = math.Exp(-m.svm.gamma * d2)
	}
	return dst
}

// Output maps an SVR output to the frame's score as predict does (denormalise, clip) and
// returns d score / d svrOut: 1/slope, or 0 where the score is clipped. Models with an
// enabled score transform are not trainable and are refused by Trainable.
func (m *Model) Output(svrOut float64) (score, slope float64) {
	score, slope = svrOut, 1
	if m.linear {
		score, slope = (svrOut-m.intercept)/m.slope, 1/m.slope
	}
	if m.clip && (score < m.clipMin || score > m.clipMax) {
		return min(max(score, m.clipMin), m.clipMax), 0
	}
	return score, slope
}

// Trainable says why m cannot be trained, or nil: the phone variants' score transform
// is enabled by name, which a model file cannot carry.
func (m *Model) Trainable() error {
	if m.Transform {
		return fmt.Errorf("%w: model %s enables a score transform, which a trained model file cannot carry", ErrBadModel, m.Name)
	}
	return nil
}

// BuiltinModelJSON returns the JSON document of a built-in model without a score
// transform enabled (vmaf_v0.6.1, vmaf_v0.6.1neg).
func BuiltinModelJSON(name string) ([]byte, error) {
	if strings.ContainsAny(name, "/\\") || strings.HasSuffix(name, phoneSuffix) {
		return nil, fmt.Errorf("%w: %q is not a built-in model file", ErrUnknownModel, name)
	}
	data, err := builtinModels.ReadFile("models/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a built-in model file", ErrUnknownModel, name)
	}
	return data, nil
}

// WithSVR returns the libvmaf JSON model document doc with its SVR's coefficients and
// rho replaced by p: the same layout, normalisation, support vectors and every other key,
// so that libvmaf and ParseModel read it as the base model with new parameters. Numbers
// are written with 17 significant digits, which read back exactly.
func WithSVR(doc []byte, p SVRParams) ([]byte, error) {
	var top map[string]any
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadModel, err)
	}
	dict, ok := top["model_dict"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: no model_dict", ErrBadModel)
	}
	text, ok := dict["model"].(string)
	if !ok {
		return nil, fmt.Errorf("%w: no model text", ErrBadModel)
	}
	var b strings.Builder
	lines := strings.Split(text, "\n")
	sv, inSV := 0, false
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case inSV && trimmed != "":
			if sv >= len(p.Coef) {
				return nil, fmt.Errorf("%w: more support vectors than %d coefficients", ErrBadModel, len(p.Coef))
			}
			_, nodes, _ := strings.Cut(trimmed, " ")
			b.WriteString(strconv.FormatFloat(p.Coef[sv], 'g', 17, 64) + " " + nodes + " ")
			sv++
		case strings.HasPrefix(trimmed, "rho "):
			b.WriteString("rho " + strconv.FormatFloat(p.Rho, 'g', 17, 64))
		default:
			b.WriteString(line)
			inSV = inSV || trimmed == "SV"
		}
		b.WriteString("\n")
	}
	if sv != len(p.Coef) {
		return nil, fmt.Errorf("%w: %d support vectors for %d coefficients", ErrBadModel, sv, len(p.Coef))
	}
	dict["model"] = strings.TrimSuffix(b.String(), "\n")
	out, err := json.MarshalIndent(top, "", "    ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
