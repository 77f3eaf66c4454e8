package vmaf

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// FuzzToSamples compares toSamples (whose 8-bit widening takes AVX2 where
// the processor has it, and whose words are one copy on a little-endian
// machine) and wordsLE (the words of a big-endian one) with the byte-by-byte
// conversion, at 8, 10 and 12 bits and lengths on either side of the
// vector's 32.
func FuzzToSamples(f *testing.F) {
	f.Add(uint64(1), uint16(0), uint8(8))
	f.Add(uint64(2), uint16(31), uint8(8))
	f.Add(uint64(3), uint16(33), uint8(8))
	f.Add(uint64(4), uint16(1000), uint8(8))
	f.Add(uint64(5), uint16(77), uint8(10))
	f.Add(uint64(6), uint16(64), uint8(12))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, bpc uint8) {
		b := 8
		if bpc == 10 || bpc == 12 {
			b = int(bpc)
		}
		rng := rand.New(rand.NewPCG(seed, 32))
		bytes := 1
		if b > 8 {
			bytes = 2
		}
		src := make([]byte, int(n)*bytes+5)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		got := toSamples(nil, src, int(n), b)
		var words []uint16 // the conversion of a big-endian machine
		if b > 8 {
			words = make([]uint16, n)
			wordsLE(words, src)
		}
		for i := range int(n) {
			want := uint16(src[i])
			if b > 8 {
				want = uint16(src[2*i]) | uint16(src[2*i+1])<<8
			}
			if got[i] != want {
				t.Fatalf("n %d, %d-bit: sample %d is %d, want %d", n, b, i, got[i], want)
			}
			if words != nil && words[i] != want {
				t.Fatalf("n %d, %d-bit, word by word: sample %d is %d, want %d", n, b, i, words[i], want)
			}
		}
	})
}

// FuzzNarrow8 compares Narrow8 (AVX2 where the processor has it) with the
// sample-by-sample narrowing, at lengths on either side of the vector's 32,
// and checks that it is the reverse of the reader's widening.
func FuzzNarrow8(f *testing.F) {
	f.Add(uint64(1), uint16(0))
	f.Add(uint64(2), uint16(31))
	f.Add(uint64(3), uint16(32))
	f.Add(uint64(4), uint16(33))
	f.Add(uint64(5), uint16(95))
	f.Add(uint64(6), uint16(1920*4+7))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16) {
		rng := rand.New(rand.NewPCG(seed, 8))
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		samples := toSamples(nil, src, int(n), 8)
		got := make([]byte, int(n)+3)
		for i := range got {
			got[i] = 0xa5
		}
		Narrow8(got, samples)
		for i := range int(n) {
			if got[i] != src[i] {
				t.Fatalf("n %d: byte %d is %d, want %d", n, i, got[i], src[i])
			}
		}
		for i := int(n); i < len(got); i++ {
			if got[i] != 0xa5 {
				t.Fatalf("n %d: byte %d past the samples was written", n, i)
			}
		}
	})
}

// BenchmarkStagePlane is the host's side of staging a 1080p luma plane for a
// GPU: bytes is what an 8-bit plane costs now (CopyPlane8 of the bytes read,
// with Frame.Packed), memmove the same with one copy, narrow8 what it cost before (Narrow8 of the widened samples;
// still the path of sources that do not keep bytes), copy16 what it cost as
// 16-bit samples (a copy of twice the bytes). Each call takes the next of 16
// planes, as a run's frames come, so that neither side is in the caches
// (sixteen 1080p planes are 32 MiB of samples); SetBytes counts the samples'
// 16-bit size in each.
func BenchmarkStagePlane(b *testing.B) {
	const n, k = 1920 * 1080, 16
	var src16 [k][]uint16
	var src8, dst8 [k][]byte
	for p := range k {
		src16[p], src8[p], dst8[p] = make([]uint16, n), make([]byte, n), make([]byte, n)
		for i := range n {
			src16[p][i] = uint16((i*7 + p) % 256)
		}
		Narrow8(src8[p], src16[p])
	}
	for _, c := range []struct {
		name string
		f    func(i int)
	}{
		{"narrow8", func(i int) { Narrow8(dst8[i%k], src16[(i+k/2)%k]) }},
		{"bytes", func(i int) { CopyPlane8(dst8[i%k], src8[(i+k/2)%k]) }},
		{"memmove", func(i int) { copy(dst8[i%k], src8[(i+k/2)%k]) }},
		// n bytes each way, in the planes' own memory.
		{"copy16", func(i int) { copy(src16[i%k][:n/2], src16[(i+k/2)%k][n/2:]) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(2 * n)
			i := 0
			for b.Loop() {
				c.f(i)
				i++
			}
		})
	}
}

// CopyPlane8 copies every byte whatever the plane's size against its chunk (half a
// MiB), and nothing past the plane.
func TestCopyPlane8(t *testing.T) {
	for _, n := range []int{0, 1, 512<<10 - 1, 512 << 10, 512<<10 + 1, 1920 * 1080, 3840 * 2160} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*131 + i>>9)
		}
		dst := bytes.Repeat([]byte{0xa5}, n+64)
		CopyPlane8(dst, src)
		if !bytes.Equal(dst[:n], src) {
			t.Fatalf("%d bytes: the copy differs", n)
		}
		if !bytes.Equal(dst[n:], bytes.Repeat([]byte{0xa5}, 64)) {
			t.Fatalf("%d bytes: bytes past the plane were written", n)
		}
	}
}
