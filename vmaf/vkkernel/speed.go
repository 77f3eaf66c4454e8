package vkkernel

import (
	_ "embed"
	"encoding/binary"
	"math"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// SpEED chroma's per-pixel stages (vmaf.SpeedConfig): five passes over the
// four pictures of a frame pair (U and V of the reference and the
// distorted frame), recorded into the frame's batch with its motion and
// ADM; the decimated images and the covariance sums come back with the
// batch for the host's eigenvalues, solve and entropies
// (vmaf.SpeedOffloader, vmaf.OffloadSums.Speed).

var (
	//go:embed shaders/speed_aa_v.spv
	speedAAVSPV []byte
	//go:embed shaders/speed_aa_h.spv
	speedAAHSPV []byte
	//go:embed shaders/speed_lm.spv
	speedLMSPV []byte
	//go:embed shaders/speed_mean.spv
	speedMeanSPV []byte
	//go:embed shaders/speed_cov.spv
	speedCovSPV []byte
)

// speedPushWords is speed_common.glsl's push constant block, in 32-bit
// words.
const speedPushWords = 19

// speedBindings are speed_common.glsl's buffers: planes, tab, vert, img0,
// img, means, cov. Every pass binds all of them.
const speedBindings = 7

// speedPictures is how many pictures a frame pair gives SpEED.
const speedPictures = 4

type speedPipelines struct {
	aaV, aaH, lm, mean, cov *vulkan.Pipeline
}

// buildSpeedPipelines has b build SpEED chroma's passes.
func buildSpeedPipelines(b *pipelines) *speedPipelines {
	p := &speedPipelines{}
	for _, x := range []struct {
		dst  **vulkan.Pipeline
		name string
		spv  []byte
	}{{&p.aaV, "speed_aa_v", speedAAVSPV}, {&p.aaH, "speed_aa_h", speedAAHSPV}, {&p.lm, "speed_lm", speedLMSPV},
		{&p.mean, "speed_mean", speedMeanSPV}, {&p.cov, "speed_cov", speedCovSPV}} {
		b.build(x.dst, x.name, x.spv, speedBindings, 4*speedPushWords, 1)
	}
	return p
}

func (p *speedPipelines) all() []*vulkan.Pipeline {
	return []*vulkan.Pipeline{p.aaV, p.aaH, p.lm, p.mean, p.cov}
}

func (p *speedPipelines) close() { closePipelines(p.all()...) }

// speedWorker is one goroutine's SpEED buffers: on the device the four
// uploaded chroma planes (packed 16-bit), the tables (rescale taps and
// filters), the vertical pass at the kept rows, the decimated images
// before and after the local mean's subtraction, the means and the
// covariance sums, which every frame of a batch uses in turn; per ring
// slot the staging of its frames' planes and the readback of their images
// and sums, a frame's at its place in the batch.
type speedWorker struct {
	k      *Kernel
	cfg    *vmaf.SpeedConfig
	bpc    int
	planeN int   // samples per plane
	dec    int64 // bytes of the four decimated images
	planes *vulkan.Buffer
	// bytes holds an 8-bit frame's four planes as staged, a byte a sample,
	// for unpack8_planes to widen into planes; nil above 8 bits, whose
	// planes are copied into planes as they are.
	bytes     *vulkan.Buffer
	unpackSet *vulkan.DescriptorSet
	img       *vulkan.Buffer
	cov       *vulkan.Buffer
	stage     [ringSlots]*vulkan.Buffer // batch x the four planes
	back      [ringSlots]*vulkan.Buffer // batch x (img | cov)
	sets      [5]*vulkan.DescriptorSet
	push      []byte
	mem       allocs
	// tab is the tables' staging, copied to the device by the first batch
	// recorded after the worker is made (tabPending).
	tab, tabDev *vulkan.Buffer
	tabPending  bool
	// spare are pictures handed out and given back, for the next frames.
	spare []*vmaf.SpeedPictures
}

// speedStageBytes and speedBackBytes are one frame's staging and readback
// under cfg for frames of bpc bits: the four planes a byte a sample at 8
// bits, each rounded up to whole 32-bit words (speedPlaneBytes), else two.
func speedStageBytes(cfg *vmaf.SpeedConfig, bpc int) int64 {
	return speedPictures * speedPlaneBytes(cfg, bpc)
}

func speedPlaneBytes(cfg *vmaf.SpeedConfig, bpc int) int64 {
	n := int64(cfg.Stride * cfg.Lines)
	if bpc == 8 {
		return (n + 3) &^ 3
	}
	return 2 * n
}

func speedBackBytes(cfg *vmaf.SpeedConfig) int64 {
	return int64(speedPictures*cfg.DecWidth*cfg.DecHeight*4) + int64(speedPictures*vmaf.SpeedCovLen*8)
}

// newSpeedWorker makes the buffers for batches of batch frames.
func newSpeedWorker(k *Kernel, cfg *vmaf.SpeedConfig, bpc, batch int) (*speedWorker, error) {
	sw := &speedWorker{k: k, cfg: cfg, bpc: bpc, planeN: cfg.Stride * cfg.Lines, mem: allocs{dev: k.dev}}
	a := &sw.mem
	sw.dec = int64(speedPictures * cfg.DecWidth * cfg.DecHeight * 4)
	covBytes := int64(speedPictures * vmaf.SpeedCovLen * 8)
	tab, words := speedTables(cfg)
	for i := range sw.stage {
		sw.stage[i] = a.buffer(int64(batch)*speedStageBytes(cfg, bpc), vulkan.Host)
		sw.back[i] = a.buffer(int64(batch)*speedBackBytes(cfg), vulkan.Host)
	}
	sw.planes = a.buffer(speedStageBytes(cfg, 16), vulkan.DeviceLocal)
	if bpc == 8 {
		sw.bytes = a.buffer(speedStageBytes(cfg, 8), vulkan.DeviceLocal)
		sw.unpackSet = a.bind(k.unpack8Planes, sw.bytes, sw.planes)
	}
	sw.tab = a.buffer(int64(4*len(tab)), vulkan.Host)
	sw.tabDev = a.buffer(int64(4*len(tab)), vulkan.DeviceLocal)
	vert := a.buffer(int64(speedPictures*cfg.DecHeight*cfg.ScaledWidth*4), vulkan.DeviceLocal)
	img0 := a.buffer(sw.dec, vulkan.DeviceLocal)
	sw.img = a.buffer(sw.dec, vulkan.DeviceLocal)
	means := a.buffer(speedPictures*25*4, vulkan.DeviceLocal)
	sw.cov = a.buffer(covBytes, vulkan.DeviceLocal)
	for i, p := range k.speed.all() {
		sw.sets[i] = a.bind(p, sw.planes, sw.tabDev, vert, img0, sw.img, means, sw.cov)
	}
	if a.err != nil {
		sw.close()
		return nil, a.err
	}
	// The tables are the run's: the first batch uploads them.
	copy(sw.tab.Uint32s(), tab)
	sw.tabPending = true
	words[len(words)-1] = int32(bpc - 8)
	sw.push = push(words...)
	return sw, nil
}

// speedTables packs cfg's tables into one buffer's words (column and row
// indices, their weights, the two filters) and returns them with the push
// constant words that locate them (the last, the bit depth's shift, left
// for the caller).
func speedTables(cfg *vmaf.SpeedConfig) (tab []uint32, words []int32) {
	var offs []int32
	add := func(v []uint32) {
		offs = append(offs, int32(len(tab)))
		tab = append(tab, v...)
	}
	ints := func(v []int32) []uint32 {
		out := make([]uint32, len(v))
		for i, x := range v {
			out[i] = uint32(x)
		}
		return out
	}
	floats := func(v []float32) []uint32 {
		out := make([]uint32, len(v))
		for i, x := range v {
			out[i] = math.Float32bits(x)
		}
		return out
	}
	add(ints(cfg.Cols))
	add(floats(cfg.ColWeights))
	add(ints(cfg.Rows))
	add(floats(cfg.RowWeights))
	add(floats(cfg.AntiAlias))
	add(floats(cfg.LocalMean))
	words = []int32{int32(cfg.Stride), int32(cfg.Stride * cfg.Lines), int32(cfg.ScaledWidth), int32(cfg.ScaledHeight),
		int32(cfg.DecWidth), int32(cfg.DecHeight), int32(cfg.CovWidth), int32(cfg.CovHeight),
		int32(cfg.Method), int32(cfg.Taps), int32(len(cfg.AntiAlias)), int32(len(cfg.LocalMean))}
	words = append(words, offs...)
	return tab, append(words, 0)
}

// fits reports whether the frames' chroma planes are the configuration's
// (the CPU scores the others).
func (sw *speedWorker) fits(ref, dis *vmaf.Frame) bool {
	c := sw.cfg
	for _, f := range []*vmaf.Frame{ref, dis} {
		if f.ChromaWidth != c.Stride || f.ChromaHeight != c.Lines || f.BitDepth != sw.bpc ||
			len(f.U) < sw.planeN || len(f.V) < sw.planeN {
			return false
		}
	}
	return true
}

// upload records the tables' copy when the worker has not uploaded them
// yet, at the start of a batch.
func (sw *speedWorker) upload(s *vulkan.Stream) {
	if sw.tabPending {
		s.Copy(sw.tabDev, 0, sw.tab, 0, sw.tab.Size())
		sw.tabPending = false
	}
}

// record writes a frame pair's four chroma planes into slot's staging at
// the batch's frame i and records their SpEED passes, with the copy of
// the images and sums to the slot's readback.
func (sw *speedWorker) record(s recorder, slot, i int, ref, dis *vmaf.Frame) {
	c := sw.cfg
	stage, at := sw.stage[slot], int64(i)*speedStageBytes(c, sw.bpc)
	plane := speedPlaneBytes(c, sw.bpc)
	for j, p := range [speedPictures][]uint16{ref.U, dis.U, ref.V, dis.V} {
		if sw.bytes != nil {
			vmaf.Narrow8(stage.Bytes()[at+int64(j)*plane:], p[:sw.planeN])
		} else {
			copy(stage.Bytes()[at+int64(j)*plane:], samples(p[:sw.planeN]))
		}
	}
	if sw.bytes != nil {
		// 8-bit planes cross the bus as bytes and are widened on the device.
		s.Copy(sw.bytes, 0, stage, at, speedStageBytes(c, 8))
		s.Barrier()
		s.Dispatch(sw.k.unpack8Planes, sw.unpackSet, push(int32(sw.planeN), int32(plane), speedPictures),
			(speedPictures*sw.planeN/2+1+63)/64, 1, 1)
	} else {
		s.Copy(sw.planes, 0, stage, at, speedStageBytes(c, sw.bpc))
	}
	s.Barrier()
	p := sw.k.speed
	s.Dispatch(p.aaV, sw.sets[0], sw.push, (c.ScaledWidth+63)/64, (c.DecHeight+3)/4, speedPictures)
	s.Barrier()
	s.Dispatch(p.aaH, sw.sets[1], sw.push, (c.DecWidth+63)/64, (c.DecHeight+3)/4, speedPictures)
	s.Barrier()
	s.Dispatch(p.lm, sw.sets[2], sw.push, (c.DecWidth+63)/64, (c.DecHeight+3)/4, speedPictures)
	s.Barrier()
	s.Dispatch(p.mean, sw.sets[3], sw.push, 1, 1, speedPictures)
	s.Barrier()
	s.Dispatch(p.cov, sw.sets[4], sw.push, (vmaf.SpeedCovLen+63)/64, 1, speedPictures)
	s.Barrier()
	back := int64(i) * speedBackBytes(c)
	s.Copy(sw.back[slot], back, sw.img, 0, sw.dec)
	s.Copy(sw.back[slot], back+sw.dec, sw.cov, 0, int64(speedPictures*vmaf.SpeedCovLen*8))
}

// read returns the pictures of the batch's frame i from slot's readback,
// in pictures of the worker's (give them back with release).
func (sw *speedWorker) read(slot, i int) *vmaf.SpeedPictures {
	c := sw.cfg
	var out *vmaf.SpeedPictures
	if n := len(sw.spare); n > 0 {
		out, sw.spare = sw.spare[n-1], sw.spare[:n-1]
	} else {
		out = new(vmaf.SpeedPictures)
		for j := range out.Img {
			out.Img[j] = make([]float32, c.DecWidth*c.DecHeight)
			out.Cov[j] = make([]float64, vmaf.SpeedCovLen)
		}
	}
	b := sw.back[slot].Bytes()[int64(i)*speedBackBytes(c):]
	le := binary.LittleEndian
	n := c.DecWidth * c.DecHeight
	for j := range speedPictures {
		for x := range out.Img[j] {
			out.Img[j][x] = math.Float32frombits(le.Uint32(b[4*(j*n+x):]))
		}
		for x := range out.Cov[j] {
			out.Cov[j][x] = math.Float64frombits(le.Uint64(b[sw.dec+int64(8*(j*vmaf.SpeedCovLen+x)):]))
		}
	}
	return out
}

// release gives back pictures read.
func (sw *speedWorker) release(p *vmaf.SpeedPictures) {
	if p != nil {
		sw.spare = append(sw.spare, p)
	}
}

func (sw *speedWorker) close() { sw.mem.close() }
