package vmaf

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// svmModel is a libsvm nu-SVR model with an RBF kernel, the only kind
// libvmaf's VMAF models use. Support vectors are stored densely.
type svmModel struct {
	gamma float64
	rho   float64
	coef  []float64
	sv    [][]float64 // sv[i][k] is feature k+1 of support vector i
	dim   int
}

// parseSVM parses libsvm's text model format (svm_load_model) for an
// nu_svr / rbf model with dim features.
func parseSVM(text string, dim int) (*svmModel, error) {
	m := &svmModel{dim: dim}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	total := -1
	var haveGamma, haveRho bool
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		var err error
		switch key {
		case "svm_type":
			if val != "nu_svr" && val != "epsilon_svr" {
				return nil, fmt.Errorf("unsupported svm_type %q", val)
			}
		case "kernel_type":
			if val != "rbf" {
				return nil, fmt.Errorf("unsupported kernel_type %q", val)
			}
		case "gamma":
			m.gamma, err = strconv.ParseFloat(val, 64)
			haveGamma = true
		case "rho":
			m.rho, err = strconv.ParseFloat(val, 64)
			haveRho = true
		case "total_sv":
			total, err = strconv.Atoi(val)
		case "nr_class", "label", "nr_sv", "probA", "probB", "degree", "coef0":
		case "SV":
			if err := m.parseVectors(sc); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown svm model line %q", truncateForError([]byte(line)))
		}
		if err != nil {
			return nil, fmt.Errorf("svm %s: %w", key, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !haveGamma || !haveRho || len(m.sv) == 0 {
		return nil, fmt.Errorf("svm model lacks gamma, rho or support vectors")
	}
	if total >= 0 && total != len(m.sv) {
		return nil, fmt.Errorf("svm total_sv %d but %d vectors", total, len(m.sv))
	}
	return m, nil
}

func (m *svmModel) parseVectors(sc *bufio.Scanner) error {
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		c, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return fmt.Errorf("svm coefficient %q", fields[0])
		}
		v := make([]float64, m.dim)
		for _, f := range fields[1:] {
			is, vs, ok := strings.Cut(f, ":")
			idx, err1 := strconv.Atoi(is)
			x, err2 := strconv.ParseFloat(vs, 64)
			if !ok || err1 != nil || err2 != nil || idx < 1 || idx > m.dim {
				return fmt.Errorf("svm node %q", f)
			}
			v[idx-1] = x
		}
		m.coef = append(m.coef, c)
		m.sv = append(m.sv, v)
	}
	return nil
}

// predict returns sum_i coef_i * exp(-gamma |x - sv_i|^2) - rho, libsvm's
// svm_predict for regression.
func (m *svmModel) predict(x []float64) float64 {
	var sum float64
	for i, sv := range m.sv {
		var d2 float64
		for k, v := range sv {
			d := x[k] - v
			d2 += d * d
		}
		sum += m.coef[i] * math.Exp(-m.gamma*d2)
	}
	return sum - m.rho
}
