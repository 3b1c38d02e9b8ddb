package testkit

import "reflect"

// HasPointers reports whether a value of type t holds a pointer the garbage
// collector follows: a pointer, slice, map, channel, function, interface,
// string or unsafe.Pointer, directly or inside an array or struct.
func HasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface, reflect.String, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return t.Len() > 0 && HasPointers(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if HasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
