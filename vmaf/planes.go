package vmaf

import "unsafe"

// The frame slots' luma planes for a device (OffloadConfig.Planes). Each slot's
// planes used to be heap memory of their own, which a GPU worker copied into
// its driver's staging before the device could take them: at 1080p 4 MB a
// frame, on the thread that feeds the device (docs/benchmarks.md). In one
// block of memory that the device imports, the readers' frames are where the
// device copies them from.
const (
	// planesAlign is where the block starts and the granule of its size: a
	// multiple of what devices ask of host memory they import (4 KiB on
	// NVIDIA's and Mesa's drivers).
	planesAlign = 64 << 10
	// planeAlign is where each plane starts inside it: whole pages, and room
	// for a device worker's copy of a plane rounded up to whole words.
	planeAlign = 4 << 10
)

// planeBlock is the luma planes of a Score's frame slots in one block.
type planeBlock struct {
	mem    []byte
	stride int // bytes from one plane to the next
	n      int // samples a plane
}

// newPlaneBlock makes room for count luma planes of n samples of bpc bits:
// a byte a sample at 8 bits (Frame.Y8, read Packed), else two (Frame.Y).
func newPlaneBlock(count, n, bpc int) planeBlock {
	bytes := n
	if bpc > 8 {
		bytes = 2 * n
	}
	stride := roundUp(bytes, planeAlign)
	size := roundUp(count*stride, planesAlign)
	raw := make([]byte, size+planesAlign)
	off := (planesAlign - int(uintptr(unsafe.Pointer(&raw[0]))%planesAlign)) % planesAlign
	return planeBlock{mem: raw[off : off+size : off+size], stride: stride, n: n}
}

// give makes plane i of the block f's luma storage: Y8 at 8 bits, Y above,
// empty and of exactly a plane's capacity, which the readers fill in place.
func (b planeBlock) give(f *Frame, i, bpc int) {
	p := b.mem[i*b.stride : i*b.stride+b.stride]
	if bpc > 8 {
		f.Y = unsafe.Slice((*uint16)(unsafe.Pointer(&p[0])), b.n)[:0]
		return
	}
	f.Y8 = p[:0:b.n]
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }
