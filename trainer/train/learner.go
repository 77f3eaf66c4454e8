package train

import (
	"errors"
	"fmt"
	"math"

	"github.com/vmafx/vmafx/vmaf"
)

// Config are a learner's settings.
type Config struct {
	// LearningRate is the share of a sample's clipped error one step corrects, in (0, 1].
	LearningRate float64
	// EMADecay is the weight of the published parameters' past in each step, in [0, 1).
	EMADecay float64
	// UpdateClip bounds the error, in VMAF points, that drives one step, so that one
	// mislabelled sample cannot move the model far.
	UpdateClip float64
	// HeldOutPercent of the samples, in arrival order, are held out (0 to 50).
	HeldOutPercent int
}

// DefaultUpdateClip is 10 VMAF points: about one step of a five-step opinion scale.
const DefaultUpdateClip = 10

// ErrSeen reports a sample whose ID the learner has already counted.
var ErrSeen = errors.New("train: sample already counted")

// Sample is one labelled job.
type Sample struct {
	// ID identifies the sample for the ledger (the job's UID).
	ID string
	// Frames holds each frame's raw features in the model's FeatureMetrics order.
	Frames [][]float64
	// Label is the subjective score, 0 to 100.
	Label float64
}

// Learner holds a model in training. It is not safe for concurrent use.
type Learner struct {
	base   *vmaf.Model
	cfg    Config
	theta  vmaf.SVRParams // the SGD iterate
	ema    vmaf.SVRParams // the published parameters
	ledger map[string]struct{}
	// ledgerOrder keeps the ledger in arrival order for the saved state.
	ledgerOrder []string

	samples, heldOut int64
	// trainSSE sums the squared error of the published model on each training sample
	// just before it learned from it (progressive validation).
	trainSSE float64
	held     []Sample

	// scratch
	rows [][]float64
	grad []float64
}

// New returns a learner that starts from base, which must be trainable.
func New(base *vmaf.Model, cfg Config) (*Learner, error) {
	if err := base.Trainable(); err != nil {
		return nil, err
	}
	switch {
	case !(cfg.LearningRate > 0 && cfg.LearningRate <= 1):
		return nil, fmt.Errorf("learning rate %v is not in (0, 1]", cfg.LearningRate)
	case !(cfg.EMADecay >= 0 && cfg.EMADecay < 1):
		return nil, fmt.Errorf("EMA decay %v is not in [0, 1)", cfg.EMADecay)
	case cfg.HeldOutPercent < 0 || cfg.HeldOutPercent > 50:
		return nil, fmt.Errorf("held-out share %d%% is not in 0..50", cfg.HeldOutPercent)
	}
	if cfg.UpdateClip <= 0 {
		cfg.UpdateClip = DefaultUpdateClip
	}
	p := base.SVR()
	return &Learner{base: base, cfg: cfg, theta: p, ema: p.Clone(), ledger: map[string]struct{}{}}, nil
}

// Samples returns the samples counted (training and held-out) and the held-out ones.
func (l *Learner) Samples() (all, heldOut int64) { return l.samples, l.heldOut }

// Seen reports whether a sample with this ID has been counted.
func (l *Learner) Seen(id string) bool { _, ok := l.ledger[id]; return ok }

// Published returns a copy of the published (EMA) parameters.
func (l *Learner) Published() vmaf.SVRParams { return l.ema.Clone() }

// Add counts s once: a held-out sample is kept for evaluation, any other is learned
// from. It returns whether s was held out, or ErrSeen.
func (l *Learner) Add(s Sample) (heldOut bool, err error) {
	if l.Seen(s.ID) {
		return false, ErrSeen
	}
	if len(s.Frames) == 0 {
		return false, fmt.Errorf("sample %s has no frames", s.ID)
	}
	if math.IsNaN(s.Label) || s.Label < 0 || s.Label > 100 {
		return false, fmt.Errorf("sample %s: label %v is not in 0..100", s.ID, s.Label)
	}
	l.kernelRows(s.Frames)
	// Every k-th sample is held out: the n-th when the held-out count floor(n*p/100)
	// grows, which spreads them evenly and deterministically over the arrival order.
	n := l.samples
	heldOut = (n+1)*int64(l.cfg.HeldOutPercent)/100 > n*int64(l.cfg.HeldOutPercent)/100
	l.ledger[s.ID] = struct{}{}
	l.ledgerOrder = append(l.ledgerOrder, s.ID)
	l.samples++
	if heldOut {
		l.heldOut++
		l.held = append(l.held, s)
		return true, nil
	}
	pred, _ := l.pooled(l.ema, false)
	l.trainSSE += (pred - s.Label) * (pred - s.Label)
	l.step(s.Label)
	return false, nil
}

// kernelRows fills l.rows with the kernel rows of frames.
func (l *Learner) kernelRows(frames [][]float64) {
	for len(l.rows) < len(frames) {
		l.rows = append(l.rows, nil)
	}
	l.rows = l.rows[:len(frames)]
	for i, f := range frames {
		l.rows[i] = l.base.KernelRow(f, l.rows[i])
	}
}

// pooled returns the mean frame score of l.rows under p and, with grad, fills l.grad
// with its gradient: d pooled / d Coef[i], then d pooled / d Rho last.
func (l *Learner) pooled(p vmaf.SVRParams, grad bool) (float64, []float64) {
	nsv := len(p.Coef)
	if grad {
		l.grad = append(l.grad[:0], make([]float64, nsv+1)...)
	}
	var sum float64
	inv := 1 / float64(len(l.rows))
	for _, row := range l.rows {
		out := -p.Rho
		for i, k := range row {
			out += p.Coef[i] * k
		}
		score, slope := l.base.Output(out)
		sum += score
		if grad && slope != 0 {
			w := slope * inv
			for i, k := range row {
				l.grad[i] += w * k
			}
			l.grad[nsv] -= w
		}
	}
	return sum * inv, l.grad
}

// step moves theta by one normalised SGD step towards label and updates the EMA.
func (l *Learner) step(label float64) {
	pred, g := l.pooled(l.theta, true)
	e := max(-l.cfg.UpdateClip, min(l.cfg.UpdateClip, pred-label))
	var g2 float64
	for _, x := range g {
		g2 += x * x
	}
	if g2 > 0 && e != 0 {
		// The gradient of e^2/2 is e*g; dividing by |g|^2 makes the step change this
		// sample's prediction by -LearningRate*e (to first order), whatever the model's
		// scale: normalised LMS.
		k := l.cfg.LearningRate * e / g2
		nsv := len(l.theta.Coef)
		for i := range l.theta.Coef {
			l.theta.Coef[i] -= k * g[i]
		}
		l.theta.Rho -= k * g[nsv]
	}
	d := l.cfg.EMADecay
	for i := range l.ema.Coef {
		l.ema.Coef[i] = d*l.ema.Coef[i] + (1-d)*l.theta.Coef[i]
	}
	l.ema.Rho = d*l.ema.Rho + (1-d)*l.theta.Rho
}

// Errors are root mean square errors in VMAF points; a NaN means no samples.
type Errors struct {
	// Training is the published model's progressive error on the training samples.
	Training float64
	// HeldOut is the published model's error on the held-out samples, Base the base
	// model's on the same samples.
	HeldOut, Base float64
}

// Evaluate returns the current errors.
func (l *Learner) Evaluate() Errors {
	e := Errors{Training: math.NaN(), HeldOut: math.NaN(), Base: math.NaN()}
	if trained := l.samples - l.heldOut; trained > 0 {
		e.Training = math.Sqrt(l.trainSSE / float64(trained))
	}
	if len(l.held) == 0 {
		return e
	}
	base := l.base.SVR()
	var sse, bse float64
	for _, s := range l.held {
		l.kernelRows(s.Frames)
		p, _ := l.pooled(l.ema, false)
		b, _ := l.pooled(base, false)
		sse += (p - s.Label) * (p - s.Label)
		bse += (b - s.Label) * (b - s.Label)
	}
	n := float64(len(l.held))
	e.HeldOut, e.Base = math.Sqrt(sse/n), math.Sqrt(bse/n)
	return e
}

// Predict returns the published model's pooled score for frames.
func (l *Learner) Predict(frames [][]float64) float64 {
	l.kernelRows(frames)
	p, _ := l.pooled(l.ema, false)
	return p
}
