// Ring buffer samples as the kernel writes them, for the decoder's tests on any system
// (the live tests, Linux only, use them too).
package probe

import "unsafe"

// rawRecord serialises a generated record the way the kernel writes it.
func rawRecord(r commonRecord) []byte {
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&r)), recordSize)...)
}

func setCString(dst []int8, s string) {
	for i := 0; i < len(s) && i < len(dst)-1; i++ {
		dst[i] = int8(s[i])
	}
}

// fenceSample is a fence_record ring buffer sample.
func fenceSample(r commonFenceRecord) []byte {
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&r)), fenceRecordSize)...)
}
