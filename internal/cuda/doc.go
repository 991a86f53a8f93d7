// Package cuda is the NVIDIA CUDA source: uprobes on the CUDA driver (libcuda.so*) and
// runtime (libcudart.so*) API, the nvidia:nvidia_dev_xid tracepoint, and an assembler
// that groups API calls into submissions.
//
// # Why user space
//
// CUDA submits work from user space: the driver writes GPFIFO entries and rings a
// doorbell in mapped memory. There is no per-launch kernel event (measured on an H200:
// no per-launch ioctl, almost no GPU interrupts), so the DRM path's kernel stages
// (ioctl, bo_validation, fence_dependency, ring_emission, dma_scheduling, fence_signal)
// do not exist for CUDA and are never emitted for it. What the host can measure exactly
// is the API: when a thread enqueued work and how long it blocked waiting for it.
//
// # Hooks
//
// One entry and one return program serve every function of the table in api.go; the
// BPF cookie of each attach names the function and where its stream, size and handle
// arguments are. Entry pushes a frame on a per-thread stack, return pops it and emits
// one record per call (start, end, result, arguments, nesting depth). Library files are
// found in /proc/*/maps (libcuda.so*, libcudart.so*, reached through /proc/<pid>/root
// so container files work; each maps file read within mapsBounds) and hooked
// system-wide per file (inode), plus any Config.ExtraLibraries; while Run reads the
// ring, a hook worker rescans for new files and hooks learned entry points (worker.go):
// the reader never opens a file, parses ELF or attaches, and a learned entry point that
// finds the worker's bounded queue full is dropped and counted (Stats.EntryPointsDropped).
// A file found that way is the tenant's to replace: it is opened only as a
// regular file, never blocking, and only if it is still the inode that was found; the
// uprobes are attached through that descriptor.
//
// The entry-point table: the runtime does not call the driver's exported symbols; it
// asks cuGetProcAddress for function pointers at initialisation. A uretprobe on
// cuGetProcAddress(_v2) reads each returned pointer; when it points at the start of a
// function (a .symtab or .dynsym function symbol, or an FDE of the .eh_frame_hdr unwind
// table: NVIDIA's libcuda is stripped) of a hooked driver library (libcuda.so*) at an
// offset that is not already hooked, the same programs are attached at that file
// offset, up to maxLearntHooks per library. The process chose the pointer: any other
// (another file, anonymous memory, inside a function, where an int3 would corrupt an
// instruction for every process mapping the file) is refused and counted
// (Stats.EntryPointsRefused). The driver on the H200 (580.159.04) has no .symtab: its
// internal entry points are function starts only in its unwind table.
//
// Measured on the H200 (driver 580.159.04, cudart 13.0, PyTorch 2.11):
// of 1323 cuGetProcAddress returns, 96 were for hooked functions; 91 returned the
// exported symbol itself (cuLaunchKernel, cuLaunchKernelEx, cuStreamSynchronize, …) and
// 5 returned internal code (cuCtxSynchronize, cuMemcpyPeerAsync, cuMemcpy2DAsync,
// cuMemcpy3DAsync, cuMemsetD8): without following the table, every
// cudaDeviceSynchronize's driver call is invisible. Entry points are learned from a
// process that initialises CUDA while the source runs; the attach is per library file,
// so it then covers every process using that file. Launches are counted at the runtime
// (cudaLaunchKernel*, always called by PyTorch) and at the driver (Triton and other
// direct driver users), and nesting keeps them from being counted twice.
//
// # Cost levers
//
// Each hooked call costs a uprobe trap at entry and one at return, and a runtime launch
// is hooked twice (cudaLaunchKernel and the driver launch it makes). Three options trade
// detail for cost, off by default and measured rather than assumed (bench/cudahook on the
// stubs; internal/cuda/testdata/h200/run6.sh on the H200, with torch.profiler as the
// peer): Config.Layers hooks one layer only; Config.LaunchesAtEntry records the innermost
// hooked layer's launches at entry with no return probe (no duration, no result);
// Config.UprobeMulti attaches with uprobe_multi links. The launch counts stay exact under
// each (levers_test.go checks them against the stubs' own counts). The receiver exposes them
// as live.cuda.layers, launches_at_entry and uprobe_multi, off by default: they drop detail.
// Measured on the H200 (BENCHMARKS.md): the default adds 2.8 µs per PyTorch launch, the
// three together 1.1 µs, of which the uprobe trap alone (Config.FloorLaunches, a program
// that only counts) is 1.0 µs.
//
// # Span model (CUDA)
//
// A CUDA "submission" is the work a process enqueued on one stream up to the
// synchronize call that waited for it:
//
//   - cuda.submission (the job span): from the first enqueued call's entry to the
//     sync's return. Attributes: process.pid, the sync's thread, stream handle, sync
//     scope (stream, event, context), launch count, op count, outcome
//     ("synchronized", or "unsynchronized" when no sync covered the work within
//     FlushAfter — PyTorch code that polls events, or a process that exited).
//   - children, one per top-level API call in the submission, each measured by its
//     uprobe/uretprobe pair (the host-side cost, NOT GPU execution time):
//     cuda.launch (cudaLaunchKernel*, cudaGraphLaunch, cuLaunchKernel*, cuGraphLaunch),
//     cuda.memcpy, cuda.memset, cuda.event_record, cuda.alloc, cuda.free, with the
//     runtime→driver nested call as an attribute or grandchild (Op.Inner);
//   - cuda.sync: the synchronize call (cudaStreamSynchronize, cudaEventSynchronize,
//     cudaDeviceSynchronize, cu* equivalents): the host's wait, measured.
//
// Grouping rules (what is inferred): stream syncs take the stream's open work; event
// syncs take the work enqueued on the event's stream before its last record
// (cudaEventRecord*/cuEventRecord*); context/device syncs take all open work of the
// process (the current device is not read: with several GPUs in one process a device
// sync groups all of them). Stream handles are compared as values: the legacy default
// stream (0) and per-thread default stream (2) are not unified with the streams they
// implicitly synchronise with. GPU execution time is not measured: the sync's end is an
// upper bound of the GPU's completion of that work (plus wake-up latency), and the GPU
// may have finished before the sync started (then the sync is short).
//
// Xid errors (nvidia:nvidia_dev_xid: device, code, message) become span events on every
// submission open at that time and a counter by code; the tracepoint runs in whatever
// task reported it (on the H200: the nvidia interrupt thread, not the faulting
// process), so the link to a process is by time and device, not PID.
//
// Linking and tenancy are the DRM path's (appcontext.go): the entry of every top-level
// call reads the calling thread's application context in the kernel (OTEP 4947 thread
// context through the per-process recipe user space pushes with SetProcess, or OBI's
// map), and a submission's parent is the context of its first op that had one, else its
// sync's; internal/enrich adds TRACEPARENT as the fallback and the tenant resource from
// the PID. The source deletes a recipe at its process's exec and exit (its own
// sched_process_exec/exit programs) and reports both (Sink.ProcessGone), which also
// closes the process's open work at once. MIG instance from the
// process's nvidia-caps device files (/dev/nvidia-caps/nvidia-cap*, major from
// /proc/devices "nvidia-caps", see NvidiaMajors). NVIDIA ioctls (majors 195 and
// nvidia-uvm's) are seen by the DRM source's syscall hooks when their majors are added
// to probe.Config.DRMMajors (with NvidiaIoctlTypes, so that the kernel's ioctl type gate
// stays on); they are context (RM allocs, UVM faults), not submissions.
package cuda
