// Package cupti is the collector's side of the CUPTI channel: the shared-memory file
// through which the injection library (cuptilib/, loaded into a CUDA process by
// CUDA_INJECTION64_PATH) hands on the GPU's own activity records (kernels with their
// device start and end, memory copies and sets, runtime and driver API calls), turned
// into the compact frames of cuptilib/channel.h.
//
// # Why a channel
//
// The uprobe source (internal/cuda) sees when the host enqueued work and how long it
// blocked, never when the GPU ran it. CUPTI knows, but only inside the process. The
// library keeps to the process: it writes frames into a memfd named
// "ghostdriver-cupti" and never blocks on the collector, never opens a socket, never
// waits for it. The collector finds the memfd as /proc/<pid>/fd/<n>, maps it with
// MAP_SHARED (find_linux.go) and drains it on its own schedule (poller.go). The memfd
// outlives the process while mapped: what the library had written before a crash is
// still read.
//
// # Trust
//
// The mapping is the application's memory: it may scribble on any byte at any time.
// Every drain copies the pending bytes out first and validates and decodes only the
// copy (ring.go); a frame that does not add up drops the rest of the pending bytes and
// is counted, never a panic. A process may also shrink its memfd under the mapping,
// which would fault the collector (SIGBUS): OpenChannel seals it against shrinking
// where the memfd allows seals, and every access to a real mapping runs under a fault
// guard that turns the fault into an error and closes that channel.
//
// # Clocks
//
// CUPTI's timestamps are not CLOCK_MONOTONIC, the clock of every other source. Each
// CUPTI buffer arrives as a batch frame carrying a monotonic/CUPTI/monotonic triple;
// the Decoder converts the records that follow with the triple's offset (decode.go).
// Records before the channel's first batch frame have no offset and are dropped and
// counted.
package cupti
