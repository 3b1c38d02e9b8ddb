package testkit

import "fmt"

func ExampleFuzzReader() {
	in := NewFuzzReader([]byte{7, 9})
	for in.Len() > 0 {
		fmt.Print(in.Next(), " ")
	}
	fmt.Println(in.Next(), in.Len())
	// Output: 7 9 0 0
}
