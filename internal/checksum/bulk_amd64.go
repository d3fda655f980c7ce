//go:build amd64 && !purego

package checksum

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX512 selects the AVX-512 kernels (64-bit multiplies, VPMULLQ, need
// AVX512DQ). Tests turn it off to run the Go loops on the same machine.
var useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// The kernels process n elements, n a positive multiple of 8; the
// wrappers below return how many they did (the callers do the rest).

//go:noescape
func fixed64AVX512(out *uint64, in *byte, n int, seed uint64)

//go:noescape
func double64AVX512(out *uint64, in *byte, n int, seed uint64)

//go:noescape
func int32AVX512(out *uint64, in *byte, n int, seed uint64)

//go:noescape
func foldAVX512(acc, hs *uint64, n int)

//go:noescape
func addFoldsAVX512(acc *uint64, n int, lanes *[16]uint64)

func bulkFixed64(out []uint64, data []byte, seed uint64) int {
	n := len(out) &^ 7
	if !useAVX512 || n == 0 {
		return 0
	}
	_ = data[:8*n]
	fixed64AVX512(&out[0], unsafe.SliceData(data), n, seed)
	return n
}

func bulkDouble64(out []uint64, data []byte, seed uint64) int {
	n := len(out) &^ 7
	if !useAVX512 || n == 0 {
		return 0
	}
	_ = data[:8*n]
	double64AVX512(&out[0], unsafe.SliceData(data), n, seed)
	return n
}

func bulkInt32(out []uint64, data []byte, seed uint64) int {
	n := len(out) &^ 7
	if !useAVX512 || n == 0 {
		return 0
	}
	_ = data[:4*n]
	int32AVX512(&out[0], unsafe.SliceData(data), n, seed)
	return n
}

func bulkFold(acc, hs []uint64) int {
	n := len(acc) &^ 7
	if !useAVX512 || n == 0 {
		return 0
	}
	_ = hs[:n]
	foldAVX512(&acc[0], &hs[0], n)
	return n
}

func bulkAddFolds(s *Sum, acc []uint64) int {
	n := len(acc) &^ 7
	if !useAVX512 || n == 0 {
		return 0
	}
	var lanes [16]uint64
	addFoldsAVX512(&acc[0], n, &lanes)
	s.addLanes(&lanes)
	return n
}

// hasBulkKernels reports whether this machine runs the kernels (tests).
func hasBulkKernels() bool { return cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ }

// setBulkKernels turns the kernels on or off (tests; on only where the
// machine has them).
func setBulkKernels(on bool) { useAVX512 = on && hasBulkKernels() }
