package checksum

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// withKernels runs f with the AVX-512 kernels as the machine has them,
// then (where there are kernels to turn off) with the Go loops only.
func withKernels(t testing.TB, f func(kernels bool)) {
	f(true)
	if hasBulkKernels() {
		setBulkKernels(false)
		defer setBulkKernels(true)
		f(false)
	}
}

// bulkInputs are the byte pages the bulk hashes are tested on: random bits
// and the float64 values whose canonical form differs (NaNs of every sign
// and payload, infinities, zeros).
func bulkInputs(rng *rand.Rand, n int) []byte {
	specials := []uint64{
		0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0xfff0000000000001,
		0x7fffffffffffffff, 0xffffffffffffffff, 0x7ff4000000000000,
		math.Float64bits(math.Inf(1)), math.Float64bits(math.Inf(-1)), 0, 1 << 63,
		0x7fefffffffffffff,
	}
	b := make([]byte, 8*n)
	for i := range n {
		x := rng.Uint64()
		if rng.IntN(3) == 0 {
			x = specials[rng.IntN(len(specials))]
		}
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// checkBulk compares every bulk form on data with the one-value
// primitives.
func checkBulk(t testing.TB, data []byte, seed uint64, kernels bool) {
	t.Helper()
	n8, n4 := len(data)/8, len(data)/4
	out := make([]uint64, max(n8, n4))
	FixedHashes64(out[:n8], data, seed)
	for i := range n8 {
		x := binary.LittleEndian.Uint64(data[8*i:])
		if want := FixedHash(x, seed); out[i] != want {
			t.Fatalf("kernels %v: FixedHashes64[%d] of %#x = %#x, want %#x", kernels, i, x, out[i], want)
		}
	}
	DoubleHashes64(out[:n8], data, seed)
	for i := range n8 {
		x := binary.LittleEndian.Uint64(data[8*i:])
		c := x
		if f := math.Float64frombits(x); f != f {
			c = 0x7ff8000000000000
		}
		if want := FixedHash(c, seed); out[i] != want {
			t.Fatalf("kernels %v: DoubleHashes64[%d] of %#x = %#x, want %#x", kernels, i, x, out[i], want)
		}
	}
	FixedHashes32(out[:n4], data, seed)
	for i := range n4 {
		x := int32(binary.LittleEndian.Uint32(data[4*i:]))
		if want := FixedHash(uint64(int64(x)), seed); out[i] != want {
			t.Fatalf("kernels %v: FixedHashes32[%d] of %d = %#x, want %#x", kernels, i, x, out[i], want)
		}
	}

	// Fold: the accumulators start as the first half of the words, the
	// hashes are the words themselves.
	hs := make([]uint64, n8)
	for i := range hs {
		hs[i] = binary.LittleEndian.Uint64(data[8*i:])
	}
	acc := make([]uint64, n8)
	want := make([]uint64, n8)
	for i := range acc {
		acc[i] = hs[i] * 0x9e3779b97f4a7c15
		want[i] = FoldValue(acc[i], hs[i])
	}
	FoldValues(acc, hs)
	for i := range acc {
		if acc[i] != want[i] {
			t.Fatalf("kernels %v: FoldValues[%d] = %#x, want %#x", kernels, i, acc[i], want[i])
		}
	}

	// AddFolds over every prefix length around the kernels' eight lanes,
	// from a sum that is not zero.
	for _, k := range []int{0, 1, 7, 8, 9, 15, 16, 17, n8 - 1, n8} {
		if k < 0 || k > n8 {
			continue
		}
		start := Sum{hi: seed, lo: ^seed}
		got, ref := start, start
		got.AddFolds(hs[:k])
		for _, a := range hs[:k] {
			ref.AddFold(a)
		}
		if got != ref {
			t.Fatalf("kernels %v: AddFolds of %d = %+v, want %+v", kernels, k, got, ref)
		}
	}
}

func TestBulkMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 7))
	withKernels(t, func(kernels bool) {
		for n := range 70 {
			checkBulk(t, bulkInputs(rng, n), rng.Uint64(), kernels)
		}
		checkBulk(t, bulkInputs(rng, 4099), ColSeed(3), kernels)
	})
}

// TestAddFoldsCarries: accumulators whose low halves sum past 2^64 many
// times in one lane, so that a lost carry shows.
func TestAddFoldsCarries(t *testing.T) {
	withKernels(t, func(kernels bool) {
		// fmix64 is a bijection: find accumulators with large low halves.
		var acc []uint64
		for a := uint64(0); len(acc) < 256; a++ {
			if fmix64(a) > 0xf000000000000000 {
				acc = append(acc, a)
			}
		}
		var got, want Sum
		got.AddFolds(acc)
		for _, a := range acc {
			want.AddFold(a)
		}
		if got != want {
			t.Fatalf("kernels %v: AddFolds = %+v, want %+v", kernels, got, want)
		}
	})
}

func FuzzBulk(f *testing.F) {
	f.Add([]byte{}, uint64(0))
	f.Add(bulkInputs(rand.New(rand.NewPCG(1, 2)), 17), uint64(1))
	f.Add(bulkInputs(rand.New(rand.NewPCG(3, 4)), 64), ColSeed(0))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		withKernels(t, func(kernels bool) { checkBulk(t, data, seed, kernels) })
	})
}

func BenchmarkBulk(b *testing.B) {
	data := bulkInputs(rand.New(rand.NewPCG(5, 6)), 1<<16)
	out := make([]uint64, 1<<16)
	for _, kernels := range []bool{true, false} {
		name := "go"
		if kernels {
			name = "kernels"
		}
		b.Run(name+"/fixed64", func(b *testing.B) {
			defer setBulkKernels(hasBulkKernels())
			setBulkKernels(kernels)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				FixedHashes64(out, data, 1)
			}
		})
		b.Run(name+"/addfolds", func(b *testing.B) {
			defer setBulkKernels(hasBulkKernels())
			setBulkKernels(kernels)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var s Sum
				s.AddFolds(out)
			}
		})
		b.Run(name+"/fold", func(b *testing.B) {
			defer setBulkKernels(hasBulkKernels())
			setBulkKernels(kernels)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				FoldValues(out, out)
			}
		})
	}
}
