package rdb

import "encoding/binary"

// crcPoly is the Jones polynomial 0xAD93D23594C935A9 in reflected form.
// Redis runs it reflected in and out, with an initial value of 0 and no
// final xor, which hash/crc64 cannot express (its Update inverts the
// register before and after).
const crcPoly = 0x95AC9329AC4BC9B5

// crcTable holds the eight slicing tables: crcTable[0] is the classic
// byte-at-a-time table, crcTable[k][b] advances crcTable[0][b] by k more
// zero bytes.
var crcTable = func() *[8][256]uint64 {
	t := new([8][256]uint64)
	for i := range 256 {
		c := uint64(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ crcPoly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][byte(c)] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// CRC64 returns crc updated with p, in the CRC-64 that Redis uses for the
// RDB trailer and the DUMP footer. Start with 0; feeding a message in
// pieces gives the same result as feeding it whole:
// CRC64(0, []byte("123456789")) == 0xe9c6d914c4b8d9ca.
func CRC64(crc uint64, p []byte) uint64 {
	t := crcTable
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][byte(crc)] ^ t[6][byte(crc>>8)] ^ t[5][byte(crc>>16)] ^ t[4][byte(crc>>24)] ^
			t[3][byte(crc>>32)] ^ t[2][byte(crc>>40)] ^ t[1][byte(crc>>48)] ^ t[0][byte(crc>>56)]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}
