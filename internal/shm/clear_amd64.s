#include "textflag.h"

// func clearNonTemporal(p unsafe.Pointer, n int)
//
// Zeroes n bytes (a multiple of 8) at p (8-byte aligned) with MOVNTI:
// non-temporal stores that go to memory through the write-combining
// buffers, without reading the lines first or keeping them in the caches.
// SFENCE at the end orders them before every later store.
TEXT ·clearNonTemporal(SB), NOSPLIT, $0-16
	MOVQ	p+0(FP), DI
	MOVQ	n+8(FP), CX
	XORQ	AX, AX
	CMPQ	CX, $64
	JB	tail
line:
	MOVNTIQ	AX, 0(DI)
	MOVNTIQ	AX, 8(DI)
	MOVNTIQ	AX, 16(DI)
	MOVNTIQ	AX, 24(DI)
	MOVNTIQ	AX, 32(DI)
	MOVNTIQ	AX, 40(DI)
	MOVNTIQ	AX, 48(DI)
	MOVNTIQ	AX, 56(DI)
	ADDQ	$64, DI
	SUBQ	$64, CX
	CMPQ	CX, $64
	JAE	line
tail:
	CMPQ	CX, $8
	JB	done
	MOVNTIQ	AX, 0(DI)
	ADDQ	$8, DI
	SUBQ	$8, CX
	JMP	tail
done:
	SFENCE
	RET
