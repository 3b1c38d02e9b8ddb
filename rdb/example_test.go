package rdb_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/goblin-kv/goblin/rdb"
)

// Write a snapshot with two databases and read it back.
func Example() {
	var file bytes.Buffer
	e := rdb.NewEncoder(&file, rdb.EncoderOptions{Now: time.Unix(1767225600, 0)})
	_ = e.WriteHeader()
	_ = e.SelectDB(0, 2, 1)
	_ = e.Write([]byte("greeting"), &rdb.Value{Kind: rdb.KindString, Str: []byte("hello")}, 4102444800000)
	_ = e.Write([]byte("queue"), &rdb.Value{Kind: rdb.KindList, Items: [][]byte{[]byte("a"), []byte("b")}}, rdb.NoExpiry)
	_ = e.SelectDB(5, 1, 0)
	_ = e.Write([]byte("scores"), &rdb.Value{Kind: rdb.KindZSet, Items: [][]byte{[]byte("x")}, Scores: []float64{2.5}}, rdb.NoExpiry)
	if err := e.Close(); err != nil {
		fmt.Println(err)
		return
	}

	d := rdb.NewDecoder(&file, rdb.DecoderOptions{})
	for d.Next() {
		en := d.Entry()
		fmt.Printf("db %d %s %s (%s)", en.DB, en.Key, en.Kind, rdb.TypeName(en.Type))
		if en.Expiry != rdb.NoExpiry {
			fmt.Printf(" expires %d", en.Expiry)
		}
		fmt.Println()
	}
	fmt.Println("error:", d.Err())
	// Output:
	// db 0 greeting string (string) expires 4102444800000
	// db 0 queue list (list (quicklist 2))
	// db 5 scores zset (zset (listpack))
	// error: <nil>
}

// A DUMP payload as Redis's DUMP returns it, and back.
func ExampleAppendDump() {
	p, _ := rdb.AppendDump(nil, &rdb.Value{Kind: rdb.KindString, Str: []byte("hello")})
	fmt.Printf("% x\n", p)
	var d rdb.Decoder
	v, err := d.DecodeDump(p)
	fmt.Printf("%s %q %v\n", v.Kind, v.Str, err)
	// Output:
	// 00 05 68 65 6c 6c 6f 0a 00 63 72 df 76 65 34 20 0a
	// string "hello" <nil>
}
