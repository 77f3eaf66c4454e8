package vmaf

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

//go:embed models/vmaf_v0.6.1.json models/vmaf_v0.6.1neg.json
var builtinModels embed.FS

// phoneSuffix turns a built-in model name into its phone variant: the same
// model with its score transform enabled (libvmaf's --model ...:enable_transform).
const phoneSuffix = "phone"

// DefaultModel is the model Score uses when Options.Model is empty.
const DefaultModel = "vmaf_v0.6.1"

// featureKind identifies a per-frame feature this package computes.
type featureKind int

const (
	featVIF0 featureKind = iota
	featVIF1
	featVIF2
	featVIF3
	featADM2
	featMotion2
)

// libvmafFeatures maps libvmaf's feature names, as they appear in model
// files, to the features computed here.
var libvmafFeatures = map[string]featureKind{
	"VMAF_integer_feature_vif_scale0_score": featVIF0,
	"VMAF_integer_feature_vif_scale1_score": featVIF1,
	"VMAF_integer_feature_vif_scale2_score": featVIF2,
	"VMAF_integer_feature_vif_scale3_score": featVIF3,
	"VMAF_integer_feature_adm2_score":       featADM2,
	"VMAF_integer_feature_motion2_score":    featMotion2,
}

type modelFeature struct {
	kind             featureKind
	slope, intercept float64
}

// Model is a loaded libvmaf SVM model.
type Model struct {
	// Name is the model's name, used as the score's metric name "vmaf".
	Name string
	// Transform reports whether the score transform is applied (the
	// "phone" variants).
	Transform bool
	// SHA256 is the hex SHA-256 of the JSON document the model was parsed
	// from, so a score can name the exact model file that produced it.
	SHA256 string

	features         []modelFeature
	linear           bool
	slope, intercept float64
	svm              *svmModel
	clip             bool
	clipMin, clipMax float64
	xform            scoreTransform
	vifEGL, admEGL   float64
}

// scoreTransform is the optional polynomial, piecewise-linear and
// rectification mapping of the score (predict.c, transform).
type scoreTransform struct {
	p             [3]float64
	pSet          [3]bool
	knots         [][2]float64
	outGTE, outLT bool
}

// BuiltinModels lists the model names LoadModel resolves without a file.
func BuiltinModels() []string {
	return []string{"vmaf_v0.6.1", "vmaf_v0.6.1neg", "vmaf_v0.6.1" + phoneSuffix, "vmaf_v0.6.1neg" + phoneSuffix}
}

// LoadModel returns a built-in model by name (see BuiltinModels) or reads a
// libvmaf model JSON file from the path name. Errors wrap ErrUnknownModel
// when the name is neither, and ErrBadModel when the file is invalid.
func LoadModel(name string) (*Model, error) {
	if name == "" {
		name = DefaultModel
	}
	base, phone := strings.CutSuffix(name, phoneSuffix)
	if data, err := builtinModels.ReadFile("models/" + base + ".json"); err == nil && !strings.ContainsAny(base, "/\\") {
		m, err := ParseModel(data, name)
		if err != nil {
			return nil, err
		}
		m.Transform = phone
		return m, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %q is not a built-in model or a file", ErrUnknownModel, name)
		}
		return nil, fmt.Errorf("%w: %w", ErrUnknownModel, err)
	}
	name = strings.TrimSuffix(name[strings.LastIndexAny(name, "/\\")+1:], ".json")
	return ParseModel(data, name)
}

// modelJSON is the libvmaf model file layout (model.c, vmaf_read_json_model).
type modelJSON struct {
	ModelDict struct {
		Model            string              `json:"model"`
		ModelType        string              `json:"model_type"`
		FeatureNames     []string            `json:"feature_names"`
		FeatureOptsDicts []map[string]any    `json:"feature_opts_dicts"`
		NormType         string              `json:"norm_type"`
		Slopes           []float64           `json:"slopes"`
		Intercepts       []float64           `json:"intercepts"`
		ScoreClip        []float64           `json:"score_clip"`
		ScoreTransform   map[string]any      `json:"score_transform"`
		FeatureDict      map[string][]string `json:"feature_dict"`
	} `json:"model_dict"`
}

// ParseModel parses a libvmaf model JSON document. name becomes Model.Name.
// Only LIBSVMNUSVR models over the integer VIF, ADM2 and motion2 features
// are supported; anything else is an error wrapping ErrBadModel. The score
// transform is disabled; set Model.Transform to enable it.
func ParseModel(data []byte, name string) (*Model, error) {
	var mj modelJSON
	if err := json.Unmarshal(data, &mj); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadModel, err)
	}
	d := mj.ModelDict
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadModel, fmt.Sprintf(format, args...))
	}
	if d.ModelType != "LIBSVMNUSVR" {
		return nil, bad("unsupported model_type %q", d.ModelType)
	}
	n := len(d.FeatureNames)
	if n == 0 {
		return nil, bad("no feature_names")
	}
	sum := sha256.Sum256(data)
	m := &Model{Name: name, SHA256: hex.EncodeToString(sum[:]), vifEGL: defaultEnhnGainLimit, admEGL: defaultEnhnGainLimit, slope: 1}
	switch d.NormType {
	case "linear_rescale":
		m.linear = true
		if len(d.Slopes) != n+1 || len(d.Intercepts) != n+1 {
			return nil, bad("need %d slopes and intercepts", n+1)
		}
		m.slope, m.intercept = d.Slopes[0], d.Intercepts[0]
		if m.slope == 0 {
			return nil, bad("zero output slope")
		}
	case "none", "":
	default:
		return nil, bad("unsupported norm_type %q", d.NormType)
	}
	if d.FeatureOptsDicts != nil && len(d.FeatureOptsDicts) != n {
		return nil, bad("feature_opts_dicts has %d entries for %d features", len(d.FeatureOptsDicts), n)
	}
	vifSet, admSet := false, false
	for i, fname := range d.FeatureNames {
		kind, ok := libvmafFeatures[fname]
		if !ok {
			return nil, bad("unsupported feature %q", fname)
		}
		f := modelFeature{kind: kind, slope: 1}
		if m.linear {
			f.slope, f.intercept = d.Slopes[i+1], d.Intercepts[i+1]
		}
		egl := defaultEnhnGainLimit
		if d.FeatureOptsDicts != nil {
			for k, v := range d.FeatureOptsDicts[i] {
				x, ok := v.(float64)
				if !ok || x < 1 || x > defaultEnhnGainLimit {
					return nil, bad("feature option %s=%v", k, v)
				}
				switch {
				case k == "vif_enhn_gain_limit" && kind <= featVIF3, k == "adm_enhn_gain_limit" && kind == featADM2:
					egl = x
				default:
					return nil, bad("unsupported feature option %q for %s", k, fname)
				}
			}
		}
		switch {
		case kind <= featVIF3:
			if vifSet && egl != m.vifEGL {
				return nil, bad("VIF features with different gain limits")
			}
			m.vifEGL, vifSet = egl, true
		case kind == featADM2:
			if admSet && egl != m.admEGL {
				return nil, bad("ADM features with different gain limits")
			}
			m.admEGL, admSet = egl, true
		}
		m.features = append(m.features, f)
	}
	svm, err := parseSVM(d.Model, n)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadModel, err)
	}
	m.svm = svm
	if len(d.ScoreClip) != 0 {
		if len(d.ScoreClip) != 2 || d.ScoreClip[0] > d.ScoreClip[1] {
			return nil, bad("score_clip %v", d.ScoreClip)
		}
		m.clip, m.clipMin, m.clipMax = true, d.ScoreClip[0], d.ScoreClip[1]
	}
	if err := m.xform.parse(d.ScoreTransform); err != nil {
		return nil, fmt.Errorf("%w: score_transform: %w", ErrBadModel, err)
	}
	return m, nil
}

func (t *scoreTransform) parse(st map[string]any) error {
	for k, v := range st {
		switch k {
		case "p0", "p1", "p2":
			x, ok := v.(float64)
			if !ok {
				return fmt.Errorf("%s is not a number", k)
			}
			i := int(k[1] - '0')
			t.p[i], t.pSet[i] = x, true
		case "out_gte_in", "out_lte_in":
			b, err := jsonBool(v)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if k == "out_gte_in" {
				t.outGTE = b
			} else {
				t.outLT = b
			}
		case "knots":
			list, ok := v.([]any)
			if !ok || len(list) < 2 {
				return fmt.Errorf("knots must list at least two points")
			}
			for _, p := range list {
				xy, ok := p.([]any)
				if !ok || len(xy) != 2 {
					return fmt.Errorf("bad knot %v", p)
				}
				x, ok1 := xy[0].(float64)
				y, ok2 := xy[1].(float64)
				if !ok1 || !ok2 {
					return fmt.Errorf("bad knot %v", p)
				}
				t.knots = append(t.knots, [2]float64{x, y})
			}
		default:
			return fmt.Errorf("unknown key %q", k)
		}
	}
	return nil
}

func jsonBool(v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		return strconv.ParseBool(b)
	}
	return false, fmt.Errorf("not a boolean: %v", v)
}

// apply maps a score through the transform (predict.c, transform). Like
// libvmaf, the rectification compares with the stage before the
// piecewise-linear mapping, i.e. the polynomial's output.
func (t *scoreTransform) apply(y float64) float64 {
	out := y
	if t.pSet[0] || t.pSet[1] || t.pSet[2] {
		out = 0
		if t.pSet[0] {
			out += t.p[0]
		}
		if t.pSet[1] {
			out += t.p[1] * y
		}
		if t.pSet[2] {
			out += t.p[2] * y * y
		}
	}
	stage := out
	if len(t.knots) > 1 {
		out = piecewiseLinear(stage, t.knots)
	}
	if t.outLT && out > stage {
		out = stage
	}
	if t.outGTE && out < stage {
		out = stage
	}
	return out
}

// piecewiseLinear interpolates through the knots, extrapolating the first
// and last segments (predict.c, piecewise_linear_mapping).
func piecewiseLinear(x float64, knots [][2]float64) float64 {
	y := 0.0
	last := len(knots) - 2
	for i := 0; i <= last; i++ {
		x0, y0, x1, y1 := knots[i][0], knots[i][1], knots[i+1][0], knots[i+1][1]
		in := x0 <= x && x <= x1
		below := i == 0 && x < x0
		above := i == last && x > x1
		if !(in || below || above) {
			continue
		}
		if y0 == y1 {
			y = y0
		} else {
			slope := (y1 - y0) / (x1 - x0)
			y = y0 + slope*(x-x0)
		}
	}
	return y
}

// predict returns the model's score for one frame's features, in model
// order (predict.c, vmaf_predict_score_at_index): normalise, SVM, then
// denormalise, transform and clip.
func (m *Model) predict(f *FrameScore, x []float64) float64 {
	for i, mf := range m.features {
		v := f.feature(mf.kind)
		if m.linear {
			v = mf.slope*v + mf.intercept
		}
		x[i] = v
	}
	p := m.svm.predict(x)
	if m.linear {
		p = (p - m.intercept) / m.slope
	}
	if m.Transform {
		p = m.xform.apply(p)
	}
	if m.clip {
		p = min(max(p, m.clipMin), m.clipMax)
	}
	return p
}
