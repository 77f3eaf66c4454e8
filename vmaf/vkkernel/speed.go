package vkkernel

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// SpEED chroma's per-pixel stages (vmaf.SpeedConfig): five passes over the
// four pictures of a frame pair (U and V of the reference and the
// distorted frame) in one submission; the decimated images and the
// covariance sums come back for the host's eigenvalues, solve and
// entropies (vmaf.SpeedOffloader).

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

func newSpeedPipelines(dev *vulkan.Device) (*speedPipelines, error) {
	b := &pipelines{dev: dev, pushSize: 4 * speedPushWords}
	p := &speedPipelines{
		aaV: b.build(speedAAVSPV, speedBindings, 1), aaH: b.build(speedAAHSPV, speedBindings, 1),
		lm: b.build(speedLMSPV, speedBindings, 1), mean: b.build(speedMeanSPV, speedBindings, 1),
		cov: b.build(speedCovSPV, speedBindings, 1),
	}
	if b.err != nil {
		p.close()
		return nil, b.err
	}
	return p, nil
}

func (p *speedPipelines) all() []*vulkan.Pipeline {
	return []*vulkan.Pipeline{p.aaV, p.aaH, p.lm, p.mean, p.cov}
}

func (p *speedPipelines) close() { closePipelines(p.all()...) }

// speedWorker is one goroutine's SpEED buffers: the four uploaded chroma
// planes (packed 16-bit), the tables (rescale taps and filters), the
// vertical pass at the kept rows, the decimated images before and after
// the local mean's subtraction, the means and the covariance sums.
type speedWorker struct {
	k       *Kernel
	cfg     *vmaf.SpeedConfig
	bpc     int
	planeN  int // samples per plane
	stream  *vulkan.Stream
	staging *vulkan.Buffer
	planes  *vulkan.Buffer
	img     *vulkan.Buffer
	cov     *vulkan.Buffer
	back    *vulkan.Buffer // img | cov
	sets    [5]*vulkan.DescriptorSet
	push    []byte
	mem     allocs
	out     vmaf.SpeedPictures
}

func newSpeedWorker(k *Kernel, cfg *vmaf.SpeedConfig, bpc int) (*speedWorker, error) {
	sw := &speedWorker{k: k, cfg: cfg, bpc: bpc, planeN: cfg.Stride * cfg.Lines, mem: allocs{dev: k.dev}}
	a := &sw.mem
	dec := int64(speedPictures * cfg.DecWidth * cfg.DecHeight * 4)
	covBytes := int64(speedPictures * vmaf.SpeedCovLen * 8)
	tab, words := speedTables(cfg)
	sw.staging = a.buffer(int64(speedPictures*sw.planeN*2), vulkan.Host)
	sw.planes = a.buffer(int64(speedPictures*sw.planeN*2), vulkan.DeviceLocal)
	tabStage := a.buffer(int64(4*len(tab)), vulkan.Host)
	tabDev := a.buffer(int64(4*len(tab)), vulkan.DeviceLocal)
	vert := a.buffer(int64(speedPictures*cfg.DecHeight*cfg.ScaledWidth*4), vulkan.DeviceLocal)
	img0 := a.buffer(dec, vulkan.DeviceLocal)
	sw.img = a.buffer(dec, vulkan.DeviceLocal)
	means := a.buffer(speedPictures*25*4, vulkan.DeviceLocal)
	sw.cov = a.buffer(covBytes, vulkan.DeviceLocal)
	sw.back = a.buffer(dec+covBytes, vulkan.Host)
	for i, p := range k.speed.all() {
		sw.sets[i] = a.bind(p, sw.planes, tabDev, vert, img0, sw.img, means, sw.cov)
	}
	err := a.err
	if err == nil {
		sw.stream, err = k.dev.NewStream()
	}
	if err == nil {
		// The tables are the run's: upload them once.
		copy(tabStage.Uint32s(), tab)
		if err = sw.stream.Begin(); err == nil {
			sw.stream.Copy(tabDev, 0, tabStage, 0, int64(4*len(tab)))
			err = submitWait(sw.stream)
		}
	}
	if err != nil {
		sw.close()
		return nil, err
	}
	words[len(words)-1] = int32(bpc - 8)
	sw.push = push(words...)
	for i := range sw.out.Img {
		sw.out.Img[i] = make([]float32, cfg.DecWidth*cfg.DecHeight)
		sw.out.Cov[i] = make([]float64, vmaf.SpeedCovLen)
	}
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

// run computes a frame pair's SpEED pictures; ok is false for frames whose
// chroma planes are not the configuration's (the CPU scores those).
func (sw *speedWorker) run(ref, dis *vmaf.Frame) (*vmaf.SpeedPictures, bool, error) {
	c := sw.cfg
	for _, f := range []*vmaf.Frame{ref, dis} {
		if f.ChromaWidth != c.Stride || f.ChromaHeight != c.Lines || f.BitDepth != sw.bpc ||
			len(f.U) < sw.planeN || len(f.V) < sw.planeN {
			return nil, false, nil
		}
	}
	st := sw.staging.Bytes()
	for i, p := range [speedPictures][]uint16{ref.U, dis.U, ref.V, dis.V} {
		copy(st[i*2*sw.planeN:], samples(p[:sw.planeN]))
	}
	s := sw.stream
	if err := s.Begin(); err != nil {
		return nil, false, fmt.Errorf("vulkan speed: %w", err)
	}
	s.Copy(sw.planes, 0, sw.staging, 0, int64(speedPictures*2*sw.planeN))
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
	dec := int64(speedPictures * c.DecWidth * c.DecHeight * 4)
	s.Copy(sw.back, 0, sw.img, 0, dec)
	s.Copy(sw.back, dec, sw.cov, 0, int64(speedPictures*vmaf.SpeedCovLen*8))
	if err := submitWait(s); err != nil {
		return nil, false, fmt.Errorf("vulkan speed: %w", err)
	}
	b := sw.back.Bytes()
	le := binary.LittleEndian
	n := c.DecWidth * c.DecHeight
	for i := range speedPictures {
		for j := range sw.out.Img[i] {
			sw.out.Img[i][j] = math.Float32frombits(le.Uint32(b[4*(i*n+j):]))
		}
		for j := range sw.out.Cov[i] {
			sw.out.Cov[i][j] = math.Float64frombits(le.Uint64(b[dec+int64(8*(i*vmaf.SpeedCovLen+j)):]))
		}
	}
	return &sw.out, true, nil
}

func (sw *speedWorker) close() {
	if sw.stream != nil {
		sw.stream.Close()
		sw.stream = nil
	}
	sw.mem.close()
}
