package train

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/vmafx/vmafx/vmaf"
)

// StateVersion names the layout of a saved learner state.
const StateVersion = "vmafx.dev/training-state/v1"

// state is what a learner needs to resume exactly where it was saved: both parameter
// sets, the counters, the held-out samples and the ledger of every sample counted.
type state struct {
	Version   string         `json:"version"`
	BaseModel string         `json:"baseModel"`
	BaseSHA   string         `json:"baseModelSHA256"`
	Theta     vmaf.SVRParams `json:"theta"`
	EMA       vmaf.SVRParams `json:"ema"`
	Samples   int64          `json:"samples"`
	HeldOut   int64          `json:"heldOut"`
	TrainSSE  float64        `json:"trainSSE"`
	Held      []Sample       `json:"heldOutSamples"`
	Ledger    []string       `json:"ledger"`
}

// MarshalState returns the learner's state as JSON.
func (l *Learner) MarshalState() ([]byte, error) {
	return json.Marshal(state{
		Version: StateVersion, BaseModel: l.base.Name, BaseSHA: l.base.SHA256,
		Theta: l.theta, EMA: l.ema, Samples: l.samples, HeldOut: l.heldOut, TrainSSE: l.trainSSE,
		Held: l.held, Ledger: l.ledgerOrder,
	})
}

// Restore replaces the learner's parameters, counters, held-out samples and ledger with a
// state saved by MarshalState from a learner of the same base model.
func (l *Learner) Restore(data []byte) error {
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("training state: %w", err)
	}
	if s.Version != StateVersion {
		return fmt.Errorf("training state version %q, want %q", s.Version, StateVersion)
	}
	if s.BaseSHA != l.base.SHA256 {
		return fmt.Errorf("training state is of base model %s (sha256 %s), not %s", s.BaseModel, s.BaseSHA, l.base.Name)
	}
	n := l.base.SupportVectors()
	if len(s.Theta.Coef) != n || len(s.EMA.Coef) != n || int64(len(s.Ledger)) != s.Samples || int64(len(s.Held)) != s.HeldOut {
		return fmt.Errorf("training state is inconsistent")
	}
	for _, x := range append(append([]float64{s.Theta.Rho, s.EMA.Rho, s.TrainSSE}, s.Theta.Coef...), s.EMA.Coef...) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("training state holds a non-finite number")
		}
	}
	l.theta, l.ema, l.samples, l.heldOut, l.trainSSE, l.held = s.Theta, s.EMA, s.Samples, s.HeldOut, s.TrainSSE, s.Held
	l.ledger = make(map[string]struct{}, len(s.Ledger))
	for _, id := range s.Ledger {
		l.ledger[id] = struct{}{}
	}
	l.ledgerOrder = s.Ledger
	return nil
}

// Model returns the published model as a libvmaf JSON document in the base model's own
// format (baseDoc is the base model's JSON).
func (l *Learner) Model(baseDoc []byte) ([]byte, error) {
	return vmaf.WithSVR(baseDoc, l.ema)
}
