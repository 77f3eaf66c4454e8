package source

import "github.com/vmafx/vmafx/vmaf"

// View returns a copy of in that reads its frames from fs (a vmaf.SharedReader of in,
// for one of several scores that share one decode of it) and whose Close calls only
// closeView: in itself, its decoder and fetch, stays open until its owner closes it.
func (in *Input) View(fs vmaf.FrameSource, closeView func()) *Input {
	v := *in
	v.FrameSource = fs
	v.closers = []func() error{func() error { closeView(); return nil }}
	return &v
}
