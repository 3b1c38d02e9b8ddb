//go:build amd64 && !race

#include "textflag.h"

// Plain stores. On amd64 (TSO) a store is never reordered with earlier loads
// or stores, so a MOV is a release store; being an assembly call, it is also
// a compiler barrier for the Go code around it.

// func storeRelease32(addr *int32, v int32)
TEXT ·storeRelease32(SB), NOSPLIT, $0-12
	MOVQ addr+0(FP), AX
	MOVL v+8(FP), BX
	MOVL BX, (AX)
	RET

// func storeRelease64(addr *int64, v int64)
TEXT ·storeRelease64(SB), NOSPLIT, $0-16
	MOVQ addr+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, (AX)
	RET
