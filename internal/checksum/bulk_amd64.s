//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 kernels of bulk.go: eight 64-bit lanes at once. Each loop takes
// n, a positive multiple of 8 (the Go wrappers see to it).

// FMIX is fmix64 (MurmurHash3's finalizer) of the lanes of x; Z1 and Z2
// hold its two multipliers, t is scratch.
#define FMIX(x, t) \
	VPSRLQ  $33, x, t \
	VPXORQ  t, x, x   \
	VPMULLQ Z1, x, x  \
	VPSRLQ  $33, x, t \
	VPXORQ  t, x, x   \
	VPMULLQ Z2, x, x  \
	VPSRLQ  $33, x, t \
	VPXORQ  t, x, x

#define FMIXCONSTS \
	MOVQ         $0xff51afd7ed558ccd, AX \
	VPBROADCASTQ AX, Z1                  \
	MOVQ         $0xc4ceb9fe1a85ec53, AX \
	VPBROADCASTQ AX, Z2

// func fixed64AVX512(out *uint64, in *byte, n int, seed uint64)
TEXT ·fixed64AVX512(SB), NOSPLIT, $0-32
	MOVQ         out+0(FP), DI
	MOVQ         in+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         seed+24(FP), AX
	VPBROADCASTQ AX, Z0
	FMIXCONSTS

fixed64loop:
	VMOVDQU64 (SI), Z3
	VPXORQ    Z0, Z3, Z3
	FMIX(Z3, Z4)
	VMOVDQU64 Z3, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       fixed64loop
	VZEROUPPER
	RET

// func double64AVX512(out *uint64, in *byte, n int, seed uint64)
TEXT ·double64AVX512(SB), NOSPLIT, $0-32
	MOVQ         out+0(FP), DI
	MOVQ         in+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         seed+24(FP), AX
	VPBROADCASTQ AX, Z0
	FMIXCONSTS
	MOVQ         $0x7fffffffffffffff, AX
	VPBROADCASTQ AX, Z5                  // the bits but the sign
	MOVQ         $0x7ff0000000000000, AX
	VPBROADCASTQ AX, Z6                  // infinity: above it, a NaN
	MOVQ         $0x7ff8000000000000, AX
	VPBROADCASTQ AX, Z7                  // the canonical NaN

double64loop:
	VMOVDQU64 (SI), Z3
	VPANDQ    Z5, Z3, Z4
	VPCMPUQ   $6, Z6, Z4, K1 // K1: lanes whose |x| > infinity, NaNs
	VMOVDQA64 Z7, K1, Z3
	VPXORQ    Z0, Z3, Z3
	FMIX(Z3, Z4)
	VMOVDQU64 Z3, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       double64loop
	VZEROUPPER
	RET

// func int32AVX512(out *uint64, in *byte, n int, seed uint64)
TEXT ·int32AVX512(SB), NOSPLIT, $0-32
	MOVQ         out+0(FP), DI
	MOVQ         in+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         seed+24(FP), AX
	VPBROADCASTQ AX, Z0
	FMIXCONSTS

int32loop:
	VPMOVSXDQ (SI), Z3
	VPXORQ    Z0, Z3, Z3
	FMIX(Z3, Z4)
	VMOVDQU64 Z3, (DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       int32loop
	VZEROUPPER
	RET

// func foldAVX512(acc, hs *uint64, n int)
TEXT ·foldAVX512(SB), NOSPLIT, $0-24
	MOVQ         acc+0(FP), DI
	MOVQ         hs+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         $0x9e3779b97f4a7c15, AX
	VPBROADCASTQ AX, Z1

foldloop:
	VMOVDQU64 (DI), Z3
	VPXORQ    (SI), Z3, Z3
	VPMULLQ   Z1, Z3, Z3
	VMOVDQU64 Z3, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       foldloop
	VZEROUPPER
	RET

// func addFoldsAVX512(acc *uint64, n int, lanes *[16]uint64)
//
// Per lane, the sum (mod 2^128) of the 128-bit expansions of its
// accumulators: lo = fmix64(a), hi = fmix64(a+expandHi), the carry out of
// the low half counted into the high one. lanes gets the eight low halves,
// then the eight high ones.
TEXT ·addFoldsAVX512(SB), NOSPLIT, $0-24
	MOVQ         acc+0(FP), DI
	MOVQ         n+8(FP), CX
	MOVQ         lanes+16(FP), DX
	MOVQ         $0xc2b2ae3d27d4eb4f, AX
	VPBROADCASTQ AX, Z0
	FMIXCONSTS
	MOVQ         $1, AX
	VPBROADCASTQ AX, Z10
	VPXORQ       Z8, Z8, Z8           // low halves
	VPXORQ       Z9, Z9, Z9           // high halves

addfoldsloop:
	VMOVDQU64 (DI), Z3
	VPADDQ    Z0, Z3, Z4
	FMIX(Z3, Z5)
	FMIX(Z4, Z6)
	VPADDQ    Z3, Z8, Z8
	VPCMPUQ   $1, Z3, Z8, K1 // K1: lanes whose low half wrapped (sum < addend)
	VPADDQ    Z4, Z9, Z9
	VPADDQ    Z10, Z9, K1, Z9
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       addfoldsloop
	VMOVDQU64 Z8, (DX)
	VMOVDQU64 Z9, 64(DX)
	VZEROUPPER
	RET
