/*
 * vkdevice: the replay side of a real Vulkan device, shared by the VMA
 * replay and the Vulkan replayer.
 *
 * - the device: an instance (optionally with VK_LAYER_KHRONOS_validation
 *   and a debug messenger that counts its errors), the chosen physical
 *   device, a device with one queue, its memory properties;
 * - memory-type translation: a type of the recording device (flags and
 *   heap) to the replay device's (the rule is above vkd_translate_type);
 * - the replayer's own allocator: device memory blocks per memory type,
 *   sub-allocated with alignment and bufferImageGranularity, dedicated
 *   allocations, custom pools, reference-counted maps, flush and
 *   invalidate, statistics per memory type and heap.
 *
 * Not in libtrace: it needs libvulkan, and only programs that drive a
 * device link it (see the Makefile).  It calls nothing of libtrace either,
 * so it may come after libtrace.a on a link line; errors fill a
 * trace_error (the struct, written directly).
 *
 * Single-threaded: a replay executes calls in record order.
 */
#ifndef TRACE_VKDEVICE_H
#define TRACE_VKDEVICE_H

#include "trace.h"

#include <vulkan/vulkan.h>

/* VMA's defaults: blocks of 256 MiB in heaps larger than 1 GiB, heap/8
 * in smaller ones. */
#define VKD_LARGE_HEAP_BLOCK_SIZE ((VkDeviceSize)256 << 20)
#define VKD_SMALL_HEAP_MAX_SIZE ((VkDeviceSize)1 << 30)

/* Where --validate's messages go: counted, and printed unless quiet,
 * each after what ABOUT says it is about ("call 12 vkCmdDraw", the
 * message's caller as the replayer knows it; NULL or an empty answer:
 * nothing). */
typedef struct vkd_messages {
	const char *prog;
	bool quiet;
	uint64_t errors;        /* ERROR messages of the layer */
	uint64_t warnings;
	void (*about)(void *ctx, char *out, size_t cap);
	void *ctx;
	bool (*ignore)(void);   /* true on a thread whose calls are not the
				 * trace's: its messages are left out */
	/* each kind of message (its id, its severity, whether a performance
	 * warning) shown a few times: how many shown, and how many more came
	 * (vkd_messages_end) */
	struct vkd_seen {
		int32_t id;
		const char *what;  /* "error", "warning", "performance warning" */
		uint64_t shown, more;
		char *name;
	} *seen;
	size_t nseen, capseen;
} vkd_messages;

/* After the last device: a line for each kind of message that came more
 * often than it was shown, with how many more times; frees them. */
void vkd_messages_end(vkd_messages *m);

typedef struct vkd_options {
	const char *prog;       /* prefixes the validation messages */
	uint32_t gpu;           /* index in vkEnumeratePhysicalDevices order */
	bool validate;          /* VK_LAYER_KHRONOS_validation + messenger */
	bool quiet_validation;  /* count validation messages, print none */
	vkd_messages *messages; /* shared by the devices opened with it; NULL:
				 * each device's own */
	VkDeviceSize large_heap_block_size; /* 0: VKD_LARGE_HEAP_BLOCK_SIZE */
	VkDeviceSize small_heap_max_size;   /* 0: VKD_SMALL_HEAP_MAX_SIZE */
} vkd_options;

/* Statistics of one memory type or heap, since the device was opened. */
typedef struct vkd_memory_stats {
	uint64_t memory_allocations;  /* successful vkAllocateMemory calls */
	uint64_t memory_bytes;        /* their total size */
	uint64_t dedicated;           /* of them, dedicated allocations */
	uint64_t memory_live;         /* device memory held now, bytes */
	uint64_t memory_peak;         /* most device memory held at once */
	uint64_t allocations;         /* sub-allocations and dedicated ones made */
	uint64_t allocation_bytes;    /* their total size */
	uint64_t used;                /* bytes in live allocations now */
	uint64_t used_peak;           /* most bytes in live allocations at once */
} vkd_memory_stats;

typedef struct vkd_block vkd_block;
typedef struct vkd_pool vkd_pool;

typedef struct vkd_device {
	VkInstance instance;
	VkPhysicalDevice physical;
	VkDevice device;
	VkQueue queue;
	uint32_t queue_family;
	uint32_t gpu;
	uint32_t api_version;                 /* usable: min(instance's, device's) */
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceMemoryProperties memory;
	VkDebugUtilsMessengerEXT messenger;
	vkd_messages *msgs;                   /* the options' or &own */
	vkd_messages own;
	VkDeviceSize large_block, small_heap;  /* vkd_options' */
	/* allocator */
	VkDeviceSize block_size[VK_MAX_MEMORY_HEAPS]; /* default block size per heap */
	vkd_pool *default_pools[VK_MAX_MEMORY_TYPES]; /* made on first use */
	vkd_pool *address_pools[VK_MAX_MEMORY_TYPES]; /* the same, for device addresses */
	vkd_pool *pools;                              /* custom pools, a list */
	vkd_memory_stats type_stats[VK_MAX_MEMORY_TYPES];
	vkd_memory_stats heap_stats[VK_MAX_MEMORY_HEAPS];
} vkd_device;

/*
 * Opens the device.  0, or -1 with err filled; -2 when opt->gpu names no
 * device (err lists the devices there are: a usage error).
 */
int vkd_open(vkd_device *d, const vkd_options *opt, trace_error *err);
/* Frees every pool and block left, then the device and the instance. */
void vkd_close(vkd_device *d);

/*
 * For the Vulkan replayer, which makes the device the trace made: the
 * instance only (with the traced program's application info, instance
 * create flags and extensions, plus what --validate adds) and the chosen
 * physical device.  Same returns as vkd_open().
 */
typedef struct vkd_instance_request {
	const VkApplicationInfo *app;     /* NULL: tracekit's */
	VkInstanceCreateFlags flags;
	const char *const *extensions;
	uint32_t nextensions;
} vkd_instance_request;
int vkd_open_instance(vkd_device *d, const vkd_options *opt, const vkd_instance_request *req,
		      trace_error *err);
/* The device made by the caller on d->physical: the allocator may use it. */
void vkd_attach_device(vkd_device *d, VkDevice device, uint32_t queue_family, VkQueue queue);
/* Frees every pool and block left, then the device (the instance stays). */
void vkd_close_device(vkd_device *d);

/*
 * The replayer's own commands on d->device's queue family FAMILY, for work
 * the trace does not hold (a screenshot's copy, --dump's read-backs): a
 * resettable pool, one primary command buffer from it, and *fence unless
 * one is made already.  VK_SUCCESS or the first failure.
 */
VkResult vkd_own_commands(VkDevice device, uint32_t family, VkCommandPool *pool,
			  VkCommandBuffer *cb, VkFence *fence);
/* Destroys what vkd_own_commands made (the buffer goes with its pool). */
void vkd_own_commands_free(VkDevice device, VkCommandPool *pool, VkCommandBuffer *cb,
			   VkFence *fence);

/* "DEVICE_LOCAL|HOST_VISIBLE" (or "0"); out needs 160 bytes. */
const char *vkd_memory_flags_name(char *out, size_t cap, VkMemoryPropertyFlags f);
/* "DEVICE_LOCAL|MULTI_INSTANCE" (or "0") for heap flags. */
const char *vkd_heap_flags_name(char *out, size_t cap, VkMemoryHeapFlags f);

/* ------------------------------------------------------------------ */
/* Memory-type translation. */

/*
 * The replay device's memory type for memory type REC of the recording
 * device (whose properties rec describes).  The rule:
 *   1. a replay type with exactly the recorded property flags;
 *   2. else one whose flags are a superset of them, with the fewest extra
 *      bits;
 *   3. else (the replay device lacks a recorded bit, such as
 *      LAZILY_ALLOCATED or PROTECTED) one that keeps DEVICE_LOCAL and
 *      HOST_VISIBLE as recorded where it can, then the most recorded bits,
 *      then the fewest extra ones.
 * Ties go to a type whose heap has the recorded heap's DEVICE_LOCAL flag,
 * then to the larger heap, then to the lower index.  A REC the recording
 * does not describe translates as a DEVICE_LOCAL type would.
 */
uint32_t vkd_translate_type(const vkd_device *d, const VkPhysicalDeviceMemoryProperties *rec,
			    uint32_t rec_type);

/*
 * VMA's choice of a memory type: among the types in type_bits whose flags
 * hold every required bit, the one missing the fewest preferred bits plus
 * having the fewest not_preferred ones (ties to the lower index).  Types in
 * exclude are skipped (the ones that already failed).  0, or -1 if none.
 */
int vkd_find_memory_type(const vkd_device *d, uint32_t type_bits, VkMemoryPropertyFlags required,
			 VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags not_preferred,
			 uint32_t exclude, uint32_t *type);

/* ------------------------------------------------------------------ */
/* The allocator. */

/* What occupies a range, for bufferImageGranularity: linear resources
 * (buffers, linear images) and optimal images may not share a page. */
typedef enum vkd_kind {
	VKD_KIND_UNKNOWN = 0, /* raw memory: conflicts with everything */
	VKD_KIND_LINEAR,
	VKD_KIND_OPTIMAL,
} vkd_kind;

typedef struct vkd_allocation {
	vkd_block *block;      /* NULL for none (freed, or never made) */
	VkDeviceMemory memory;
	VkDeviceSize offset;   /* in memory */
	VkDeviceSize size;
	uint32_t type;
	uint32_t map_count;    /* this allocation's maps (each holds the block's) */
	bool dedicated;
} vkd_allocation;

typedef struct vkd_request {
	VkDeviceSize size;
	VkDeviceSize alignment;
	vkd_kind kind;
	bool dedicated;             /* a VkDeviceMemory of its own */
	bool address;               /* VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT (a default pool of its own) */
	VkBuffer dedicated_buffer;  /* with VkMemoryDedicatedAllocateInfo */
	VkImage dedicated_image;
} vkd_request;

/*
 * An allocation in memory type TYPE: from a block of POOL (NULL: the
 * type's default pool), or dedicated when req->dedicated or when the size
 * exceeds half the default block size (VMA's rule).  A custom pool never
 * allocates dedicated memory and makes at most its maximum of blocks.
 * VK_SUCCESS or the failure.
 */
VkResult vkd_alloc(vkd_device *d, vkd_pool *pool, uint32_t type, const vkd_request *req,
		   vkd_allocation *out);
/* Releases a (unmapping what it still maps); a no-op on an empty one. */
void vkd_free(vkd_device *d, vkd_allocation *a);
/* Grows or shrinks a in place, as VMA 2's vmaResizeAllocation did:
 * VK_SUCCESS, or VK_ERROR_OUT_OF_POOL_MEMORY when the next range is taken. */
VkResult vkd_resize(vkd_device *d, vkd_allocation *a, VkDeviceSize size);

/*
 * A custom pool: blocks of block_size (0: the heap's default), min_blocks
 * made now and kept, at most max_blocks (0: no limit).
 * ignore_granularity: VMA_POOL_CREATE_IGNORE_BUFFER_IMAGE_GRANULARITY_BIT.
 */
VkResult vkd_pool_create(vkd_device *d, uint32_t type, VkDeviceSize block_size,
			 uint64_t min_blocks, uint64_t max_blocks, bool ignore_granularity,
			 vkd_pool **out);
/* Frees the pool's blocks; allocations still in it must be freed first. */
void vkd_pool_destroy(vkd_device *d, vkd_pool *p);
uint32_t vkd_pool_type(const vkd_pool *p);
size_t vkd_pool_blocks(const vkd_pool *p);

/*
 * Maps a (the block stays mapped while any allocation in it is): a host
 * pointer to a's first byte, or NULL with *res set.  The memory type must
 * be HOST_VISIBLE.
 */
void *vkd_map(vkd_device *d, vkd_allocation *a, VkResult *res);
void vkd_unmap(vkd_device *d, vkd_allocation *a);
/*
 * vkFlushMappedMemoryRanges / vkInvalidateMappedMemoryRanges over
 * [offset, offset + size) of a (VK_WHOLE_SIZE: to its end), widened to
 * nonCoherentAtomSize and clamped to the block; a is mapped for the call
 * if it is not.  VK_SUCCESS for an empty range.
 */
VkResult vkd_flush(vkd_device *d, vkd_allocation *a, VkDeviceSize offset, VkDeviceSize size);
VkResult vkd_invalidate(vkd_device *d, vkd_allocation *a, VkDeviceSize offset,
			VkDeviceSize size);

#endif
