/*
 * The VMA replayer: trace-replay's path for Vulkan Memory Allocator
 * recordings (a stream vma-import made).  Its buffers, images, pools and
 * allocations are made for real, in memory from the replayer's own
 * allocator (vkdevice.c), with the memory types of the recording device
 * translated to the replay device's; at the end it prints what VmaReplay
 * printed.  Needs libvulkan: only trace-replay links it.
 */
#ifndef TRACE_VMA_REPLAY_H
#define TRACE_VMA_REPLAY_H

#include "trace.h"
#include "vkdevice.h"

typedef struct vmar_options {
	vkd_options dev;              /* --gpu, --validate, --block-size */
	const char *input;            /* for messages */
	bool quiet;
	int stats;                    /* 0, 1 text, 2 json */
} vmar_options;

/* Replays the rest of IN, a VMA recording (its header has vma.version);
 * the exit status (0, 1; usage errors exit 2). */
int vmar_run(trace_reader *in, const vmar_options *opt);

#endif
