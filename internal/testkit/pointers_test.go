package testkit

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"
)

func TestHasPointers(t *testing.T) {
	type flat struct {
		A uint64
		B [4]int32
	}
	type nested struct {
		F flat
		S []byte
	}
	cases := []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[uint64](), false},
		{reflect.TypeFor[[8]uint64](), false},
		{reflect.TypeFor[flat](), false},
		{reflect.TypeFor[[3]flat](), false},
		{reflect.TypeFor[[0]*int](), false},
		{reflect.TypeFor[*int](), true},
		{reflect.TypeFor[[]byte](), true},
		{reflect.TypeFor[string](), true},
		{reflect.TypeFor[map[int]int](), true},
		{reflect.TypeFor[chan int](), true},
		{reflect.TypeFor[func()](), true},
		{reflect.TypeFor[any](), true},
		{reflect.TypeFor[unsafe.Pointer](), true},
		{reflect.TypeFor[[2]*int](), true},
		{reflect.TypeFor[nested](), true},
	}
	for _, c := range cases {
		if got := HasPointers(c.typ); got != c.want {
			t.Errorf("HasPointers(%v) = %v, want %v", c.typ, got, c.want)
		}
	}
}

func ExampleHasPointers() {
	type entry struct {
		Hash uint64
		Ref  uint32
	}
	fmt.Println(HasPointers(reflect.TypeFor[entry]()), HasPointers(reflect.TypeFor[[]entry]()))
	// Output: false true
}
