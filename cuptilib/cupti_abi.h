/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The few CUPTI declarations the injection library uses, written by this project from
 * facts measured on the device (internal/cupti/testdata/device/abi_probe.cu prints them
 * from NVIDIA's own headers there; those headers are not redistributable and are not in
 * this repository). Functions are looked up with dlsym at run time; record fields are
 * read at fixed offsets only for the CUPTI versions in cupti_known_layouts, each checked
 * on the device. Anything else is refused and counted.
 */
#ifndef GD_CUPTI_ABI_H
#define GD_CUPTI_ABI_H
#include <stddef.h>
#include <stdint.h>

typedef int cupti_result;
#define CUPTI_OK 0
#define CUPTI_ERR_MAX_LIMIT_REACHED 12
#define CUPTI_ERR_NOT_INITIALIZED 15
#define CUPTI_ERR_MULTIPLE_SUBSCRIBERS 39

/* CUpti_ActivityKind values. */
#define CUPTI_KIND_MEMCPY 1
#define CUPTI_KIND_MEMSET 2
#define CUPTI_KIND_DRIVER 4
#define CUPTI_KIND_RUNTIME 5
#define CUPTI_KIND_CONCURRENT_KERNEL 10

#define CUPTI_FLUSH_FORCED 1

/* Callback ids of the launch APIs whose API records the timeline asks for. */
static const uint32_t cupti_runtime_launch_cbids[] = {
	211, /* cudaLaunchKernel_v7000 */
	214, /* cudaLaunchKernel_ptsz_v7000 */
	430, /* cudaLaunchKernelExC_v11060 */
	431, /* cudaLaunchKernelExC_ptsz_v11060 */
	269, /* cudaLaunchCooperativeKernel_v9000 */
	311, /* cudaGraphLaunch_v10000 */
	312, /* cudaGraphLaunch_ptsz_v10000 */
};
static const uint32_t cupti_driver_launch_cbids[] = {
	307, /* cuLaunchKernel */
	442, /* cuLaunchKernel_ptsz */
	652, /* cuLaunchKernelEx */
	653, /* cuLaunchKernelEx_ptsz */
	514, /* cuGraphLaunch */
	515, /* cuGraphLaunch_ptsz */
};

/* Function types, as CUPTI exports them (C ABI). */
typedef void (*cupti_buffer_requested_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*cupti_buffer_completed_fn)(void *ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
					  size_t valid);
typedef void (*cupti_callback_fn)(void *userdata, int domain, uint32_t cbid, const void *data);

struct cupti_api {
	cupti_result (*GetVersion)(uint32_t *version);
	cupti_result (*GetResultString)(cupti_result r, const char **s);
	cupti_result (*ActivityRegisterCallbacks)(cupti_buffer_requested_fn, cupti_buffer_completed_fn);
	cupti_result (*ActivityEnable)(uint32_t kind);
	cupti_result (*ActivityDisable)(uint32_t kind);
	cupti_result (*ActivityEnableRuntimeApi)(uint32_t cbid, uint8_t enable); /* optional */
	cupti_result (*ActivityEnableDriverApi)(uint32_t cbid, uint8_t enable);  /* optional */
	cupti_result (*ActivityFlushAll)(uint32_t flag);
	cupti_result (*ActivityGetNextRecord)(uint8_t *buffer, size_t valid, void **record);
	cupti_result (*ActivityGetNumDroppedRecords)(void *ctx, uint32_t stream_id, size_t *dropped);
	cupti_result (*GetTimestamp)(uint64_t *ts);
	cupti_result (*Subscribe)(void **subscriber, cupti_callback_fn cb, void *userdata);
	cupti_result (*Unsubscribe)(void *subscriber);
	cupti_result (*Finalize)(void);
};

/*
 * Record layouts by CUPTI version (cuptiGetVersion). The kernel record is the newest
 * CUpti_ActivityKernelN the library emits for CONCURRENT_KERNEL; the API record
 * (CUpti_ActivityAPI) has kept one layout. Offsets measured on the device with
 * abi_probe.cu (CUPTI 13.0: CUpti_ActivityKernel10, 216 bytes).
 */
struct cupti_kernel_layout {
	uint32_t version;
	uint32_t size;
	uint16_t registers, start, end, device, context, stream, grid, block, static_shmem, dynamic_shmem,
		correlation, name, launch_type, graph_node_id, graph_id;
};

static const struct cupti_kernel_layout cupti_known_layouts[] = {
	{ .version = 130001, .size = 216, .registers = 6, .start = 16, .end = 24, .device = 40, .context = 44,
	  .stream = 48, .grid = 52, .block = 64, .static_shmem = 76, .dynamic_shmem = 80, .correlation = 92,
	  .name = 104, .launch_type = 136, .graph_node_id = 144, .graph_id = 156 },
};

/* CUpti_ActivityAPI, 40 bytes. */
#define CUPTI_API_CBID 4
#define CUPTI_API_START 8
#define CUPTI_API_END 16
#define CUPTI_API_PID 24
#define CUPTI_API_TID 28
#define CUPTI_API_CORRELATION 32
#define CUPTI_API_RESULT 36
#define CUPTI_API_SIZE 40

#endif
