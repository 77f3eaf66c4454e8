package vkkernel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// phaseProfile times a worker's frames stage by stage with the device's
// timestamps: one after each batch's first barrier, after a frame's uploads
// and its unpacking, after each of its phases, and after the batch's
// readback. Where no profiler can be run (the GPU machine), it says which
// passes the device's time goes to (BenchmarkPhases); scoring never sets it.
// Each stage is labelled with what it ran ("phase 3: adm_decouple adm_den
// vif_stat_v"), the same label for every frame's stage that ran the same.
type phaseProfile struct {
	names  map[*vulkan.Pipeline]string
	ts     [ringSlots]*vulkan.Timestamps
	labels [ringSlots][]string // what each timestamp of the slot's batch ends
	order  []string            // the labels seen
	total  map[string]float64  // nanoseconds a label's stages took, all frames
	count  map[string]int
	lost   int // stamps left out: a slot's pool was full
}

// profileStamps bounds the timestamps of one batch: a frame takes 3 and one a
// phase, well under 48.
func profileStamps(batch int) int { return 48*batch + 4 }

// profile has the worker time its batches stage by stage (phaseProfile) from
// its next batch on; report says where the time went. For benchmarks.
func (wk *worker) profile() (*phaseProfile, error) {
	p := &phaseProfile{names: wk.k.pipelineNames(), total: map[string]float64{}, count: map[string]int{}}
	for i := range p.ts {
		ts, err := wk.k.dev.NewTimestamps(profileStamps(wk.batch))
		if err != nil {
			p.close()
			return nil, err
		}
		p.ts[i] = ts
	}
	wk.prof = p
	return p, nil
}

func (p *phaseProfile) close() {
	for _, ts := range p.ts {
		if ts != nil {
			ts.Close()
		}
	}
}

// begin resets slot's timestamps and stamps the start of its batch.
func (p *phaseProfile) begin(s *vulkan.Stream, slot int) {
	s.ResetTimestamps(p.ts[slot])
	p.labels[slot] = p.labels[slot][:0]
	p.stamp(s, slot, "start")
}

// stamp records a timestamp that ends what label says.
func (p *phaseProfile) stamp(s *vulkan.Stream, slot int, label string) {
	i := len(p.labels[slot])
	if i >= p.ts[slot].Len() {
		p.lost++
		return
	}
	s.Timestamp(p.ts[slot], i)
	p.labels[slot] = append(p.labels[slot], label)
}

// phase stamps the end of a frame's phase k, labelled with its commands.
func (p *phaseProfile) phase(s *vulkan.Stream, slot, k int, cmds []command) {
	var what []string
	for _, c := range cmds {
		switch c.op {
		case opDispatch:
			what = append(what, p.names[c.p])
		case opCopy:
			what = append(what, "copy")
		case opFill:
			what = append(what, "fill")
		}
	}
	slices.Sort(what)
	p.stamp(s, slot, fmt.Sprintf("phase %02d: %s", k, strings.Join(what, " ")))
}

// collect adds slot's batch's stages, once its submission is waited for.
func (p *phaseProfile) collect(slot int) error {
	labels := p.labels[slot]
	t, err := p.ts[slot].Read(len(labels))
	if err != nil {
		return err
	}
	for i := 1; i < len(t); i++ {
		l := labels[i]
		if _, ok := p.total[l]; !ok {
			p.order = append(p.order, l)
		}
		p.total[l] += t[i] - t[i-1]
		p.count[l]++
	}
	p.labels[slot] = labels[:0]
	return nil
}

// report is the stages' mean time over frames frames, one line each in a
// frame's order (its uploads, unpack8 or the planes' copies, its phases, the
// batch's readback), and
// the device's time a frame in all.
func (p *phaseProfile) report(frames int) (lines []string, perFrame float64) {
	rank := func(l string) int {
		switch l {
		case "uploads":
			return 0
		case "unpack8", "planes copied":
			return 1
		case "readback":
			return 3
		}
		return 2
	}
	slices.SortStableFunc(p.order, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	var sum float64
	for _, l := range p.order {
		sum += p.total[l]
	}
	for _, l := range p.order {
		lines = append(lines, fmt.Sprintf("%8.1f µs a frame %5.1f%%  %5d× %s", p.total[l]/1e3/float64(frames),
			100*p.total[l]/sum, p.count[l], l))
	}
	if p.lost > 0 {
		lines = append(lines, fmt.Sprintf("(%d stamps left out: a batch's pool was full)", p.lost))
	}
	return lines, sum / 1e3 / float64(frames)
}
