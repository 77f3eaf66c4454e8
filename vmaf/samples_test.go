package vmaf

import (
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
// GPU: narrow8 is what an 8-bit plane costs now (Narrow8, half the bytes
// written), copy16 what it cost as 16-bit samples (a copy of twice the bytes).
func BenchmarkStagePlane(b *testing.B) {
	src := make([]uint16, 1920*1080)
	for i := range src {
		src[i] = uint16(i * 7 % 256)
	}
	b.Run("narrow8", func(b *testing.B) {
		dst := make([]byte, len(src))
		b.SetBytes(int64(2 * len(src)))
		for b.Loop() {
			Narrow8(dst, src)
		}
	})
	b.Run("copy16", func(b *testing.B) {
		dst := make([]uint16, len(src))
		b.SetBytes(int64(2 * len(src)))
		for b.Loop() {
			copy(dst, src)
		}
	})
}
