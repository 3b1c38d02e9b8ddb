//go:build amd64 && !race

#include "go_asm.h"
#include "textflag.h"

// The publisher's appends, as the Java ExclusiveTermAppender orders them:
// the raw tail, the header's first word (negative length), its other two
// words, the payload, and last the positive frame length. On amd64 (TSO) a
// MOV is a release store and stores become visible in program order, so
// plain MOVs give exactly the orderings Java's putLongRelease/putIntRelease
// give (no fence); being assembly, the routines are opaque to the Go
// compiler, which therefore moves nothing across them.
//
// Writers and readers: the raw tail and the frame are written only by this
// publisher (the caller holds the single-writer contract); the driver and
// subscribers read the frame length with acquire loads, the driver reads the
// raw tail with acquire loads. The pub-lmt counter is written by the driver
// (release) and read here with a plain MOV, an acquire load on amd64.

// func appendFrame(tail *int64, rawTail int64, frame *byte, w0, w1, w2 int64, a *byte, na int, b *byte, nb int, frameLength int32)
TEXT ·appendFrame(SB), NOSPLIT, $0-84
	MOVQ tail+0(FP), AX
	TESTQ AX, AX
	JZ   header
	MOVQ rawTail+8(FP), BX
	MOVQ BX, (AX)                 // raw tail (release)

header:
	MOVQ frame+16(FP), DX
	MOVQ w0+24(FP), BX
	MOVQ BX, 0(DX)                // length<0, version, flags, type (release)
	MOVQ w1+32(FP), BX
	MOVQ BX, 8(DX)                // term offset, session id
	MOVQ w2+40(FP), BX
	MOVQ BX, 16(DX)               // stream id, term id
	LEAQ 32(DX), DI
	MOVQ a+48(FP), SI
	MOVQ na+56(FP), CX
	MOVQ b+64(FP), R8
	MOVQ nb+72(FP), R9
	MOVL frameLength+80(FP), BX
	JMP  copyPublish<>(SB)

// func offerFast(s *appendState, a *byte, na int, b *byte, nb int) int64
//
// Returns the new position, or 0 (nothing written) when the offer is not
// the simple case: more than one frame, at or past the publisher limit, or
// not fitting in the rest of the active term.
TEXT ·offerFast(SB), NOSPLIT, $0-48
	MOVQ s+0(FP), R10
	MOVQ na+16(FP), R11
	ADDQ nb+32(FP), R11           // R11 = length
	CMPQ R11, appendState_payloadLimit(R10)
	JGT  slow
	MOVQ appendState_termOffset(R10), R12
	MOVQ appendState_termBeginPosition(R10), R13
	LEAQ (R13)(R12*1), AX         // position
	MOVQ appendState_limitAddr(R10), BX
	CMPQ AX, (BX)                 // pub-lmt (acquire)
	JGE  slow
	LEAQ 63(R11), R9              // align(length + 32, 32)
	ANDQ $~31, R9
	ADDQ R12, R9                  // R9 = result (new term offset)
	CMPQ R9, appendState_termLength(R10)
	JGT  slow

	MOVQ R9, appendState_termOffset(R10)
	LEAQ (R13)(R9*1), AX
	MOVQ AX, ret+40(FP)           // new position

	MOVQ appendState_termID(R10), R14
	SHLQ $32, R14
	MOVQ R14, BX
	ORQ  R9, BX
	MOVQ appendState_tailAddr(R10), AX
	MOVQ BX, (AX)                 // raw tail: term id, new offset (release)

	MOVQ appendState_termAddr(R10), DX
	ADDQ R12, DX                  // DX = frame
	LEAQ 32(R11), R11             // R11 = frame length
	MOVL R11, BX
	NEGL BX                       // uint32(-frameLength), zero-extended
	ORQ  appendState_hdrVersionFlags(R10), BX
	MOVQ BX, 0(DX)                // length<0, version, flags, type (release)
	MOVL R12, BX
	ORQ  appendState_hdrSession(R10), BX
	MOVQ BX, 8(DX)                // term offset, session id
	ORQ  appendState_hdrStream(R10), R14
	MOVQ R14, 16(DX)              // stream id, term id

	LEAQ 32(DX), DI
	MOVQ a+8(FP), SI
	MOVQ na+16(FP), CX
	MOVQ b+24(FP), R8
	MOVQ nb+32(FP), R9
	MOVL R11, BX
	JMP  copyPublish<>(SB)

slow:
	MOVQ $0, ret+40(FP)
	RET

// copyPublish copies CX bytes from SI to DI, then R9 bytes from R8, and
// then stores BX (the positive frame length) at DX with a plain MOV, the
// release that publishes the frame; then it returns to the caller of the
// routine that jumped here. It reads only the sources' own bytes.
TEXT copyPublish<>(SB), NOSPLIT|NOFRAME, $0-0
loop32:
	CMPQ CX, $32
	JB   tail16
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU X0, 0(DI)
	MOVOU X1, 16(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  loop32

tail16:
	CMPQ CX, $16
	JB   tail8
	MOVOU 0(SI), X0
	MOVOU X0, 0(DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $16, CX

tail8:
	CMPQ CX, $8
	JB   tail4
	MOVQ 0(SI), AX
	MOVQ AX, 0(DI)
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX

// The last 0-7 bytes in at most three moves (4, 2, 1), not a byte loop:
// a short message (a RESP +PONG is 7 bytes) paid some 45 instructions
// for it per offer.
tail4:
	CMPQ CX, $4
	JB   tail2
	MOVL 0(SI), AX
	MOVL AX, 0(DI)
	ADDQ $4, SI
	ADDQ $4, DI
	SUBQ $4, CX

tail2:
	CMPQ CX, $2
	JB   tail1
	MOVW 0(SI), AX
	MOVW AX, 0(DI)
	ADDQ $2, SI
	ADDQ $2, DI
	SUBQ $2, CX

tail1:
	TESTQ CX, CX
	JZ   part
	MOVB 0(SI), AX
	MOVB AX, 0(DI)
	INCQ SI
	INCQ DI
	DECQ CX

part:
	TESTQ R9, R9
	JZ   publish
	MOVQ R8, SI
	MOVQ R9, CX
	XORQ R9, R9
	JMP  loop32

publish:
	MOVL BX, 0(DX)                // positive frame length (release)
	RET
