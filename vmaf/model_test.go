package vmaf

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

func TestLoadModel(t *testing.T) {
	tests := []struct {
		name      string
		transform bool
		vifEGL    float64
	}{
		{"", false, 100},
		{"vmaf_v0.6.1", false, 100},
		{"vmaf_v0.6.1neg", false, 1},
		{"vmaf_v0.6.1phone", true, 100},
		{"vmaf_v0.6.1negphone", true, 1},
		{"models/vmaf_v0.6.1.json", false, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := LoadModel(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if m.Transform != tc.transform || m.vifEGL != tc.vifEGL || m.admEGL != tc.vifEGL {
				t.Fatalf("got transform %v egl %v/%v, want %v %v", m.Transform, m.vifEGL, m.admEGL, tc.transform, tc.vifEGL)
			}
			if len(m.features) != 6 || len(m.svm.sv) != 211 {
				t.Fatalf("got %d features, %d support vectors", len(m.features), len(m.svm.sv))
			}
		})
	}
}

func TestModelSHA256(t *testing.T) {
	for _, tc := range []struct{ name, file string }{
		{"vmaf_v0.6.1", "models/vmaf_v0.6.1.json"},
		{"vmaf_v0.6.1phone", "models/vmaf_v0.6.1.json"},
		{"vmaf_v0.6.1neg", "models/vmaf_v0.6.1neg.json"},
		{"models/vmaf_v0.6.1neg.json", "models/vmaf_v0.6.1neg.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			m, err := LoadModel(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if want := hex.EncodeToString(sum[:]); m.SHA256 != want {
				t.Fatalf("SHA256 = %s, want %s", m.SHA256, want)
			}
		})
	}
}

func TestLoadModelErrors(t *testing.T) {
	good, err := os.ReadFile("models/vmaf_v0.6.1.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data string
		want error
	}{
		{"not json", "model", ErrBadModel},
		{"truncated", string(good[:len(good)/2]), ErrBadModel},
		{"empty object", "{}", ErrBadModel},
		{"unsupported feature", strings.Replace(string(good), "VMAF_integer_feature_adm2_score", "VMAF_feature_adm2_score", 1), ErrBadModel},
		{"bad svm", strings.Replace(string(good), "kernel_type rbf", "kernel_type linear", 1), ErrBadModel},
		{"bad norm", strings.Replace(string(good), `"linear_rescale"`, `"sigmoid"`, 1), ErrBadModel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseModel([]byte(tc.data), "x"); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := LoadModel("no_such_model"); !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("unknown model: err = %v, want ErrUnknownModel", err)
	}
}

func TestScoreTransform(t *testing.T) {
	m, err := LoadModel("vmaf_v0.6.1phone")
	if err != nil {
		t.Fatal(err)
	}
	// p0 + p1 x + p2 x², never below x (out_gte_in).
	if got, want := m.xform.apply(50), 1.70674692+1.72643844*50-0.00705305*2500; math.Abs(got-want) > 1e-12 {
		t.Fatalf("apply(50) = %v, want %v", got, want)
	}
	// libvmaf rectifies against the polynomial's output, not the input, so
	// out_gte_in has no effect without knots (predict.c, transform).
	if got, want := m.xform.apply(200), 1.70674692+1.72643844*200-0.00705305*40000; math.Abs(got-want) > 1e-9 {
		t.Fatalf("apply(200) = %v, want %v", got, want)
	}
	knots := [][2]float64{{0, 0}, {50, 80}, {100, 100}}
	for _, c := range []struct{ x, want float64 }{{25, 40}, {75, 90}, {-10, -16}, {110, 104}} {
		if got := piecewiseLinear(c.x, knots); got != c.want {
			t.Errorf("piecewiseLinear(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

// FuzzModelJSON checks that arbitrary model files never panic and fail only
// with ErrBadModel.
func FuzzModelJSON(f *testing.F) {
	for _, name := range []string{"models/vmaf_v0.6.1.json", "models/vmaf_v0.6.1neg.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"model_dict": {"model_type": "LIBSVMNUSVR", "feature_names": ["VMAF_integer_feature_adm2_score"], "norm_type": "none", "model": "svm_type nu_svr\nkernel_type rbf\ngamma 1\nrho 0\nSV\n1 1:0.5\n"}}`))
	f.Add([]byte(`{"model_dict": {"model": "SV\n1 7:1\n"}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseModel(data, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrBadModel) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		m.Transform = true
		x := make([]float64, len(m.features))
		_ = m.predict(&FrameScore{}, x)
	})
}
