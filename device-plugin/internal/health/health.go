package health

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
	"github.com/vmafx/vmafx/internal/selftestverdict"
	"github.com/vmafx/vmafx/internal/text"
)

// Target receives health changes; slots.Set is one.
type Target interface {
	SetHealth(name string, healthy bool, reason string) bool
}

// Options configure a Watcher.
type Options struct {
	// Root is the host root the devices' paths are under.
	Root string
	// Interval is the periodic check.
	Interval time.Duration
	// RecoveryDelay is how long a device must stay present before it is Healthy again.
	RecoveryDelay time.Duration
	// Clock defaults to the real clock.
	Clock clock.WithTicker
	// Metrics, when set, counts health transitions and self-test verdicts.
	Metrics *metrics.Metrics
	// SelfTestDir, when not empty, is where workers leave each GPU's Vulkan self-test
	// verdict (SelfTestDir/<device>/verdict.json, internal/selftestverdict): a device
	// whose verdict is a fail is Unhealthy, as a missing one is, until the verdict is
	// gone (a reboot empties /run; an administrator may delete it after fixing the
	// driver) and the recovery delay has passed.
	SelfTestDir string
}

// Watcher checks devices and reports their health to a Target.
type Watcher struct {
	opts    Options
	devices []discovery.Device
	target  Target
	state   []state
	primed  bool

	watchDirs []string        // directories holding device nodes, under Root
	interest  map[string]bool // paths whose events trigger a check

	ready func() // tests: called once Run watches and has checked
}

type state struct {
	healthy      bool
	reason       string
	presentSince time.Time // zero while absent or healthy
	verdict      string    // the last self-test verdict read, to count each once
}

// New returns a Watcher of devs, all assumed healthy (as slots.New makes them) until
// the first Check.
func New(devs []discovery.Device, target Target, opts Options) *Watcher {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	w := &Watcher{opts: opts, devices: devs, target: target, state: make([]state, len(devs)), interest: map[string]bool{}}
	for i := range w.state {
		w.state[i].healthy = true
	}
	for _, d := range devs {
		paths := make([]string, 0, len(d.Nodes)+1)
		for _, n := range d.Nodes {
			paths = append(paths, filepath.Join(opts.Root, n.Path))
		}
		if dir := w.verdictDir(d); dir != "" {
			paths = append(paths, filepath.Join(dir, selftestverdict.FileName))
		}
		for _, p := range paths {
			w.interest[p] = true
			if dir := filepath.Dir(p); !slices.Contains(w.watchDirs, dir) {
				w.watchDirs = append(w.watchDirs, dir)
				w.interest[dir] = true
			}
		}
	}
	return w
}

// Check probes every device once and reports changes. A device found missing is
// Unhealthy at once; a device found present turns Healthy when it has been present
// for RecoveryDelay, except at the first Check, which takes the devices as they are.
// It returns when the next pending recovery is due (zero if none). Check must not run
// concurrently with Run.
func (w *Watcher) Check(ctx context.Context) time.Time {
	logger := klog.FromContext(ctx)
	now := w.opts.Clock.Now()
	var next time.Time
	for i, d := range w.devices {
		st := &w.state[i]
		name := d.Name()
		err := d.Probe(w.opts.Root)
		if err == nil {
			err = w.selfTest(ctx, st, d)
		}
		if err != nil {
			st.presentSince = time.Time{}
			if st.healthy || st.reason != err.Error() {
				wasHealthy := st.healthy
				st.healthy, st.reason = false, err.Error()
				w.target.SetHealth(name, false, st.reason)
				if wasHealthy {
					logger.Info("Device unhealthy: all its slots are Unhealthy", "device", name, "reason", st.reason)
					w.count(metrics.StateUnhealthy)
				}
			}
			continue
		}
		if st.healthy {
			continue
		}
		if st.presentSince.IsZero() {
			st.presentSince = now
			logger.V(2).Info("Device back, waiting out the recovery delay", "device", name, "recoveryDelay", w.opts.RecoveryDelay)
		}
		due := st.presentSince.Add(w.opts.RecoveryDelay)
		if w.primed && now.Before(due) {
			if next.IsZero() || due.Before(next) {
				next = due
			}
			continue
		}
		st.healthy, st.reason, st.presentSince = true, "", time.Time{}
		w.target.SetHealth(name, true, "")
		logger.Info("Device healthy again", "device", name)
		w.count(metrics.StateHealthy)
	}
	w.primed = true
	return next
}

// verdictDir is the directory of d's self-test verdict; "" for none (off, or the CPU).
func (w *Watcher) verdictDir(d discovery.Device) string {
	if w.opts.SelfTestDir == "" || d.Vendor == vmafxv1.VendorCPU {
		return ""
	}
	return filepath.Join(w.opts.SelfTestDir, d.Name())
}

// selfTest returns an error when a worker's Vulkan self-test failed on d. A verdict
// file that is not one is logged and counted, and does not make the device unhealthy:
// only a worker's fail does.
func (w *Watcher) selfTest(ctx context.Context, st *state, d discovery.Device) error {
	dir := w.verdictDir(d)
	if dir == "" {
		return nil
	}
	v, ok, err := selftestverdict.Read(dir)
	key, result := "", ""
	switch {
	case err != nil:
		key, result = "invalid "+err.Error(), metrics.VerdictInvalid
	case ok:
		key, result = v.Result+" "+v.Device+" "+v.Driver+" "+v.API+" "+v.Message, v.Result
	}
	if key != st.verdict {
		st.verdict = key
		if result != "" {
			if w.opts.Metrics != nil {
				w.opts.Metrics.SelfTestVerdicts.WithLabelValues(result).Inc()
			}
			klog.FromContext(ctx).Info("Vulkan self-test verdict", "device", d.Name(), "result", result,
				"vulkanDevice", v.Device, "driver", v.Driver, "api", v.API, "message", v.Message, "err", err)
		}
	}
	if ok && v.Result == selftestverdict.Fail {
		return fmt.Errorf("vulkan self-test failed: %s", text.OneLine(v.Message, 512))
	}
	return nil
}

func (w *Watcher) count(state string) {
	if w.opts.Metrics != nil {
		w.opts.Metrics.HealthTransitions.WithLabelValues(state).Inc()
	}
}

// Run checks the devices on every relevant fsnotify event, every Interval and when a
// recovery is due, until ctx ends. Without fsnotify it polls only.
func (w *Watcher) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		logger.Error(err, "fsnotify unavailable, device health falls back to the periodic check", "interval", w.opts.Interval)
		fw = nil
	} else {
		defer func() { _ = fw.Close() }()
	}
	w.addWatches(ctx, fw)

	ticker := w.opts.Clock.NewTicker(w.opts.Interval)
	defer ticker.Stop()
	var recovery clock.Timer
	var recoveryC <-chan time.Time
	schedule := func(next time.Time) {
		if recovery != nil {
			recovery.Stop()
			recovery, recoveryC = nil, nil
		}
		if !next.IsZero() {
			recovery = w.opts.Clock.NewTimer(max(0, next.Sub(w.opts.Clock.Now())))
			recoveryC = recovery.C()
		}
	}
	defer schedule(time.Time{})
	schedule(w.Check(ctx))
	if w.ready != nil {
		w.ready()
	}
	for {
		var events <-chan fsnotify.Event
		var errs <-chan error
		if fw != nil {
			events, errs = fw.Events, fw.Errors
		}
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				fw = nil
				continue
			}
			if w.interest[ev.Name] {
				logger.V(5).Info("Device event", "path", ev.Name, "op", ev.Op.String())
				schedule(w.Check(ctx))
			}
		case err, ok := <-errs:
			if ok {
				logger.V(2).Info("fsnotify error, the periodic check continues", "err", err)
			}
		case <-ticker.C():
			w.addWatches(ctx, fw)
			schedule(w.Check(ctx))
		case <-recoveryC:
			schedule(w.Check(ctx))
		}
	}
}

// addWatches watches every device node directory that exists and is not watched yet,
// so a directory that disappeared and came back (/dev/dri) is watched again.
func (w *Watcher) addWatches(ctx context.Context, fw *fsnotify.Watcher) {
	if fw == nil {
		return
	}
	watched := fw.WatchList()
	for _, dir := range w.watchDirs {
		if slices.Contains(watched, dir) {
			continue
		}
		if err := fw.Add(dir); err != nil {
			klog.FromContext(ctx).V(4).Info("Cannot watch device directory yet", "dir", dir, "err", err)
		}
	}
}
