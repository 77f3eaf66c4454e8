package command

import (
	"context"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/text"
	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/worker/internal/source"
)

// devDir is where a slot's device nodes are; tests replace it.
var devDir = "/dev"

// hardwareDecoder picks the decoder for encoded inputs: on a GPU slot (VMAFX_DEVICE
// nvidia-N, amd-N, intel-N, set by the device plugin) the GPU's, when this ffmpeg build
// offers it (decode.Tools.ChooseHW); software everywhere else. The vendor comes from the
// slot, not from probing: a container sees only its slot's device nodes.
func (s *scorer) hardwareDecoder(tools *decode.Tools) decode.HW {
	device := s.env(vmafxv1.EnvDevice)
	if tools == nil || device == "" || strings.Contains(device, ",") {
		return decode.HW{Name: decode.Software}
	}
	vendor, _, _ := strings.Cut(device, "-")
	hw := tools.ChooseHW(context.Background(), vendor, decode.RenderNodes(devDir))
	if hw.Name != decode.Software {
		s.log.V(1).Info("Encoded inputs decode on the GPU", "decoder", hw.Name, "device", device, "renderNode", hw.Device)
	}
	return hw
}

// recordDecoders notes which decoder read each encoded input, for the result, and logs
// a hardware decoder given up for software.
func (s *scorer) recordDecoders(ref, dist *source.Input) {
	if ref.Decoder == "" && dist.Decoder == "" {
		return
	}
	d := &vmafxv1.WorkerDecode{Reference: ref.Decoder, Distorted: dist.Decoder}
	for _, in := range []*source.Input{ref, dist} {
		if in.DecoderFallback != "" {
			s.log.Info("Hardware decoding failed to start; decoding in software", "reason", in.DecoderFallback)
			if d.Fallback == "" {
				// ffmpeg's error lines can be long: the result is a termination message.
				d.Fallback = text.OneLine(in.DecoderFallback, 300)
			}
		}
	}
	s.prov.Decode = d
}
