package xhash

import "unsafe"

// unsafeBytes views s as a byte slice; XXH32 only reads it.
func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
