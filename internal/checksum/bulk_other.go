//go:build !amd64 || purego

package checksum

// Without the AVX-512 kernels the bulk forms are their Go loops: the
// kernels hash nothing and leave every element to them.

func bulkFixed64(out []uint64, data []byte, seed uint64) int  { return 0 }
func bulkDouble64(out []uint64, data []byte, seed uint64) int { return 0 }
func bulkInt32(out []uint64, data []byte, seed uint64) int    { return 0 }
func bulkFold(acc, hs []uint64) int                           { return 0 }
func bulkAddFolds(s *Sum, acc []uint64) int                   { return 0 }

func hasBulkKernels() bool   { return false }
func setBulkKernels(on bool) {}
