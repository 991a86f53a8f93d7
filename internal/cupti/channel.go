// The layout of cuptilib/channel.h in Go: names, sizes, enum values and the offset of
// every field the collector reads or writes. channel.h is the single definition;
// TestChannelLayoutIsTheHeader compiles it and compares every value here.

package cupti

import "strconv"

// The channel file and its header page.
const (
	ChannelName = "ghostdriver-cupti" // GD_CHANNEL_NAME: the memfd's name
	Magic       = "GDCUPTI1"          // GD_MAGIC
	Version     = 1                   // GD_VERSION
	HeaderSize  = 4096                // GD_HEADER_SIZE: the ring starts here
	RingMin     = 64 << 10            // GD_RING_MIN
	RingMax     = 256 << 20           // GD_RING_MAX
)

// Offsets of struct gd_header's fields. The collector writes control, control_seq,
// collector_beat and tail; everything else is the library's.
const (
	hdrMagic            = 0
	hdrVersion          = 8
	hdrHeaderSize       = 12
	hdrRingSize         = 16
	hdrPID              = 24
	hdrLibState         = 28
	hdrControl          = 32
	hdrControlSeq       = 36
	hdrCollectorBeat    = 40
	hdrCuptiVersion     = 48
	hdrKernelRecordSize = 52
	hdrLibSeenSeq       = 56
	hdrPad0             = 60
	hdrHead             = 64
	hdrPad1             = 72
	hdrTail             = 128
	hdrPad2             = 136
	hdrRecordsWritten   = 192
	hdrDroppedRingFull  = 200
	hdrDroppedCupti     = 208
	hdrRefusedLayout    = 216
	hdrBatches          = 224
	hdrEnables          = 232
	hdrDisables         = 240
	hdrBackoffs         = 248
	hdrBuffersRefused   = 256
	hdrNamesTruncated   = 264
	hdrAPIFiltered      = 272
	hdrPad3             = 280
	hdrCuptiPath        = 320
	hdrStateMsg         = 576

	hdrPad1Len   = 56
	hdrPad2Len   = 56
	hdrPad3Len   = 40
	hdrTextLen   = 256 // cupti_path and state_msg
	SizeofHeader = 832 // sizeof(struct gd_header): the rest of the page is unused
)

// struct gd_frame: every frame's 8-byte head.
const (
	frameLen    = 0
	frameType   = 4
	frameFlags  = 6
	SizeofFrame = 8
	frameAlign  = 8 // every frame's len is a multiple of it
)

// FrameType is gd_frame.type.
type FrameType uint16

// enum gd_frame_type.
const (
	FramePad    FrameType = 0 // filler to the ring's end
	FrameBatch  FrameType = 1 // struct gd_batch
	FrameKernel FrameType = 2 // struct gd_kernel + name
	FrameAPI    FrameType = 3 // struct gd_api
	FrameCopy   FrameType = 4 // struct gd_copy
	FrameState  FrameType = 5 // struct gd_state_change
	FrameDevice FrameType = 6 // struct gd_device
)

var frameNames = [...]string{"pad", "batch", "kernel", "api", "copy", "state", "device"}

func (t FrameType) String() string {
	if int(t) < len(frameNames) {
		return frameNames[t]
	}
	return "frame(" + strconv.Itoa(int(t)) + ")"
}

// struct gd_batch.
const (
	batchMonoBefore   = 0
	batchCuptiAt      = 8
	batchMonoAfter    = 16
	batchRecords      = 24
	batchDroppedCupti = 28
	SizeofBatch       = 32
)

// struct gd_kernel, then name_len bytes of name.
const (
	kernelStart         = 0
	kernelEnd           = 8
	kernelCorrelation   = 16
	kernelDevice        = 20
	kernelContext       = 24
	kernelStream        = 28
	kernelGridX         = 32
	kernelGridY         = 36
	kernelGridZ         = 40
	kernelBlockX        = 44
	kernelBlockY        = 48
	kernelBlockZ        = 52
	kernelRegisters     = 56
	kernelSharedMemory  = 60
	kernelGraphID       = 64
	kernelHole          = 68 // implicit: the compiler aligns graph_node_id to 8
	kernelHoleLen       = 4
	kernelGraphNodeID   = 72
	kernelNameLen       = 80
	kernelLaunchType    = 82
	kernelPad           = 84
	SizeofKernel        = 88
	NameMax             = 1024 // GD_NAME_MAX: longer names are cut by the library
	KernelNameTruncated = 1    // GD_KERNEL_F_NAME_TRUNCATED, in the frame's flags
)

// struct gd_api and its domains.
const (
	apiStart       = 0
	apiEnd         = 8
	apiCorrelation = 16
	apiCBID        = 20
	apiPID         = 24
	apiTID         = 28
	apiDomain      = 32
	apiResult      = 36
	SizeofAPI      = 40

	APIRuntime = 1 // GD_API_RUNTIME
	APIDriver  = 2 // GD_API_DRIVER
)

// struct gd_copy and what it was.
const (
	copyStart       = 0
	copyEnd         = 8
	copyBytes       = 16
	copyCorrelation = 24
	copyDevice      = 28
	copyContext     = 32
	copyStream      = 36
	copyWhat        = 40
	copyKind        = 44
	copyGraphID     = 48
	copyPad         = 52
	SizeofCopy      = 56

	CopyMemcpy = 1 // GD_COPY_MEMCPY
	CopyMemset = 2 // GD_COPY_MEMSET
)

// struct gd_state_change.
const (
	stateMono         = 0
	stateState        = 8
	stateReason       = 12
	SizeofStateChange = 16
)

// struct gd_device.
const (
	deviceID      = 0
	deviceSMCount = 4
	deviceCCMajor = 8
	deviceCCMinor = 12
	SizeofDevice  = 16
)

// State is the library's lib_state (enum gd_state).
type State uint32

// enum gd_state.
const (
	StateDormant     State = 0 // CUPTI not touched (not even loaded)
	StateOn          State = 1 // activity records flowing into the ring
	StateBackedOff   State = 2 // another profiler holds CUPTI: the library keeps out
	StateUnsupported State = 3 // CUPTI's version or a record layout it does not know
	StateNoCUPTI     State = 4 // libcupti could not be loaded (the state message says why)
	StateError       State = 5 // a CUPTI call failed (the state message says which)
	StateOff         State = 6 // was on, turned off again and CUPTI finalized
)

var stateNames = [...]string{"dormant", "on", "backed_off", "unsupported", "no_cupti", "error", "off"}

// String is the state's name as exported (a value the header does not define reads
// "state(N)": the process wrote it, not the library we know).
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// enum gd_control.
const (
	ControlOff = 0
	ControlOn  = 1
)
