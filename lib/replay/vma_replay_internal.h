/*
 * The VMA replayer's state, shared by its calls (vma_replay.c) and its
 * statistics (vma_stats.c); not installed.
 */
#ifndef TRACE_VMA_REPLAY_INTERNAL_H
#define TRACE_VMA_REPLAY_INTERNAL_H

#include "cli.h"
#include "tmap.h"
#include "vkdevice.h"

/* VMA's enums and flags (vk_mem_alloc.h, 2.x; the AUTO usages are 3.x). */
enum {
	USAGE_UNKNOWN, USAGE_GPU_ONLY, USAGE_CPU_ONLY, USAGE_CPU_TO_GPU, USAGE_GPU_TO_CPU,
	USAGE_CPU_COPY, USAGE_GPU_LAZILY_ALLOCATED, USAGE_AUTO, USAGE_AUTO_PREFER_DEVICE,
	USAGE_AUTO_PREFER_HOST,
};
enum {
	CREATE_DEDICATED_MEMORY = 0x1,
	CREATE_MAPPED = 0x4,
	CREATE_CAN_BECOME_LOST = 0x8,
	CREATE_DONT_BIND = 0x80,
	CREATE_HOST_ACCESS_SEQUENTIAL_WRITE = 0x400,
	CREATE_HOST_ACCESS_RANDOM = 0x800,
	POOL_IGNORE_BUFFER_IMAGE_GRANULARITY = 0x2,
};
#define AMD_COHERENCE_BITS 0xc0u /* DEVICE_COHERENT_AMD | DEVICE_UNCACHED_AMD */

/* The functions, as indices that a switch reads. */
enum fn {
	FN_NONE, FN_FRAME, FN_TIME, FN_SKIP,
	FN_CREATE_ALLOCATOR, FN_DESTROY_ALLOCATOR, FN_CREATE_POOL, FN_DESTROY_POOL,
	FN_SET_USER_DATA, FN_CREATE_BUFFER, FN_DESTROY_BUFFER, FN_CREATE_IMAGE,
	FN_DESTROY_IMAGE, FN_FREE_MEMORY, FN_FREE_MEMORY_PAGES, FN_CREATE_LOST,
	FN_ALLOCATE_MEMORY, FN_ALLOCATE_MEMORY_PAGES, FN_ALLOCATE_FOR_BUFFER,
	FN_ALLOCATE_FOR_IMAGE, FN_MAP, FN_UNMAP, FN_FLUSH, FN_INVALIDATE, FN_TOUCH,
	FN_GET_INFO, FN_MAKE_LOST, FN_RESIZE, FN_DEFRAG_BEGIN, FN_DEFRAG_END,
	FN_SET_POOL_NAME,
	FN_COUNT
};

/* the function names, by enum fn */
extern const char *const vmar_fn_names[FN_COUNT];

/* The replay's state. */

typedef struct pool_obj {
	uint64_t ptr, call;
	vkd_pool *pool;          /* NULL when the replay could not make it */
	uint32_t frame_in_use;
	uint64_t live;           /* allocations in it */
} pool_obj;

typedef struct alloc_obj {
	uint64_t ptr, call;
	vkd_allocation mem;      /* block NULL: lost, or not made */
	VkBuffer buffer;
	VkImage image;
	pool_obj *pool;
	uint32_t flags;          /* VmaAllocationCreateFlags */
	uint32_t last_use;       /* frame index */
	uint32_t maps;           /* vmaMapMemory not yet unmapped */
	bool persistent;         /* CREATE_MAPPED: mapped for its life */
	bool lost;
} alloc_obj;

enum warning_kind { W_UNKNOWN, W_ALIVE, W_MISUSE, W_FAILED, W_COUNT };
#define WARNINGS_SHOWN 10

typedef struct replay {
	const char *input;
	char version[16];        /* vma.version */
	bool quiet;
	vkd_device dev;
	/* the recording device, from the Config lines */
	VkPhysicalDeviceMemoryProperties rec;
	bool rec_types;          /* it said its memory types */
	bool rec_dedicated_ext;  /* VK_KHR_dedicated_allocation (assumed on) */
	bool always_dedicated;   /* Macro,VMA_DEBUG_ALWAYS_DEDICATED_MEMORY,1 */
	VkDeviceSize rec_large_block, rec_small_heap;
	uint32_t translate[VK_MAX_MEMORY_TYPES];
	tmap allocs, pools, defrags;
	uint32_t frame;
	/* what the statistics print */
	uint64_t calls, records;
	uint64_t fn_calls[FN_COUNT];
	uint64_t allocations, buffers, images, pools_made, lost, made_lost, defrags_done;
	uint64_t failed, maps, flushes, resizes_failed;
	double t_first, t_last;
	bool t_seen;
	uint32_t *threads;
	size_t nthreads, cap_threads;
	uint64_t warnings[W_COUNT];
	double playback;
	/* signature -> function, checked once each */
	const trace_func_sig *sigs[64];
	uint8_t sig_fn[64];
	size_t nsigs;
	trace_error err;
} replay;

double vmar_seconds_now(void);
uint64_t vmar_total_warnings(const replay *r);
void vmar_print_text(const replay *r, FILE *o);
void vmar_print_json(const replay *r, FILE *o);

#endif
