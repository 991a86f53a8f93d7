/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The channel between the injection library (in the CUDA process) and the collector:
 * one shared-memory file per process, a memfd named GD_CHANNEL_NAME, which the
 * collector finds as /proc/<pid>/fd/<n> -> "/memfd:ghostdriver-cupti (deleted)" and maps
 * with MAP_SHARED. Page 0 is the header (both sides write their own fields only), the
 * rest one single-producer single-consumer byte ring of frames. Every multi-byte field
 * is little-endian, every frame 8-byte aligned, and a frame never wraps: a producer that
 * reaches the ring's end writes a GD_FRAME_PAD frame to fill it. head and tail are byte
 * counts since the start (never reduced modulo the size): the producer stores head with
 * release order after the frame's bytes, the consumer stores tail after it has copied
 * the frames out. This file is the single definition: internal/cupti/channel.go mirrors
 * it and TestChannelLayoutIsTheHeader compiles it to check every offset.
 *
 * The memfd is made with MFD_CLOEXEC (an exec'd program has no channel) and sealed
 * against shrinking and growing where the kernel allows (the collector's mapping can
 * then never fault). gd_header.pid is getpid() in the process's own pid namespace: the
 * collector compares it with the last NSpid of /proc/<pid>/status, so a forked child
 * that inherited the memfd is not taken for its parent. Head and tail are multiples of 8;
 * a PAD frame runs to the ring's end.
 */
#ifndef GD_CHANNEL_H
#define GD_CHANNEL_H
#include <stdint.h>

#define GD_CHANNEL_NAME "ghostdriver-cupti"
#define GD_MAGIC "GDCUPTI1"
#define GD_VERSION 1
#define GD_HEADER_SIZE 4096
#define GD_RING_MIN (64u << 10)
#define GD_RING_MAX (256u << 20)

/* lib_state: what the library is doing (written by the library only). */
enum gd_state {
	GD_STATE_DORMANT = 0,     /* CUPTI not touched (not even loaded) */
	GD_STATE_ON = 1,          /* activity records enabled, flowing into the ring */
	GD_STATE_BACKED_OFF = 2,  /* another profiler holds CUPTI: the library keeps out */
	GD_STATE_UNSUPPORTED = 3, /* CUPTI's version or a record layout is not one it knows */
	GD_STATE_NO_CUPTI = 4,    /* libcupti could not be loaded (state_msg says why) */
	GD_STATE_ERROR = 5,       /* a CUPTI call failed (state_msg says which) */
	GD_STATE_OFF = 6,         /* was on, turned off again and CUPTI finalized */
};

/* control: what the collector asks for (written by the collector only). */
enum gd_control { GD_CONTROL_OFF = 0, GD_CONTROL_ON = 1 };

struct gd_header {
	char magic[8];              /*   0 GD_MAGIC */
	uint32_t version;           /*   8 GD_VERSION */
	uint32_t header_size;       /*  12 GD_HEADER_SIZE */
	uint64_t ring_size;         /*  16 power of two, GD_RING_MIN..GD_RING_MAX */
	uint32_t pid;               /*  24 getpid() of the process that made it */
	uint32_t lib_state;         /*  28 enum gd_state (library) */
	uint32_t control;           /*  32 enum gd_control (collector) */
	uint32_t control_seq;       /*  36 the collector adds 1 on every control write */
	uint64_t collector_beat;    /*  40 CLOCK_MONOTONIC ns of the collector's last visit */
	uint32_t cupti_version;     /*  48 cuptiGetVersion, 0 before CUPTI was loaded */
	uint32_t kernel_record_size;/*  52 the CUPTI kernel record size the library reads */
	uint32_t lib_seen_seq;      /*  56 the control_seq the library last acted on */
	uint32_t _pad0;             /*  60 */
	uint64_t head;              /*  64 bytes produced (library), own cache line */
	uint8_t _pad1[56];
	uint64_t tail;              /* 128 bytes consumed (collector), own cache line */
	uint8_t _pad2[56];
	/* 192: counters, written by the library only */
	uint64_t records_written;   /* 192 activity records put in the ring */
	uint64_t dropped_ring_full; /* 200 records lost: the ring had no room */
	uint64_t dropped_cupti;     /* 208 records CUPTI itself dropped (cuptiActivityGetNumDroppedRecords) */
	uint64_t refused_layout;    /* 216 records of a kind or layout the library does not decode */
	uint64_t batches;           /* 224 CUPTI buffers completed */
	uint64_t enables;           /* 232 times the timeline was turned on */
	uint64_t disables;          /* 240 times it was turned off */
	uint64_t backoffs;          /* 248 times it kept out for another profiler */
	uint64_t buffers_refused;   /* 256 CUPTI buffer requests refused: the budget was spent */
	uint64_t names_truncated;   /* 264 kernel names cut at GD_NAME_MAX */
	uint64_t api_filtered;      /* 272 API records of calls that launch nothing, not written (the join needs the launches') */
	uint8_t _pad3[40];
	char cupti_path[256];       /* 320 the libcupti that was loaded */
	char state_msg[256];        /* 576 why lib_state is what it is, for people */
};

/* Frame: a 8-byte head then the body; len counts head and body and padding to 8. */
struct gd_frame {
	uint32_t len;
	uint16_t type;
	uint16_t flags;
};

enum gd_frame_type {
	GD_FRAME_PAD = 0,    /* filler to the ring's end; skip len bytes */
	GD_FRAME_BATCH = 1,  /* struct gd_batch: one CUPTI buffer's records follow */
	GD_FRAME_KERNEL = 2, /* struct gd_kernel + name bytes */
	GD_FRAME_API = 3,    /* struct gd_api */
	GD_FRAME_COPY = 4,   /* struct gd_copy (memcpy and memset) */
	GD_FRAME_STATE = 5,  /* struct gd_state_change */
	GD_FRAME_DEVICE = 6, /* struct gd_device: one per device, after each ON state frame */
};

/* The clock pair every batch carries: CUPTI's timestamps (CLOCK_REALTIME on Linux
 * drivers measured) to CLOCK_MONOTONIC, the BPF clock: mono = cupti + (mono_mid -
 * cupti_at), with mono_mid the midpoint of mono_before and mono_after. */
/* A batch frame with GD_BATCH_F_MARK in its flags and no records is a flush mark:
 * every record of work that finished before mono_before has been written before it
 * (the library's periodic forced flush). The mark's clock pair is the flush's end. */
#define GD_BATCH_F_MARK 1

struct gd_batch {
	uint64_t mono_before;
	uint64_t cupti_at;
	uint64_t mono_after;
	uint32_t records;        /* records of this buffer the library wrote */
	uint32_t dropped_cupti;  /* records CUPTI dropped for this buffer */
};

#define GD_NAME_MAX 1024
#define GD_KERNEL_F_NAME_TRUNCATED 1

struct gd_kernel {
	uint64_t start, end;     /* CUPTI clock ns */
	uint32_t correlation_id; /* the launching API record's */
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
	uint32_t grid_x, grid_y, grid_z;
	uint32_t block_x, block_y, block_z;
	uint32_t registers_per_thread;
	uint32_t shared_memory;  /* static + dynamic bytes per block */
	uint32_t graph_id;       /* 0: not from a graph */
	uint64_t graph_node_id;
	uint16_t name_len;       /* bytes of name following this struct */
	uint16_t launch_type;
	uint32_t _pad;
};

#define GD_API_RUNTIME 1
#define GD_API_DRIVER 2

struct gd_api {
	uint64_t start, end;     /* CUPTI clock ns */
	uint32_t correlation_id;
	uint32_t cbid;
	uint32_t pid;            /* CUPTI's processId */
	uint32_t tid;            /* CUPTI's threadId */
	uint32_t domain;         /* GD_API_RUNTIME or GD_API_DRIVER */
	uint32_t result;
};

#define GD_COPY_MEMCPY 1
#define GD_COPY_MEMSET 2

struct gd_copy {
	uint64_t start, end;
	uint64_t bytes;
	uint32_t correlation_id;
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
	uint32_t what;           /* GD_COPY_MEMCPY or GD_COPY_MEMSET */
	uint32_t copy_kind;      /* CUPTI's memcpy kind (HtoD 1, DtoH 2, ...), 0 for memset */
	uint32_t graph_id;
	uint32_t _pad;
};

/* A state change the library made, at CLOCK_MONOTONIC time: the timeline covers only
 * what ran between an ON and the next change. */
struct gd_state_change {
	uint64_t mono;
	uint32_t state;          /* enum gd_state */
	uint32_t reason;         /* 0, or the CUPTI result that caused it */
};

/* A device the process sees, as the driver reports it when the timeline comes on: the
 * device_id is the kernel records' (the CUdevice ordinal); sm_count weighs a kernel's
 * blocks against the device (SM-weighted coverage). 0 where the driver did not say. */
struct gd_device {
	uint32_t device_id;
	uint32_t sm_count;       /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
	uint32_t cc_major;       /* compute capability */
	uint32_t cc_minor;
};

#endif
