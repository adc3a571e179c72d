/*
 * The Vulkan replayer's own header: its state and what its files share;
 * not installed (vkreplay.h is the interface).  One file a Vulkan
 * concept, as in Mesa's src/vulkan/runtime:
 *
 *   replay.c      dispatch, the handle map, messages and the run
 *   instance.c    instances and devices: the devices alive, the one a record runs on
 *   memory.c      memory placement, object by object; the bytes the trace wrote
 *   present.c     swapchains (offscreen), acquires, presents, screenshots
 *   queue.c       submits, their GPU time; binary semaphores' and fences' signals
 *   stats.c       --stats: the time of each function's records, what is printed
 *   template.c    descriptor update templates
 *   loop.c        --loop: the kept records and the passes
 *   loop_check.c  --loop: what a pass could not replay, refused first
 *   check.c       --check: every record's checks, without a device
 *   cmdbuf.c      command buffers: recording, inside a render pass or not
 *   subres.c      image subresources within their images' levels and layers
 *   entry.c       what replay needs of each command, once a signature
 *   ahead.c       running ahead of the device: the program's waits skipped
 *
 * What one file lends another is named vkr_*.  The per-record path
 * (vkr_replay_call, vkr_entry_of, vkr_remap_in, vkr_invoke,
 * vkr_call_generic) is in replay.c, one file, for the compiler to inline;
 * the handle map's helpers are inline below.
 */
#ifndef TRACE_REPLAY_INTERNAL_H
#define TRACE_REPLAY_INTERNAL_H

/* first: vkschema_cmds.h includes <vulkan/vulkan.h> with the platforms it
 * describes */
#include "internal.h"
#include "vkschema_cmds.h"

#include "vkreplay.h"

#include "cli.h"
#include "frames.h"
#include "tmap.h"
#include "vkiface.h"
#include "vkschema.h"
#include "vksync.h"

#include <stdarg.h>
#include <stdlib.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>  /* __rdtsc: vkr_ticks */
#endif
#include <string.h>

/* The generated callers: vk_calls[vk_command_index(cmd)](fn, args)
 * calls FN with the arguments ARGS (a vk_args_NAME) holds. */
typedef void (*vk_call_fn)(PFN_vkVoidFunction fn, void *args);
extern const vk_call_fn vk_calls[];
extern const uint32_t vk_ncalls;

/* ------------------------------------------------------------------ */
/* State. */

/* What a command needs beyond the generic path. */
enum special {
	SP_NONE = 0, SP_SKIP, SP_UNSUPPORTED,
	SP_CREATE_INSTANCE, SP_DESTROY_INSTANCE, SP_ENUM_PHYSICAL, SP_ENUM_GROUPS,
	SP_CREATE_DEVICE, SP_DESTROY_DEVICE,
	SP_ALLOC_MEMORY, SP_FREE_MEMORY,
	SP_CREATE_BUFFER, SP_CREATE_IMAGE, SP_DESTROY_BUFFER, SP_DESTROY_IMAGE,
	SP_BIND_BUFFER, SP_BIND_IMAGE, SP_BIND_BUFFER2, SP_BIND_IMAGE2,
	SP_BUFFER_REQS, SP_IMAGE_REQS, SP_BUFFER_REQS2, SP_IMAGE_REQS2,
	SP_MEMORY_PROPS, SP_MEMORY_PROPS2,
	SP_WAIT_FENCES, SP_WAIT_SEMAPHORES, SP_FENCE_STATUS, SP_SEMAPHORE_VALUE, SP_WAIT_EVENTS,
	SP_UPDATE_SETS,
	SP_QUERY_RESULTS,
	SP_CREATE_SURFACE, SP_DESTROY_SURFACE,
	SP_CREATE_SWAPCHAIN, SP_DESTROY_SWAPCHAIN, SP_SWAPCHAIN_IMAGES,
	SP_ACQUIRE, SP_ACQUIRE2, SP_PRESENT, SP_DESTROY_SEMAPHORE, SP_CREATE_FRAMEBUFFER,
	SP_FAKE_CREATE, SP_FAKE_DESTROY,
	SP_CREATE_TEMPLATE, SP_DESTROY_TEMPLATE, SP_TEMPLATE_DATA,
	SP_GET_QUEUE, SP_GET_QUEUE2, SP_SUBMIT, SP_SUBMIT2, SP_DRAW_MULTI, SP_DRAW_MULTI_INDEXED,
	SP_GRAPHICS_PIPELINES, SP_COMPUTE_PIPELINES, SP_CREATE_SEMAPHORE, SP_MADE_AHEAD,
	SP_CREATE_VIEW, SP_BUFFER_IMAGE, SP_IMAGE_IMAGE,
};

/* What --loop follows a command for, beyond what it makes and ends: the
 * state of command buffers, pools, fences and semaphores. */
enum loop_kind {
	LK_NONE = 0,
	LK_RECORD, LK_BEGIN_CB, LK_END_CB, LK_RESET_CB,
	LK_ALLOC_CBS, LK_FREE_CBS, LK_RESET_CPOOL, LK_DESTROY_CPOOL,
	LK_CREATE_DPOOL, LK_ALLOC_SETS, LK_FREE_SETS, LK_RESET_DPOOL, LK_DESTROY_DPOOL,
	LK_CREATE_SEMAPHORE, LK_CREATE_FENCE,
	LK_DESTROY_SYNC,
};

#define SWAPCHAIN_MEMO_BITS 4
#define SIG_CACHE_BITS 8
#define SIG_CACHE (1 << SIG_CACHE_BITS)
#define SUBRES_MEMO_BITS 7
#define SUBRES_MEMO (1 << SUBRES_MEMO_BITS)

typedef struct cmd_entry {
	const vk_command_info *cmd;
	int32_t index;
	uint8_t special;
	uint8_t loop;        /* enum loop_kind: what --loop follows it for */
	uint8_t sync;        /* vk_sync_cmd: the fences and semaphores it uses */
	bool out_handles;    /* an output parameter may hold handles */
	bool result;         /* it returns a VkResult */
	uint64_t subres;     /* the parameters it reads that may hold an image
			      * subresource, a bit each (subres.c) */
	bool iface;          /* vk_iface_note follows or checks it */
	uint8_t attachments; /* what color attachment formats it names, if any
			      * (vkr_attachments_kind) */
	int16_t allocator;   /* the pAllocator parameter, or -1 */
	int16_t tmpl, data;  /* SP_TEMPLATE_DATA: descriptorUpdateTemplate, pData */
	uint8_t cb;          /* what cmdbuf.c checks of it (vkr_cmdbuf_entry) */
	bool imports_sync;   /* vkImportSemaphore*, vkImportFence*: a payload from outside */
	int16_t qpool, qfirst, qcount;  /* its queryPool, firstQuery or query, and
					 * queryCount parameters, or -1 */
	uint8_t merge;       /* enum merge_kind: what it does to submits held (queue.c) */
	uint8_t ahead;       /* enum ahead_kind: what it needs running ahead (ahead.c) */
	uint8_t uniform;     /* enum uniform_kind: what moved uniform descriptors
			      * follow of it (uniform.c) */
	uint8_t stamp;       /* enum stamp_kind: what it does to timestamps (stamps.c) */
} cmd_entry;

/* What a record is to the program's timestamps (stamps.c), and what
 * replay makes of it */
enum stamp_kind { ST_NONE, ST_CREATE, ST_DESTROY, ST_WRITE, ST_RESET, ST_COPY };
enum stamp_use { STAMP_AS_CAPTURED, STAMP_LEFT_OUT, STAMP_COPY_WRITTEN };

/* What a record is to uniform descriptors moved (uniform.c) */
enum uniform_kind { UK_NONE, UK_BIND_SETS, UK_EXECUTE, UK_BEGIN, UK_FREE_CBS, UK_COPY, UK_COPY2,
		    UK_UPDATE, UK_FILL, UK_IMAGE, UK_IMAGE2, UK_ALLOC_SETS, UK_FREE_SETS,
		    UK_DESTROY_BUFFER, UK_TEMPLATE_SET, UK_TEMPLATE_PUSH, UK_PUSH };

/* What a record does to the vkQueueSubmits held to be merged (queue.c):
 * sends them first, leaves them (it cannot tell they are held), leaves
 * them unless it records into one of their command buffers or resets,
 * frees or destroys their pool, or is one; command buffers allocated
 * are noted with their pool. */
enum merge_kind { MK_SEND, MK_LEAVE, MK_RECORD, MK_BEGIN, MK_POOL, MK_ALLOC, MK_SUBMIT, MK_PRESENT,
		  MK_FENCES, MK_SEMAPHORE };

typedef struct memobj memobj;
typedef struct vkr_device vkr_device;
typedef struct vkr_ahead vkr_ahead;
typedef struct vkr_uniforms vkr_uniforms;

/* vkQueueSubmits held, to go out as one call with those to the same
 * queue after them (queue.c) */
typedef struct held_submits {
	vkr_device *dev;
	VkQueue queue;
	VkFence fence;
	const cmd_entry *e;
	uint64_t first, last;      /* the calls */
	uint32_t n, cap;
	VkSubmitInfo *si;
	uint64_t *cbs;             /* their command buffers (capture handles) */
	uint32_t ncbs, capcbs;
	trace_arena arena;         /* what the batches point to */
	uint32_t past_frame;       /* records since a present left them held, + 1
				    * (0: none did) */
	/* running ahead (ahead.c) on their queue: the frames they span
	 * (presents passed), and whether their fence is a mark's (present.c,
	 * which waits on it: never left unsubmitted for a later one) */
	bool ahead;
	uint32_t frames;
	bool fence_marked;
} held_submits;

typedef struct pooled_sem {
	VkSemaphore sem;
	uint64_t top;  /* the highest value replay signalled on it */
} pooled_sem;
typedef struct group {
	vkr_device *dev;     /* the device whose memory it is */
	vkd_allocation alloc;
	uint32_t refs;
	uint8_t *mapped;     /* host-visible: mapped for its life */
	bool coherent;
	bool address;        /* allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT */
	VkDeviceSize cap_base; /* capture offset in its memory of the first object */
	bool whole;          /* it spans its capture memory: any object bound there
			      * may take its capture offset in it, not only one
			      * over an object already placed (memory.c) */
	/* running ahead (ahead.c): a buffer over its bytes that copies of
	 * staged updates write through, from alias_lead on */
	VkBuffer alias;
	VkDeviceSize alias_lead;
	bool no_alias;       /* the memory takes no such buffer */
	uint64_t staged_serial;  /* the call whose batch of ours copies into it
				  * last (UINT64_MAX: not sent yet), or 0 */
} group;

typedef struct obj {
	uint64_t cap, live;
	vkr_device *dev;            /* the device that made it */
	bool image, linear;
	bool bound;                 /* --check: bound by a record (it has no group) */
	bool address;               /* a buffer made for device addresses */
	bool sparse;                /* made for sparse binding: no vkBind*Memory */
	bool three_d;               /* images: VK_IMAGE_TYPE_3D (views address depth) */
	uint32_t mips, layers;      /* images: their create info's; 0 if unknown */
	struct rename *ren;         /* images made in another format (formats.c) */
	VkDeviceSize create_size;   /* buffers */
	VkDeviceSize cap_req;       /* size from the capture's requirements, 0 if unknown */
	group *group;
	VkDeviceSize rel;           /* its offset in the group's allocation */
	VkDeviceSize span;          /* the bytes it takes there (its requirements here) */
	bool apart;                 /* an object over its capture bytes is in another
				     * group: updates are copied between them */
	memobj *mem;                /* capture memory it is bound to */
	VkDeviceSize mem_off, cap_extent;
	struct obj *next_in_mem;
} obj;

struct memobj {
	uint64_t cap;
	vkr_device *dev;
	VkDeviceSize size;
	uint32_t cap_type;
	obj *objs;
};

typedef struct swapchain {
	uint64_t cap;
	vkr_device *dev;
	VkFormat format;
	VkExtent2D extent;
	uint32_t layers;
	VkImageUsageFlags usage;
	VkSharingMode sharing;
	VkCompositeAlphaFlagBitsKHR alpha;
	uint32_t n;
	VkImage *img;
	uint64_t *cap_img;
	vkd_allocation *mem;
	VkSemaphore *presented;  /* signalled by the present that showed it */
	bool *pending;
	bool *waited;            /* its last present waited on semaphores */
} swapchain;

/* A descriptor update template's entries: where its pData's descriptors
 * are, so their handles can be mapped (vk_walk_template_handles). */
typedef struct tmpl {
	uint32_t n;
	VkDescriptorUpdateTemplateEntry e[];
} tmpl;

enum tag {
	TAG_SIG = 1, TAG_OBJ, TAG_MEM, TAG_SWAPCHAIN, TAG_TEMPLATE, TAG_QUEUE,
	/* --loop */
	TAG_CBLOG, TAG_DPOOL, TAG_FENCE, TAG_BINARY, TAG_TIMELINE, TAG_SHIFT, TAG_BASE,
	TAG_RESTORE, TAG_RESET, TAG_ACQUIRED, TAG_WAITED_BY, TAG_MARKED, TAG_EPOCH, TAG_CAPMEM,
	TAG_CBSTATE, TAG_CBPOOL, TAG_QFAMILY, TAG_IBUF, TAG_IOFF, TAG_ISIZE, TAG_QPOOL,
	TAG_TIME, TAG_TLBASE, TAG_TLTOP, TAG_RVIEW, TAG_TSPOOL,
	TAG_USET, TAG_USRC, TAG_UCB,
};

/*
 * --stats: the GPU time of the batches submitted to one queue family,
 * from two timestamps per batch written by command buffers of our own put
 * first and last in it.  Slots form a ring read in submit order, in runs
 * of one call, once half of it is in flight, without waiting (or waiting
 * for the oldest half when the ring is full): the replay does not wait
 * for the GPU to time it.
 */
#define GPU_SLOTS 128

/* a handle, dispatchable or not, as the uint64_t the maps key on */
#define H(x) ((uint64_t)(uintptr_t)(x))

typedef struct gpu_timer {
	bool usable;                /* the family has timestamps */
	uint64_t mask;              /* timestampValidBits */
	double period;              /* nanoseconds per tick */
	VkCommandPool pool;
	VkQueryPool queries;        /* slot i: 2i at the start, 2i + 1 at the end */
	VkCommandBuffer cb[2 * GPU_SLOTS];  /* slot i: 2i writes the start, 2i + 1 the end */
	size_t frame[GPU_SLOTS];    /* the index of the frame a slot's batch counts for */
	double taken[GPU_SLOTS];    /* when the slot was taken (vkr_now_s): its
				     * batch's span is no longer than since */
	uint32_t head, n;           /* the oldest slot in flight; slots in flight */
	uint32_t held;              /* of those, the last ones, held (not sent:
				     * their queries hold an older batch's times) */
	size_t busy_frame;          /* the frame of the last batch read, and */
	uint64_t busy_end;          /* where its span ended: spans overlap */
	bool busy;
	bool any;                   /* a batch read, and the latest end read */
	uint64_t last;
} gpu_timer;

/*
 * A device the trace made, and what replay keeps for it (instance.c): the
 * allocator its objects' memory comes from (vk: a copy of its instance's,
 * with the device attached), the commands of its own, its queues, the
 * --stats timers, what presents fold into its next submit.  A record
 * runs on the device of its dispatchable handle (vkr_select_device).
 */
struct vkr_device {
	vkd_device vk;
	uint64_t cap;           /* the capture's VkDevice */
	uint64_t cap_physical;  /* and its physical device */
	PFN_vkVoidFunction *fns;
	uint8_t *fn_done;
	struct {           /* vkr_device_fn's, by the name's address */
		const char *name;
		PFN_vkVoidFunction fn;
	} named[8];
	uint32_t nnamed;
	tmap queues;       /* (live queue, TAG_QUEUE) -> its family; (family,
			    * TAG_QFAMILY) -> the queues the device made of it */
	/* our own submits (acquire, present, screenshots) */
	VkCommandPool pool;
	VkCommandBuffer cb;
	VkFence fence;
	/* Presents and acquires, folded into the application's next submit
	 * (present.c): what the presents since waited on, to be waited on by
	 * that submit's first batch, and the acquires' semaphores, signalled
	 * by no batch, so that a wait on one is left out of it.  On a real GPU
	 * each batch of our own cost a submit and a semaphore hop between
	 * batches: vkcube's frame took 70 us there for 41 us of GPU time. */
	VkSemaphore *fold_waits;
	uint64_t *fold_waits_cap;  /* their capture handles */
	uint32_t nfold_waits, capfold_waits;
	tmap fold_acquired;   /* (live semaphore, TAG_ACQUIRED) -> 1 */
	/* --stats: GPU time, by queue family */
	gpu_timer **timers;
	uint32_t nfamilies;
	/* timeline semaphores the program destroyed, to make again
	 * (timeline.c) */
	pooled_sem *pooled;
	uint32_t npooled, cappooled;
	/* running ahead of it (ahead.c), from its first submit; off for
	 * good after a second queue or a sparse bind */
	vkr_ahead *ahead;
	bool ahead_off;
	/* uniform descriptors moved (uniform.c), from the first */
	vkr_uniforms *uniforms;
};

typedef struct vkr_warm vkr_warm;

typedef struct vkr {
	const vkr_options *opt;
	vkr_warm *warm;    /* --pipeline-jobs (warm.c), while its device lives */
	tmap timelines;    /* (recyclable timeline semaphore, TAG_TLBASE) -> what
			    * its values are raised by; (_, TAG_TLTOP) -> the
			    * highest value signalled (timeline.c) */
	uint64_t timelines_reused;  /* taken from a pool instead of made */
	uint64_t warm_jobs, warm_pipelines, warm_taken;  /* what it did, once ended */
	uint64_t warm_objects, warm_objects_taken;
	unsigned warm_threads;
	vkd_options dopt;  /* opt->dev, its messages r->msgs */
	vkd_messages msgs; /* --validate's, of every instance */
	/* The trace's instances, each made on replay with the physical
	 * device --gpu picks (vk.device null), and its devices, any number
	 * alive at once; d is the device of the record in progress, or none
	 * (no device: none.vk is the first instance's copy) */
	vkd_device *insts;
	size_t ninsts;
	vkr_device **devs;
	size_t ndevs;
	vkr_device *d;
	vkr_device none;
	tmap owners;       /* with two devices or more: (capture, type) -> the
			    * vkr_device that made it, every handle a device
			    * call made (vkr_select_device, the teardown) */
	bool have_instance;  /* any */
	tmap handles;      /* (capture, type) -> live */
	tmap objects;      /* (capture, TAG_OBJ) -> obj* */
	tmap sigs;         /* (sig pointer, TAG_SIG) -> cmd_entry* */
	struct {           /* the last looked up in sigs and time_of, by slot */
		const trace_func_sig *sig[SIG_CACHE], *time_sig[SIG_CACHE];
		cmd_entry *e[SIG_CACHE];
		uint32_t time[SIG_CACHE];
	} sig_cache;
	tmap mems;         /* (capture, TAG_MEM) -> memobj* */
	tmap swapchains;   /* (capture, TAG_SWAPCHAIN) -> swapchain* */
	struct {           /* vkr_swapchain_image_layers', by slot */
		uint64_t img[1 << SWAPCHAIN_MEMO_BITS];
		uint32_t layers[1 << SWAPCHAIN_MEMO_BITS];
	} swapchain_memo;
	tmap templates;    /* (capture, TAG_TEMPLATE) -> tmpl* */
	tmap renamed_views; /* (capture view, TAG_RVIEW) -> its image, made in a
			     * format renamed (formats.c) */
	uint32_t renamed;  /* images made in a format renamed */
	int32_t rename_said[8][2];  /* the renames warned of, from and to */
	trace_arena arena;
	const vk_handle_info *h_descriptor_set;
	const vk_handle_info *h_buffer, *h_image, *h_memory, *h_physical, *h_surface,
		*h_swapchain, *h_semaphore, *h_fence, *h_queue, *h_device, *h_instance,
		*h_command_buffer, *h_command_pool;
	bool stuck;        /* a bounded wait ran out: the device may never idle */
	bool cpu_device;   /* a device made on a CPU: waits of 120 s by default */
	bool said_alignment;  /* a buffer descriptor's offset this device refuses: said */
	uint64_t uniforms_moved, uniform_copies;  /* uniform.c's, for --stats */
	uint64_t stamps_left_out;   /* stamps.c's: writes, resets and copies */
	tmap binary;       /* (binary semaphore made here, TAG_BINARY), (fence
			    * made here, TAG_FENCE) -> 1 while a signal is
			    * pending, or the fence signalled (queue.c) */
	vk_iface *iface;   /* shaders against their pipelines' layouts */
	tmap cbs;          /* (primary command buffer, TAG_CBSTATE) -> its state;
			    * (command buffer, TAG_CBPOOL) -> its pool; (command buffer,
			    * TAG_IBUF, _IOFF, _ISIZE) -> its index buffer, the
			    * offset, the index size; (query pool, TAG_QPOOL) ->
			    * its queries (cmdbuf.c) */
	const vk_struct_info *s_allocator;
	const vk_struct_info *s_range, *s_layers, *s_one;  /* the subresource structs (subres.c) */
	struct {           /* what subres.c found of structs and members, by address */
		const void *key[SUBRES_MEMO];
		int16_t val[SUBRES_MEMO];
	} subres_memo;
	const vk_field *null_ok[8];  /* struct members' handle arrays that may hold
				      * null (vkr_remap_in) */
	/* the capture device's memory properties: the header's, or the last
	 * a record asked for; and each physical device's, (capture physical
	 * device, TAG_CAPMEM) -> VkPhysicalDeviceMemoryProperties * */
	VkPhysicalDeviceMemoryProperties cap_mem;
	bool have_cap_mem;
	tmap cap_mems;
	tmap waited_by;       /* (capture semaphore, TAG_WAITED_BY) -> the live queue
			       * a batch of ours waits on it (--loop); (capture
			       * semaphore, TAG_MARKED) -> the mark of the last
			       * submit we added a wait on it to */
	/* Marks: a fence each that signals after a submit that carried
	 * folded waits, so that destroying one of their semaphores waits for
	 * that submit alone, not for all the queue holds by then (zink
	 * destroys its present semaphores a dozen frames on: a wait for the
	 * whole queue there idled llvmpipe at every frame) */
	struct fold_mark *marks;
	uint32_t nmarks, capmarks;
	uint32_t marking;     /* folded waits (fold_waits_cap) the submit
			       * in the making carries, not marked yet */
	uint64_t fake_next;
	/* the record in progress */
	const trace_call *call;
	uint64_t warnings, errors;
	const trace_func_sig *query_said[4];  /* device queries answered no, warned of */
	uint64_t query_more;  /* answered no again: counted, not shown */
	/* frames */
	trace_frames frames;
	int64_t frame;
	size_t next_shot;
	uint64_t calls, frames_done;
	double t_start, t_first_frame, t_last_frame, frame_cpu_max, frame_cpu_min;
	double *frame_times;
	size_t nframe_times, cap_frame_times;
	/* --stats: the time replay spent on each function's records, its
	 * checks, decoding and the driver's work together (stats.c) */
	struct fn_time *times;
	size_t ntimes, captimes;
	tmap time_of;      /* (signature, TAG_TIME) -> its entry in times */
	/* --stats: GPU time (each device's timers), seconds per frame, as frame_times */
	double *frame_gpu;
	/* --stats: the first device's name and heaps, and each heap's peak
	 * over the devices ended (vkr_device_remove) */
	VkPhysicalDeviceProperties stats_props;
	VkPhysicalDeviceMemoryProperties stats_memory;
	uint64_t stats_peak[VK_MAX_MEMORY_HEAPS];
	size_t cap_frame_gpu;
	uint64_t gpu_dropped;  /* batches whose timestamps spanned more than the
				* time since their submit (llvmpipe wrote a
				* start of 0 once): not counted */
	bool gpu_unmeasured;  /* a batch went to a family without timestamps
			       * (or to a queue of no known family) */
	/* --stats: from the first timed batch's start to the last one's end
	 * (each family's, summed), and the idle time between batches in it */
	double gpu_span, gpu_idle, gpu_gap_max;
	uint64_t gpu_gaps;
	bool stop;
	/* --loop: the range's records, replayed again, and what a pass
	 * needs to begin where the range began (NULL without --loop) */
	struct kept *kept;
	size_t nkept, capkept;
	struct loop_state *loop;
	struct dump_state *dump;  /* --dump, --dump-resource; NULL without */
	/* --check (check.c): the records followed without a device; a
	 * refusal jumps back to vkr_check with its message */
	bool checking;
	bool merge;          /* vkQueueSubmits may be held and merged (queue.c) */
	uint32_t merge_frames;  /* running ahead: the most frames one call takes */
	bool poison;         /* TRACE_REPLAY_POISON: new memory filled with 0xa5
			      * (memory.c), for the tests */
	bool ahead_on;       /* the program's waits skipped (ahead.c) */
	uint64_t ahead_end_at;  /* TRACE_REPLAY_AHEAD_END: running ahead ends
				 * at that call, as at a second queue (for the
				 * tests: lavapipe has one queue); 0 for none,
				 * else the call number plus 1 */
	uint64_t ahead_waits, ahead_barriers, ahead_renamed, ahead_fences, ahead_staged,
		ahead_paid, ahead_ended, ahead_joined;
	/* a wait for older work, put off to the next record (ahead.c) */
	vkr_device *ahead_lazy_dev;
	uint64_t ahead_lazy;
	const trace_func_sig *ahead_lazy_sig;  /* --stats: its time goes to it */
	uint64_t ahead_lazy_ticks;
	uint64_t records_ticks;         /* --stats: every record timed (vkr_ticks), so far */
	uint64_t frames_records_ticks;  /* and up to the last frame counted */
	bool timing;              /* --stats: a record timed is replaying */
	uint64_t driver_ticks;    /* of it, in the driver's calls for the program's
				   * records (vkr_invoke's, the submits') */
	uint64_t frames_driver_ticks;
	uint64_t ticks_start;     /* vkr_ticks() at t_start */
	double ahead_paid_s, ahead_held_s;  /* waiting to pay; at frame ends, AHEAD_FRAMES ahead */
	/* --preload: records held, decoded among them, their bytes, seconds */
	uint64_t preload_records, preload_decoded, preload_bytes;
	double preload_s;
	bool decode_ahead;  /* the records decoded on a thread of their own */
	trace_ahead_waits decode_waits; /* and who waited for whom, at the end */
	trace_reader *in;         /* --stats: the reader, asked for its waits */
	double waited_at_present; /* the replay's wait for records, at the last present */
	double waited_before_frames, waited_in_frames; /* before the frames counted, in them */
	held_submits held;
	void *check_jmp;          /* jmp_buf * */
	trace_error *check_err;
	trace_error err;
} vkr;

/* What tells that a submit which carried folded waits is done: a fence
 * of ours put in the submit, or the application's own, where the records
 * follow its signals and resets (a later one says it signalled). */
typedef struct fold_mark {
	struct vkr_device *own_dev;
	VkFence own;          /* ours, made on first use on own_dev and kept */
	struct vkr_device *dev;  /* the device of the submit; NULL once it ended */
	VkFence fence;        /* the one that tells: own, or the application's */
	uint64_t cap_fence;   /* the application's (capture handle), 0 for own */
	uint64_t epoch;       /* its signals and resets as the submit was made */
	uint32_t refs;        /* the semaphores that name the mark */
	bool pending;         /* own: submitted, not waited for since */
} fold_mark;

/* The head of every struct of a pNext chain. */
typedef struct base_out {
	VkStructureType sType;
	struct base_out *pNext;
} base_out;

typedef struct kept {
	trace_call call;
	int64_t frame;
	bool ends_frame;
} kept;

/* What a range does to a command buffer begun before it, first. */
enum touch { T_NONE, T_RESET, T_CONTENT, T_SUBMIT };

/* A command buffer's recording since its last vkBeginCommandBuffer, from
 * the records before the range. */
typedef struct cblog {
	uint64_t pool;
	bool one_time;        /* begun with ONE_TIME_SUBMIT: a submit ends it */
	trace_call *calls;
	size_t n, cap;
	uint8_t first;        /* loop_check: what the range does to it first */
	bool changed;         /* and whether the range leaves it otherwise */
} cblog;

/* An object made before the range that a pass ended: alive, out of the
 * map (its capture value may be made again) until the pass is over. */
typedef struct parked {
	const vk_handle_info *h;
	uint64_t cap, live;
	uint64_t side;        /* its obj, memobj, swapchain or tmpl */
	memobj *mem;          /* a buffer's or image's memory: out of its list meanwhile */
	uintptr_t sync_kind;  /* its entry in sync (TAG_FENCE...), 0 if none */
	uint64_t sync;
} parked;

typedef struct loop_state {
	const vk_handle_info *h_cb, *h_cpool, *h_set, *h_dpool, *h_template, *h_messenger,
		*h_report;
	/* what the records before the range leave */
	tmap logs;      /* (command buffer, TAG_CBLOG) -> cblog* */
	tmap sets;      /* (descriptor set, its type) -> its pool */
	tmap dpools;    /* (descriptor pool, TAG_DPOOL) -> its create flags */
	tmap sync;      /* (fence, TAG_FENCE), (binary semaphore, TAG_BINARY) -> 1 if
			 * signalled; (timeline semaphore, TAG_TIMELINE) -> the highest
			 * value signalled; from the records replayed so far */
	tmap start;     /* sync as the range began */
	/* from loop_check */
	tmap shift;     /* (timeline semaphore made before the range, TAG_SHIFT) -> D,
			 * (the same, TAG_BASE) -> its value as the range began */
	tmap restore;   /* (command pool, TAG_RESTORE): reset and recorded again */
	/* the passes */
	bool in_range, last, rewinding;
	uint32_t pass;
	tmap born;      /* made in the pass (in loop_check: the range) and alive:
			 * (handle, its type) -> its pool + 1 */
	parked *parked;
	size_t nparked, capparked;
} loop_state;

enum life_mode {
	LIFE_CHECK,  /* loop_check: the range read, not replayed */
	LIFE_PARK,   /* a pass but the last */
	LIFE_LAST,
};

typedef struct born_ctx {
	tmap *born;
	const vk_handle_info *want;
	uint64_t pool;
} born_ctx;

/* messages.c: warnings, failures and how the replay stops; replay.c:
 * dispatch, the handle map and the run */
double vkr_now_s(void);
/*
 * A clock for --stats' time of each record: the processor's time-stamp
 * counter where there is one (x86: a clock_gettime for each record's
 * start and end was 7% of mpv's replay time on an H100, sampled), else
 * nanoseconds; ticks become seconds at the end, over the replay's own
 * time (vkr_ticks_s).
 */
#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t vkr_ticks(void)
{
	return __rdtsc();
}
#else
static inline uint64_t vkr_ticks(void)
{
	return (uint64_t)(vkr_now_s() * 1e9);
}
#endif
double vkr_ticks_s(const vkr *r, uint64_t ticks);
void vkr_warn(vkr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vkr_warnings_done(vkr *r);
/* The longest wait replay makes (--wait-timeout), and the check of a
 * bounded wait's result: a timeout stops the replay, naming WHAT. */
uint64_t vkr_wait_ns(const vkr *r);
/* What call E (ARGS: capture values) does to binary semaphores' pending
 * signals; a wait on one none is pending for stops the replay. */
/* Whether fence CAP was last signalled by an acquire, which replay
 * leaves unsignalled, and waits on which it leaves out (vkr_acquire). */
/* The fences of a vkWaitForFences, vkGetFenceStatus or vkResetFences
 * record, *F and *N of them; false for any other record */
bool vkr_record_fences(const cmd_entry *e, void *args, const VkFence **f, uint32_t *n);
bool vkr_acquired_fence(vkr *r, uint64_t cap);
/* Fence CAP, an acquire's, is signalled by a submit after all (the
 * image's last present waited on semaphores): waits for it are made. */
void vkr_acquire_submitted(vkr *r, uint64_t cap);

/* The record's device's function A, or its alias B (an extension's name
 * for a core command). */
PFN_vkVoidFunction vkr_device_fn(vkr *r, const char *a, const char *b);

/* uniform.c: uniform buffer descriptors at offsets the device refuses,
 * moved to slots of replay's.  vkr_uniforms_update: true where it made
 * the vkUpdateDescriptorSets of ARGS (capture values) itself;
 * _before and _after a record of E whose e->uniform is set, on a device
 * with descriptors moved (_after: ARGS live); _submit: a submit's
 * batches (live) with the copies before the command buffers that read
 * slots. */
VkDeviceSize vkr_uniform_alignment(const vkr *r);
void vkr_uniforms_entry(cmd_entry *e);
bool vkr_uniforms_update(vkr *r, const cmd_entry *e, vk_args_vkUpdateDescriptorSets *a);
/* vkUpdateDescriptorSetWithTemplate's pData: _sizes, before its handles
 * are mapped, the sizes of the descriptors to move (NULL: none; a push
 * template's are said once, not moved); _move, after, moves them in
 * DATA for set CAP_SET. */
VkDeviceSize *vkr_uniforms_template_sizes(vkr *r, const cmd_entry *e, const tmpl *t,
					  const uint8_t *data);
void vkr_uniforms_template_move(vkr *r, uint64_t cap_set, const tmpl *t, uint8_t *data,
				const VkDeviceSize *size);
/* A bind's dynamic offsets this device refuses, said once (capture values) */
void vkr_uniforms_dynamic(vkr *r, const vk_args_vkCmdBindDescriptorSets *a);
/* A push's buffer descriptors at offsets this device refuses, said once */
void vkr_uniforms_push(vkr *r, const vk_args_vkCmdPushDescriptorSetKHR *a);
void vkr_uniforms_before(vkr *r, const cmd_entry *e, void *args);
void vkr_uniforms_after(vkr *r, const cmd_entry *e, void *args);
const VkSubmitInfo *vkr_uniforms_submit(vkr *r, VkQueue queue, const VkSubmitInfo *si,
					uint32_t n);
const VkSubmitInfo2 *vkr_uniforms_submit2(vkr *r, VkQueue queue, const VkSubmitInfo2 *si,
					  uint32_t n);
void vkr_uniforms_free(vkr_device *d);

/* timeline.c: timeline semaphores the program destroys, kept and made
 * again, their values raised.  vkr_timeline_create: true where one was
 * taken for CAP (CI's, a vkCreateSemaphore's); vkr_timeline_made: CAP,
 * just made, may be kept; vkr_timeline_shift: a record's timeline values
 * raised; vkr_timeline_destroy: true where CAP was kept, not destroyed. */
bool vkr_timeline_create(vkr *r, const VkSemaphoreCreateInfo *ci, uint64_t cap, VkResult capres);
void vkr_timeline_made(vkr *r, const VkSemaphoreCreateInfo *ci, uint64_t cap);
void vkr_timeline_shift(vkr *r, const cmd_entry *e, void *args);
bool vkr_timeline_destroy(vkr *r, uint64_t cap);
void vkr_timelines_free(vkr *r, vkr_device *d);

/* warm.c: pipelines compiled ahead into a cache of replay's own
 * (--pipeline-jobs), from the first device made to its end. */
void vkr_warm_start(vkr *r, vkr_device *d);
void vkr_warm_stop(vkr *r, vkr_device *d);  /* d's, or whichever with NULL */
/* The cache for the record's device, or null. */
VkPipelineCache vkr_warm_cache(const vkr *r);
/* The pipelines made ahead, with *JOBS the calls handed to *THREADS
 * workers and *TAKEN the pipelines the replay took. */
uint64_t vkr_warm_made(const vkr *r, uint64_t *jobs, uint64_t *taken, unsigned *threads);
/* The COUNT pipelines call NO made ahead into OUT, the replay's from then
 * on; waits for a worker that is making them.  False where the replay is
 * to make them itself (from vkr_warm_cache). */
bool vkr_warm_take(vkr *r, uint64_t no, uint32_t count, VkPipeline *out);
/* The descriptor pool or pipeline cache call NO makes, made ahead: true
 * and *OUT, or false for the replay to make it itself. */
bool vkr_warm_take_object(vkr *r, uint64_t no, uint64_t *out);
void vkr_warm_objects(const vkr *r, uint64_t *made, uint64_t *taken);
/* Whether the calling thread is one of warm.c's, whose calls are not the
 * trace's: --validate leaves their messages out. */
bool vkr_warm_thread(void);
void vkr_binary_note(vkr *r, const cmd_entry *e, void *args, VkResult capres);
void vkr_bounded(vkr *r, VkResult res, const char *what);
/* watchdog.c: a replay that makes no progress for --wait-timeout + 5 s
 * stops with one line.  NOTE each record as it begins; PHASE what
 * replay does outside records (its final waits). */
void vkr_watchdog_start(vkr *r);
void vkr_watchdog_cpu_device(vkr *r);
void vkr_watchdog_note(const trace_call *c);
void vkr_watchdog_event_wait(void);
void vkr_watchdog_phase(const char *what);
void vkr_watchdog_stop(void);
/* Exit status 1 once the devices' own threads finished what they run. */
noreturn void vkr_exit_failed(vkr *r);
noreturn void vkr_fatal(vkr *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *vkr_result_name(VkResult res);
void vkr_remap_in(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		  const vk_field *f);
/* entry.c: C's command's entry, made the first time its signature comes
 * (NULL: no command of the registry's) */
cmd_entry *vkr_entry_make(vkr *r, const trace_call *c);
static inline cmd_entry *vkr_entry_of(vkr *r, const trace_call *c)
{
	size_t slot = trace_ptr_slot(c->sig, SIG_CACHE_BITS);
	if (r->sig_cache.sig[slot] == c->sig)
		return r->sig_cache.e[slot];
	return vkr_entry_make(r, c);
}
void vkr_check_result(vkr *r, const cmd_entry *e, bool have_cap, VkResult cap, VkResult now);
void vkr_remap_args(vkr *r, const vk_command_info *cmd, void *args);
VkResult vkr_invoke(vkr *r, const cmd_entry *e, void *args);
VkResult vkr_call_generic(vkr *r, const cmd_entry *e, void *args);
/*
 * --preload: from C (frame F, the range's first record) the records are
 * read and decoded, then replayed; 1 when records are left to read as
 * they replay (the range ended, or the most a preload holds), else what
 * the reader last returned (0 at the end, -1 with r->err).
 */
int vkr_preload(vkr *r, trace_reader *in, trace_call *c, int64_t f, uint64_t *last_whole,
		uint64_t *records);
/* The reader's hook (trace_reader_decode_ahead): a record's arguments
 * decoded on its thread; and those of C for E's command, or NULL. */
void *vkr_decode_hook(void *ctx, trace_call *c);
void *vkr_decoded_args(const trace_call *c, const cmd_entry *e);
/* An update record's, read and its runs listed on that thread, or NULL. */
const vk_update *vkr_decoded_update(const trace_call *c);
/* One record: E and ARGS decoded already (--preload: preload.c), or NULL. */
void vkr_replay_decoded(vkr *r, const trace_call *c, cmd_entry *e, void *args);
static inline void vkr_replay_call(vkr *r, const trace_call *c)
{
	vkr_replay_decoded(r, c, NULL, NULL);
}
void vkr_frame_ended(vkr *r, int64_t frame);
int vkr_run(trace_reader *in, const vkr_options *opt);
void vkr_init_common(vkr *r, const vkr_options *opt);

/* instance.c: instances and devices */
void vkr_create_instance(vkr *r, vk_args_vkCreateInstance *a);
void vkr_destroy_instance(vkr *r, vk_args_vkDestroyInstance *a);
void vkr_map_physical(vkr *r, uint64_t cap_instance, uint64_t cap_physical);
void vkr_close_all(vkr *r);
void vkr_free_devices_state(vkr *r);
void vkr_create_device(vkr *r, vk_args_vkCreateDevice *a);
/* The device made on replay of capture VkDevice CAP, or NULL. */
vkr_device *vkr_device_by_cap(vkr *r, uint64_t cap);
/* A new device's state (--check's too: no vk.device), made current. */
vkr_device *vkr_device_add(vkr *r, uint64_t cap, uint64_t cap_physical);
/* With two devices or more: r->d becomes the device of the call's
 * dispatchable handle (ARGS: capture values). */
void vkr_select_device_of(vkr *r, const vk_command_info *cmd, const void *args);
static inline void vkr_select_device(vkr *r, const vk_command_info *cmd, const void *args)
{
	if (r->ndevs > 1 && cmd->level == VK_LEVEL_DEVICE)
		vkr_select_device_of(r, cmd, args);
}
/* Whether handle CAP of type H (made by a device call) is D's: with one
 * device alive, every handle is. */
bool vkr_owned_by(vkr *r, const vk_handle_info *h, uint64_t cap, const vkr_device *d);
/* What a device call made: its owner noted (with two devices or more). */
void vkr_owner_put(vkr *r, const vk_handle_info *h, uint64_t cap);
/* Device D gone from the list (its state freed); r->d another, or none. */
void vkr_device_remove(vkr *r, vkr_device *d);
/* The capture's memory properties for the current device's objects. */
const VkPhysicalDeviceMemoryProperties *vkr_cap_mem(vkr *r);
void vkr_note_cap_mem(vkr *r, uint64_t cap_physical, const VkPhysicalDeviceMemoryProperties *p);
/* vkWaitIdle of every device (before exit) */
void vkr_wait_all(vkr *r);
const vk_command_info *vkr_destroyer(vkr *r, const vk_handle_info *h);
void vkr_device_teardown(vkr *r, vkr_device *d);
/* Device D's swapchains destroyed; its buffers and images ended by END
 * (released, or under --check unlinked) and its capture memory freed; all
 * out of their maps. */
void vkr_forget_swapchains(vkr *r, vkr_device *d);
void vkr_forget_objects(vkr *r, vkr_device *d, void (*end)(vkr *r, uint64_t o));
void vkr_end_device(vkr *r, vkr_device *d);

/* memory.c: memory placement, object by object; the bytes the trace wrote */
void vkr_parse_header_memory(vkr *r, const trace_header *h);
obj *vkr_obj_get(vkr *r, uint64_t cap);
void vkr_framebuffer_limits(vkr *r, const VkFramebufferCreateInfo *ci);

/* formats.c: an image the device cannot make in its format, made in one
 * of the same channels in another order */
/* CI's limits checked and, where the device lacks its format for its
 * usage, CI renamed; the trace's format, or 0 where CI stays as it was */
int32_t vkr_image_format(vkr *r, VkImageCreateInfo *ci);
/* O, made from CI, renamed from FROM: what its views and copies need */
void vkr_image_renamed(vkr *r, obj *o, int32_t from, const VkImageCreateInfo *ci);
void vkr_rename_free(obj *o);
/* What color attachment formats CMD names, if any (render passes,
 * pipelines' and inheritance's rendering formats, imageless
 * framebuffers: 0 for none), and those of ARGS, a record of that KIND,
 * that the device lacks renamed as their images are; on any thread
 * (warm.c) */
int vkr_attachments_kind(const vk_command_info *cmd);
void vkr_attachment_formats(VkPhysicalDevice phys, int kind, void *args);
/* What a record does with an image made renamed: views name its new
 * format, copies of its bytes (with a buffer, with an image not renamed)
 * go through a shadow image (true: the call is made) (e->special:
 * SP_CREATE_VIEW, SP_BUFFER_IMAGE, SP_IMAGE_IMAGE) */
bool vkr_format_note(vkr *r, const cmd_entry *e, void *args);
obj *vkr_new_obj(vkr *r, uint64_t cap, uint64_t live, bool image, bool linear, VkDeviceSize size);
void vkr_unlink_obj(obj *o);
/* --loop: O set aside alive, out of its memory's list: its bytes kept. */
void vkr_park_obj(obj *o);
void vkr_release_obj(vkr *r, obj *o);
void vkr_alloc_memory(vkr *r, vk_args_vkAllocateMemory *a);
void vkr_free_memory(vkr *r, uint64_t cap);
void vkr_bind_obj(vkr *r, uint64_t cap_obj, uint64_t cap_mem, VkDeviceSize offset,
		  bool image, VkResult cap_res);
void vkr_update(vkr *r, const trace_call *c);

/* present.c: swapchains (offscreen), acquires, presents, screenshots */
void vkr_create_swapchain(vkr *r, vk_args_vkCreateSwapchainKHR *a);
void vkr_destroy_swapchain(vkr *r, swapchain *s);
/* The array layers of the swapchain image the trace calls CAP_IMG, or 0
 * where no swapchain has it (swapchains are few: a search of them). */
uint32_t vkr_swapchain_image_layers(vkr *r, uint64_t cap_img);
void vkr_swapchain_images(vkr *r, vk_args_vkGetSwapchainImagesKHR *a);
void vkr_acquire(vkr *r, uint64_t cap_swapchain, uint32_t index, uint64_t cap_sem,
		 uint64_t cap_fence, VkResult cap_res);
void vkr_present(vkr *r, vk_args_vkQueuePresentKHR *a);
/* Before the application's semaphore CAP is destroyed: it is left out of
 * what is folded, and a batch of ours that waits on it is done. */
void vkr_present_release(vkr *r, uint64_t cap);
/* The presents' and acquires' folded waits and signals as a batch of
 * their own, now: before a call that may use them otherwise. */
void vkr_fold_flush(vkr *r);
static inline bool vkr_fold_pending(const vkr *r)
{
	return r->d->nfold_waits || r->d->fold_acquired.n;
}
/* The first batch of a submit waits on what the presents since
 * waited on; waits on the acquires' semaphores are left out: SI (N
 * batches, live handles), copied into the arena where changed. */
const VkSubmitInfo *vkr_fold_submit(vkr *r, const VkSubmitInfo *si, uint32_t n);
const VkSubmitInfo2 *vkr_fold_submit2(vkr *r, const VkSubmitInfo2 *si, uint32_t n);
/* After vkr_fold_submit*: the submit about to be made to QUEUE with
 * *FENCE (live; CAP_FENCE its capture handle) carries folded waits; their
 * semaphores are marked with it, or with a fence of ours put in *FENCE
 * where it is VK_NULL_HANDLE. */
void vkr_fold_mark(vkr *r, VkQueue queue, VkFence *fence, uint64_t cap_fence);
/* What folding keeps, at the device's end. */
void vkr_fold_free(vkr *r);

/* queue.c: submits and their GPU time (--stats) */
void vkr_gpu_poll(vkr *r, bool wait);
void vkr_gpu_timers_free(vkr *r);
void vkr_submit(vkr *r, const cmd_entry *e, vk_args_vkQueueSubmit *a);
/* Merged submits: what E's records do to submits held (at its entry);
 * whether the record E (ARGS) must send them first; sending them. */
void vkr_merge_entry(cmd_entry *e);

/* ahead.c: running ahead of the device */
void vkr_ahead_entry(cmd_entry *e);
/* before the record's own work: false where it is done (a wait skipped,
 * a destroy put off) */
bool vkr_ahead_record(vkr *r, const cmd_entry *e, void *args, VkResult capres);
/* a vkQueueSubmit call to QUEUE with FENCE (live) about to go out: the
 * fence to give it, and in *PRE a command buffer of ours to submit first
 * (or null); then vkr_ahead_note_cbs with its command buffers and
 * vkr_ahead_called with its outcome */
VkFence vkr_ahead_call(vkr *r, VkQueue queue, VkFence fence, VkCommandBuffer *pre);
/* Held submits running ahead (vkr_held_ahead): a submit to QUEUE (of
 * command buffers: WORK) about to be held after HELD batches, and the
 * command buffer of ours to go first in it (a barrier, staged copies)
 * or null; the held call's FENCE
 * (live), OLD the one it had before (then never submitted); the held
 * call going out with FENCE, and in *POST the copies staged after its
 * last submit (or null) */
VkCommandBuffer vkr_ahead_pre(vkr *r, VkQueue queue, uint32_t held, bool work);
void vkr_ahead_hold_fence(vkr *r, VkFence fence, VkFence old);
VkFence vkr_ahead_held_call(vkr *r, VkFence fence, VkCommandBuffer *post);
/* whether running ahead follows QUEUE (live); whether a skipped wait
 * covered submits held (then an update is staged behind them, not sent
 * first to be written from the host: the program waited for them) */
bool vkr_ahead_follows(vkr *r, VkQueue queue);
bool vkr_ahead_held_waited(const vkr *r);
/* (HELD: of a submit held, the call after the last sent) */
void vkr_ahead_note_cbs(vkr *r, const VkCommandBuffer *cbs, uint32_t n, bool held);
void vkr_ahead_called(vkr *r, bool ok);
bool vkr_ahead_defer_destroy(vkr *r, const cmd_entry *e, void *args);
/* fence F (live), seen signalled, is about to be reset by replay itself */
void vkr_ahead_fence_signalled(vkr *r, VkFence f);
/* memory the trace writes: whether it goes through the staging buffer
 * now; the N runs (TOTAL bytes) into group G's allocation staged, all or
 * none (false: refused, vkr_ahead_unstaged then the write from the host) */
typedef struct stage_run {
	VkDeviceSize off, len;  /* bytes [off, off + len) of the group's allocation */
	const uint8_t *data;
} stage_run;
bool vkr_ahead_stages(vkr *r, const group *g);
void vkr_ahead_unstaged(vkr *r, const group *g);
bool vkr_ahead_stage(vkr *r, group *g, const stage_run *runs, size_t n, VkDeviceSize total);
void vkr_ahead_settle(vkr *r);
void vkr_ahead_group_gone(vkr *r, group *g);
void vkr_ahead_frame(vkr *r);
void vkr_ahead_free(vkr *r, vkr_device *d);
bool vkr_merge_breaks(vkr *r, const cmd_entry *e, void *args);
void vkr_send_held(vkr *r);
void vkr_held_free(vkr *r);
/* Running ahead, the most frames whose submits go out as one call (the
 * default: TRACE_REPLAY_MERGE_FRAMES sets it) */
#define MERGE_FRAMES 4
/* Whether submits are held that run ahead of the device (on the queue
 * ahead.c follows), for device D (null: any) */
bool vkr_held_ahead(const vkr *r, const vkr_device *d);
/* Command buffer CAP (capture handle), held, begun again as another
 * (ahead.c): recording into it no longer touches what is held */
void vkr_held_forget_cb(vkr *r, uint64_t cap);

/* The queues a device made (CI as made), and a vkGetDeviceQueue* of one
 * it did not make stopping the replay (llvmpipe handed back a queue that
 * crashed the next submit). */
void vkr_queues_made(vkr *r, const VkDeviceCreateInfo *ci);
void vkr_queue_check(vkr *r, uint32_t family, uint32_t index);
void vkr_submit2(vkr *r, const cmd_entry *e, vk_args_vkQueueSubmit2 *a);

/* stats.c: --stats, printed at the end (TOTAL: the replay's seconds) */
void vkr_print_stats(vkr *r, double total);
/* --stats: TICKS (vkr_ticks) spent on a record of signature SIG. */
void vkr_time_note(vkr *r, const trace_func_sig *sig, uint64_t ticks);
void vkr_times_free(vkr *r);

/* template.c: descriptor update templates */
void vkr_create_template(vkr *r, const cmd_entry *e, vk_args_vkCreateDescriptorUpdateTemplate *a);
void vkr_destroy_template(vkr *r, const cmd_entry *e, vk_args_vkDestroyDescriptorUpdateTemplate *a);
void vkr_free_templates(vkr *r);
void vkr_template_data(vkr *r, const cmd_entry *e, void *args);

/* loop.c: --loop: the kept records and the passes */
void vkr_keep(vkr *r, const trace_call *c, int64_t frame, bool ends);
noreturn void vkr_loop_refuse(vkr *r, const char *why, const char *need, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
uint64_t vkr_handle_at(const void *args, const vk_field *f);
uint64_t vkr_first_handle(const trace_call *c);
cblog *vkr_cblog_of(loop_state *l, uint64_t cb);
void vkr_born_note(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		   const vk_field *f);
void vkr_need_free_bit(vkr *r, uint64_t pool, uint64_t set);
bool vkr_life_step(vkr *r, enum life_mode mode, const cmd_entry *e, void *args);
bool vkr_born_has(loop_state *l, uint64_t cap, const vk_handle_info *h);
bool vkr_loop_call(vkr *r, const cmd_entry *e, void *args);
void vkr_loop_init(vkr *r);
void vkr_loop_run(vkr *r);
void vkr_loop_free(vkr *r);

/* loop_check.c: --loop: what a pass could not replay, refused first */
void vkr_loop_check(vkr *r);

/* cmdbuf.c: what call E (ARGS: capture values) does to a primary command
 * buffer's recording; one recorded where the registry does not let it
 * be (or a recording ended inside a render pass) stops the replay. */
/* what cmdbuf.c checks of E's command, found once (its kind, its query
 * parameters) */
void vkr_cmdbuf_entry(cmd_entry *e);
/* Stops the replay: queries FIRST to FIRST + COUNT of POOL (a capture
 * handle), which has HAVE */
noreturn void vkr_queries_past(vkr *r, uint64_t pool, uint32_t first, uint32_t count,
				uint64_t have);
void vkr_stamps_entry(cmd_entry *e);
enum stamp_use vkr_stamps_note(vkr *r, const cmd_entry *e, void *args, VkResult capres);
void vkr_stamps_copy(vkr *r, const cmd_entry *e, void *args);
void vkr_cmdbuf_note(vkr *r, const cmd_entry *e, void *args, VkResult capres);

/* subres.c: which of CMD's inputs may hold an image subresource, a bit
 * each (0: none); those of call E (ARGS: capture values) within their
 * images' levels and layers, else the replay stops. */
uint64_t vkr_subres_reads(vkr *r, const vk_command_info *cmd);
void vkr_subres_check(vkr *r, const cmd_entry *e, void *args);

/* check.c: --check.  vk_walk_handles over a call's outputs: each handle
 * made known by its capture value; what replay does for E without a
 * device, where it cannot go the replay's way (true: done). */
void vkr_check_made(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		    const vk_field *f);
void vkr_check_made_owned(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
			  const vk_field *f);
bool vkr_check_special(vkr *r, const cmd_entry *e, void *args, VkResult capres);

/* A device made (--check follows it without one). */
static inline bool vkr_have_device(const vkr *r)
{
	return r->ndevs > 0;
}

/* dump.c, dump_track.c: --dump and --dump-resource (dump.h): what a call
 * wrote, noted before it is made and read back after */
typedef struct dump_state dump_state;
void vkr_dump_init(vkr *r);
void vkr_dump_note(vkr *r, const cmd_entry *e, void *args);
void vkr_dump_after(vkr *r, const trace_call *c);
void vkr_dump_end_device(vkr *r);
bool vkr_dump_finish(vkr *r);

/* The handle map: (capture value, handle type) -> live value. */

static inline void vkr_map_put(vkr *r, const vk_handle_info *h, uint64_t cap, uint64_t live)
{
	if (cap)
		tmap_set(&r->handles, cap, (uintptr_t)h, live);
}

static inline bool vkr_map_get(vkr *r, const vk_handle_info *h, uint64_t cap, uint64_t *live)
{
	if (!cap) {
		*live = 0;
		return true;
	}
	uint64_t *e = tmap_at(&r->handles, cap, (uintptr_t)h);
	if (!e)
		return false;
	*live = *e;
	return true;
}

static inline void vkr_map_del(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	if (cap)
		tmap_del(&r->handles, cap, (uintptr_t)h, NULL);
}

/* The live handle for CAP, which the call cannot go without: a null one
 * stops the replay too (the loader aborts on a null queue). */
static inline uint64_t vkr_need(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	uint64_t live;
	if (!cap)
		vkr_fatal(r, "a null %s, where the call needs one", h->name);
	if (!vkr_map_get(r, h, cap, &live))
		vkr_fatal(r, "%s 0x%llx was never made (or failed to replay)", h->name,
		      (unsigned long long)cap);
	return live;
}

static inline bool vkr_failed(VkResult res)
{
	return res < 0;
}

static inline VkResult vkr_cap_result(const trace_call *c)
{
	return (VkResult)vk_record_result(c);
}

#endif
