package backend

import (
	"context"
	"fmt"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel"
)

// Overlaps reports whether a backend asked for as requested (VMAFX_BACKEND) opens a
// GPU, which a run need not wait for (Start): vulkan, cuda, hip and sycl. The CPU opens
// nothing; auto runs on the CPU of most nodes that ask for it, whose memory check would
// count a GPU's staging for nothing.
func Overlaps(requested string) bool {
	switch vmafxv1.Backend(requested) {
	case vmafxv1.BackendVulkan, vmafxv1.BackendCUDA, vmafxv1.BackendHIP, vmafxv1.BackendSYCL:
		return true
	}
	return false
}

// Pending is a backend being selected on a goroutine of its own: a GPU's device
// takes a fraction of a second to open and pass its self-test, more in a new Pod
// whose driver compiles the shaders, and the run's model, inputs and first frames
// need not wait for it (Score). It is a Backend: its name is the one asked for, and
// it has no Device until it is open (Wait).
type Pending struct {
	requested string
	// usable is closed when the selection returned: a GPU's device is open and may
	// score, its self-test still running beside (SelectBeside).
	usable chan struct{}
	// done is closed when the selection is final: the self-test's verdict is in.
	done     chan struct{}
	b        Backend
	fellBack string
	err      error
	// openErr is the selection's own error, before the self-test's: with b, what
	// Score takes over the run with once usable is closed.
	openErr error
	// opening is what Score takes the device over with: its Ready is closed once
	// the run's threads may go on with the device (tests hold their frames until then).
	opening *vmaf.OffloadOpening
}

// Start runs sel (SelectBeside for requested) on a goroutine and returns at once; a
// GPU backend sel returns is verified there (Verify). opened, when not nil, is called
// on that goroutine with the results as soon as they are final (to log the open and
// record the self-test's verdict).
func Start(requested string, sel func() (Backend, string, error), opened func(Backend, string, error)) *Pending {
	p := &Pending{requested: requested, usable: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		var err error
		p.b, p.fellBack, p.openErr = sel()
		close(p.usable)
		if err = p.openErr; err == nil {
			// A device that fails its self-test is kept until Close: the run
			// may be scoring with it, until its error stops the run.
			err = Verify(requested, p.b)
		}
		p.err = err
		if opened != nil {
			opened(p.b, p.fellBack, p.err)
		}
	}()
	return p
}

// Wait waits for the backend and returns what Select would have returned: the
// backend, why it is not the one asked for, or the error (then the backend, when
// not nil, is the device that failed its self-test; Close closes it).
func (p *Pending) Wait() (Backend, string, error) {
	<-p.done
	return p.b, p.fellBack, p.err
}

// Name is the backend asked for.
func (p *Pending) Name() string { return p.requested }

// Device is nil: the device is Wait's backend's.
func (p *Pending) Device() *vmafxv1.WorkerDevice { return nil }

// Close waits for the backend and closes it, a device that failed its self-test too.
func (p *Pending) Close() {
	if b, _, _ := p.Wait(); b != nil {
		b.Close()
	}
}

// Staging is Vulkan.Staging before the device is known: the most any device
// maps (vkkernel.HostBytesPerWorkerBound).
func (p *Pending) Staging(m *vmaf.Model, info vmaf.VideoInfo, enc vmaf.Encode) (int64, int) {
	return vkkernel.HostBytesPerWorkerBound(workerConfig(m, info, enc)), vkkernel.FramesInFlight(info.Width, info.Height)
}

var _ Backend = (*Pending)(nil)

// offloader is a backend whose device can take over a run from the CPU.
type offloader interface {
	// offload is the device and how many of the threads opts asks to score
	// frames of info with it (deviceThreads) it holds workers for.
	offload(opts vmaf.Options, info vmaf.VideoInfo) (vmaf.Offload, int)
}

func (v *Vulkan) offload(opts vmaf.Options, info vmaf.VideoInfo) (vmaf.Offload, int) {
	return v.k, v.k.Workers(deviceThreads(opts), info.Width, info.Height)
}

// Score scores dist against ref on the CPU, on opts.Threads threads, while the
// backend opens, and on its device from each thread's next frame once it is open
// (vmaf.Options.Opening), its self-test running beside: every frame is the CPU
// kernel's whichever side scores it. A selection that fails fails the run with its
// error; one that falls back to the CPU goes on there. Score returns once the
// self-test's verdict is in too; with a device that failed it, it returns the
// verdict's error and no result, as Wait does.
func (p *Pending) Score(ctx context.Context, ref, dist vmaf.FrameSource, opts vmaf.Options) (*vmaf.Result, error) {
	info := ref.Info()
	op := &vmaf.OffloadOpening{Ready: make(chan struct{}), FramesInFlight: vkkernel.FramesInFlight(info.Width, info.Height)}
	p.opening = op
	asked := opts // the goroutine's copy: opts gets the Opening below, beside it
	go func() {
		// The open always ends (a device that hangs there hangs a synchronous open
		// too); past the run's end nothing reads what is set here.
		defer close(op.Ready)
		<-p.usable
		b, err := p.b, p.openErr
		if err != nil {
			op.Err = err
			return
		}
		switch o := b.(type) {
		case offloader:
			op.Offload, op.Threads = o.offload(asked, info)
		case CPU:
			// Fell back: every thread goes on on the CPU.
		default:
			op.Err = fmt.Errorf("internal error: backend %s cannot take over a run from the CPU", b.Name())
		}
	}()
	opts.Opening = op
	res, err := vmaf.Score(ctx, ref, dist, opts)
	// The device's numbers count only once it has passed its self-test. A device
	// that fails it stops the run (the worker's opened), whose error is then the
	// cancellation's: the verdict's is the one to report.
	if _, _, verr := p.Wait(); verr != nil {
		return nil, verr
	}
	return res, err
}
