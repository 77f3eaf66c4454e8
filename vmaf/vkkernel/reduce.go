package vkkernel

import (
	_ "embed"
	"encoding/binary"

	"github.com/vmafx/vmafx/vmaf/vulkan"
)

//go:embed shaders/reduce.spv
var reduceSPV []byte

// reducePushSize is reduce.comp's push constant block: eight 32-bit words
// and the 64-bit rounding addend.
const reducePushSize = 40

// reduceSetsPerWorker are the reduce pass's descriptor sets a worker binds:
// motion's rows and VIF's four scales' (ADM's have adm_reduce.comp).
const reduceSetsPerWorker = 5

// reduceOp is one reduction of per-row sums (shaders/reduce.comp): lanes
// values per row, rows n, the first row's first value at element off,
// stride elements apart; 64-bit elements when wide (else 32-bit unsigned),
// each rounded as (v + add) >> shift, arithmetically when signed, before
// it is added.
type reduceOp struct {
	off, n, stride, lanes int
	wide, signed          bool
	shift                 uint32
	add                   uint64
}

// record records the reduction of set's rows into its results buffer at
// 64-bit word dst (lanes words).
func (r reduceOp) record(s recorder, p *vulkan.Pipeline, set *vulkan.DescriptorSet, dst int) {
	b := make([]byte, reducePushSize)
	le := binary.LittleEndian
	b2i := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	for i, v := range []int{r.off, r.n, r.stride, b2i(r.wide), b2i(r.signed), int(r.shift), dst, 0} {
		le.PutUint32(b[4*i:], uint32(v))
	}
	le.PutUint64(b[32:], r.add)
	s.Dispatch(p, set, b, r.lanes, 1, 1)
}
