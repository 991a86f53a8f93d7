// The CUDA functions the source hooks, one table: each function's library (driver or
// runtime), what a call means for the span model (launch, copy, set, event record, sync)
// and where its arguments are read.

package cuda

import "strings"

// Layer says which library an API function belongs to.
type Layer uint8

const (
	Driver  Layer = iota // libcuda.so.1 (cu*)
	Runtime              // libcudart.so.* (cuda*)
)

func (l Layer) String() string {
	if l == Runtime {
		return "runtime"
	}
	return "driver"
}

// Class says what an API call means for the span model (doc.go).
type Class uint8

const (
	ClassLaunch      Class = iota // enqueues a kernel or a graph on a stream
	ClassMemcpy                   // copies memory (Async: enqueued on a stream)
	ClassMemset                   // sets memory (Async: enqueued on a stream)
	ClassEventRecord              // records an event on a stream (lets an event sync find its stream)
	ClassSync                     // blocks the host until work finished (stream, event, context/device)
	ClassAlloc                    // allocates memory
	ClassFree                     // frees memory
	ClassProcAddress              // cuGetProcAddress: returns a driver entry point (the entry-point table)
	classCount
)

var classNames = [classCount]string{"launch", "memcpy", "memset", "event_record", "sync", "alloc", "free", "proc_address"}

func (c Class) String() string {
	if c < classCount {
		return classNames[c]
	}
	return "class?"
}

// Scope is what a ClassSync call waits for.
type Scope uint8

const (
	ScopeNone    Scope = iota
	ScopeStream        // one stream (Stream)
	ScopeEvent         // the work before an event record (Stream holds the event)
	ScopeContext       // everything of the process (cuCtxSynchronize, cudaDeviceSynchronize)
)

// Loc is where an argument lives at function entry, as bpf/cuda.c reads it: bits 0..3 the
// integer argument slot (registers: 0..5 on x86-64 SysV, 0..7 on AArch64 AAPCS64, which
// also gives a 12-byte dim3 two slots; the rest on the stack: bpf/include/arch.h), bits 4..5 mode (1 the
// argument, 2 a u64 at argument+offset), bits 8..15 the offset.
type Loc uint16

const locNone Loc = 0

// arg is the i-th integer argument slot (a dim3 passed by value takes two slots).
func arg(i int) Loc { return Loc(i) | 1<<4 }

// field is the u64 at byte offset off of the struct the i-th argument points to.
func field(i, off int) Loc { return Loc(i) | 2<<4 | Loc(off)<<8 }

// API is one CUDA function the source hooks. Row order is the API id in the cookie:
// append, never reorder within a running process (ids are only used in-process).
type API struct {
	Name   string
	Layer  Layer
	Class  Class
	Scope  Scope // ClassSync only
	Stream Loc   // CUstream / cudaStream_t (ScopeEvent: the CUevent)
	Bytes  Loc   // size argument
	Handle Loc   // launch: CUfunction / host stub / graph exec; memcpy: kind; free: pointer; event record: the event
	// ByteScale multiplies Bytes (cuMemsetD16/D32 count elements).
	ByteScale uint8
}

// Async reports whether the call only enqueues work (has a stream and is not a sync).
func (a API) Async() bool { return a.Stream != locNone && a.Class != ClassSync }

// Argument slots of the launch signatures (gcc puts a 12-byte dim3 in two registers):
//
//	cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra): stream = 8
//	cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem, stream): func 0, grid 1-2,
//	  block 3-4, args 5, shmem 6, stream 7
//	CUlaunchConfig / cudaLaunchConfig_t: 7 u32 (or 2 dim3 + size_t) then the stream at 32.
//
// Sources: cuda.h and cuda_runtime_api.h of CUDA 12; the stub test (stub_test.go)
// checks the locations against gcc's own calling convention.
var apis = []API{
	// Driver: launches.
	{Name: "cuLaunchKernel", Class: ClassLaunch, Stream: arg(8), Handle: arg(0)},
	{Name: "cuLaunchKernel_ptsz", Class: ClassLaunch, Stream: arg(8), Handle: arg(0)},
	{Name: "cuLaunchKernelEx", Class: ClassLaunch, Stream: field(0, 32), Handle: arg(1)},
	{Name: "cuLaunchKernelEx_ptsz", Class: ClassLaunch, Stream: field(0, 32), Handle: arg(1)},
	{Name: "cuLaunchCooperativeKernel", Class: ClassLaunch, Stream: arg(8), Handle: arg(0)},
	{Name: "cuLaunchCooperativeKernel_ptsz", Class: ClassLaunch, Stream: arg(8), Handle: arg(0)},
	{Name: "cuGraphLaunch", Class: ClassLaunch, Stream: arg(1), Handle: arg(0)},
	{Name: "cuGraphLaunch_ptsz", Class: ClassLaunch, Stream: arg(1), Handle: arg(0)},
	// Driver: synchronisation.
	{Name: "cuStreamSynchronize", Class: ClassSync, Scope: ScopeStream, Stream: arg(0)},
	{Name: "cuStreamSynchronize_ptsz", Class: ClassSync, Scope: ScopeStream, Stream: arg(0)},
	{Name: "cuEventSynchronize", Class: ClassSync, Scope: ScopeEvent, Stream: arg(0)},
	{Name: "cuCtxSynchronize", Class: ClassSync, Scope: ScopeContext},
	{Name: "cuEventRecord", Class: ClassEventRecord, Stream: arg(1), Handle: arg(0)},
	{Name: "cuEventRecord_ptsz", Class: ClassEventRecord, Stream: arg(1), Handle: arg(0)},
	{Name: "cuEventRecordWithFlags", Class: ClassEventRecord, Stream: arg(1), Handle: arg(0)},
	{Name: "cuEventRecordWithFlags_ptsz", Class: ClassEventRecord, Stream: arg(1), Handle: arg(0)},
	// Driver: copies and sets.
	{Name: "cuMemcpy", Class: ClassMemcpy, Bytes: arg(2)},
	{Name: "cuMemcpy_ptds", Class: ClassMemcpy, Bytes: arg(2)},
	{Name: "cuMemcpyAsync", Class: ClassMemcpy, Bytes: arg(2), Stream: arg(3)},
	{Name: "cuMemcpyAsync_ptsz", Class: ClassMemcpy, Bytes: arg(2), Stream: arg(3)},
	{Name: "cuMemcpyHtoD_v2", Class: ClassMemcpy, Bytes: arg(2)},
	{Name: "cuMemcpyHtoD_v2_ptds", Class: ClassMemcpy, Bytes: arg(2)},
	{Name: "cuMemcpyDtoH_v2", Class: ClassMemcpy, Bytes: arg(2)},
	{Name: "cuMemcpyDtoH_v2_ptds", Class: ClassMemcpy, Bytes: arg(2)},
	{Name: "cuMemcpyDtoD_v2", Class: ClassMemcpy, Bytes: arg(2)},
	{Name: "cuMemcpyDtoD_v2_ptds", Class: ClassMemcpy, Bytes: arg(2)},
	{Name: "cuMemcpyHtoDAsync_v2", Class: ClassMemcpy, Bytes: arg(2), Stream: arg(3)},
	{Name: "cuMemcpyHtoDAsync_v2_ptsz", Class: ClassMemcpy, Bytes: arg(2), Stream: arg(3)},
	{Name: "cuMemcpyDtoHAsync_v2", Class: ClassMemcpy, Bytes: arg(2), Stream: arg(3)},
	{Name: "cuMemcpyDtoHAsync_v2_ptsz", Class: ClassMemcpy, Bytes: arg(2), Stream: arg(3)},
	{Name: "cuMemcpyDtoDAsync_v2", Class: ClassMemcpy, Bytes: arg(2), Stream: arg(3)},
	{Name: "cuMemcpyDtoDAsync_v2_ptsz", Class: ClassMemcpy, Bytes: arg(2), Stream: arg(3)},
	{Name: "cuMemcpyPeerAsync", Class: ClassMemcpy, Bytes: arg(4), Stream: arg(5)},
	{Name: "cuMemcpy2DAsync_v2", Class: ClassMemcpy, Stream: arg(1)},
	{Name: "cuMemcpy3DAsync_v2", Class: ClassMemcpy, Stream: arg(1)},
	{Name: "cuMemsetD8_v2", Class: ClassMemset, Bytes: arg(2), ByteScale: 1},
	{Name: "cuMemsetD32_v2", Class: ClassMemset, Bytes: arg(2), ByteScale: 4},
	{Name: "cuMemsetD8Async", Class: ClassMemset, Bytes: arg(2), Stream: arg(3), ByteScale: 1},
	{Name: "cuMemsetD8Async_ptsz", Class: ClassMemset, Bytes: arg(2), Stream: arg(3), ByteScale: 1},
	{Name: "cuMemsetD16Async", Class: ClassMemset, Bytes: arg(2), Stream: arg(3), ByteScale: 2},
	{Name: "cuMemsetD32Async", Class: ClassMemset, Bytes: arg(2), Stream: arg(3), ByteScale: 4},
	{Name: "cuMemsetD32Async_ptsz", Class: ClassMemset, Bytes: arg(2), Stream: arg(3), ByteScale: 4},
	// Driver: memory.
	{Name: "cuMemAlloc_v2", Class: ClassAlloc, Bytes: arg(1)},
	{Name: "cuMemAllocAsync", Class: ClassAlloc, Bytes: arg(1), Stream: arg(2)},
	{Name: "cuMemAllocAsync_ptsz", Class: ClassAlloc, Bytes: arg(1), Stream: arg(2)},
	{Name: "cuMemAllocManaged", Class: ClassAlloc, Bytes: arg(1)},
	{Name: "cuMemAllocHost_v2", Class: ClassAlloc, Bytes: arg(1)},
	{Name: "cuMemCreate", Class: ClassAlloc, Bytes: arg(1)},
	{Name: "cuMemFree_v2", Class: ClassFree, Handle: arg(0)},
	{Name: "cuMemFreeAsync", Class: ClassFree, Handle: arg(0), Stream: arg(1)},
	{Name: "cuMemFreeAsync_ptsz", Class: ClassFree, Handle: arg(0), Stream: arg(1)},
	{Name: "cuMemFreeHost", Class: ClassFree, Handle: arg(0)},
	{Name: "cuMemRelease", Class: ClassFree, Handle: arg(0)},
	// Driver: the entry-point table.
	{Name: "cuGetProcAddress", Class: ClassProcAddress},
	{Name: "cuGetProcAddress_v2", Class: ClassProcAddress},

	// Runtime: launches.
	{Name: "cudaLaunchKernel", Layer: Runtime, Class: ClassLaunch, Stream: arg(7), Handle: arg(0)},
	{Name: "cudaLaunchKernel_ptsz", Layer: Runtime, Class: ClassLaunch, Stream: arg(7), Handle: arg(0)},
	{Name: "cudaLaunchKernelExC", Layer: Runtime, Class: ClassLaunch, Stream: field(0, 32), Handle: arg(1)},
	{Name: "cudaLaunchKernelExC_ptsz", Layer: Runtime, Class: ClassLaunch, Stream: field(0, 32), Handle: arg(1)},
	{Name: "cudaLaunchCooperativeKernel", Layer: Runtime, Class: ClassLaunch, Stream: arg(7), Handle: arg(0)},
	{Name: "cudaLaunchCooperativeKernel_ptsz", Layer: Runtime, Class: ClassLaunch, Stream: arg(7), Handle: arg(0)},
	{Name: "cudaGraphLaunch", Layer: Runtime, Class: ClassLaunch, Stream: arg(1), Handle: arg(0)},
	{Name: "cudaGraphLaunch_ptsz", Layer: Runtime, Class: ClassLaunch, Stream: arg(1), Handle: arg(0)},
	// Runtime: synchronisation.
	{Name: "cudaStreamSynchronize", Layer: Runtime, Class: ClassSync, Scope: ScopeStream, Stream: arg(0)},
	{Name: "cudaStreamSynchronize_ptsz", Layer: Runtime, Class: ClassSync, Scope: ScopeStream, Stream: arg(0)},
	{Name: "cudaEventSynchronize", Layer: Runtime, Class: ClassSync, Scope: ScopeEvent, Stream: arg(0)},
	{Name: "cudaDeviceSynchronize", Layer: Runtime, Class: ClassSync, Scope: ScopeContext},
	{Name: "cudaEventRecord", Layer: Runtime, Class: ClassEventRecord, Stream: arg(1), Handle: arg(0)},
	{Name: "cudaEventRecord_ptsz", Layer: Runtime, Class: ClassEventRecord, Stream: arg(1), Handle: arg(0)},
	// PyTorch records its events with cudaEventRecordWithFlags (seen on the H200).
	{Name: "cudaEventRecordWithFlags", Layer: Runtime, Class: ClassEventRecord, Stream: arg(1), Handle: arg(0)},
	{Name: "cudaEventRecordWithFlags_ptsz", Layer: Runtime, Class: ClassEventRecord, Stream: arg(1), Handle: arg(0)},
	// Runtime: copies and sets (memcpy Handle = cudaMemcpyKind).
	{Name: "cudaMemcpy", Layer: Runtime, Class: ClassMemcpy, Bytes: arg(2), Handle: arg(3)},
	{Name: "cudaMemcpy_ptds", Layer: Runtime, Class: ClassMemcpy, Bytes: arg(2), Handle: arg(3)},
	{Name: "cudaMemcpyAsync", Layer: Runtime, Class: ClassMemcpy, Bytes: arg(2), Handle: arg(3), Stream: arg(4)},
	{Name: "cudaMemcpyAsync_ptsz", Layer: Runtime, Class: ClassMemcpy, Bytes: arg(2), Handle: arg(3), Stream: arg(4)},
	{Name: "cudaMemcpyPeerAsync", Layer: Runtime, Class: ClassMemcpy, Bytes: arg(4), Stream: arg(5)},
	{Name: "cudaMemcpy2DAsync", Layer: Runtime, Class: ClassMemcpy, Handle: arg(6), Stream: arg(7)},
	{Name: "cudaMemset", Layer: Runtime, Class: ClassMemset, Bytes: arg(2), ByteScale: 1},
	{Name: "cudaMemsetAsync", Layer: Runtime, Class: ClassMemset, Bytes: arg(2), Stream: arg(3), ByteScale: 1},
	{Name: "cudaMemsetAsync_ptsz", Layer: Runtime, Class: ClassMemset, Bytes: arg(2), Stream: arg(3), ByteScale: 1},
	// Runtime: memory.
	{Name: "cudaMalloc", Layer: Runtime, Class: ClassAlloc, Bytes: arg(1)},
	{Name: "cudaMallocAsync", Layer: Runtime, Class: ClassAlloc, Bytes: arg(1), Stream: arg(2)},
	{Name: "cudaMallocAsync_ptsz", Layer: Runtime, Class: ClassAlloc, Bytes: arg(1), Stream: arg(2)},
	{Name: "cudaMallocHost", Layer: Runtime, Class: ClassAlloc, Bytes: arg(1)},
	{Name: "cudaHostAlloc", Layer: Runtime, Class: ClassAlloc, Bytes: arg(1)},
	{Name: "cudaMallocManaged", Layer: Runtime, Class: ClassAlloc, Bytes: arg(1)},
	{Name: "cudaFree", Layer: Runtime, Class: ClassFree, Handle: arg(0)},
	{Name: "cudaFreeAsync", Layer: Runtime, Class: ClassFree, Handle: arg(0), Stream: arg(1)},
	{Name: "cudaFreeAsync_ptsz", Layer: Runtime, Class: ClassFree, Handle: arg(0), Stream: arg(1)},
	{Name: "cudaFreeHost", Layer: Runtime, Class: ClassFree, Handle: arg(0)},
}

// APIs returns the table of hooked functions (a copy).
func APIs() []API { return append([]API(nil), apis...) }

// apiByName indexes the table; a symbol asked of cuGetProcAddress maps to its rows by
// base name (cuGetProcAddress("cuLaunchKernel") may return the _ptsz variant's code).
var apiByName = func() map[string]int {
	m := make(map[string]int, len(apis))
	for i, a := range apis {
		m[a.Name] = i
	}
	return m
}()

// cookieProcAddress marks a proc-address call (bpf/cuda.c COOKIE_PROCADDR).
const cookieProcAddress = 1 << 12

// cookieEntryPoint marks uprobes attached at a learned entry point (not in BPF's
// layout: bits 13..15 are free there and only user space reads them).
const cookieEntryPoint = 1 << 13

// cookieEntryOnly marks an API attached with the entry program alone (bpf/cuda.c
// COOKIE_ENTRY_ONLY; Config.LaunchesAtEntry).
const cookieEntryOnly = 1 << 14

// cookieFloor (with cookieEntryOnly) makes the entry program count the hit and return
// (bpf/cuda.c COOKIE_FLOOR; Config.FloorLaunches, measurement only).
const cookieFloor = 1 << 15

// cookie builds the BPF attach cookie of API row id.
func cookie(id int) uint64 {
	a := apis[id]
	c := uint64(id) & 0xfff
	if a.Class == ClassProcAddress {
		c |= cookieProcAddress
	}
	return c | uint64(a.Stream)<<16 | uint64(a.Bytes)<<32 | uint64(a.Handle)<<48
}

// apiOfCookie returns the API row a record's cookie names.
func apiOfCookie(c uint64) (int, bool) {
	id := int(c & 0xfff)
	return id, id < len(apis)
}

// procAddressTarget maps the symbol name asked of cuGetProcAddress (the base name, as
// the runtime asks it: "cuLaunchKernel", "cuMemcpyHtoD") to the API row to attach at
// the returned address. The returned code is whichever version/variant the driver
// chose (e.g. _v2, _ptsz); the row's argument locations are the same for all of them.
func procAddressTarget(symbol string) (int, bool) {
	for _, cand := range []string{symbol, symbol + "_v2"} {
		if id, ok := apiByName[cand]; ok && apis[id].Layer == Driver && apis[id].Class != ClassProcAddress {
			return id, true
		}
	}
	// "cuLaunchKernel_ptsz" asked explicitly.
	if base, ok := strings.CutSuffix(symbol, "_ptsz"); ok {
		return procAddressTarget(base)
	}
	return 0, false
}
