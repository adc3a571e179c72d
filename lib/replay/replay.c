/*
 * The Vulkan replayer; see vkreplay.h and trace-replay(1).
 *
 * One record at a time, in record order, on one thread: decode the
 * arguments into the vk_args_NAME struct of the command (an arena per
 * record), map every handle in them from its capture value to the live
 * one, call the command through its generated thunk, and map the handles
 * it made.  What differs from a plain call is below, each in one place:
 * instance and device creation, memory (object-based), surfaces and
 * swapchains, waits, and queries of capture-time values.
 */
/* first: it includes <vulkan/vulkan.h> with the platforms it describes */
#include "internal.h"
#include "vkschema_cmds.h"

#include "vkreplay.h"

#include "cli.h"
#include "frames.h"
#include "png.h"
#include "tmap.h"
#include "vkschema.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*vk_call_fn)(PFN_vkVoidFunction fn, void *args);
extern const vk_call_fn vk_calls[];
extern const uint32_t vk_ncalls;

#define WARNINGS_SHOWN 20

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
	SP_WAIT_FENCES, SP_WAIT_SEMAPHORES, SP_FENCE_STATUS, SP_SEMAPHORE_VALUE,
	SP_QUERY_RESULTS,
	SP_CREATE_SURFACE, SP_DESTROY_SURFACE,
	SP_CREATE_SWAPCHAIN, SP_DESTROY_SWAPCHAIN, SP_SWAPCHAIN_IMAGES,
	SP_ACQUIRE, SP_ACQUIRE2, SP_PRESENT,
	SP_FAKE_CREATE, SP_FAKE_DESTROY,
	SP_CREATE_TEMPLATE, SP_DESTROY_TEMPLATE, SP_TEMPLATE_DATA,
	SP_GET_QUEUE, SP_GET_QUEUE2, SP_SUBMIT, SP_SUBMIT2, SP_DRAW_MULTI, SP_DRAW_MULTI_INDEXED,
};

/* What --loop follows a command for, beyond what it makes and ends: the
 * state of command buffers, pools, fences and semaphores. */
enum loop_kind {
	LK_NONE = 0,
	LK_RECORD, LK_BEGIN_CB, LK_END_CB, LK_RESET_CB,
	LK_ALLOC_CBS, LK_FREE_CBS, LK_RESET_CPOOL, LK_DESTROY_CPOOL,
	LK_CREATE_DPOOL, LK_ALLOC_SETS, LK_FREE_SETS, LK_RESET_DPOOL, LK_DESTROY_DPOOL,
	LK_CREATE_SEMAPHORE, LK_CREATE_FENCE, LK_RESET_FENCES, LK_SIGNAL_SEMAPHORE,
	LK_DESTROY_SYNC,
};

typedef struct cmd_entry {
	const vk_command_info *cmd;
	int32_t index;
	uint8_t special;
	uint8_t loop;        /* enum loop_kind: what --loop follows it for */
	bool out_handles;    /* an output parameter may hold handles */
	bool result;         /* it returns a VkResult */
	int16_t allocator;   /* the pAllocator parameter, or -1 */
	int16_t tmpl, data;  /* SP_TEMPLATE_DATA: descriptorUpdateTemplate, pData */
} cmd_entry;

typedef struct memobj memobj;
typedef struct group {
	vkd_allocation alloc;
	uint32_t refs;
	uint8_t *mapped;     /* host-visible: mapped for its life */
	bool coherent;
	bool address;        /* VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT: a VkDeviceMemory
			      * of its own, not from vkdevice.c's pools */
	VkDeviceSize cap_base; /* capture offset in its memory of the first object */
} group;

typedef struct obj {
	uint64_t cap, live;
	bool image, linear;
	bool address;               /* a buffer made for device addresses */
	VkDeviceSize create_size;   /* buffers */
	VkDeviceSize cap_req;       /* size from the capture's requirements, 0 if unknown */
	group *group;
	VkDeviceSize rel;           /* its offset in the group's allocation */
	memobj *mem;                /* capture memory it is bound to */
	VkDeviceSize mem_off, cap_extent;
	struct obj *next_in_mem;
} obj;

struct memobj {
	uint64_t cap;
	VkDeviceSize size;
	uint32_t cap_type;
	obj *objs;
};

typedef struct swapchain {
	uint64_t cap;
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
	TAG_RESTORE, TAG_RESET,
};

/*
 * --stats: the GPU time of the batches submitted to one queue family,
 * from two timestamps per batch written by command buffers of our own put
 * first and last in it.  Slots form a ring read in submit order, a frame
 * or more later, without waiting (or waiting for the oldest when the ring
 * is full): the replay does not wait for the GPU to time it.
 */
#define GPU_SLOTS 128

typedef struct gpu_timer {
	bool usable;                /* the family has timestamps */
	uint64_t mask;              /* timestampValidBits */
	double period;              /* nanoseconds per tick */
	VkCommandPool pool;
	VkQueryPool queries;        /* slot i: 2i at the start, 2i + 1 at the end */
	VkCommandBuffer cb[2 * GPU_SLOTS];  /* slot i: 2i writes the start, 2i + 1 the end */
	size_t frame[GPU_SLOTS];    /* the index of the frame a slot's batch counts for */
	uint32_t head, n;           /* the oldest slot in flight; slots in flight */
	size_t busy_frame;          /* the frame of the last batch read, and */
	uint64_t busy_end;          /* where its span ended: spans overlap */
	bool busy;
} gpu_timer;

typedef struct vkr {
	const vkr_options *opt;
	vkd_device dev;
	bool have_instance;
	tmap handles;      /* (capture, type) -> live */
	tmap objects;      /* (capture, TAG_OBJ) -> obj* */
	tmap sigs;         /* (sig pointer, TAG_SIG) -> cmd_entry* */
	tmap mems;         /* (capture, TAG_MEM) -> memobj* */
	tmap swapchains;   /* (capture, TAG_SWAPCHAIN) -> swapchain* */
	tmap templates;    /* (capture, TAG_TEMPLATE) -> tmpl* */
	tmap queues;       /* (live queue, TAG_QUEUE) -> its family */
	PFN_vkVoidFunction *fns;
	uint8_t *fn_done;
	trace_arena arena;
	const vk_handle_info *h_buffer, *h_image, *h_memory, *h_physical, *h_surface,
		*h_swapchain, *h_semaphore, *h_fence, *h_queue, *h_device, *h_instance;
	const vk_struct_info *s_allocator;
	VkPhysicalDeviceMemoryProperties cap_mem;  /* the capture device's */
	bool have_cap_mem;
	/* our own submits (acquire, present, screenshots) */
	VkCommandPool pool;
	VkCommandBuffer cb;
	VkFence fence;
	uint64_t fake_next;
	/* the record in progress */
	const trace_call *call;
	uint64_t warnings, errors, unknown_handles;
	bool skip_call;
	const vk_handle_info *missing_type;
	uint64_t missing_value;
	/* frames */
	trace_frames frames;
	int64_t frame;
	size_t next_shot;
	uint64_t calls, frames_done;
	double t_start, t_first_frame, t_last_frame, frame_cpu_max, frame_cpu_min;
	double *frame_times;
	size_t nframe_times, cap_frame_times;
	/* --stats: GPU time, by queue family; seconds per frame, as frame_times */
	gpu_timer **timers;
	uint32_t nfamilies;
	double *frame_gpu;
	size_t cap_frame_gpu;
	bool gpu_unmeasured;  /* a batch went to a family without timestamps
			       * (or to a queue of no known family) */
	bool stop;
	/* --loop: the range's records, replayed again, and what a pass
	 * needs to begin where the range began (NULL without --loop) */
	struct kept *kept;
	size_t nkept, capkept;
	struct loop_state *loop;
	trace_error err;
} vkr;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void warn(vkr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(vkr *r, const char *fmt, ...)
{
	if (++r->warnings > WARNINGS_SHOWN || r->opt->quiet)
		return;
	trace_cli_progress_done();
	va_list ap;
	fprintf(stderr, "%s: %s: call %llu: warning: ", trace_cli_self.prog, r->opt->input,
		r->call ? (unsigned long long)r->call->no : 0ull);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A failure that stops the replay: exit 1 with the call number. */
static noreturn void fatal(vkr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static noreturn void fatal(vkr *r, const char *fmt, ...)
{
	trace_cli_progress_done();
	va_list ap;
	fprintf(stderr, "%s: %s: ", trace_cli_self.prog, r->opt->input);
	if (r->call)
		fprintf(stderr, "call %llu (%s): ", (unsigned long long)r->call->no,
			r->call->sig->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static const char *result_name(VkResult res)
{
	const vk_enum_info *e = vk_enum_lookup("VkResult");
	const char *n = e ? trace_enum_name(&e->sig, res) : NULL;
	return n ? n : "VkResult";
}

/* ------------------------------------------------------------------ */
/* Handles. */

static void map_put(vkr *r, const vk_handle_info *h, uint64_t cap, uint64_t live)
{
	if (cap)
		tmap_set(&r->handles, cap, (uintptr_t)h, live);
}

static bool map_get(vkr *r, const vk_handle_info *h, uint64_t cap, uint64_t *live)
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

static void map_del(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	if (cap)
		tmap_del(&r->handles, cap, (uintptr_t)h, NULL);
}

static uint64_t need(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	uint64_t live;
	if (!map_get(r, h, cap, &live))
		fatal(r, "%s 0x%llx was never made (or failed to replay)", h->name,
		      (unsigned long long)cap);
	return live;
}

/* vk_walk_handles over the inputs: capture values into live ones. */
static void remap_in(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		     const vk_field *f)
{
	vkr *r = ctx;
	uint64_t live;
	if (map_get(r, h, *value, &live)) {
		*value = live;
		return;
	}
	if (top && !(f->flags & VK_F_OPTIONAL)) {
		r->skip_call = true;
		r->missing_type = h;
		r->missing_value = *value;
	} else {
		r->unknown_handles++;
		if (r->unknown_handles <= 3)
			warn(r, "%s.%s: %s 0x%llx unknown (left out: null)", r->call->sig->name,
			     f->name, h->name, (unsigned long long)*value);
	}
	*value = 0;
}

typedef struct collect {
	uint64_t *vals;
	const vk_handle_info **types;
	size_t n, cap;
	bool live;   /* second pass: pair with the first */
	vkr *r;
	size_t at;
} collect;

static void collect_out(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
			const vk_field *f)
{
	(void)top;
	(void)f;
	collect *c = ctx;
	if (c->live) {
		if (c->at < c->n && c->types[c->at] == h)
			map_put(c->r, h, c->vals[c->at], *value);
		c->at++;
		return;
	}
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->vals = trace_xrealloc(c->vals, c->cap * sizeof(*c->vals));
		c->types = trace_xrealloc(c->types, c->cap * sizeof(*c->types));
	}
	c->vals[c->n] = *value;
	c->types[c->n++] = h;
}

typedef struct destroyed {
	const vk_handle_info *h;
	uint64_t vals[8];
	size_t n;
	uint64_t *more;
	size_t nmore, capmore;
} destroyed;

/* ------------------------------------------------------------------ */
/* Dispatch. */

static PFN_vkVoidFunction lookup_fn(vkr *r, const cmd_entry *e)
{
	int32_t i = e->index;
	if (r->fn_done[i])
		return r->fns[i];
	const vk_command_info *cmd = e->cmd;
	PFN_vkVoidFunction fn = NULL;
	for (int k = 0; k < 2 && !fn; k++) {
		const char *name = k ? cmd->alias_of : cmd->sig.name;
		if (!name)
			continue;
		if (cmd->level == VK_LEVEL_DEVICE && r->dev.device)
			fn = vkGetDeviceProcAddr(r->dev.device, name);
		if (!fn)
			fn = vkGetInstanceProcAddr(cmd->level == VK_LEVEL_GLOBAL ? NULL
						   : r->dev.instance, name);
	}
	r->fns[i] = fn;
	r->fn_done[i] = 1;
	return fn;
}

static void reset_fns(vkr *r)
{
	memset(r->fn_done, 0, vk_ncommands);
}

/* A command's code in a table by name, or DFLT. */
typedef struct named {
	const char *name;
	uint8_t code;
} named;

static int by_name(const named *table, size_t n, const char *name, int dflt)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, table[i].name))
			return table[i].code;
	return dflt;
}

static enum special special_of(const char *n, const vk_command_info *cmd)
{
	static const named table[] = {
		{"vkCreateInstance", SP_CREATE_INSTANCE},
		{"vkDestroyInstance", SP_DESTROY_INSTANCE},
		{"vkEnumeratePhysicalDevices", SP_ENUM_PHYSICAL},
		{"vkEnumeratePhysicalDeviceGroups", SP_ENUM_GROUPS},
		{"vkEnumeratePhysicalDeviceGroupsKHR", SP_ENUM_GROUPS},
		{"vkCreateDevice", SP_CREATE_DEVICE},
		{"vkDestroyDevice", SP_DESTROY_DEVICE},
		{"vkAllocateMemory", SP_ALLOC_MEMORY},
		{"vkFreeMemory", SP_FREE_MEMORY},
		{"vkMapMemory", SP_SKIP},
		{"vkMapMemory2KHR", SP_SKIP},
		{"vkUnmapMemory", SP_SKIP},
		{"vkUnmapMemory2KHR", SP_SKIP},
		{"vkFlushMappedMemoryRanges", SP_SKIP},
		{"vkInvalidateMappedMemoryRanges", SP_SKIP},
		{"vkGetDeviceMemoryCommitment", SP_SKIP},
		{"vkCreateBuffer", SP_CREATE_BUFFER},
		{"vkCreateImage", SP_CREATE_IMAGE},
		{"vkDestroyBuffer", SP_DESTROY_BUFFER},
		{"vkDestroyImage", SP_DESTROY_IMAGE},
		{"vkBindBufferMemory", SP_BIND_BUFFER},
		{"vkBindImageMemory", SP_BIND_IMAGE},
		{"vkBindBufferMemory2", SP_BIND_BUFFER2},
		{"vkBindBufferMemory2KHR", SP_BIND_BUFFER2},
		{"vkBindImageMemory2", SP_BIND_IMAGE2},
		{"vkBindImageMemory2KHR", SP_BIND_IMAGE2},
		{"vkGetBufferMemoryRequirements", SP_BUFFER_REQS},
		{"vkGetImageMemoryRequirements", SP_IMAGE_REQS},
		{"vkGetBufferMemoryRequirements2", SP_BUFFER_REQS2},
		{"vkGetBufferMemoryRequirements2KHR", SP_BUFFER_REQS2},
		{"vkGetImageMemoryRequirements2", SP_IMAGE_REQS2},
		{"vkGetImageMemoryRequirements2KHR", SP_IMAGE_REQS2},
		{"vkGetPhysicalDeviceMemoryProperties", SP_MEMORY_PROPS},
		{"vkGetPhysicalDeviceMemoryProperties2", SP_MEMORY_PROPS2},
		{"vkGetPhysicalDeviceMemoryProperties2KHR", SP_MEMORY_PROPS2},
		{"vkWaitForFences", SP_WAIT_FENCES},
		{"vkWaitSemaphores", SP_WAIT_SEMAPHORES},
		{"vkWaitSemaphoresKHR", SP_WAIT_SEMAPHORES},
		{"vkGetFenceStatus", SP_FENCE_STATUS},
		{"vkGetSemaphoreCounterValue", SP_SEMAPHORE_VALUE},
		{"vkGetSemaphoreCounterValueKHR", SP_SEMAPHORE_VALUE},
		{"vkGetQueryPoolResults", SP_QUERY_RESULTS},
		{"vkDestroySurfaceKHR", SP_DESTROY_SURFACE},
		{"vkCreateSwapchainKHR", SP_CREATE_SWAPCHAIN},
		{"vkDestroySwapchainKHR", SP_DESTROY_SWAPCHAIN},
		{"vkGetSwapchainImagesKHR", SP_SWAPCHAIN_IMAGES},
		{"vkAcquireNextImageKHR", SP_ACQUIRE},
		{"vkAcquireNextImage2KHR", SP_ACQUIRE2},
		{"vkQueuePresentKHR", SP_PRESENT},
		{"vkGetSwapchainStatusKHR", SP_SKIP},
		{"vkSetHdrMetadataEXT", SP_SKIP},
		{"vkReleaseSwapchainImagesEXT", SP_SKIP},
		{"vkCreateDebugUtilsMessengerEXT", SP_FAKE_CREATE},
		{"vkDestroyDebugUtilsMessengerEXT", SP_FAKE_DESTROY},
		{"vkCreateDebugReportCallbackEXT", SP_FAKE_CREATE},
		{"vkDestroyDebugReportCallbackEXT", SP_FAKE_DESTROY},
		{"vkSubmitDebugUtilsMessageEXT", SP_SKIP},
		{"vkDebugReportMessageEXT", SP_SKIP},
		{"vkGetInstanceProcAddr", SP_SKIP},
		{"vkGetDeviceProcAddr", SP_SKIP},
		{"vkEnumerateInstanceVersion", SP_SKIP},
		{"vkEnumerateInstanceExtensionProperties", SP_SKIP},
		{"vkEnumerateInstanceLayerProperties", SP_SKIP},
		{"vkEnumerateDeviceLayerProperties", SP_SKIP},
		{"vkCreateDescriptorUpdateTemplate", SP_CREATE_TEMPLATE},
		{"vkCreateDescriptorUpdateTemplateKHR", SP_CREATE_TEMPLATE},
		{"vkDestroyDescriptorUpdateTemplate", SP_DESTROY_TEMPLATE},
		{"vkDestroyDescriptorUpdateTemplateKHR", SP_DESTROY_TEMPLATE},
		{"vkUpdateDescriptorSetWithTemplate", SP_TEMPLATE_DATA},
		{"vkUpdateDescriptorSetWithTemplateKHR", SP_TEMPLATE_DATA},
		{"vkCmdPushDescriptorSetWithTemplateKHR", SP_TEMPLATE_DATA},
		{"vkCmdPushDescriptorSetWithTemplate", SP_TEMPLATE_DATA},
		{"vkGetDeviceQueue", SP_GET_QUEUE},
		{"vkGetDeviceQueue2", SP_GET_QUEUE2},
		{"vkQueueSubmit", SP_SUBMIT},
		{"vkQueueSubmit2", SP_SUBMIT2},
		{"vkQueueSubmit2KHR", SP_SUBMIT2},
		{"vkCmdDrawMultiEXT", SP_DRAW_MULTI},
		{"vkCmdDrawMultiIndexedEXT", SP_DRAW_MULTI_INDEXED},
	};
	int sp = by_name(table, sizeof(table) / sizeof(table[0]), n, -1);
	if (sp >= 0)
		return (enum special)sp;
	/* surfaces: made up; what the window system said is in the trace */
	if (!strncmp(n, "vkCreate", 8) && strstr(n, "SurfaceKHR") && cmd->action == VK_ACTION_CREATE)
		return SP_CREATE_SURFACE;
	if (strstr(n, "Surface") || strstr(n, "PresentationSupport") ||
	    strstr(n, "PresentRectangles"))
		return SP_SKIP;
	return SP_NONE;
}

static enum loop_kind loop_kind_of(const char *n, const vk_command_info *cmd)
{
	static const named table[] = {
		{"vkBeginCommandBuffer", LK_BEGIN_CB},
		{"vkEndCommandBuffer", LK_END_CB},
		{"vkResetCommandBuffer", LK_RESET_CB},
		{"vkAllocateCommandBuffers", LK_ALLOC_CBS},
		{"vkFreeCommandBuffers", LK_FREE_CBS},
		{"vkResetCommandPool", LK_RESET_CPOOL},
		{"vkDestroyCommandPool", LK_DESTROY_CPOOL},
		{"vkCreateDescriptorPool", LK_CREATE_DPOOL},
		{"vkAllocateDescriptorSets", LK_ALLOC_SETS},
		{"vkFreeDescriptorSets", LK_FREE_SETS},
		{"vkResetDescriptorPool", LK_RESET_DPOOL},
		{"vkDestroyDescriptorPool", LK_DESTROY_DPOOL},
		{"vkCreateSemaphore", LK_CREATE_SEMAPHORE},
		{"vkCreateFence", LK_CREATE_FENCE},
		{"vkResetFences", LK_RESET_FENCES},
		{"vkSignalSemaphore", LK_SIGNAL_SEMAPHORE},
		{"vkSignalSemaphoreKHR", LK_SIGNAL_SEMAPHORE},
		{"vkDestroySemaphore", LK_DESTROY_SYNC},
		{"vkDestroyFence", LK_DESTROY_SYNC},
	};
	return (enum loop_kind)by_name(table, sizeof(table) / sizeof(table[0]), n,
				       cmd->action == VK_ACTION_RECORD ? LK_RECORD : LK_NONE);
}

static bool field_wanted(const vk_field *f)
{
	return (f->flags & VK_F_PNEXT) || f->base == VK_B_HANDLE ||
	       (f->base == VK_B_STRUCT && f->ref && ((const vk_struct_info *)f->ref)->handles);
}

static cmd_entry *entry_of(vkr *r, const trace_call *c)
{
	uint64_t *h = tmap_at(&r->sigs, (uint64_t)(uintptr_t)c->sig, TAG_SIG);
	if (h)
		return (cmd_entry *)(uintptr_t)*h;
	const vk_command_info *cmd = vk_command_lookup(c->sig->name);
	if (!cmd)
		return NULL;
	cmd_entry *e = trace_xcalloc(1, sizeof(*e));
	e->cmd = cmd;
	e->index = vk_command_index(cmd);
	if (e->index < 0 || (uint32_t)e->index >= vk_ncalls) {
		free(e);
		return NULL;
	}
	e->special = (uint8_t)special_of(cmd->sig.name, cmd);
	e->loop = (uint8_t)loop_kind_of(cmd->sig.name, cmd);
	e->result = cmd->ret && cmd->ret->base == VK_B_ENUM && !strcmp(cmd->ret->type, "VkResult");
	e->allocator = e->tmpl = e->data = -1;
	for (uint32_t i = 0; i < cmd->nparams; i++) {
		const vk_field *f = &cmd->params[i];
		if (!strcmp(f->name, "descriptorUpdateTemplate"))
			e->tmpl = (int16_t)i;
		if (!strcmp(f->name, "pData"))
			e->data = (int16_t)i;
		if ((f->flags & VK_F_OUT) && field_wanted(f))
			e->out_handles = true;
		if (f->base == VK_B_STRUCT && f->ref == r->s_allocator)
			e->allocator = (int16_t)i;
	}
	tmap_set(&r->sigs, (uint64_t)(uintptr_t)c->sig, TAG_SIG, (uint64_t)(uintptr_t)e);
	return e;
}

static bool is_failure(VkResult res)
{
	return res < 0;
}

/* Compares the result with the capture's; a change of success is reported. */
static void check_result(vkr *r, const cmd_entry *e, bool have_cap, VkResult cap, VkResult now)
{
	(void)e;
	if (!have_cap || is_failure(cap) == is_failure(now))
		return;
	if (is_failure(now)) {
		r->errors++;
		trace_cli_progress_done();
		fprintf(stderr, "%s: %s: call %llu: %s failed: %s (%d); it returned %s at capture\n",
			trace_cli_self.prog, r->opt->input, (unsigned long long)r->call->no,
			r->call->sig->name, result_name(now), now, result_name(cap));
	} else {
		warn(r, "%s succeeded (%s) where it failed at capture (%s)", r->call->sig->name,
		     result_name(now), result_name(cap));
	}
}

/* The handles of the inputs made live; false, with a warning, where one
 * the call cannot go without is unknown (then the call is not made). */
static bool remap_args(vkr *r, const vk_command_info *cmd, void *args)
{
	r->skip_call = false;
	vk_walk_handles(cmd, args, false, remap_in, r);
	if (r->skip_call)
		warn(r, "%s: %s 0x%llx unknown: call not replayed", cmd->sig.name,
		     r->missing_type->name, (unsigned long long)r->missing_value);
	return !r->skip_call;
}

/* Calls the command with its inputs live, compares the result with the
 * capture's and maps the handles it made. */
static VkResult invoke(vkr *r, const cmd_entry *e, void *args)
{
	const vk_command_info *cmd = e->cmd;
	VkResult cap = VK_SUCCESS, now = VK_SUCCESS;
	bool has_ret = e->result && r->call->ret;
	if (has_ret)
		memcpy(&cap, (uint8_t *)args + cmd->ret->offset, sizeof(cap));
	if (e->allocator >= 0)
		memset((uint8_t *)args + cmd->params[e->allocator].offset, 0, sizeof(void *));
	collect col = {.r = r};
	if (e->out_handles)
		vk_walk_handles(cmd, args, true, collect_out, &col);
	PFN_vkVoidFunction fn = lookup_fn(r, e);
	if (!fn)
		fatal(r, "%s is not available on %s (an extension the replay did not enable?)",
		      cmd->sig.name, r->dev.props.deviceName[0] ? r->dev.props.deviceName : "this device");
	vk_calls[e->index](fn, args);
	r->calls++;
	if (has_ret) {
		memcpy(&now, (uint8_t *)args + cmd->ret->offset, sizeof(now));
		check_result(r, e, true, cap, now);
	}
	if (e->out_handles && !is_failure(now)) {
		col.live = true;
		vk_walk_handles(cmd, args, true, collect_out, &col);
	}
	free(col.vals);
	free(col.types);
	return now;
}

/* The generic path: remap, call, map what it made, forget what it ended. */
static VkResult call_generic(vkr *r, const cmd_entry *e, void *args)
{
	const vk_command_info *cmd = e->cmd;
	/* what a destroy or free ends: its capture values */
	destroyed d = {0};
	if (cmd->action == VK_ACTION_DESTROY || cmd->action == VK_ACTION_FREE) {
		for (uint32_t i = 0; i < cmd->nparams; i++) {
			const vk_field *f = &cmd->params[i];
			if (f->base != VK_B_HANDLE || f->ref != cmd->object || (f->flags & VK_F_OUT))
				continue;
			uint8_t *fp = (uint8_t *)args + f->offset;
			if (f->ptr == 0) {
				memcpy(&d.vals[0], fp, 8);
				d.n = 1;
			} else {
				const uint64_t *arr;
				memcpy(&arr, fp, sizeof(arr));
				/* the count is the parameter before it */
				uint32_t count = 0;
				if (i > 0 && cmd->params[i - 1].base == VK_B_UINT && !cmd->params[i - 1].ptr)
					memcpy(&count, (uint8_t *)args + cmd->params[i - 1].offset, 4);
				if (arr && count) {
					d.more = trace_xcalloc(count, 8);
					memcpy(d.more, arr, (size_t)count * 8);
					d.nmore = count;
				}
			}
		}
		d.h = cmd->object;
	}
	if (!remap_args(r, cmd, args)) {
		free(d.more);
		return VK_SUCCESS;
	}
	VkResult now = invoke(r, e, args);
	if (d.h) {
		for (size_t i = 0; i < d.n; i++)
			map_del(r, d.h, d.vals[i]);
		for (size_t i = 0; i < d.nmore; i++)
			map_del(r, d.h, d.more[i]);
	}
	free(d.more);
	return now;
}

/* ------------------------------------------------------------------ */
/* Instance and device. */

static bool platform_surface(const char *ext)
{
	size_t n = strlen(ext);
	return (n > 8 && !strcmp(ext + n - 8, "_surface") && strcmp(ext, "VK_KHR_surface")) ||
	       !strcmp(ext, "VK_KHR_xlib_surface") || !strcmp(ext, "VK_EXT_acquire_xlib_display");
}

/* Presentation extensions: kept where the device has them, else dropped
 * quietly (the replay presents nothing). */
static bool presentation_ext(const char *ext)
{
	return platform_surface(ext) || strstr(ext, "surface") || strstr(ext, "swapchain") ||
	       strstr(ext, "present") || strstr(ext, "display") || strstr(ext, "VK_KHR_display");
}

static bool in_props(const VkExtensionProperties *p, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(p[i].extensionName, name))
			return true;
	return false;
}

static void create_instance(vkr *r, vk_args_vkCreateInstance *a)
{
	if (r->have_instance)
		fatal(r, "a second instance: not supported yet");
	const VkInstanceCreateInfo *ci = a->pCreateInfo;
	uint32_t n = 0;
	vkEnumerateInstanceExtensionProperties(NULL, &n, NULL);
	VkExtensionProperties *have = trace_xcalloc(n, sizeof(*have));
	vkEnumerateInstanceExtensionProperties(NULL, &n, have);
	const char **exts = trace_xcalloc(ci ? ci->enabledExtensionCount + 1 : 1, sizeof(*exts));
	uint32_t nexts = 0;
	char missing[1024] = "";
	bool portability = false;
	for (uint32_t i = 0; ci && i < ci->enabledExtensionCount; i++) {
		const char *x = ci->ppEnabledExtensionNames[i];
		if (!x || platform_surface(x))
			continue;
		if (!in_props(have, n, x)) {
			if (presentation_ext(x))
				continue;
			size_t k = strlen(missing);
			snprintf(missing + k, sizeof(missing) - k, "%s%s", k ? ", " : "", x);
			continue;
		}
		if (!strcmp(x, "VK_KHR_portability_enumeration"))
			portability = true;
		exts[nexts++] = x;
	}
	free(have);
	if (missing[0]) {
		if (!r->opt->remove_unsupported)
			fatal(r, "the instance lacks extensions the trace used: %s "
			      "(--remove-unsupported goes on without them)", missing);
		warn(r, "instance extensions left out (--remove-unsupported): %s", missing);
	}
	vkd_instance_request req = {
		.app = ci ? ci->pApplicationInfo : NULL,
		.flags = ci ? ci->flags : 0,
		.extensions = exts,
		.nextensions = nexts,
	};
	if (!portability)
		req.flags &= ~(VkInstanceCreateFlags)VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
	int k = vkd_open_instance(&r->dev, &r->opt->dev, &req, &r->err);
	free(exts);
	if (k == -2)
		trace_cli_usage_error("%s", r->err.msg);
	if (k < 0)
		fatal(r, "%s", r->err.msg);
	r->have_instance = true;
	reset_fns(r);
	map_put(r, r->h_instance, a->pInstance ? (uint64_t)(uintptr_t)*a->pInstance : 0,
		(uint64_t)(uintptr_t)r->dev.instance);
	r->calls++;
}

/* Compares the VkBool32 members of WANT with HAVE (one struct, nested
 * structs followed); lists what the device lacks, cleared if asked. */
static void compare_features(vkr *r, const vk_struct_info *s, uint8_t *want, const uint8_t *have,
			     char *missing, size_t cap)
{
	for (uint32_t i = 0; i < s->nfields; i++) {
		const vk_field *f = &s->fields[i];
		if (f->ptr || f->count || (f->flags & (VK_F_PNEXT | VK_F_STYPE)))
			continue;
		if (f->base == VK_B_STRUCT) {
			compare_features(r, f->ref, want + f->offset, have + f->offset, missing, cap);
			continue;
		}
		if (f->base != VK_B_BOOL32)
			continue;
		uint32_t w, h;
		memcpy(&w, want + f->offset, 4);
		memcpy(&h, have + f->offset, 4);
		if (w && !h) {
			size_t k = strlen(missing);
			snprintf(missing + k, cap - k, "%s%s.%s", k ? ", " : "", s->sig.name, f->name);
			if (r->opt->remove_unsupported)
				memset(want + f->offset, 0, 4);
		}
	}
}

typedef struct base_out {
	VkStructureType sType;
	struct base_out *pNext;
} base_out;

static void check_features(vkr *r, VkDeviceCreateInfo *ci, char *missing, size_t cap)
{
	if (ci->pEnabledFeatures) {
		VkPhysicalDeviceFeatures have;
		vkGetPhysicalDeviceFeatures(r->dev.physical, &have);
		compare_features(r, vk_struct_lookup("VkPhysicalDeviceFeatures"),
				 (uint8_t *)ci->pEnabledFeatures, (const uint8_t *)&have, missing, cap);
	}
	PFN_vkGetPhysicalDeviceFeatures2 get2 = (PFN_vkGetPhysicalDeviceFeatures2)
		vkGetInstanceProcAddr(r->dev.instance, "vkGetPhysicalDeviceFeatures2");
	if (!get2)
		get2 = (PFN_vkGetPhysicalDeviceFeatures2)
			vkGetInstanceProcAddr(r->dev.instance, "vkGetPhysicalDeviceFeatures2KHR");
	/* the chain: drop links that carry function pointers of the capture */
	base_out **pp = (base_out **)&ci->pNext;
	while (*pp) {
		base_out *b = *pp;
		const vk_struct_info *s = vk_struct_by_stype(b->sType);
		bool drop = false;
		for (uint32_t i = 0; s && !s->blob && i < s->nfields; i++)
			if (s->fields[i].base == VK_B_PTRVAL && !strncmp(s->fields[i].type, "PFN_", 4))
				drop = true;
		if (drop) {
			*pp = b->pNext;
			continue;
		}
		if (s && get2 && strstr(s->sig.name, "Features") &&
		    !strncmp(s->sig.name, "VkPhysicalDevice", 16)) {
			uint8_t *q = trace_xcalloc(1, s->size);
			((base_out *)q)->sType = b->sType;
			VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
			if (b->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2) {
				get2(r->dev.physical, (VkPhysicalDeviceFeatures2 *)q);
			} else {
				f2.pNext = q;
				get2(r->dev.physical, &f2);
			}
			compare_features(r, s, (uint8_t *)b, q, missing, cap);
			free(q);
		}
		pp = &b->pNext;
	}
}

static void create_device(vkr *r, vk_args_vkCreateDevice *a)
{
	if (!r->have_instance)
		fatal(r, "vkCreateDevice before vkCreateInstance");
	if (r->dev.device)
		fatal(r, "a second device: not supported yet");
	VkDeviceCreateInfo *ci = (VkDeviceCreateInfo *)a->pCreateInfo;
	if (!ci)
		fatal(r, "vkCreateDevice without pCreateInfo");
	uint32_t n = 0;
	vkEnumerateDeviceExtensionProperties(r->dev.physical, NULL, &n, NULL);
	VkExtensionProperties *have = trace_xcalloc(n, sizeof(*have));
	vkEnumerateDeviceExtensionProperties(r->dev.physical, NULL, &n, have);
	const char **exts = trace_arena_alloc(&r->arena, sizeof(char *) * (ci->enabledExtensionCount + 2));
	uint32_t nexts = 0;
	char missing[2048] = "";
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++) {
		const char *x = ci->ppEnabledExtensionNames[i];
		if (!x)
			continue;
		if (!in_props(have, n, x)) {
			if (presentation_ext(x))
				continue;
			size_t k = strlen(missing);
			snprintf(missing + k, sizeof(missing) - k, "%s%s", k ? ", " : "", x);
			continue;
		}
		exts[nexts++] = x;
	}
	if (in_props(have, n, "VK_KHR_portability_subset")) {
		bool there = false;
		for (uint32_t i = 0; i < nexts; i++)
			there |= !strcmp(exts[i], "VK_KHR_portability_subset");
		if (!there)
			exts[nexts++] = "VK_KHR_portability_subset";
	}
	free(have);
	if (missing[0]) {
		if (!r->opt->remove_unsupported)
			fatal(r, "%s lacks extensions the trace used: %s (--remove-unsupported goes "
			      "on without them)", r->dev.props.deviceName, missing);
		warn(r, "device extensions left out (--remove-unsupported): %s", missing);
	}
	ci->enabledExtensionCount = nexts;
	ci->ppEnabledExtensionNames = exts;
	ci->enabledLayerCount = 0;
	ci->ppEnabledLayerNames = NULL;
	missing[0] = 0;
	check_features(r, ci, missing, sizeof(missing));
	if (missing[0]) {
		if (!r->opt->remove_unsupported)
			fatal(r, "%s lacks features the trace enabled: %s (--remove-unsupported goes "
			      "on without them)", r->dev.props.deviceName, missing);
		warn(r, "features left out (--remove-unsupported): %s", missing);
	}
	/* queue families: as captured where the device has them */
	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(r->dev.physical, &nq, NULL);
	VkQueueFamilyProperties *qf = trace_xcalloc(nq, sizeof(*qf));
	vkGetPhysicalDeviceQueueFamilyProperties(r->dev.physical, &nq, qf);
	uint32_t family = UINT32_MAX;
	for (uint32_t i = 0; i < ci->queueCreateInfoCount; i++) {
		VkDeviceQueueCreateInfo *q = (VkDeviceQueueCreateInfo *)&ci->pQueueCreateInfos[i];
		if (q->queueFamilyIndex >= nq)
			fatal(r, "queue family %u: %s has %u", q->queueFamilyIndex,
			      r->dev.props.deviceName, nq);
		if (q->queueCount > qf[q->queueFamilyIndex].queueCount) {
			warn(r, "queue family %u: %u queues asked, %u there", q->queueFamilyIndex,
			     q->queueCount, qf[q->queueFamilyIndex].queueCount);
			q->queueCount = qf[q->queueFamilyIndex].queueCount;
		}
		if (family == UINT32_MAX || ((qf[q->queueFamilyIndex].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
					     !(qf[family].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
			family = q->queueFamilyIndex;
	}
	free(qf);
	if (family == UINT32_MAX)
		fatal(r, "vkCreateDevice with no queue");
	VkDevice dev;
	VkResult res = vkCreateDevice(r->dev.physical, ci, NULL, &dev);
	r->calls++;
	if (res != VK_SUCCESS)
		fatal(r, "vkCreateDevice on %s failed: %s (%d)", r->dev.props.deviceName,
		      result_name(res), res);
	VkQueue queue;
	vkGetDeviceQueue(dev, family, 0, &queue);
	vkd_attach_device(&r->dev, dev, family, queue);
	reset_fns(r);
	if (r->opt->stats) {
		r->nfamilies = nq;
		r->timers = trace_xcalloc(nq, sizeof(*r->timers));
	}
	map_put(r, r->h_device, a->pDevice ? (uint64_t)(uintptr_t)*a->pDevice : 0,
		(uint64_t)(uintptr_t)dev);
	VkCommandPoolCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = family,
	};
	VkCommandBufferAllocateInfo cai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	if (vkCreateCommandPool(dev, &pci, NULL, &r->pool) != VK_SUCCESS ||
	    (cai.commandPool = r->pool, vkAllocateCommandBuffers(dev, &cai, &r->cb)) != VK_SUCCESS ||
	    vkCreateFence(dev, &fci, NULL, &r->fence) != VK_SUCCESS)
		fatal(r, "cannot make the replay's own command buffer");
}

static void release_obj(vkr *r, obj *o);
static void destroy_swapchain(vkr *r, swapchain *s);
static void free_templates(vkr *r);
static void gpu_poll(vkr *r, bool wait);
static void gpu_timers_free(vkr *r);

/* The vkDestroyX(device, handle, pAllocator) of handle type H, or NULL. */
static const vk_command_info *destroyer(vkr *r, const vk_handle_info *h)
{
	for (uint32_t i = 0; i < vk_ncommands; i++) {
		const vk_command_info *c = vk_commands[i];
		if (c->action == VK_ACTION_DESTROY && c->object == h && c->nparams == 3 &&
		    !c->alias_of && !strcmp(c->params[0].type, "VkDevice") &&
		    c->params[1].base == VK_B_HANDLE && !c->params[1].ptr &&
		    c->params[2].ref == r->s_allocator)
			return c;
	}
	return NULL;
}

/*
 * Frees what the replay made for the device, and what the trace left
 * alive (a stream cut by --frames or trace-trim): before vkDestroyDevice.
 * Command buffers and descriptor sets go with their pools.
 */
static void device_teardown(vkr *r)
{
	if (!r->dev.device)
		return;
	vkDeviceWaitIdle(r->dev.device);
	gpu_poll(r, true);
	gpu_timers_free(r);
	tmap_free(&r->queues);
	for (size_t i = 0; i < r->swapchains.cap; i++)
		if (tmap_used(&r->swapchains, i)) {
			destroy_swapchain(r, (swapchain *)(uintptr_t)r->swapchains.vals[i]);
		}
	tmap_free(&r->swapchains);
	typedef void (VKAPI_PTR *destroy_fn)(VkDevice, uint64_t, const VkAllocationCallbacks *);
	const vk_handle_info *last = NULL;
	destroy_fn fn = NULL;
	for (size_t i = 0; i < r->handles.cap; i++) {
		uint64_t *live = &r->handles.vals[i];
		if (!tmap_used(&r->handles, i) || !*live)
			continue;
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)r->handles.kinds[i];
		if (h->dispatchable || h == r->h_swapchain || h == r->h_surface)
			continue;
		if (h != last) {
			const vk_command_info *c = destroyer(r, h);
			fn = c ? (destroy_fn)vkGetDeviceProcAddr(r->dev.device, c->sig.name) : NULL;
			last = h;
		}
		if (fn) {
			fn(r->dev.device, *live, NULL);
			*live = 0;
		}
	}
	for (size_t i = 0; i < r->objects.cap; i++)
		if (tmap_used(&r->objects, i)) {
			obj *o = (obj *)(uintptr_t)r->objects.vals[i];
			release_obj(r, o);
			free(o);
		}
	tmap_free(&r->objects);
	for (size_t i = 0; i < r->mems.cap; i++)
		if (tmap_used(&r->mems, i))
			free((memobj *)(uintptr_t)r->mems.vals[i]);
	tmap_free(&r->mems);
	free_templates(r);
	if (r->fence)
		vkDestroyFence(r->dev.device, r->fence, NULL);
	if (r->pool)
		vkDestroyCommandPool(r->dev.device, r->pool, NULL);
	r->fence = VK_NULL_HANDLE;
	r->pool = VK_NULL_HANDLE;
	r->cb = VK_NULL_HANDLE;
}

/* ------------------------------------------------------------------ */
/* Memory: object-based. */

static void parse_header_memory(vkr *r, const trace_header *h)
{
	const char *types = trace_header_get(h, "memory.types");
	if (!types)
		return;
	memset(&r->cap_mem, 0, sizeof(r->cap_mem));
	const char *p = types;
	while (*p) {
		unsigned idx, heap, flags;
		int used = 0;
		if (sscanf(p, "%u: heap %u flags %x%n", &idx, &heap, &flags, &used) != 3 || !used)
			break;
		if (idx < VK_MAX_MEMORY_TYPES) {
			r->cap_mem.memoryTypes[idx].heapIndex = heap;
			r->cap_mem.memoryTypes[idx].propertyFlags = flags;
			if (idx + 1 > r->cap_mem.memoryTypeCount)
				r->cap_mem.memoryTypeCount = idx + 1;
		}
		p += used;
		while (*p == ';' || *p == ' ')
			p++;
	}
	r->have_cap_mem = r->cap_mem.memoryTypeCount > 0;
}

static obj *obj_get(vkr *r, uint64_t cap)
{
	uint64_t *e = tmap_at(&r->objects, cap, TAG_OBJ);
	return e ? (obj *)(uintptr_t)*e : NULL;
}

static memobj *mem_get(vkr *r, uint64_t cap)
{
	uint64_t *e = tmap_at(&r->mems, cap, TAG_MEM);
	return e ? (memobj *)(uintptr_t)*e : NULL;
}

static obj *new_obj(vkr *r, uint64_t cap, uint64_t live, bool image, bool linear, VkDeviceSize size)
{
	obj *o = trace_xcalloc(1, sizeof(*o));
	o->cap = cap;
	o->live = live;
	o->image = image;
	o->linear = linear;
	o->create_size = size;
	obj *old = obj_get(r, cap);
	if (old) {
		release_obj(r, old);
		free(old);
	}
	tmap_set(&r->objects, cap, TAG_OBJ, (uint64_t)(uintptr_t)o);
	return o;
}

static void unlink_obj(obj *o)
{
	if (!o->mem)
		return;
	obj **pp = &o->mem->objs;
	while (*pp && *pp != o)
		pp = &(*pp)->next_in_mem;
	if (*pp)
		*pp = o->next_in_mem;
	o->mem = NULL;
}

static void group_free(vkr *r, group *g)
{
	if (g->address)
		vkFreeMemory(r->dev.device, g->alloc.memory, NULL);
	else
		vkd_free(&r->dev, &g->alloc);
	free(g);
}

/*
 * Memory for a buffer made with VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT:
 * such a buffer must be bound to memory allocated with
 * VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT (zink makes every buffer so), which
 * vkdevice.c's pools do not ask for: a VkDeviceMemory of its own.
 */
static VkResult alloc_address(vkr *r, uint32_t type, VkDeviceSize size, group *g)
{
	VkMemoryAllocateFlagsInfo fi = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
		.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
	};
	VkMemoryAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.pNext = &fi,
		.allocationSize = size,
		.memoryTypeIndex = type,
	};
	VkResult res = vkAllocateMemory(r->dev.device, &ai, NULL, &g->alloc.memory);
	if (res != VK_SUCCESS)
		return res;
	g->address = true;
	g->alloc.offset = 0;
	g->alloc.size = size;
	g->alloc.type = type;
	return VK_SUCCESS;
}

static void *group_map(vkr *r, group *g, VkResult *res)
{
	if (!g->address)
		return vkd_map(&r->dev, &g->alloc, res);
	void *p = NULL;
	*res = vkMapMemory(r->dev.device, g->alloc.memory, 0, VK_WHOLE_SIZE, 0, &p);
	return *res == VK_SUCCESS ? p : NULL;
}

static void group_flush(vkr *r, group *g, VkDeviceSize off, VkDeviceSize len)
{
	if (!g->address) {
		vkd_flush(&r->dev, &g->alloc, off, len);
		return;
	}
	VkMappedMemoryRange mr = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
				  .memory = g->alloc.memory, .size = VK_WHOLE_SIZE};
	vkFlushMappedMemoryRanges(r->dev.device, 1, &mr);
}

static void release_obj(vkr *r, obj *o)
{
	unlink_obj(o);
	group *g = o->group;
	o->group = NULL;
	if (g && !--g->refs)
		group_free(r, g);
}

static void alloc_memory(vkr *r, vk_args_vkAllocateMemory *a)
{
	if (!a->pMemory || !*a->pMemory || !a->pAllocateInfo)
		return;  /* failed at capture */
	memobj *m = trace_xcalloc(1, sizeof(*m));
	m->cap = (uint64_t)(uintptr_t)*a->pMemory;
	m->size = a->pAllocateInfo->allocationSize;
	m->cap_type = a->pAllocateInfo->memoryTypeIndex;
	memobj *old = mem_get(r, m->cap);
	if (old) {
		while (old->objs)
			unlink_obj(old->objs);
		free(old);
	}
	tmap_set(&r->mems, m->cap, TAG_MEM, (uint64_t)(uintptr_t)m);
}

static void free_memory(vkr *r, uint64_t cap)
{
	uint64_t v;
	if (!cap || !tmap_del(&r->mems, cap, TAG_MEM, &v))
		return;
	memobj *m = (memobj *)(uintptr_t)v;
	while (m->objs)
		unlink_obj(m->objs);
	free(m);
}

static VkMemoryPropertyFlags cap_flags(vkr *r, const memobj *m)
{
	if (r->have_cap_mem && m->cap_type < r->cap_mem.memoryTypeCount)
		return r->cap_mem.memoryTypes[m->cap_type].propertyFlags;
	return VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
}

/* Places o (bound at capture to cap_mem at offset): in the allocation of
 * an object it aliased at capture where it fits there, else in its own. */
static void bind_obj(vkr *r, uint64_t cap_obj, uint64_t cap_mem, VkDeviceSize offset,
		     bool image, VkResult cap_res)
{
	obj *o = obj_get(r, cap_obj);
	memobj *m = mem_get(r, cap_mem);
	if (!o) {
		warn(r, "%s 0x%llx unknown: not bound", image ? "VkImage" : "VkBuffer",
		     (unsigned long long)cap_obj);
		return;
	}
	if (!m) {
		warn(r, "VkDeviceMemory 0x%llx unknown: %s not bound", (unsigned long long)cap_mem,
		     image ? "image" : "buffer");
		return;
	}
	if (is_failure(cap_res))
		return;
	if (o->group) {
		warn(r, "%s bound twice", image ? "image" : "buffer");
		return;
	}
	VkMemoryRequirements req;
	if (image)
		vkGetImageMemoryRequirements(r->dev.device, (VkImage)(uintptr_t)o->live, &req);
	else
		vkGetBufferMemoryRequirements(r->dev.device, (VkBuffer)(uintptr_t)o->live, &req);
	VkDeviceSize size = req.size;
	if (image && o->cap_req > size)
		size = o->cap_req;  /* images: at least as large as at capture */
	o->cap_extent = o->cap_req ? o->cap_req : image ? size : o->create_size;
	o->mem_off = offset;
	/* aliasing at capture: an overlapping object of the same memory */
	group *g = NULL;
	VkDeviceSize rel = 0;
	for (obj *p = m->objs; p; p = p->next_in_mem) {
		if (!p->group || offset >= p->mem_off + p->cap_extent ||
		    p->mem_off >= offset + o->cap_extent)
			continue;
		group *pg = p->group;
		if (offset >= pg->cap_base) {
			VkDeviceSize rr = offset - pg->cap_base;
			if ((pg->alloc.offset + rr) % (req.alignment ? req.alignment : 1) == 0 &&
			    rr + size <= pg->alloc.size && (req.memoryTypeBits & (1u << pg->alloc.type)) &&
			    (pg->address || !o->address)) {
				g = pg;
				rel = rr;
				break;
			}
		}
		warn(r, "%s 0x%llx aliases %s 0x%llx at capture, but does not fit its "
		     "allocation on this device: placed apart", image ? "VkImage" : "VkBuffer",
		     (unsigned long long)cap_obj, p->image ? "VkImage" : "VkBuffer",
		     (unsigned long long)p->cap);
		break;
	}
	if (!g) {
		VkMemoryPropertyFlags cf = cap_flags(r, m);
		bool host = (cf & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (!image || o->linear);
		VkMemoryPropertyFlags required = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT : 0;
		VkMemoryPropertyFlags preferred = (cf & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) |
			(host ? VK_MEMORY_PROPERTY_HOST_COHERENT_BIT : 0);
		uint32_t type;
		if (vkd_find_memory_type(&r->dev, req.memoryTypeBits, required, preferred, 0, 0,
					 &type) < 0)
			fatal(r, "no memory type of %s fits a %s (bits 0x%x%s)",
			      r->dev.props.deviceName, image ? "image" : "buffer", req.memoryTypeBits,
			      host ? ", host-visible" : "");
		g = trace_xcalloc(1, sizeof(*g));
		vkd_request rq = {
			.size = size,
			.alignment = req.alignment,
			.kind = !image || o->linear ? VKD_KIND_LINEAR : VKD_KIND_OPTIMAL,
		};
		VkResult res = o->address ? alloc_address(r, type, size, g)
					  : vkd_alloc(&r->dev, NULL, type, &rq, &g->alloc);
		if (res != VK_SUCCESS)
			fatal(r, "cannot allocate %llu bytes of memory type %u: %s",
			      (unsigned long long)size, type, result_name(res));
		g->cap_base = offset;
		VkMemoryPropertyFlags tf = r->dev.memory.memoryTypes[type].propertyFlags;
		if (tf & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
			g->mapped = group_map(r, g, &res);
			g->coherent = (tf & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
			/* bytes equal to what the capture mapped are not in the
			 * trace: fresh memory reads as zeros there */
			if (g->mapped)
				memset(g->mapped, 0, g->alloc.size);
		}
	}
	VkResult res = image
		? vkBindImageMemory(r->dev.device, (VkImage)(uintptr_t)o->live, g->alloc.memory,
				    g->alloc.offset + rel)
		: vkBindBufferMemory(r->dev.device, (VkBuffer)(uintptr_t)o->live, g->alloc.memory,
				     g->alloc.offset + rel);
	r->calls++;
	if (res != VK_SUCCESS) {
		check_result(r, NULL, true, cap_res, res);
		if (!g->refs)
			group_free(r, g);
		return;
	}
	g->refs++;
	o->group = g;
	o->rel = rel;
	o->mem = m;
	o->next_in_mem = m->objs;
	m->objs = o;
}

static VkResult cap_result(const trace_call *c)
{
	if (!c->ret)
		return VK_SUCCESS;
	if (c->ret->kind == TRACE_ENUM)
		return (VkResult)c->ret->en.value;
	if (c->ret->kind == TRACE_SINT)
		return (VkResult)c->ret->i;
	if (c->ret->kind == TRACE_UINT)
		return (VkResult)(int32_t)c->ret->u;
	return VK_SUCCESS;
}

/* The bytes of an update go into the object's mapped memory, those past
 * its allocation's end cut. */
typedef struct update_to {
	uint8_t *at;      /* the object's first byte, mapped */
	uint64_t room;    /* bytes from there to the allocation's end */
} update_to;

static void update_run(void *ctx, uint64_t off, const uint8_t *data, uint64_t len)
{
	const update_to *t = ctx;
	if (off < t->room)
		memcpy(t->at + off, data, len < t->room - off ? len : t->room - off);
}

static void update(vkr *r, const trace_call *c)
{
	vk_update u;
	trace_error_clear(&r->err);
	if (vk_update_read(c, &u, &r->err) < 0)
		fatal(r, "%s", r->err.msg);
	obj *o = obj_get(r, u.object);
	if (!o) {
		warn(r, "%s of 0x%llx, no buffer or image: left out", c->sig->name,
		     (unsigned long long)u.object);
		return;
	}
	if (!o->group) {
		warn(r, "%s of an object with no memory: left out", c->sig->name);
		return;
	}
	group *g = o->group;
	if (!g->mapped) {
		warn(r, "%s of an object in memory the host cannot see: left out", c->sig->name);
		return;
	}
	uint64_t room = g->alloc.size > o->rel ? g->alloc.size - o->rel : 0;
	if (u.end > room) {
		warn(r, "%s past the end of its object (bytes %llu to %llu): cut", c->sig->name,
		     (unsigned long long)u.offset, (unsigned long long)u.end);
		if (u.offset >= room)
			return;
	}
	update_to t = { g->mapped + o->rel, room };
	vk_update_runs(&u, update_run, &t);
	if (!g->coherent)
		group_flush(r, g, o->rel + u.offset, (u.end < room ? u.end : room) - u.offset);
}

/* ------------------------------------------------------------------ */
/* Swapchains: offscreen images. */

static swapchain *swapchain_get(vkr *r, uint64_t cap)
{
	uint64_t *e = tmap_at(&r->swapchains, cap, TAG_SWAPCHAIN);
	return e ? (swapchain *)(uintptr_t)*e : NULL;
}

static void create_swapchain(vkr *r, vk_args_vkCreateSwapchainKHR *a)
{
	const VkSwapchainCreateInfoKHR *ci = a->pCreateInfo;
	if (!ci || !a->pSwapchain || !*a->pSwapchain)
		return;
	swapchain *s = trace_xcalloc(1, sizeof(*s));
	s->cap = (uint64_t)(uintptr_t)*a->pSwapchain;
	s->format = ci->imageFormat;
	s->extent = ci->imageExtent;
	s->layers = ci->imageArrayLayers ? ci->imageArrayLayers : 1;
	s->usage = ci->imageUsage | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
	s->sharing = VK_SHARING_MODE_EXCLUSIVE;
	s->alpha = ci->compositeAlpha;
	tmap_set(&r->swapchains, s->cap, TAG_SWAPCHAIN, (uint64_t)(uintptr_t)s);
	map_put(r, r->h_swapchain, s->cap, s->cap);
	r->calls++;
}

static void destroy_swapchain(vkr *r, swapchain *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		vkDestroyImage(r->dev.device, s->img[i], NULL);
		vkd_free(&r->dev, &s->mem[i]);
		vkDestroySemaphore(r->dev.device, s->presented[i], NULL);
		map_del(r, r->h_image, s->cap_img[i]);
	}
	map_del(r, r->h_swapchain, s->cap);
	free(s->img);
	free(s->cap_img);
	free(s->mem);
	free(s->presented);
	free(s->pending);
	free(s);
}

static void swapchain_images(vkr *r, vk_args_vkGetSwapchainImagesKHR *a)
{
	swapchain *s = swapchain_get(r, (uint64_t)(uintptr_t)a->swapchain);
	if (!s)
		fatal(r, "VkSwapchainKHR 0x%llx unknown", (unsigned long long)(uintptr_t)a->swapchain);
	if (!a->pSwapchainImages || !a->pSwapchainImageCount)
		return;
	uint32_t n = *a->pSwapchainImageCount;
	if (!s->n) {
		s->n = n;
		s->img = trace_xcalloc(n, sizeof(*s->img));
		s->cap_img = trace_xcalloc(n, sizeof(*s->cap_img));
		s->mem = trace_xcalloc(n, sizeof(*s->mem));
		s->presented = trace_xcalloc(n, sizeof(*s->presented));
		s->pending = trace_xcalloc(n, sizeof(*s->pending));
		for (uint32_t i = 0; i < n; i++) {
			VkImageCreateInfo ici = {
				.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
				.imageType = VK_IMAGE_TYPE_2D,
				.format = s->format,
				.extent = {s->extent.width, s->extent.height, 1},
				.mipLevels = 1,
				.arrayLayers = s->layers,
				.samples = VK_SAMPLE_COUNT_1_BIT,
				.tiling = VK_IMAGE_TILING_OPTIMAL,
				.usage = s->usage,
				.sharingMode = s->sharing,
				.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
			};
			VkResult res = vkCreateImage(r->dev.device, &ici, NULL, &s->img[i]);
			if (res != VK_SUCCESS)
				fatal(r, "cannot make an offscreen image of %ux%u for the swapchain: %s",
				      s->extent.width, s->extent.height, result_name(res));
			VkMemoryRequirements req;
			vkGetImageMemoryRequirements(r->dev.device, s->img[i], &req);
			uint32_t type;
			if (vkd_find_memory_type(&r->dev, req.memoryTypeBits, 0,
						 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, 0, &type) < 0)
				fatal(r, "no memory type for the swapchain's images");
			vkd_request rq = {.size = req.size, .alignment = req.alignment,
					  .kind = VKD_KIND_OPTIMAL, .dedicated = true,
					  .dedicated_image = s->img[i]};
			if ((res = vkd_alloc(&r->dev, NULL, type, &rq, &s->mem[i])) != VK_SUCCESS ||
			    (res = vkBindImageMemory(r->dev.device, s->img[i], s->mem[i].memory,
						     s->mem[i].offset)) != VK_SUCCESS)
				fatal(r, "cannot place the swapchain's images: %s", result_name(res));
			VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
			if (vkCreateSemaphore(r->dev.device, &sci, NULL, &s->presented[i]) != VK_SUCCESS)
				fatal(r, "cannot make a semaphore");
		}
	}
	for (uint32_t i = 0; i < n && i < s->n; i++) {
		s->cap_img[i] = (uint64_t)(uintptr_t)a->pSwapchainImages[i];
		map_put(r, r->h_image, s->cap_img[i], (uint64_t)(uintptr_t)s->img[i]);
	}
	if (n != s->n)
		warn(r, "vkGetSwapchainImagesKHR: %u images, the swapchain has %u", n, s->n);
}

/* Signals what an acquire of image INDEX signals, after the present that
 * showed it last is done with it. */
static void acquire(vkr *r, uint64_t cap_swapchain, uint32_t index, uint64_t cap_sem,
		    uint64_t cap_fence, VkResult cap_res)
{
	if (is_failure(cap_res) || cap_res == VK_TIMEOUT || cap_res == VK_NOT_READY)
		return;
	swapchain *s = swapchain_get(r, cap_swapchain);
	if (!s)
		fatal(r, "VkSwapchainKHR 0x%llx unknown", (unsigned long long)cap_swapchain);
	if (index >= s->n)
		fatal(r, "image index %u of a swapchain of %u images", index, s->n);
	uint64_t sem = 0, fence = 0;
	if (!map_get(r, r->h_semaphore, cap_sem, &sem) || !map_get(r, r->h_fence, cap_fence, &fence))
		fatal(r, "the acquire's semaphore or fence is unknown");
	VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	VkSemaphore ssem = (VkSemaphore)(uintptr_t)sem;
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.waitSemaphoreCount = s->pending[index] ? 1 : 0,
		.pWaitSemaphores = &s->presented[index],
		.pWaitDstStageMask = &stage,
		.signalSemaphoreCount = sem ? 1 : 0,
		.pSignalSemaphores = &ssem,
	};
	s->pending[index] = false;
	VkResult res = vkQueueSubmit(r->dev.queue, 1, &si, (VkFence)(uintptr_t)fence);
	r->calls++;
	if (res != VK_SUCCESS)
		fatal(r, "the acquire's submit failed: %s", result_name(res));
}

static void screenshot(vkr *r, swapchain *s, uint32_t index, int64_t frame);

static void present(vkr *r, vk_args_vkQueuePresentKHR *a)
{
	const VkPresentInfoKHR *pi = a->pPresentInfo;
	if (!pi)
		fatal(r, "vkQueuePresentKHR without pPresentInfo");
	uint64_t queue = need(r, r->h_queue, (uint64_t)(uintptr_t)a->queue);
	VkSemaphore *waits = trace_arena_alloc(&r->arena, sizeof(VkSemaphore) * (pi->waitSemaphoreCount + 1));
	VkPipelineStageFlags *stages = trace_arena_alloc(&r->arena, sizeof(*stages) * (pi->waitSemaphoreCount + 1));
	for (uint32_t i = 0; i < pi->waitSemaphoreCount; i++) {
		waits[i] = (VkSemaphore)(uintptr_t)need(r, r->h_semaphore,
							(uint64_t)(uintptr_t)pi->pWaitSemaphores[i]);
		stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	}
	VkSemaphore *signals = trace_arena_alloc(&r->arena, sizeof(VkSemaphore) * (pi->swapchainCount + 1));
	uint32_t nsignals = 0;
	for (uint32_t i = 0; i < pi->swapchainCount; i++) {
		swapchain *s = swapchain_get(r, (uint64_t)(uintptr_t)pi->pSwapchains[i]);
		uint32_t idx = pi->pImageIndices ? pi->pImageIndices[i] : 0;
		if (!s || idx >= s->n)
			fatal(r, "present of an unknown swapchain or image");
		if (!s->pending[idx]) {
			signals[nsignals++] = s->presented[idx];
			s->pending[idx] = true;
		}
	}
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.waitSemaphoreCount = pi->waitSemaphoreCount,
		.pWaitSemaphores = waits,
		.pWaitDstStageMask = stages,
		.signalSemaphoreCount = nsignals,
		.pSignalSemaphores = signals,
	};
	VkResult res = vkQueueSubmit((VkQueue)(uintptr_t)queue, 1, &si, VK_NULL_HANDLE);
	r->calls++;
	if (res != VK_SUCCESS)
		fatal(r, "the present's submit failed: %s", result_name(res));
	if (pi->pResults)
		for (uint32_t i = 0; i < pi->swapchainCount; i++)
			pi->pResults[i] = VK_SUCCESS;
	/* the screenshot of this frame: the first swapchain's image */
	const vkr_options *o = r->opt;
	if (r->next_shot < o->nscreenshots && o->screenshots[r->next_shot] == (uint64_t)r->frame &&
	    pi->swapchainCount) {
		swapchain *s = swapchain_get(r, (uint64_t)(uintptr_t)pi->pSwapchains[0]);
		screenshot(r, s, pi->pImageIndices ? pi->pImageIndices[0] : 0, r->frame);
	}
}

static void screenshot(vkr *r, swapchain *s, uint32_t index, int64_t frame)
{
	const vkr_options *o = r->opt;
	while (r->next_shot < o->nscreenshots && o->screenshots[r->next_shot] <= (uint64_t)frame)
		r->next_shot++;
	bool bgra;
	switch (s->format) {
	case VK_FORMAT_B8G8R8A8_UNORM: case VK_FORMAT_B8G8R8A8_SRGB: bgra = true; break;
	case VK_FORMAT_R8G8B8A8_UNORM: case VK_FORMAT_R8G8B8A8_SRGB: bgra = false; break;
	default:
		warn(r, "frame %lld: screenshot of format %d not supported yet", (long long)frame,
		     s->format);
		return;
	}
	uint32_t w = s->extent.width, h = s->extent.height;
	VkDeviceSize size = (VkDeviceSize)w * h * 4;
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
	};
	VkBuffer buf;
	VkDevice dev = r->dev.device;
	if (vkCreateBuffer(dev, &bci, NULL, &buf) != VK_SUCCESS)
		fatal(r, "screenshot: cannot make a buffer");
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(dev, buf, &req);
	uint32_t type;
	if (vkd_find_memory_type(&r->dev, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
				 VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0, 0, &type) < 0)
		fatal(r, "screenshot: no host-visible memory");
	vkd_request rq = {.size = req.size, .alignment = req.alignment, .kind = VKD_KIND_LINEAR,
			  .dedicated = true, .dedicated_buffer = buf};
	vkd_allocation mem;
	VkResult res;
	if ((res = vkd_alloc(&r->dev, NULL, type, &rq, &mem)) != VK_SUCCESS ||
	    (res = vkBindBufferMemory(dev, buf, mem.memory, mem.offset)) != VK_SUCCESS)
		fatal(r, "screenshot: %s", result_name(res));
	vkDeviceWaitIdle(dev);
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	vkResetCommandBuffer(r->cb, 0);
	vkBeginCommandBuffer(r->cb, &bi);
	VkImageMemoryBarrier b = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
		.oldLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
		.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = s->img[index],
		.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1},
	};
	vkCmdPipelineBarrier(r->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
			     VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1, &b);
	VkBufferImageCopy region = {
		.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
		.imageExtent = {w, h, 1},
	};
	vkCmdCopyImageToBuffer(r->cb, s->img[index], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf, 1,
			       &region);
	b.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
	b.dstAccessMask = 0;
	b.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
	b.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
	vkCmdPipelineBarrier(r->cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
			     VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, NULL, 0, NULL, 1, &b);
	vkEndCommandBuffer(r->cb);
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
			   .pCommandBuffers = &r->cb};
	vkResetFences(dev, 1, &r->fence);
	if ((res = vkQueueSubmit(r->dev.queue, 1, &si, r->fence)) != VK_SUCCESS ||
	    (res = vkWaitForFences(dev, 1, &r->fence, VK_TRUE, UINT64_MAX)) != VK_SUCCESS)
		fatal(r, "screenshot: %s", result_name(res));
	uint8_t *p = vkd_map(&r->dev, &mem, &res);
	if (!p)
		fatal(r, "screenshot: cannot map: %s", result_name(res));
	vkd_invalidate(&r->dev, &mem, 0, VK_WHOLE_SIZE);
	uint8_t *rgba = trace_xcalloc(size, 1);
	bool opaque = s->alpha == VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
	for (VkDeviceSize i = 0; i < size; i += 4) {
		rgba[i + 0] = p[i + (bgra ? 2 : 0)];
		rgba[i + 1] = p[i + 1];
		rgba[i + 2] = p[i + (bgra ? 0 : 2)];
		rgba[i + 3] = opaque ? 255 : p[i + 3];
	}
	vkd_unmap(&r->dev, &mem);
	vkd_free(&r->dev, &mem);
	vkDestroyBuffer(dev, buf, NULL);
	char path[4096];
	if (o->screenshot_out)
		snprintf(path, sizeof(path), "%s", o->screenshot_out);
	else
		snprintf(path, sizeof(path), "%s/frame-%lld.png", o->screenshot_dir ? o->screenshot_dir : ".",
			 (long long)frame);
	/* as every output: whole or absent, and a FIFO or /dev/null as it is */
	char *tmp;
	trace_error err;
	FILE *f = trace_output_open(path, &tmp, &err);
	if (!f)
		fatal(r, "%s: %s", path, err.msg);
	bool ok = png_write_rgba_file(f, rgba, w, h) == 0;
	if (!ok)
		trace_error_errno(&err, path, "write error");
	if (trace_output_close(f, path, tmp, ok, &err) != 0)
		fatal(r, "%s: %s", path, err.msg);
	free(rgba);
	if (!o->quiet && o->stats)
		fprintf(stderr, "%s: frame %lld: %s\n", trace_cli_self.prog, (long long)frame, path);
}

/* ------------------------------------------------------------------ */
/* GPU time (--stats): see gpu_timer. */

/* Spans of one frame on one queue family, read in submit order, count
 * once where they overlap: the time the family was busy with the frame. */
static void gpu_account(vkr *r, gpu_timer *t, size_t frame, uint64_t start, uint64_t end)
{
	uint64_t m = t->mask, len = (end - start) & m;
	if (t->busy && t->busy_frame == frame) {
		uint64_t over = (t->busy_end - start) & m;  /* the last span past this start */
		if (over <= m / 2)
			len = over >= len ? 0 : len - over;
		if (((end - t->busy_end) & m) > m / 2)
			end = t->busy_end;  /* this one ended first */
	}
	t->busy = true;
	t->busy_frame = frame;
	t->busy_end = end;
	if (frame >= r->cap_frame_gpu) {
		size_t cap = r->cap_frame_gpu ? r->cap_frame_gpu : 256;
		while (cap <= frame)
			cap *= 2;
		r->frame_gpu = trace_xrealloc(r->frame_gpu, cap * sizeof(double));
		memset(r->frame_gpu + r->cap_frame_gpu, 0, (cap - r->cap_frame_gpu) * sizeof(double));
		r->cap_frame_gpu = cap;
	}
	r->frame_gpu[frame] += (double)len * t->period * 1e-9;
}

/* Reads the oldest slot in flight; false where its batch is not done
 * and WAIT is not set. */
static bool gpu_read(vkr *r, gpu_timer *t, bool wait)
{
	uint64_t ts[2];
	uint32_t s = t->head;
	VkResult res = vkGetQueryPoolResults(r->dev.device, t->queries, 2 * s, 2, sizeof(ts), ts,
					     sizeof(ts[0]), VK_QUERY_RESULT_64_BIT |
					     (wait ? VK_QUERY_RESULT_WAIT_BIT : 0));
	if (res == VK_NOT_READY)
		return false;
	if (res != VK_SUCCESS)
		fatal(r, "GPU time: vkGetQueryPoolResults failed: %s", result_name(res));
	gpu_account(r, t, t->frame[s], ts[0], ts[1]);
	t->head = (s + 1) % GPU_SLOTS;
	t->n--;
	return true;
}

/* Reads what is done (everything, waiting, with WAIT). */
static void gpu_poll(vkr *r, bool wait)
{
	for (uint32_t f = 0; f < r->nfamilies; f++) {
		gpu_timer *t = r->timers[f];
		while (t && t->n && gpu_read(r, t, wait))
			;
	}
}

/* The timer of FAMILY, made at its first batch: the query pool and the
 * command buffers of every slot, recorded once (they are submitted again
 * only once their slot is read, so the batch that used them is done). */
static gpu_timer *gpu_timer_of(vkr *r, uint32_t family)
{
	if (family >= r->nfamilies)
		return NULL;
	if (r->timers[family])
		return r->timers[family];
	gpu_timer *t = trace_xcalloc(1, sizeof(*t));
	r->timers[family] = t;
	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(r->dev.physical, &nq, NULL);
	VkQueueFamilyProperties *qf = trace_xcalloc(nq, sizeof(*qf));
	vkGetPhysicalDeviceQueueFamilyProperties(r->dev.physical, &nq, qf);
	uint32_t bits = family < nq ? qf[family].timestampValidBits : 0;
	free(qf);
	if (!bits || r->dev.props.limits.timestampPeriod <= 0)
		return t;
	t->mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
	t->period = r->dev.props.limits.timestampPeriod;
	VkDevice dev = r->dev.device;
	VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .queueFamilyIndex = family};
	VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
				     .queryType = VK_QUERY_TYPE_TIMESTAMP,
				     .queryCount = 2 * GPU_SLOTS};
	VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
					   .commandBufferCount = 2 * GPU_SLOTS};
	if (vkCreateCommandPool(dev, &pci, NULL, &t->pool) != VK_SUCCESS ||
	    vkCreateQueryPool(dev, &qci, NULL, &t->queries) != VK_SUCCESS ||
	    (cai.commandPool = t->pool, vkAllocateCommandBuffers(dev, &cai, t->cb)) != VK_SUCCESS)
		fatal(r, "GPU time: cannot make the query pool and command buffers");
	/* simultaneous use: the end of a batch's work is seen (its timestamp)
	 * before the batch itself is known done */
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
	for (uint32_t i = 0; i < GPU_SLOTS; i++) {
		vkBeginCommandBuffer(t->cb[2 * i], &bi);
		vkCmdResetQueryPool(t->cb[2 * i], t->queries, 2 * i, 2);
		vkCmdWriteTimestamp(t->cb[2 * i], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, t->queries, 2 * i);
		vkEndCommandBuffer(t->cb[2 * i]);
		vkBeginCommandBuffer(t->cb[2 * i + 1], &bi);
		vkCmdWriteTimestamp(t->cb[2 * i + 1], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t->queries,
				    2 * i + 1);
		vkEndCommandBuffer(t->cb[2 * i + 1]);
	}
	t->usable = true;
	return t;
}

static void gpu_timers_free(vkr *r)
{
	for (uint32_t f = 0; f < r->nfamilies; f++) {
		gpu_timer *t = r->timers[f];
		if (t && t->usable) {
			vkDestroyQueryPool(r->dev.device, t->queries, NULL);
			vkDestroyCommandPool(r->dev.device, t->pool, NULL);
		}
		free(t);
	}
	free(r->timers);
	r->timers = NULL;
	r->nfamilies = 0;
}

/* The timer for a submit to QUEUE (live) now, or NULL: --stats, a frame
 * it counts, a queue family with timestamps. */
static gpu_timer *gpu_timer_for(vkr *r, VkQueue queue)
{
	if (!r->opt->stats || r->opt->no_gpu_time || r->frame < r->opt->first_frame ||
	    !r->nfamilies)
		return NULL;
	uint64_t *h = tmap_at(&r->queues, (uint64_t)(uintptr_t)queue, TAG_QUEUE);
	gpu_timer *t = h ? gpu_timer_of(r, (uint32_t)*h) : NULL;
	if (!t || !t->usable)
		r->gpu_unmeasured = true;
	return t && t->usable ? t : NULL;
}

/* A slot for the next batch, after the K taken for this submit: the
 * oldest slot is waited for where the ring is full; UINT32_MAX where the
 * submit took every slot. */
static uint32_t gpu_slot(vkr *r, gpu_timer *t, uint32_t k)
{
	if (t->n && t->n + k == GPU_SLOTS)
		gpu_read(r, t, true);
	if (t->n + k == GPU_SLOTS)
		return UINT32_MAX;
	uint32_t s = (t->head + t->n + k) % GPU_SLOTS;
	t->frame[s] = r->nframe_times;
	return s;
}

/* A batch that can take our command buffers: not protected, not for a
 * device group (its masks count the command buffers). */
static bool gpu_timeable(const void *pnext)
{
	for (const base_out *b = pnext; b; b = b->pNext)
		if (b->sType == VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO ||
		    b->sType == VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO)
			return false;
	return true;
}

/* The slot for a batch of a submit that took *K so far, or UINT32_MAX
 * where it is not TIMEABLE or no slot is left; *K counts the slots taken. */
static uint32_t gpu_batch_slot(vkr *r, gpu_timer *t, bool timeable, uint32_t *k)
{
	uint32_t s = timeable ? gpu_slot(r, t, *k) : UINT32_MAX;
	if (s != UINT32_MAX)
		(*k)++;
	return s;
}

/* vkQueueSubmit; under --stats each batch's command buffers between the
 * two of a slot. */
static void submit(vkr *r, const cmd_entry *e, vk_args_vkQueueSubmit *a)
{
	if (!remap_args(r, e->cmd, a))
		return;
	gpu_timer *t = gpu_timer_for(r, a->queue);
	uint32_t k = 0;
	if (t && a->pSubmits) {
		VkSubmitInfo *si = trace_arena_alloc(&r->arena, sizeof(*si) * a->submitCount);
		memcpy(si, a->pSubmits, sizeof(*si) * a->submitCount);
		for (uint32_t i = 0; i < a->submitCount; i++) {
			uint32_t n = si[i].commandBufferCount;
			uint32_t s = gpu_batch_slot(r, t, n && gpu_timeable(si[i].pNext), &k);
			if (s == UINT32_MAX)
				continue;
			VkCommandBuffer *cb = trace_arena_alloc(&r->arena, sizeof(*cb) * (n + 2));
			cb[0] = t->cb[2 * s];
			memcpy(cb + 1, si[i].pCommandBuffers, sizeof(*cb) * n);
			cb[n + 1] = t->cb[2 * s + 1];
			si[i].pCommandBuffers = cb;
			si[i].commandBufferCount = n + 2;
		}
		a->pSubmits = si;
	}
	if (invoke(r, e, a) == VK_SUCCESS && t)
		t->n += k;
}

static void submit2(vkr *r, const cmd_entry *e, vk_args_vkQueueSubmit2 *a)
{
	if (!remap_args(r, e->cmd, a))
		return;
	gpu_timer *t = gpu_timer_for(r, a->queue);
	uint32_t k = 0;
	if (t && a->pSubmits) {
		VkSubmitInfo2 *si = trace_arena_alloc(&r->arena, sizeof(*si) * a->submitCount);
		memcpy(si, a->pSubmits, sizeof(*si) * a->submitCount);
		for (uint32_t i = 0; i < a->submitCount; i++) {
			uint32_t n = si[i].commandBufferInfoCount;
			uint32_t s = gpu_batch_slot(r, t, n && !(si[i].flags & VK_SUBMIT_PROTECTED_BIT) &&
							  gpu_timeable(si[i].pNext), &k);
			if (s == UINT32_MAX)
				continue;
			VkCommandBufferSubmitInfo *cb = trace_arena_alloc(&r->arena, sizeof(*cb) * (n + 2));
			cb[0] = (VkCommandBufferSubmitInfo){
				.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
				.commandBuffer = t->cb[2 * s]};
			memcpy(cb + 1, si[i].pCommandBufferInfos, sizeof(*cb) * n);
			cb[n + 1] = cb[0];
			cb[n + 1].commandBuffer = t->cb[2 * s + 1];
			si[i].pCommandBufferInfos = cb;
			si[i].commandBufferInfoCount = n + 2;
		}
		a->pSubmits = si;
	}
	if (invoke(r, e, a) == VK_SUCCESS && t)
		t->n += k;
}

/* ------------------------------------------------------------------ */
/* Descriptor update templates: pData is the bytes the template reads
 * (man/trace-format.5), its handles mapped in the record's copy. */

static void create_template(vkr *r, const cmd_entry *e, vk_args_vkCreateDescriptorUpdateTemplate *a)
{
	const VkDescriptorUpdateTemplateCreateInfo *ci = a->pCreateInfo;
	uint64_t cap = a->pDescriptorUpdateTemplate ? (uint64_t)(uintptr_t)*a->pDescriptorUpdateTemplate : 0;
	uint32_t n = ci && ci->pDescriptorUpdateEntries ? ci->descriptorUpdateEntryCount : 0;
	tmpl *t = trace_xcalloc(1, sizeof(*t) + (size_t)n * sizeof(t->e[0]));
	t->n = n;
	if (n)
		memcpy(t->e, ci->pDescriptorUpdateEntries, (size_t)n * sizeof(t->e[0]));
	uint64_t old;
	if (call_generic(r, e, a) < 0 || !cap) {
		free(t);
		return;
	}
	if (tmap_del(&r->templates, cap, TAG_TEMPLATE, &old))
		free((tmpl *)(uintptr_t)old);
	tmap_set(&r->templates, cap, TAG_TEMPLATE, (uint64_t)(uintptr_t)t);
}

static void destroy_template(vkr *r, const cmd_entry *e, vk_args_vkDestroyDescriptorUpdateTemplate *a)
{
	uint64_t cap = (uint64_t)(uintptr_t)a->descriptorUpdateTemplate, old;
	call_generic(r, e, a);
	if (cap && tmap_del(&r->templates, cap, TAG_TEMPLATE, &old))
		free((tmpl *)(uintptr_t)old);
}

static void free_templates(vkr *r)
{
	for (size_t i = 0; i < r->templates.cap; i++)
		if (tmap_used(&r->templates, i))
			free((tmpl *)(uintptr_t)r->templates.vals[i]);
	tmap_free(&r->templates);
}

/* vkUpdateDescriptorSetWithTemplate, vkCmdPushDescriptorSetWithTemplate*:
 * the handles in pData mapped, then the call. */
static void template_data(vkr *r, const cmd_entry *e, void *args)
{
	const vk_command_info *cmd = e->cmd;
	const trace_call *c = r->call;
	if (e->tmpl < 0 || e->data < 0 || (uint32_t)e->data >= c->sig->nargs)
		fatal(r, "malformed record: no descriptorUpdateTemplate or pData");
	const trace_value *v = &c->args[e->data];
	uint64_t cap;
	memcpy(&cap, (uint8_t *)args + cmd->params[e->tmpl].offset, 8);
	uint64_t *h = tmap_at(&r->templates, cap, TAG_TEMPLATE);
	const tmpl *t = h ? (const tmpl *)(uintptr_t)*h : NULL;
	if (!t) {
		warn(r, "%s: VkDescriptorUpdateTemplate 0x%llx unknown: call not replayed",
		     cmd->sig.name, (unsigned long long)cap);
		return;
	}
	uint64_t want;
	if (!vk_template_data_size(t->e, t->n, &want)) {
		warn(r, "%s: a descriptor type of the template is not supported yet (left out)",
		     cmd->sig.name);
		return;
	}
	if (v->kind == TRACE_POINTER || (v->kind == TRACE_NULL && want)) {
		/* a capture by a layer that recorded the address only */
		warn(r, "%s: pData is %s, not the %llu bytes the template reads (left out)",
		     cmd->sig.name, v->kind == TRACE_NULL ? "null" : "an address",
		     (unsigned long long)want);
		return;
	}
	if (v->kind == TRACE_BLOB) {
		if (v->len < want)
			fatal(r, "malformed record (byte %lld): pData has %u bytes, the template reads %llu",
			      (long long)c->offset, v->len, (unsigned long long)want);
		void *data;
		memcpy(&data, (uint8_t *)args + cmd->params[e->data].offset, sizeof(data));
		vk_walk_template_handles(t->e, t->n, data, v->len, remap_in, r);
	} else if (v->kind != TRACE_NULL) {
		fatal(r, "malformed record (byte %lld): pData is %s, not a blob", (long long)c->offset,
		      trace_value_kind_name(v->kind));
	}
	call_generic(r, e, args);
}

/* ------------------------------------------------------------------ */
/* One record. */

static void end_device(vkr *r)
{
	device_teardown(r);
	vkd_close_device(&r->dev);
	reset_fns(r);
}

static void end_instance(vkr *r)
{
	device_teardown(r);
	vkd_close(&r->dev);
	r->have_instance = false;
	tmap_free(&r->handles);
}

static bool loop_call(vkr *r, const cmd_entry *e, void *args);

static PFN_vkVoidFunction device_fn(vkr *r, const char *a, const char *b)
{
	PFN_vkVoidFunction f = vkGetDeviceProcAddr(r->dev.device, a);
	return f ? f : vkGetDeviceProcAddr(r->dev.device, b);
}

static void replay_call(vkr *r, const trace_call *c)
{
	const char *name = c->sig->name;
	if (!strncmp(name, "tracekit.", 9)) {
		if (vk_is_update(name))
			update(r, c);
		return;
	}
	cmd_entry *e = entry_of(r, c);
	if (!e)
		fatal(r, "unknown function");
	const vk_command_info *cmd = e->cmd;
	if (e->special == SP_SKIP)
		return;
	void *args = trace_arena_alloc(&r->arena, cmd->args_size);
	/* (r->err is not cleared first: 800 bytes a record; a failure fills
	 * the message, the one thing fatal() prints) */
	if (vk_decode_args(cmd, c, &r->arena, args, &r->err) < 0)
		fatal(r, "malformed record: %s", r->err.msg);
	if (e->special != SP_CREATE_INSTANCE && !r->have_instance)
		fatal(r, "a call before vkCreateInstance");
	bool dev_needed = cmd->level == VK_LEVEL_DEVICE;
	if (dev_needed && !r->dev.device && e->special != SP_DESTROY_DEVICE)
		fatal(r, "a device call before vkCreateDevice");
	if (r->loop && !loop_call(r, e, args))
		return;
	VkResult capres = cap_result(c);
	switch ((enum special)e->special) {
	case SP_NONE:
		call_generic(r, e, args);
		return;
	case SP_SKIP:
		return;
	case SP_UNSUPPORTED:
		warn(r, "%s: not supported yet (left out)", name);
		return;
	case SP_CREATE_INSTANCE:
		create_instance(r, args);
		return;
	case SP_DESTROY_INSTANCE:
		end_instance(r);
		return;
	case SP_ENUM_PHYSICAL: {
		vk_args_vkEnumeratePhysicalDevices *a = args;
		if (a->pPhysicalDevices && a->pPhysicalDeviceCount)
			for (uint32_t i = 0; i < *a->pPhysicalDeviceCount; i++)
				map_put(r, r->h_physical, (uint64_t)(uintptr_t)a->pPhysicalDevices[i],
					(uint64_t)(uintptr_t)r->dev.physical);
		return;
	}
	case SP_ENUM_GROUPS: {
		vk_args_vkEnumeratePhysicalDeviceGroups *a = args;
		if (a->pPhysicalDeviceGroupProperties && a->pPhysicalDeviceGroupCount)
			for (uint32_t i = 0; i < *a->pPhysicalDeviceGroupCount; i++) {
				VkPhysicalDeviceGroupProperties *g = &a->pPhysicalDeviceGroupProperties[i];
				for (uint32_t j = 0; j < g->physicalDeviceCount && j < VK_MAX_DEVICE_GROUP_SIZE; j++)
					map_put(r, r->h_physical, (uint64_t)(uintptr_t)g->physicalDevices[j],
						(uint64_t)(uintptr_t)r->dev.physical);
			}
		return;
	}
	case SP_CREATE_DEVICE:
		if (is_failure(capres))
			return;
		create_device(r, args);
		return;
	case SP_DESTROY_DEVICE:
		end_device(r);
		return;
	case SP_ALLOC_MEMORY:
		alloc_memory(r, args);
		return;
	case SP_FREE_MEMORY:
		free_memory(r, (uint64_t)(uintptr_t)((vk_args_vkFreeMemory *)args)->memory);
		return;
	case SP_CREATE_BUFFER: {
		vk_args_vkCreateBuffer *a = args;
		uint64_t cap = a->pBuffer ? (uint64_t)(uintptr_t)*a->pBuffer : 0;
		VkDeviceSize size = a->pCreateInfo ? a->pCreateInfo->size : 0;
		bool address = a->pCreateInfo &&
			(a->pCreateInfo->usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);
		if (call_generic(r, e, args) == VK_SUCCESS && cap && a->pBuffer)
			new_obj(r, cap, (uint64_t)(uintptr_t)*a->pBuffer, false, true, size)->address =
				address;
		return;
	}
	case SP_CREATE_IMAGE: {
		vk_args_vkCreateImage *a = args;
		uint64_t cap = a->pImage ? (uint64_t)(uintptr_t)*a->pImage : 0;
		bool linear = a->pCreateInfo && a->pCreateInfo->tiling == VK_IMAGE_TILING_LINEAR;
		if (call_generic(r, e, args) == VK_SUCCESS && cap && a->pImage)
			new_obj(r, cap, (uint64_t)(uintptr_t)*a->pImage, true, linear, 0);
		return;
	}
	case SP_DESTROY_BUFFER:
	case SP_DESTROY_IMAGE: {
		uint64_t cap;
		memcpy(&cap, (uint8_t *)args + cmd->params[1].offset, 8);
		call_generic(r, e, args);
		uint64_t v;
		if (cap && tmap_del(&r->objects, cap, TAG_OBJ, &v)) {
			release_obj(r, (obj *)(uintptr_t)v);
			free((obj *)(uintptr_t)v);
		}
		return;
	}
	case SP_BIND_BUFFER: {
		vk_args_vkBindBufferMemory *a = args;
		bind_obj(r, (uint64_t)(uintptr_t)a->buffer, (uint64_t)(uintptr_t)a->memory,
			 a->memoryOffset, false, capres);
		return;
	}
	case SP_BIND_IMAGE: {
		vk_args_vkBindImageMemory *a = args;
		bind_obj(r, (uint64_t)(uintptr_t)a->image, (uint64_t)(uintptr_t)a->memory,
			 a->memoryOffset, true, capres);
		return;
	}
	case SP_BIND_BUFFER2: {
		vk_args_vkBindBufferMemory2 *a = args;
		for (uint32_t i = 0; a->pBindInfos && i < a->bindInfoCount; i++)
			bind_obj(r, (uint64_t)(uintptr_t)a->pBindInfos[i].buffer,
				 (uint64_t)(uintptr_t)a->pBindInfos[i].memory,
				 a->pBindInfos[i].memoryOffset, false, capres);
		return;
	}
	case SP_BIND_IMAGE2: {
		vk_args_vkBindImageMemory2 *a = args;
		for (uint32_t i = 0; a->pBindInfos && i < a->bindInfoCount; i++)
			bind_obj(r, (uint64_t)(uintptr_t)a->pBindInfos[i].image,
				 (uint64_t)(uintptr_t)a->pBindInfos[i].memory,
				 a->pBindInfos[i].memoryOffset, true, capres);
		return;
	}
	case SP_BUFFER_REQS: {
		vk_args_vkGetBufferMemoryRequirements *a = args;
		obj *o = obj_get(r, (uint64_t)(uintptr_t)a->buffer);
		if (o && a->pMemoryRequirements)
			o->cap_req = a->pMemoryRequirements->size;
		return;
	}
	case SP_IMAGE_REQS: {
		vk_args_vkGetImageMemoryRequirements *a = args;
		obj *o = obj_get(r, (uint64_t)(uintptr_t)a->image);
		if (o && a->pMemoryRequirements)
			o->cap_req = a->pMemoryRequirements->size;
		return;
	}
	case SP_BUFFER_REQS2: {
		vk_args_vkGetBufferMemoryRequirements2 *a = args;
		obj *o = a->pInfo ? obj_get(r, (uint64_t)(uintptr_t)a->pInfo->buffer) : NULL;
		if (o && a->pMemoryRequirements)
			o->cap_req = a->pMemoryRequirements->memoryRequirements.size;
		return;
	}
	case SP_IMAGE_REQS2: {
		vk_args_vkGetImageMemoryRequirements2 *a = args;
		obj *o = a->pInfo ? obj_get(r, (uint64_t)(uintptr_t)a->pInfo->image) : NULL;
		if (o && a->pMemoryRequirements)
			o->cap_req = a->pMemoryRequirements->memoryRequirements.size;
		return;
	}
	case SP_MEMORY_PROPS: {
		vk_args_vkGetPhysicalDeviceMemoryProperties *a = args;
		if (a->pMemoryProperties) {
			r->cap_mem = *a->pMemoryProperties;
			r->have_cap_mem = true;
		}
		return;
	}
	case SP_MEMORY_PROPS2: {
		vk_args_vkGetPhysicalDeviceMemoryProperties2 *a = args;
		if (a->pMemoryProperties) {
			r->cap_mem = a->pMemoryProperties->memoryProperties;
			r->have_cap_mem = true;
		}
		return;
	}
	case SP_WAIT_FENCES: {
		/* a wait that succeeded at capture succeeds here: no timeout */
		if (capres == VK_TIMEOUT)
			return;
		((vk_args_vkWaitForFences *)args)->timeout = UINT64_MAX;
		call_generic(r, e, args);
		return;
	}
	case SP_WAIT_SEMAPHORES:
		if (capres == VK_TIMEOUT)
			return;
		((vk_args_vkWaitSemaphores *)args)->timeout = UINT64_MAX;
		call_generic(r, e, args);
		return;
	case SP_FENCE_STATUS: {
		if (capres != VK_SUCCESS)
			return;  /* not ready at capture: nothing to wait for */
		vk_args_vkGetFenceStatus *a = args;
		VkFence f = (VkFence)(uintptr_t)need(r, r->h_fence, (uint64_t)(uintptr_t)a->fence);
		VkResult res = vkWaitForFences(r->dev.device, 1, &f, VK_TRUE, UINT64_MAX);
		r->calls++;
		check_result(r, e, true, capres, res);
		return;
	}
	case SP_SEMAPHORE_VALUE: {
		vk_args_vkGetSemaphoreCounterValue *a = args;
		if (capres != VK_SUCCESS || !a->pValue)
			return;
		VkSemaphore s = (VkSemaphore)(uintptr_t)need(r, r->h_semaphore,
							      (uint64_t)(uintptr_t)a->semaphore);
		PFN_vkWaitSemaphores wait = (PFN_vkWaitSemaphores)device_fn(r, "vkWaitSemaphores",
									     "vkWaitSemaphoresKHR");
		if (!wait)
			return;
		VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
					  .semaphoreCount = 1, .pSemaphores = &s, .pValues = a->pValue};
		VkResult res = wait(r->dev.device, &wi, UINT64_MAX);
		r->calls++;
		check_result(r, e, true, capres, res);
		return;
	}
	case SP_QUERY_RESULTS: {
		vk_args_vkGetQueryPoolResults *a = args;
		if (capres == VK_SUCCESS)
			a->flags |= VK_QUERY_RESULT_WAIT_BIT;  /* they were there at capture */
		else if (capres == VK_NOT_READY)
			return;
		call_generic(r, e, args);
		return;
	}
	case SP_CREATE_SURFACE:
	case SP_FAKE_CREATE: {
		/* the last output handle: a made-up value that nothing calls */
		for (uint32_t i = cmd->nparams; i-- > 0;) {
			const vk_field *f = &cmd->params[i];
			if (f->base == VK_B_HANDLE && (f->flags & VK_F_OUT)) {
				uint64_t *p;
				memcpy(&p, (uint8_t *)args + f->offset, sizeof(p));
				if (p && *p)
					map_put(r, f->ref, *p, *p);
				break;
			}
		}
		return;
	}
	case SP_DESTROY_SURFACE:
	case SP_FAKE_DESTROY:
		return;
	case SP_CREATE_SWAPCHAIN:
		if (!is_failure(capres))
			create_swapchain(r, args);
		return;
	case SP_DESTROY_SWAPCHAIN: {
		uint64_t cap = (uint64_t)(uintptr_t)((vk_args_vkDestroySwapchainKHR *)args)->swapchain;
		uint64_t v;
		if (cap && tmap_del(&r->swapchains, cap, TAG_SWAPCHAIN, &v)) {
			vkDeviceWaitIdle(r->dev.device);
			destroy_swapchain(r, (swapchain *)(uintptr_t)v);
		}
		return;
	}
	case SP_SWAPCHAIN_IMAGES:
		if (!is_failure(capres))
			swapchain_images(r, args);
		return;
	case SP_ACQUIRE: {
		vk_args_vkAcquireNextImageKHR *a = args;
		acquire(r, (uint64_t)(uintptr_t)a->swapchain, a->pImageIndex ? *a->pImageIndex : 0,
			(uint64_t)(uintptr_t)a->semaphore, (uint64_t)(uintptr_t)a->fence, capres);
		return;
	}
	case SP_ACQUIRE2: {
		vk_args_vkAcquireNextImage2KHR *a = args;
		if (!a->pAcquireInfo)
			fatal(r, "vkAcquireNextImage2KHR without pAcquireInfo");
		acquire(r, (uint64_t)(uintptr_t)a->pAcquireInfo->swapchain,
			a->pImageIndex ? *a->pImageIndex : 0,
			(uint64_t)(uintptr_t)a->pAcquireInfo->semaphore,
			(uint64_t)(uintptr_t)a->pAcquireInfo->fence, capres);
		return;
	}
	case SP_PRESENT:
		present(r, args);
		return;
	case SP_CREATE_TEMPLATE:
		create_template(r, e, args);
		return;
	case SP_DESTROY_TEMPLATE:
		destroy_template(r, e, args);
		return;
	case SP_TEMPLATE_DATA:
		template_data(r, e, args);
		return;
	case SP_GET_QUEUE: {
		vk_args_vkGetDeviceQueue *a = args;
		call_generic(r, e, args);
		if (a->pQueue && *a->pQueue)
			tmap_set(&r->queues, (uint64_t)(uintptr_t)*a->pQueue, TAG_QUEUE, a->queueFamilyIndex);
		return;
	}
	case SP_GET_QUEUE2: {
		vk_args_vkGetDeviceQueue2 *a = args;
		call_generic(r, e, args);
		if (a->pQueue && *a->pQueue && a->pQueueInfo)
			tmap_set(&r->queues, (uint64_t)(uintptr_t)*a->pQueue, TAG_QUEUE,
			     a->pQueueInfo->queueFamilyIndex);
		return;
	}
	case SP_SUBMIT:
		submit(r, e, args);
		return;
	case SP_SUBMIT2:
		submit2(r, e, args);
		return;
	/* the draws are in the record one after the other, whatever stride
	 * the application laid them out with (zink: 12 bytes): read with the
	 * captured stride they would be read past their end */
	case SP_DRAW_MULTI:
		((vk_args_vkCmdDrawMultiEXT *)args)->stride = sizeof(VkMultiDrawInfoEXT);
		call_generic(r, e, args);
		return;
	case SP_DRAW_MULTI_INDEXED:
		((vk_args_vkCmdDrawMultiIndexedEXT *)args)->stride = sizeof(VkMultiDrawIndexedInfoEXT);
		call_generic(r, e, args);
		return;
	}
}

/* ------------------------------------------------------------------ */
/* --loop: the range's records kept, checked, and replayed N times.
 *
 * Every pass must find what the range found.  In every pass but the
 * last, what the range ends of the objects made before it is parked
 * (taken out of the map, not ended, put back when the pass is over);
 * once the pass is over and the device idle, what it made and left
 * alive is ended, fences and binary semaphores made before the range are
 * put back in the state the range found them in, and command buffers
 * begun before the range that it records into or changes are reset and
 * recorded again from the records before the range (kept, while those
 * replay, for that).  Timeline values only go up: in pass k those of
 * the semaphores made before the range go up by k * D.  What cannot be
 * made so, loop_check() refuses before the range.
 */

static void frame_ended(vkr *r, int64_t frame);

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

static void keep(vkr *r, const trace_call *c, int64_t frame, bool ends)
{
	if (r->nkept == r->capkept) {
		r->capkept = r->capkept ? r->capkept * 2 : 1024;
		r->kept = trace_xrealloc(r->kept, r->capkept * sizeof(*r->kept));
	}
	kept *k = &r->kept[r->nkept++];
	trace_call_init(&k->call);
	trace_call_copy(&k->call, c);
	k->frame = frame;
	k->ends_frame = ends;
}

/* Exit 1 before the range, naming what a second pass could not replay. */
static noreturn void loop_refuse(vkr *r, const char *why, const char *need, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static noreturn void loop_refuse(vkr *r, const char *why, const char *need, const char *fmt, ...)
{
	const vkr_options *o = r->opt;
	char range[64], what[256];
	if (o->last_frame >= 0)
		snprintf(range, sizeof(range), "frames %lld-%lld", (long long)o->first_frame,
			 (long long)o->last_frame);
	else
		snprintf(range, sizeof(range), "frames %lld to the end", (long long)o->first_frame);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	trace_cli_progress_done();
	fprintf(stderr, "%s: %s: --loop %u: %s %s (%s): a second pass cannot replay them; "
		"--loop wants %s\n", trace_cli_self.prog, o->input, o->loop, range, why, what, need);
	exit(1);
}

static uint64_t handle_at(const void *args, const vk_field *f)
{
	uint64_t v;
	memcpy(&v, (const uint8_t *)args + f->offset, 8);
	return v;
}

/* A record's first argument, where it is a handle (a command buffer). */
static uint64_t first_handle(const trace_call *c)
{
	return c->sig->nargs && c->args[0].kind == TRACE_POINTER ? c->args[0].u : 0;
}

/* The handles a vkDestroy* or vkFree* ends, where ARGS has them: *N at
 * the pointer returned; *COUNT the parameter that counts an array (as
 * call_generic reads it), else NULL. */
static uint64_t *ended_handles(const vk_command_info *cmd, void *args, uint32_t *n,
			       uint32_t **count)
{
	*n = 0;
	*count = NULL;
	for (uint32_t i = 0; i < cmd->nparams; i++) {
		const vk_field *f = &cmd->params[i];
		if (f->base != VK_B_HANDLE || f->ref != cmd->object || (f->flags & VK_F_OUT))
			continue;
		uint8_t *fp = (uint8_t *)args + f->offset;
		if (!f->ptr) {
			*n = 1;
			return (uint64_t *)fp;
		}
		uint64_t *arr;
		memcpy(&arr, fp, sizeof(arr));
		if (arr && i > 0 && cmd->params[i - 1].base == VK_B_UINT && !cmd->params[i - 1].ptr) {
			*count = (uint32_t *)((uint8_t *)args + cmd->params[i - 1].offset);
			*n = **count;
		}
		return arr;
	}
	return NULL;
}

/* ---- command buffers' recordings before the range ---- */

static void cblog_clear(cblog *g)
{
	for (size_t i = 0; i < g->n; i++)
		trace_call_free(&g->calls[i]);
	g->n = 0;
}

static void cblog_free(cblog *g)
{
	cblog_clear(g);
	free(g->calls);
	free(g);
}

static void cblog_add(cblog *g, const trace_call *c)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->calls = trace_xrealloc(g->calls, g->cap * sizeof(*g->calls));
	}
	trace_call_init(&g->calls[g->n]);
	trace_call_copy(&g->calls[g->n++], c);
}

static cblog *cblog_of(loop_state *l, uint64_t cb)
{
	uint64_t *h = cb ? tmap_at(&l->logs, cb, TAG_CBLOG) : NULL;
	return h ? (cblog *)(uintptr_t)*h : NULL;
}

/* POOL's command buffers: their recordings cleared (a reset), or
 * dropped (the pool ended). */
static void cblog_pool(loop_state *l, uint64_t pool, bool drop)
{
	for (size_t i = 0; i < l->logs.cap; i++) {
		cblog *g = tmap_used(&l->logs, i) ? (cblog *)(uintptr_t)l->logs.vals[i] : NULL;
		if (!g || g->pool != pool)
			continue;
		if (!drop) {
			cblog_clear(g);
			continue;
		}
		cblog_free(g);
		tmap_del(&l->logs, l->logs.keys[i], l->logs.kinds[i], NULL);
		i--;  /* the slot now holds what moved back into it */
	}
}

/* POOL's descriptor sets, forgotten (the pool reset or ended). */
static void sets_drop(loop_state *l, uint64_t pool)
{
	for (size_t i = 0; i < l->sets.cap; i++) {
		if (tmap_used(&l->sets, i) && l->sets.vals[i] == pool) {
			tmap_del(&l->sets, l->sets.keys[i], l->sets.kinds[i], NULL);
			i--;
		}
	}
}

/* A record before the range: each command buffer's recording (to record
 * it again between passes), each descriptor set's pool, each descriptor
 * pool's flags. */
static void loop_before(vkr *r, const cmd_entry *e, void *args)
{
	loop_state *l = r->loop;
	const vk_command_info *cmd = e->cmd;
	cblog *g;
	switch ((enum loop_kind)e->loop) {
	case LK_ALLOC_CBS: {
		vk_args_vkAllocateCommandBuffers *a = args;
		if (!a->pAllocateInfo || !a->pCommandBuffers || is_failure(cap_result(r->call)))
			return;
		for (uint32_t i = 0; i < a->pAllocateInfo->commandBufferCount; i++) {
			uint64_t cb = (uint64_t)(uintptr_t)a->pCommandBuffers[i], old;
			if (tmap_del(&l->logs, cb, TAG_CBLOG, &old))
				cblog_free((cblog *)(uintptr_t)old);
			g = trace_xcalloc(1, sizeof(*g));
			g->pool = (uint64_t)(uintptr_t)a->pAllocateInfo->commandPool;
			tmap_set(&l->logs, cb, TAG_CBLOG, (uint64_t)(uintptr_t)g);
		}
		return;
	}
	case LK_BEGIN_CB: {
		vk_args_vkBeginCommandBuffer *a = args;
		if (!(g = cblog_of(l, (uint64_t)(uintptr_t)a->commandBuffer)))
			return;
		cblog_clear(g);
		g->one_time = a->pBeginInfo &&
			(a->pBeginInfo->flags & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
		cblog_add(g, r->call);
		return;
	}
	case LK_RECORD:
	case LK_END_CB:
		if ((g = cblog_of(l, handle_at(args, &cmd->params[0]))) && g->n)
			cblog_add(g, r->call);
		return;
	case LK_RESET_CB:
		if ((g = cblog_of(l, handle_at(args, &cmd->params[0]))))
			cblog_clear(g);
		return;
	case LK_RESET_CPOOL:
	case LK_DESTROY_CPOOL:
		cblog_pool(l, handle_at(args, &cmd->params[1]), e->loop == LK_DESTROY_CPOOL);
		return;
	case LK_FREE_CBS: {
		vk_args_vkFreeCommandBuffers *a = args;
		for (uint32_t i = 0; a->pCommandBuffers && i < a->commandBufferCount; i++) {
			uint64_t old;
			if (tmap_del(&l->logs, (uint64_t)(uintptr_t)a->pCommandBuffers[i], TAG_CBLOG, &old))
				cblog_free((cblog *)(uintptr_t)old);
		}
		return;
	}
	case LK_CREATE_DPOOL: {
		vk_args_vkCreateDescriptorPool *a = args;
		if (a->pCreateInfo && a->pDescriptorPool && *a->pDescriptorPool)
			tmap_set(&l->dpools, (uint64_t)(uintptr_t)*a->pDescriptorPool, TAG_DPOOL,
			     a->pCreateInfo->flags);
		return;
	}
	case LK_ALLOC_SETS: {
		vk_args_vkAllocateDescriptorSets *a = args;
		if (!a->pAllocateInfo || !a->pDescriptorSets || is_failure(cap_result(r->call)))
			return;
		for (uint32_t i = 0; i < a->pAllocateInfo->descriptorSetCount; i++)
			tmap_set(&l->sets, (uint64_t)(uintptr_t)a->pDescriptorSets[i], (uintptr_t)l->h_set,
			     (uint64_t)(uintptr_t)a->pAllocateInfo->descriptorPool);
		return;
	}
	case LK_FREE_SETS: {
		vk_args_vkFreeDescriptorSets *a = args;
		for (uint32_t i = 0; a->pDescriptorSets && i < a->descriptorSetCount; i++)
			tmap_del(&l->sets, (uint64_t)(uintptr_t)a->pDescriptorSets[i], (uintptr_t)l->h_set,
			     NULL);
		return;
	}
	case LK_RESET_DPOOL:
	case LK_DESTROY_DPOOL:
		sets_drop(l, handle_at(args, &cmd->params[1]));
		if (e->loop == LK_DESTROY_DPOOL)
			tmap_del(&l->dpools, handle_at(args, &cmd->params[1]), TAG_DPOOL, NULL);
		return;
	default:
		return;
	}
}

/* ---- fences and semaphores, by capture value ---- */

static void sync_set(loop_state *l, uint64_t cap, uintptr_t kind, uint64_t v)
{
	uint64_t *h = cap ? tmap_at(&l->sync, cap, kind) : NULL;
	if (h)
		*h = v;
}

/* A semaphore a batch waits on or signals: a binary one changes state, a
 * timeline one keeps its highest value. */
static void sync_semaphore(loop_state *l, uint64_t cap, bool signal, uint64_t value)
{
	uint64_t *t = cap ? tmap_at(&l->sync, cap, TAG_TIMELINE) : NULL;
	if (t && signal && value > *t)
		*t = value;
	sync_set(l, cap, TAG_BINARY, signal);
}

static VkTimelineSemaphoreSubmitInfo *timeline_info(const void *pnext)
{
	for (const base_out *b = pnext; b; b = b->pNext)
		if (b->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
			return (VkTimelineSemaphoreSubmitInfo *)b;
	return NULL;
}

/* What a call (its arguments still capture values) does to fences and
 * semaphores. */
static void sync_note(vkr *r, const cmd_entry *e, void *args)
{
	loop_state *l = r->loop;
	VkResult capres = cap_result(r->call);
	switch ((enum special)e->special) {
	case SP_SUBMIT: {
		vk_args_vkQueueSubmit *a = args;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo *si = &a->pSubmits[i];
			const VkTimelineSemaphoreSubmitInfo *t = timeline_info(si->pNext);
			for (uint32_t j = 0; si->pWaitSemaphores && j < si->waitSemaphoreCount; j++)
				sync_semaphore(l, (uint64_t)(uintptr_t)si->pWaitSemaphores[j], false, 0);
			for (uint32_t j = 0; si->pSignalSemaphores && j < si->signalSemaphoreCount; j++)
				sync_semaphore(l, (uint64_t)(uintptr_t)si->pSignalSemaphores[j], true,
					       t && t->pSignalSemaphoreValues &&
					       j < t->signalSemaphoreValueCount
					       ? t->pSignalSemaphoreValues[j] : 0);
		}
		sync_set(l, (uint64_t)(uintptr_t)a->fence, TAG_FENCE, 1);
		return;
	}
	case SP_SUBMIT2: {
		vk_args_vkQueueSubmit2 *a = args;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo2 *si = &a->pSubmits[i];
			for (uint32_t j = 0; si->pWaitSemaphoreInfos && j < si->waitSemaphoreInfoCount; j++)
				sync_semaphore(l, (uint64_t)(uintptr_t)si->pWaitSemaphoreInfos[j].semaphore,
					       false, 0);
			for (uint32_t j = 0; si->pSignalSemaphoreInfos && j < si->signalSemaphoreInfoCount; j++)
				sync_semaphore(l, (uint64_t)(uintptr_t)si->pSignalSemaphoreInfos[j].semaphore,
					       true, si->pSignalSemaphoreInfos[j].value);
		}
		sync_set(l, (uint64_t)(uintptr_t)a->fence, TAG_FENCE, 1);
		return;
	}
	case SP_ACQUIRE:
	case SP_ACQUIRE2: {
		if (is_failure(capres) || capres == VK_TIMEOUT || capres == VK_NOT_READY)
			return;
		uint64_t sem, fence;
		if (e->special == SP_ACQUIRE) {
			vk_args_vkAcquireNextImageKHR *a = args;
			sem = (uint64_t)(uintptr_t)a->semaphore;
			fence = (uint64_t)(uintptr_t)a->fence;
		} else {
			vk_args_vkAcquireNextImage2KHR *a = args;
			if (!a->pAcquireInfo)
				return;
			sem = (uint64_t)(uintptr_t)a->pAcquireInfo->semaphore;
			fence = (uint64_t)(uintptr_t)a->pAcquireInfo->fence;
		}
		sync_set(l, sem, TAG_BINARY, 1);
		sync_set(l, fence, TAG_FENCE, 1);
		return;
	}
	case SP_PRESENT: {
		const VkPresentInfoKHR *pi = ((vk_args_vkQueuePresentKHR *)args)->pPresentInfo;
		for (uint32_t i = 0; pi && pi->pWaitSemaphores && i < pi->waitSemaphoreCount; i++)
			sync_set(l, (uint64_t)(uintptr_t)pi->pWaitSemaphores[i], TAG_BINARY, 0);
		return;
	}
	default:
		break;
	}
	switch ((enum loop_kind)e->loop) {
	case LK_CREATE_SEMAPHORE: {
		vk_args_vkCreateSemaphore *a = args;
		if (!a->pSemaphore || !*a->pSemaphore || is_failure(capres))
			return;
		const VkSemaphoreTypeCreateInfo *t = NULL;
		for (const base_out *b = a->pCreateInfo ? a->pCreateInfo->pNext : NULL; b; b = b->pNext)
			if (b->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO)
				t = (const VkSemaphoreTypeCreateInfo *)b;
		uint64_t cap = (uint64_t)(uintptr_t)*a->pSemaphore;
		if (t && t->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE)
			tmap_set(&l->sync, cap, TAG_TIMELINE, t->initialValue);
		else
			tmap_set(&l->sync, cap, TAG_BINARY, 0);
		return;
	}
	case LK_CREATE_FENCE: {
		vk_args_vkCreateFence *a = args;
		if (a->pFence && *a->pFence && a->pCreateInfo && !is_failure(capres))
			tmap_set(&l->sync, (uint64_t)(uintptr_t)*a->pFence, TAG_FENCE,
			     (a->pCreateInfo->flags & VK_FENCE_CREATE_SIGNALED_BIT) != 0);
		return;
	}
	case LK_RESET_FENCES: {
		vk_args_vkResetFences *a = args;
		for (uint32_t i = 0; a->pFences && i < a->fenceCount; i++)
			sync_set(l, (uint64_t)(uintptr_t)a->pFences[i], TAG_FENCE, 0);
		return;
	}
	case LK_SIGNAL_SEMAPHORE: {
		const VkSemaphoreSignalInfo *si = ((vk_args_vkSignalSemaphore *)args)->pSignalInfo;
		if (si)
			sync_semaphore(l, (uint64_t)(uintptr_t)si->semaphore, true, si->value);
		return;
	}
	case LK_DESTROY_SYNC: {
		uint64_t cap = handle_at(args, &e->cmd->params[1]);
		if (e->cmd->object == r->h_fence) {
			tmap_del(&l->sync, cap, TAG_FENCE, NULL);
		} else {
			tmap_del(&l->sync, cap, TAG_BINARY, NULL);
			tmap_del(&l->sync, cap, TAG_TIMELINE, NULL);
		}
		return;
	}
	default:
		return;
	}
}

/* VALUE of timeline semaphore SEM, in the pass in progress: made before
 * the range, k * D higher in pass k, but for a wait for a value it had
 * reached as the range began (reached in every pass). */
static uint64_t shifted(vkr *r, uint64_t sem, uint64_t value, bool wait)
{
	loop_state *l = r->loop;
	uint64_t *d = tmap_at(&l->shift, sem, TAG_SHIFT);
	if (!d || tmap_at(&l->born, sem, (uintptr_t)r->h_semaphore))
		return value;
	if (wait && value <= *tmap_at(&l->shift, sem, TAG_BASE))
		return value;
	return value + (uint64_t)l->pass * *d;
}

/* The timeline values of a call, in capture values still, for pass k > 0
 * (the decoded arguments are this record's, in the arena: written over). */
static void shift_timelines(vkr *r, const cmd_entry *e, void *args)
{
	switch ((enum special)e->special) {
	case SP_SUBMIT: {
		vk_args_vkQueueSubmit *a = args;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo *si = &a->pSubmits[i];
			VkTimelineSemaphoreSubmitInfo *t = timeline_info(si->pNext);
			if (!t)
				continue;
			uint64_t *w = (uint64_t *)t->pWaitSemaphoreValues;
			uint64_t *s = (uint64_t *)t->pSignalSemaphoreValues;
			for (uint32_t j = 0; w && si->pWaitSemaphores && j < t->waitSemaphoreValueCount &&
			     j < si->waitSemaphoreCount; j++)
				w[j] = shifted(r, (uint64_t)(uintptr_t)si->pWaitSemaphores[j], w[j], true);
			for (uint32_t j = 0; s && si->pSignalSemaphores && j < t->signalSemaphoreValueCount &&
			     j < si->signalSemaphoreCount; j++)
				s[j] = shifted(r, (uint64_t)(uintptr_t)si->pSignalSemaphores[j], s[j], false);
		}
		return;
	}
	case SP_SUBMIT2: {
		vk_args_vkQueueSubmit2 *a = args;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo2 *si = &a->pSubmits[i];
			VkSemaphoreSubmitInfo *w = (VkSemaphoreSubmitInfo *)si->pWaitSemaphoreInfos;
			VkSemaphoreSubmitInfo *s = (VkSemaphoreSubmitInfo *)si->pSignalSemaphoreInfos;
			for (uint32_t j = 0; w && j < si->waitSemaphoreInfoCount; j++)
				w[j].value = shifted(r, (uint64_t)(uintptr_t)w[j].semaphore, w[j].value, true);
			for (uint32_t j = 0; s && j < si->signalSemaphoreInfoCount; j++)
				s[j].value = shifted(r, (uint64_t)(uintptr_t)s[j].semaphore, s[j].value, false);
		}
		return;
	}
	case SP_WAIT_SEMAPHORES: {
		const VkSemaphoreWaitInfo *wi = ((vk_args_vkWaitSemaphores *)args)->pWaitInfo;
		if (!wi || !wi->pSemaphores || !wi->pValues)
			return;
		uint64_t *v = (uint64_t *)wi->pValues;
		for (uint32_t j = 0; j < wi->semaphoreCount; j++)
			v[j] = shifted(r, (uint64_t)(uintptr_t)wi->pSemaphores[j], v[j], true);
		return;
	}
	case SP_SEMAPHORE_VALUE: {
		/* replayed as a wait for the value it returned at capture */
		vk_args_vkGetSemaphoreCounterValue *a = args;
		if (a->pValue)
			*a->pValue = shifted(r, (uint64_t)(uintptr_t)a->semaphore, *a->pValue, true);
		return;
	}
	default:
		break;
	}
	if (e->loop == LK_SIGNAL_SEMAPHORE) {
		VkSemaphoreSignalInfo *si = (VkSemaphoreSignalInfo *)((vk_args_vkSignalSemaphore *)args)->pSignalInfo;
		if (si)
			si->value = shifted(r, (uint64_t)(uintptr_t)si->semaphore, si->value, false);
	}
}

/* ---- what a pass makes and ends ---- */

typedef struct born_ctx {
	tmap *born;
	const vk_handle_info *want;
	uint64_t pool;
} born_ctx;

static void born_note(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		      const vk_field *f)
{
	(void)top;
	(void)f;
	born_ctx *b = ctx;
	if (h == b->want && *value)
		tmap_set(b->born, *value, (uintptr_t)h, b->pool + 1);
}

/* Frees command buffer or descriptor set CAP of POOL now, and forgets it. */
static void free_child(vkr *r, const vk_handle_info *h, uint64_t cap, uint64_t pool)
{
	loop_state *l = r->loop;
	uint64_t live, pool_live;
	bool cb = h == l->h_cb;
	if (map_get(r, h, cap, &live) && live &&
	    map_get(r, cb ? l->h_cpool : l->h_dpool, pool, &pool_live) && pool_live) {
		if (cb) {
			VkCommandBuffer c = (VkCommandBuffer)(uintptr_t)live;
			vkFreeCommandBuffers(r->dev.device, (VkCommandPool)(uintptr_t)pool_live, 1, &c);
		} else {
			VkDescriptorSet s = (VkDescriptorSet)(uintptr_t)live;
			vkFreeDescriptorSets(r->dev.device, (VkDescriptorPool)(uintptr_t)pool_live, 1, &s);
		}
	}
	map_del(r, h, cap);
}

/* A pass leaves descriptor sets in a pool made before the range (or
 * parks the pool with them in it): they are freed one by one, which the
 * pool must allow. */
static void need_free_bit(vkr *r, uint64_t pool, uint64_t set)
{
	uint64_t *f = tmap_at(&r->loop->dpools, pool, TAG_DPOOL);
	if (!f || !(*f & VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT))
		loop_refuse(r, "allocate descriptor sets from a pool made before them and do not free them",
			    "a range that frees them, or a pool made with "
			    "VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT",
			    "VkDescriptorSet 0x%llx of VkDescriptorPool 0x%llx", (unsigned long long)set,
			    (unsigned long long)pool);
}

/* POOL, a command or descriptor pool, ended or reset: its command buffers
 * or descriptor sets in born go.  Where a pass parks the pool instead
 * (POOL_PARKED), they are freed now. */
static void born_pool_ends(vkr *r, const vk_handle_info *pool_type, uint64_t pool,
			   enum life_mode mode, bool pool_parked)
{
	loop_state *l = r->loop;
	const vk_handle_info *h = pool_type == l->h_cpool ? l->h_cb : l->h_set;
	for (size_t i = 0; i < l->born.cap; i++) {
		if (l->born.kinds[i] != (uintptr_t)h || l->born.vals[i] != pool + 1)
			continue;
		uint64_t cap = l->born.keys[i];
		if (pool_parked && mode == LIFE_CHECK && h == l->h_set)
			need_free_bit(r, pool, cap);
		if (pool_parked && mode == LIFE_PARK)
			free_child(r, h, cap, pool);
		tmap_del(&l->born, cap, (uintptr_t)h, NULL);
		i--;  /* the slot now holds what moved back into it */
	}
}

/* Object CAP of type H, made in the pass, ended: what goes with it goes
 * too.  What the trace leaves alive goes with the device (device_teardown)
 * or the instance; surfaces and messengers outlive the device. */
static void born_ended(vkr *r, const vk_handle_info *h, uint64_t cap, enum life_mode mode)
{
	loop_state *l = r->loop;
	if (h == l->h_cpool || h == l->h_dpool) {
		born_pool_ends(r, h, cap, mode, false);
		return;
	}
	if (h != r->h_device && h != r->h_instance)
		return;
	for (size_t i = 0; i < l->born.cap; i++) {
		const vk_handle_info *k = (const vk_handle_info *)(uintptr_t)l->born.kinds[i];
		if (k && k != r->h_instance &&
		    (h == r->h_instance || !k->parent || !strstr(k->parent, "VkInstance"))) {
			tmap_del(&l->born, l->born.keys[i], l->born.kinds[i], NULL);
			i--;
		}
	}
}

/* Object CAP of type H, made before the range, ended by a pass but the
 * last: out of the maps, alive. */
static void park(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	loop_state *l = r->loop;
	if (l->nparked == l->capparked) {
		l->capparked = l->capparked ? l->capparked * 2 : 64;
		l->parked = trace_xrealloc(l->parked, l->capparked * sizeof(*l->parked));
	}
	parked *p = &l->parked[l->nparked++];
	*p = (parked){.h = h, .cap = cap};
	tmap_del(&r->handles, cap, (uintptr_t)h, &p->live);
	if ((h == r->h_buffer || h == r->h_image) && tmap_del(&r->objects, cap, TAG_OBJ, &p->side)) {
		/* as if ended: what is bound where it was does not share its
		 * memory (bind_obj), it keeps its bytes for the next pass */
		p->mem = ((obj *)(uintptr_t)p->side)->mem;
		unlink_obj((obj *)(uintptr_t)p->side);
	} else if (h == r->h_memory)
		tmap_del(&r->mems, cap, TAG_MEM, &p->side);
	else if (h == r->h_swapchain)
		tmap_del(&r->swapchains, cap, TAG_SWAPCHAIN, &p->side);
	else if (h == l->h_template)
		tmap_del(&r->templates, cap, TAG_TEMPLATE, &p->side);
	else if (h == r->h_fence && tmap_del(&l->sync, cap, TAG_FENCE, &p->sync))
		p->sync_kind = TAG_FENCE;
	else if (h == r->h_semaphore && tmap_del(&l->sync, cap, TAG_BINARY, &p->sync))
		p->sync_kind = TAG_BINARY;
	else if (h == r->h_semaphore && tmap_del(&l->sync, cap, TAG_TIMELINE, &p->sync))
		p->sync_kind = TAG_TIMELINE;
}

/* The parked objects, back in the maps. */
static void unpark(vkr *r)
{
	loop_state *l = r->loop;
	for (size_t i = l->nparked; i-- > 0;) {
		parked *p = &l->parked[i];
		const vk_handle_info *h = p->h;
		if (p->live)
			map_put(r, h, p->cap, p->live);
		if (p->side && (h == r->h_buffer || h == r->h_image)) {
			obj *o = (obj *)(uintptr_t)p->side;
			tmap_set(&r->objects, p->cap, TAG_OBJ, p->side);
			if (p->mem) {
				o->mem = p->mem;
				o->next_in_mem = p->mem->objs;
				p->mem->objs = o;
			}
		}
		if (p->side && h == r->h_memory)
			tmap_set(&r->mems, p->cap, TAG_MEM, p->side);
		if (p->side && h == l->h_template)
			tmap_set(&r->templates, p->cap, TAG_TEMPLATE, p->side);
		if (p->side && h == r->h_swapchain) {
			swapchain *s = (swapchain *)(uintptr_t)p->side;
			tmap_set(&r->swapchains, p->cap, TAG_SWAPCHAIN, p->side);
			for (uint32_t k = 0; k < s->n; k++)
				map_put(r, r->h_image, s->cap_img[k], (uint64_t)(uintptr_t)s->img[k]);
		}
		if (p->sync_kind)
			tmap_set(&l->sync, p->cap, p->sync_kind, p->sync);
	}
	l->nparked = 0;
}

/* A device or instance made before the range, ended: no pass after can
 * make it again. */
static void older_ended(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	if (h == r->h_device || h == r->h_instance)
		loop_refuse(r, h == r->h_device ? "end the device made before them"
			    : "end the instance made before them",
			    "a range that ends no device or instance it did not make",
			    "%s 0x%llx at call %llu", h->name, (unsigned long long)cap,
			    (unsigned long long)r->call->no);
}

/*
 * What a record (its arguments capture values) makes and ends, in born.
 * An end of an object made before the range is checked (LIFE_CHECK),
 * made (LIFE_LAST), or parked and taken out of the call (LIFE_PARK).
 * False: nothing is left for the call to end, it is not made.
 */
static bool life_step(vkr *r, enum life_mode mode, const cmd_entry *e, void *args)
{
	loop_state *l = r->loop;
	const vk_command_info *cmd = e->cmd;
	uint8_t action = cmd->action;
	if (e->loop == LK_RESET_DPOOL) {
		born_pool_ends(r, l->h_dpool, handle_at(args, &cmd->params[1]), mode, false);
		return true;
	}
	if (!cmd->object)
		return true;
	if (action == VK_ACTION_CREATE || action == VK_ACTION_ALLOCATE) {
		born_ctx b = {&l->born, cmd->object, 0};
		if (e->loop == LK_ALLOC_CBS && ((vk_args_vkAllocateCommandBuffers *)args)->pAllocateInfo)
			b.pool = (uint64_t)(uintptr_t)((vk_args_vkAllocateCommandBuffers *)args)
				->pAllocateInfo->commandPool;
		if (e->loop == LK_ALLOC_SETS && ((vk_args_vkAllocateDescriptorSets *)args)->pAllocateInfo)
			b.pool = (uint64_t)(uintptr_t)((vk_args_vkAllocateDescriptorSets *)args)
				->pAllocateInfo->descriptorPool;
		if (!is_failure(cap_result(r->call)))
			vk_walk_handles(cmd, args, true, born_note, &b);
		return true;
	}
	if (action != VK_ACTION_DESTROY && action != VK_ACTION_FREE)
		return true;
	uint32_t n, *count, left = 0;
	uint64_t *v = ended_handles(cmd, args, &n, &count);
	bool pool = cmd->object == l->h_cpool || cmd->object == l->h_dpool;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t cap = v[i];
		if (!cap || tmap_del(&l->born, cap, (uintptr_t)cmd->object, NULL)) {
			if (cap)
				born_ended(r, cmd->object, cap, mode);
			v[left++] = cap;
			continue;
		}
		/* made before the range; surfaces and messengers end nothing */
		if (mode == LIFE_CHECK)
			older_ended(r, cmd->object, cap);
		if (pool)
			born_pool_ends(r, cmd->object, cap, mode, mode != LIFE_LAST);
		if (mode != LIFE_PARK || e->special == SP_DESTROY_SURFACE ||
		    e->special == SP_FAKE_DESTROY) {
			v[left++] = cap;
			continue;
		}
		park(r, cmd->object, cap);
	}
	if (count)
		*count = left;
	return n == 0 || left > 0;
}

/* ---- between passes ---- */

static bool born_has(loop_state *l, uint64_t cap, const vk_handle_info *h)
{
	return cap && tmap_at(&l->born, cap, (uintptr_t)h);
}

static bool born_any(loop_state *l, const vk_handle_info *h)
{
	for (size_t i = 0; i < l->born.cap; i++)
		if (l->born.kinds[i] == (uintptr_t)h)
			return true;
	return false;
}

/* Ends object CAP of type H, made by the pass. */
static void end_object(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	typedef void (VKAPI_PTR *destroy_fn)(VkDevice, uint64_t, const VkAllocationCallbacks *);
	loop_state *l = r->loop;
	uint64_t v, live;
	if (h == r->h_memory) {
		free_memory(r, cap);
		return;
	}
	if (h == r->h_swapchain) {
		if (tmap_del(&r->swapchains, cap, TAG_SWAPCHAIN, &v))
			destroy_swapchain(r, (swapchain *)(uintptr_t)v);
		return;
	}
	/* surfaces and messengers: made up, nothing to end */
	if (map_get(r, h, cap, &live) && live && h != r->h_surface && h != l->h_messenger &&
	    h != l->h_report) {
		const vk_command_info *c = destroyer(r, h);
		destroy_fn fn = c ? (destroy_fn)vkGetDeviceProcAddr(r->dev.device, c->sig.name) : NULL;
		if (fn)
			fn(r->dev.device, live, NULL);
	}
	map_del(r, h, cap);
	if ((h == r->h_buffer || h == r->h_image) && tmap_del(&r->objects, cap, TAG_OBJ, &v)) {
		release_obj(r, (obj *)(uintptr_t)v);
		free((obj *)(uintptr_t)v);
	}
	if (h == l->h_template && tmap_del(&r->templates, cap, TAG_TEMPLATE, &v))
		free((tmpl *)(uintptr_t)v);
	if (h == r->h_fence)
		tmap_del(&l->sync, cap, TAG_FENCE, NULL);
	if (h == r->h_semaphore) {
		tmap_del(&l->sync, cap, TAG_BINARY, NULL);
		tmap_del(&l->sync, cap, TAG_TIMELINE, NULL);
	}
}

/* What the pass made and left alive, ended: command buffers and
 * descriptor sets of pools made before the range freed, those of pools
 * the pass made with their pools; a device or instance the pass made
 * with all it holds. */
static void end_born(vkr *r)
{
	loop_state *l = r->loop;
	tmap *b = &l->born;
	if (born_any(l, r->h_instance)) {
		end_instance(r);
		tmap_free(b);
		return;
	}
	if (born_any(l, r->h_device)) {
		end_device(r);
		born_ended(r, r->h_device, 0, LIFE_LAST);
	}
	for (size_t i = 0; i < b->cap; i++) {
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)b->kinds[i];
		uint64_t pool = b->vals[i] - 1;
		if ((h == l->h_cb && !born_has(l, pool, l->h_cpool)) ||
		    (h == l->h_set && !born_has(l, pool, l->h_dpool)))
			free_child(r, h, b->keys[i], pool);
	}
	for (size_t i = 0; i < b->cap; i++) {
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)b->kinds[i];
		if (h == l->h_cb || h == l->h_set)
			map_del(r, h, b->keys[i]);
		else if (h)
			end_object(r, h, b->keys[i]);
	}
	tmap_free(b);
}

/* Fences and binary semaphores made before the range, back in the state
 * the range found them in: a fence signalled by an empty batch or reset,
 * a semaphore signalled by an empty batch or waited on by one. */
static void fix_sync(vkr *r)
{
	loop_state *l = r->loop;
	bool submitted = false;
	for (size_t i = 0; i < l->start.cap; i++) {
		uint64_t key = l->start.keys[i], kind = l->start.kinds[i], was = l->start.vals[i];
		if (kind != TAG_FENCE && kind != TAG_BINARY)
			continue;
		uint64_t *now = tmap_at(&l->sync, key, kind);
		uint64_t live;
		bool fence = kind == TAG_FENCE;
		if (!now || *now == was ||
		    !map_get(r, fence ? r->h_fence : r->h_semaphore, key, &live) || !live)
			continue;
		*now = was;
		VkResult res;
		VkSemaphore sem = (VkSemaphore)(uintptr_t)live;
		VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
		VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
		if (fence && !was) {
			VkFence f = (VkFence)(uintptr_t)live;
			res = vkResetFences(r->dev.device, 1, &f);
		} else if (fence) {
			res = vkQueueSubmit(r->dev.queue, 0, NULL, (VkFence)(uintptr_t)live);
			submitted = true;
		} else {
			if (was) {
				si.signalSemaphoreCount = 1;
				si.pSignalSemaphores = &sem;
			} else {
				si.waitSemaphoreCount = 1;
				si.pWaitSemaphores = &sem;
				si.pWaitDstStageMask = &stage;
			}
			res = vkQueueSubmit(r->dev.queue, 1, &si, VK_NULL_HANDLE);
			submitted = true;
		}
		if (res != VK_SUCCESS)
			fatal(r, "--loop: cannot put %s 0x%llx back as the range found it: %s",
			      fence ? "VkFence" : "VkSemaphore", (unsigned long long)key,
			      result_name(res));
	}
	if (submitted)
		vkQueueWaitIdle(r->dev.queue);
}

/* Command buffers begun before the range that the range records into or
 * changes: their pools reset, and what the range uses of them recorded
 * again as the records before it left them. */
static void rerecord(vkr *r)
{
	loop_state *l = r->loop;
	for (size_t i = 0; i < l->restore.cap; i++) {
		uint64_t pool;
		if (tmap_used(&l->restore, i) && map_get(r, l->h_cpool, l->restore.keys[i], &pool) && pool)
			vkResetCommandPool(r->dev.device, (VkCommandPool)(uintptr_t)pool, 0);
	}
	uint64_t calls = r->calls;
	for (size_t i = 0; i < l->logs.cap; i++) {
		cblog *g = tmap_used(&l->logs, i) ? (cblog *)(uintptr_t)l->logs.vals[i] : NULL;
		if (!g || (g->first != T_CONTENT && g->first != T_SUBMIT) ||
		    !tmap_at(&l->restore, g->pool, TAG_RESTORE))
			continue;
		for (size_t j = 0; j < g->n; j++) {
			r->call = &g->calls[j];
			replay_call(r, r->call);
			trace_arena_reset(&r->arena);
		}
	}
	r->call = NULL;
	r->calls = calls;  /* the trace's calls, not these */
}

/* After a pass but the last: the device idle, the state the range began
 * with again.  The time that takes is not the frames': the frame clock
 * is moved past it. */
static void loop_rewind(vkr *r)
{
	loop_state *l = r->loop;
	r->call = NULL;
	if (r->dev.device)
		vkDeviceWaitIdle(r->dev.device);
	double t = now_s();
	l->rewinding = true;
	end_born(r);
	unpark(r);
	if (r->dev.device) {
		fix_sync(r);
		rerecord(r);
	}
	l->rewinding = false;
	double pause = now_s() - t;
	r->t_last_frame += pause;
	if (r->frames_done)
		r->t_first_frame += pause;
}

/* Before each call while --loop is on (replay_call); false: the call is
 * not made. */
static bool loop_call(vkr *r, const cmd_entry *e, void *args)
{
	loop_state *l = r->loop;
	if (l->rewinding)
		return true;
	if (!l->in_range) {
		loop_before(r, e, args);
		sync_note(r, e, args);
		return true;
	}
	if (l->pass)
		shift_timelines(r, e, args);
	if (!life_step(r, l->last ? LIFE_LAST : LIFE_PARK, e, args))
		return false;
	sync_note(r, e, args);
	return true;
}

/* ---- loop_check ---- */

/* A timeline semaphore made before the range: the values the range uses. */
typedef struct tl_use {
	uint64_t sem, base;          /* its value as the range began */
	uint64_t lo, hi;             /* of the values shifted */
	uint64_t max_signal, max_wait, wait_call;
} tl_use;

typedef struct check {
	vkr *r;
	tl_use *tl;
	size_t ntl, captl;
	tmap tl_index;   /* (semaphore, TAG_SHIFT) -> its index in tl + 1 */
	tmap resets;     /* (descriptor pool made before the range, TAG_RESET) -> the index
			  * of the first kept record resetting it */
	tmap new_sets;   /* check_resets: (set, its type) allocated in the range so far */
	size_t at;
} check;

/* What the range does to command buffer CB, where CB was begun before it. */
static void touch(vkr *r, uint64_t cb, uint8_t how)
{
	loop_state *l = r->loop;
	cblog *g = cblog_of(l, cb);
	if (!g || born_has(l, cb, l->h_cb))
		return;
	if (!g->first)
		g->first = how;
	if (how != T_SUBMIT || g->one_time)
		g->changed = true;
}

static void touch_pool(vkr *r, uint64_t pool)
{
	loop_state *l = r->loop;
	for (size_t i = 0; i < l->logs.cap; i++)
		if (tmap_used(&l->logs, i) && ((cblog *)(uintptr_t)l->logs.vals[i])->pool == pool)
			touch(r, l->logs.keys[i], T_RESET);
}

static void timeline_use(check *k, uint64_t sem, uint64_t value, bool wait)
{
	loop_state *l = k->r->loop;
	uint64_t *s = sem ? tmap_at(&l->start, sem, TAG_TIMELINE) : NULL;
	if (!s || born_has(l, sem, k->r->h_semaphore) || (wait && value <= *s))
		return;
	uint64_t *x = tmap_at(&k->tl_index, sem, TAG_SHIFT);
	tl_use *u;
	if (x) {
		u = &k->tl[*x - 1];
	} else {
		if (k->ntl == k->captl) {
			k->captl = k->captl ? k->captl * 2 : 16;
			k->tl = trace_xrealloc(k->tl, k->captl * sizeof(*k->tl));
		}
		u = &k->tl[k->ntl++];
		*u = (tl_use){.sem = sem, .base = *s, .lo = value, .hi = value};
		tmap_set(&k->tl_index, sem, TAG_SHIFT, k->ntl);
	}
	if (value < u->lo)
		u->lo = value;
	if (value > u->hi)
		u->hi = value;
	if (!wait && value > u->max_signal)
		u->max_signal = value;
	if (wait && value > u->max_wait) {
		u->max_wait = value;
		u->wait_call = k->r->call->no;
	}
}

/* A record's command buffers and timeline values, before life_step. */
static void check_call(check *k, const cmd_entry *e, void *args)
{
	vkr *r = k->r;
	loop_state *l = r->loop;
	const vk_command_info *cmd = e->cmd;
	VkResult capres = cap_result(r->call);
	switch ((enum loop_kind)e->loop) {
	case LK_RESET_CPOOL:
	case LK_DESTROY_CPOOL:
		touch_pool(r, handle_at(args, &cmd->params[1]));
		return;
	case LK_FREE_CBS: {
		vk_args_vkFreeCommandBuffers *a = args;
		for (uint32_t i = 0; a->pCommandBuffers && i < a->commandBufferCount; i++)
			touch(r, (uint64_t)(uintptr_t)a->pCommandBuffers[i], T_RESET);
		return;
	}
	case LK_RESET_DPOOL: {
		uint64_t pool = handle_at(args, &cmd->params[1]);
		if (!born_has(l, pool, l->h_dpool) && !tmap_at(&k->resets, pool, TAG_RESET))
			tmap_set(&k->resets, pool, TAG_RESET, k->at);
		return;
	}
	case LK_SIGNAL_SEMAPHORE: {
		const VkSemaphoreSignalInfo *si = ((vk_args_vkSignalSemaphore *)args)->pSignalInfo;
		if (si)
			timeline_use(k, (uint64_t)(uintptr_t)si->semaphore, si->value, false);
		return;
	}
	default:
		break;
	}
	switch ((enum special)e->special) {
	case SP_SUBMIT: {
		vk_args_vkQueueSubmit *a = args;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo *si = &a->pSubmits[i];
			const VkTimelineSemaphoreSubmitInfo *t = timeline_info(si->pNext);
			for (uint32_t j = 0; si->pCommandBuffers && j < si->commandBufferCount; j++)
				touch(r, (uint64_t)(uintptr_t)si->pCommandBuffers[j], T_SUBMIT);
			for (uint32_t j = 0; t && t->pWaitSemaphoreValues && si->pWaitSemaphores &&
			     j < t->waitSemaphoreValueCount && j < si->waitSemaphoreCount; j++)
				timeline_use(k, (uint64_t)(uintptr_t)si->pWaitSemaphores[j],
					     t->pWaitSemaphoreValues[j], true);
			for (uint32_t j = 0; t && t->pSignalSemaphoreValues && si->pSignalSemaphores &&
			     j < t->signalSemaphoreValueCount && j < si->signalSemaphoreCount; j++)
				timeline_use(k, (uint64_t)(uintptr_t)si->pSignalSemaphores[j],
					     t->pSignalSemaphoreValues[j], false);
		}
		return;
	}
	case SP_SUBMIT2: {
		vk_args_vkQueueSubmit2 *a = args;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo2 *si = &a->pSubmits[i];
			for (uint32_t j = 0; si->pCommandBufferInfos && j < si->commandBufferInfoCount; j++)
				touch(r, (uint64_t)(uintptr_t)si->pCommandBufferInfos[j].commandBuffer, T_SUBMIT);
			for (uint32_t j = 0; si->pWaitSemaphoreInfos && j < si->waitSemaphoreInfoCount; j++)
				timeline_use(k, (uint64_t)(uintptr_t)si->pWaitSemaphoreInfos[j].semaphore,
					     si->pWaitSemaphoreInfos[j].value, true);
			for (uint32_t j = 0; si->pSignalSemaphoreInfos && j < si->signalSemaphoreInfoCount; j++)
				timeline_use(k, (uint64_t)(uintptr_t)si->pSignalSemaphoreInfos[j].semaphore,
					     si->pSignalSemaphoreInfos[j].value, false);
		}
		return;
	}
	case SP_WAIT_SEMAPHORES: {
		const VkSemaphoreWaitInfo *wi = ((vk_args_vkWaitSemaphores *)args)->pWaitInfo;
		if (capres == VK_TIMEOUT || !wi || !wi->pSemaphores || !wi->pValues)
			return;
		for (uint32_t j = 0; j < wi->semaphoreCount; j++)
			timeline_use(k, (uint64_t)(uintptr_t)wi->pSemaphores[j], wi->pValues[j], true);
		return;
	}
	case SP_SEMAPHORE_VALUE: {
		vk_args_vkGetSemaphoreCounterValue *a = args;
		if (capres == VK_SUCCESS && a->pValue)
			timeline_use(k, (uint64_t)(uintptr_t)a->semaphore, *a->pValue, true);
		return;
	}
	default:
		return;
	}
}

/* What the pass leaves alive must be ended between passes. */
static void check_leftovers(vkr *r)
{
	loop_state *l = r->loop;
	for (size_t i = 0; i < l->born.cap; i++) {
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)l->born.kinds[i];
		uint64_t cap = l->born.keys[i], pool = l->born.vals[i] - 1;
		if (!h || h == l->h_cb || h == r->h_memory || h == r->h_swapchain || h == r->h_surface ||
		    h == l->h_messenger || h == l->h_report || h == r->h_device || h == r->h_instance)
			continue;
		if (h == l->h_set) {
			if (!born_has(l, pool, l->h_dpool))
				need_free_bit(r, pool, cap);
			continue;
		}
		if (!destroyer(r, h))
			loop_refuse(r, "make objects they do not end, which the replay cannot end "
				    "between passes", "a range that ends them", "%s 0x%llx", h->name,
				    (unsigned long long)cap);
	}
}

static void set_used(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		     const vk_field *f)
{
	(void)top;
	(void)f;
	check *k = ctx;
	vkr *r = k->r;
	loop_state *l = r->loop;
	if (h != l->h_set || !*value || tmap_at(&k->new_sets, *value, (uintptr_t)h))
		return;
	uint64_t *s = tmap_at(&l->sets, *value, (uintptr_t)h);
	uint64_t *x = s ? tmap_at(&k->resets, *s, TAG_RESET) : NULL;
	if (x && k->at < *x)
		loop_refuse(r, "reset a descriptor pool made before them, freeing descriptor sets "
			    "they use", "a range that uses no descriptor set made before it from a "
			    "pool it resets", "VkDescriptorPool 0x%llx at call %llu, VkDescriptorSet "
			    "0x%llx at call %llu", (unsigned long long)*s,
			    (unsigned long long)r->kept[*x].call.no, (unsigned long long)*value,
			    (unsigned long long)r->call->no);
}

/* A range that resets a descriptor pool made before it: the sets of that
 * pool made before the range are gone for the next pass, so it must not
 * use them (before the reset; after it, it could not at capture). */
static void check_resets(check *k)
{
	vkr *r = k->r;
	loop_state *l = r->loop;
	for (k->at = 0; k->at < r->nkept; k->at++) {
		const trace_call *c = &r->kept[k->at].call;
		cmd_entry *e = strncmp(c->sig->name, "tracekit.", 9) ? entry_of(r, c) : NULL;
		if (!e || e->special == SP_SKIP)
			continue;
		r->call = c;
		void *args = trace_arena_alloc(&r->arena, e->cmd->args_size);
		trace_error_clear(&r->err);
		if (vk_decode_args(e->cmd, c, &r->arena, args, &r->err) < 0)
			fatal(r, "malformed record: %s", r->err.msg);
		vk_walk_handles(e->cmd, args, false, set_used, k);
		if (e->loop == LK_ALLOC_SETS) {
			born_ctx b = {&k->new_sets, l->h_set, 0};
			vk_walk_handles(e->cmd, args, true, born_note, &b);
		}
		trace_arena_reset(&r->arena);
	}
	r->call = NULL;
}

/* D for each timeline semaphore made before the range: more than the
 * spread of the values the range uses, so that every pass's are above
 * the last's. */
static void check_timelines(check *k)
{
	vkr *r = k->r;
	loop_state *l = r->loop;
	uint64_t more = r->opt->loop - 1;
	for (size_t i = 0; i < k->ntl; i++) {
		tl_use *u = &k->tl[i];
		uint64_t top = u->max_signal > u->base ? u->max_signal : u->base;
		if (u->max_wait > top)
			loop_refuse(r, "wait for timeline semaphore values that only records after "
				    "them signal", "a range that signals the values it waits for",
				    "VkSemaphore 0x%llx, value %llu at call %llu",
				    (unsigned long long)u->sem, (unsigned long long)u->max_wait,
				    (unsigned long long)u->wait_call);
		uint64_t d = u->hi - u->lo + 1;
		if (!d || d > (UINT64_MAX - u->hi) / more)
			loop_refuse(r, "use timeline semaphore values too high to go up with each "
				    "pass", "a range with lower values", "VkSemaphore 0x%llx, value %llu",
				    (unsigned long long)u->sem, (unsigned long long)u->hi);
		tmap_set(&l->shift, u->sem, TAG_SHIFT, d);
		tmap_set(&l->shift, u->sem, TAG_BASE, u->base);
	}
}

/*
 * Reads the range as a pass would replay it: exit 1, with a message,
 * where a pass cannot begin as the range began (what cannot be parked,
 * ended between passes or put back); else the timeline shifts and the
 * command pools to record again between passes.
 */
static void loop_check(vkr *r)
{
	loop_state *l = r->loop;
	check k = {.r = r};
	tmap_copy(&l->start, &l->sync);
	for (k.at = 0; k.at < r->nkept; k.at++) {
		const trace_call *c = &r->kept[k.at].call;
		r->call = c;
		if (!strncmp(c->sig->name, "tracekit.", 9))
			continue;
		cmd_entry *e = entry_of(r, c);
		if (!e)
			fatal(r, "unknown function");
		/* most records: the command buffer is their first argument */
		if (e->loop == LK_RECORD || e->loop == LK_END_CB) {
			touch(r, first_handle(c), T_CONTENT);
			continue;
		}
		if (e->loop == LK_BEGIN_CB || e->loop == LK_RESET_CB) {
			touch(r, first_handle(c), T_RESET);
			continue;
		}
		uint8_t action = e->cmd->action, sp = e->special;
		if (sp == SP_SKIP || (action != VK_ACTION_CREATE && action != VK_ACTION_ALLOCATE &&
				      action != VK_ACTION_DESTROY && action != VK_ACTION_FREE &&
				      !e->loop && sp != SP_SUBMIT && sp != SP_SUBMIT2 &&
				      sp != SP_WAIT_SEMAPHORES && sp != SP_SEMAPHORE_VALUE))
			continue;
		void *args = trace_arena_alloc(&r->arena, e->cmd->args_size);
		trace_error_clear(&r->err);
		if (vk_decode_args(e->cmd, c, &r->arena, args, &r->err) < 0)
			fatal(r, "malformed record: %s", r->err.msg);
		check_call(&k, e, args);
		life_step(r, LIFE_CHECK, e, args);
		trace_arena_reset(&r->arena);
	}
	r->call = NULL;
	check_leftovers(r);
	if (k.resets.n)
		check_resets(&k);
	check_timelines(&k);
	for (size_t i = 0; i < l->logs.cap; i++) {
		cblog *g = tmap_used(&l->logs, i) ? (cblog *)(uintptr_t)l->logs.vals[i] : NULL;
		if (g && (g->first == T_CONTENT || g->first == T_SUBMIT) && g->changed)
			tmap_set(&l->restore, g->pool, TAG_RESTORE, 1);
	}
	tmap_free(&l->born);
	free(k.tl);
	tmap_free(&k.tl_index);
	tmap_free(&k.resets);
	tmap_free(&k.new_sets);
}

/* ---- the passes ---- */

static void loop_init(vkr *r)
{
	loop_state *l = r->loop = trace_xcalloc(1, sizeof(*l));
	l->h_cb = vk_handle_lookup("VkCommandBuffer");
	l->h_cpool = vk_handle_lookup("VkCommandPool");
	l->h_set = vk_handle_lookup("VkDescriptorSet");
	l->h_dpool = vk_handle_lookup("VkDescriptorPool");
	l->h_template = vk_handle_lookup("VkDescriptorUpdateTemplate");
	l->h_messenger = vk_handle_lookup("VkDebugUtilsMessengerEXT");
	l->h_report = vk_handle_lookup("VkDebugReportCallbackEXT");
}

/* One pass over the kept records. */
static void replay_kept(vkr *r)
{
	for (size_t i = 0; i < r->nkept; i++) {
		kept *k = &r->kept[i];
		r->call = &k->call;
		r->frame = k->frame;
		replay_call(r, &k->call);
		trace_arena_reset(&r->arena);
		if (k->ends_frame)
			frame_ended(r, k->frame);
	}
}

static void loop_run(vkr *r)
{
	loop_state *l = r->loop;
	l->in_range = true;
	for (l->pass = 0; l->pass < r->opt->loop; l->pass++) {
		l->last = l->pass + 1 == r->opt->loop;
		replay_kept(r);
		if (!l->last)
			loop_rewind(r);
	}
	r->call = NULL;
}

static void loop_free(vkr *r)
{
	loop_state *l = r->loop;
	for (size_t i = 0; i < r->nkept; i++)
		trace_call_free(&r->kept[i].call);
	free(r->kept);
	r->kept = NULL;
	r->nkept = r->capkept = 0;
	for (size_t i = 0; i < l->logs.cap; i++)
		if (tmap_used(&l->logs, i))
			cblog_free((cblog *)(uintptr_t)l->logs.vals[i]);
	tmap_free(&l->logs);
	tmap_free(&l->sets);
	tmap_free(&l->dpools);
	tmap_free(&l->sync);
	tmap_free(&l->start);
	tmap_free(&l->shift);
	tmap_free(&l->restore);
	tmap_free(&l->born);
	free(l->parked);
	free(l);
	r->loop = NULL;
}

/* ------------------------------------------------------------------ */
/* The run. */

static void frame_ended(vkr *r, int64_t frame)
{
	double t = now_s(), dt = t - r->t_last_frame;
	r->t_last_frame = t;
	if (r->opt->last_frame >= 0 && frame >= r->opt->last_frame)
		r->stop = true;
	if (frame < r->opt->first_frame)
		return;
	if (!r->frames_done++)
		r->t_first_frame = t - dt;
	if (!r->opt->stats)
		return;
	if (r->nframe_times == r->cap_frame_times) {
		r->cap_frame_times = r->cap_frame_times ? r->cap_frame_times * 2 : 256;
		r->frame_times = trace_xrealloc(r->frame_times, r->cap_frame_times * sizeof(double));
	}
	r->frame_times[r->nframe_times++] = dt;
	gpu_poll(r, false);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median, 99th percentile and maximum of N values, in milliseconds;
 * the sum in seconds. */
typedef struct spread {
	double med, p99, max, sum;
} spread;

static spread spread_of(const double *v, size_t n)
{
	spread sp = {0};
	if (!n)
		return sp;
	double *s = trace_xcalloc(n, sizeof(double));
	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	for (size_t i = 0; i < n; i++)
		sp.sum += s[i];
	sp.med = s[n / 2] * 1e3;
	sp.p99 = s[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] * 1e3;
	sp.max = s[n - 1] * 1e3;
	free(s);
	return sp;
}

static void print_stats(vkr *r, double total)
{
	double span = r->frames_done ? r->t_last_frame - r->t_first_frame : 0;
	double fps = span > 0 ? (double)r->frames_done / span : 0;
	spread cpu = spread_of(r->frame_times, r->nframe_times);
	/* frames whose batches were never timed (none, or a family without
	 * timestamps alone) count 0 */
	bool gpu = r->frame_gpu && !r->gpu_unmeasured;
	double *g = trace_xcalloc(r->nframe_times, sizeof(double));
	for (size_t i = 0; gpu && i < r->nframe_times && i < r->cap_frame_gpu; i++)
		g[i] = r->frame_gpu[i];
	spread gs = spread_of(g, r->nframe_times);
	free(g);
	FILE *o = stdout;
	if (r->opt->stats == 2) {
		fprintf(o, "{\"device\": \"%s\", \"frames\": %llu, \"seconds\": %.6f, "
			"\"fps\": %.3f, \"frame_ms\": {\"median\": %.3f, \"p99\": %.3f, \"max\": %.3f}, ",
			r->dev.props.deviceName, (unsigned long long)r->frames_done, total, fps,
			cpu.med, cpu.p99, cpu.max);
		if (gpu)
			fprintf(o, "\"frame_gpu_ms\": {\"median\": %.3f, \"p99\": %.3f, \"max\": %.3f}, "
				"\"gpu_seconds\": %.6f, ", gs.med, gs.p99, gs.max, gs.sum);
		else
			fprintf(o, "\"frame_gpu_ms\": null, \"gpu_seconds\": null, ");
		fprintf(o, "\"calls\": %llu, \"calls_per_second\": %.0f, \"warnings\": %llu, "
			"\"heaps\": [", (unsigned long long)r->calls,
			total > 0 ? (double)r->calls / total : 0, (unsigned long long)r->warnings);
		for (uint32_t h = 0; h < r->dev.memory.memoryHeapCount; h++)
			fprintf(o, "%s{\"heap\": %u, \"peak_bytes\": %llu}", h ? ", " : "", h,
				(unsigned long long)r->dev.heap_stats[h].memory_peak);
		fprintf(o, "]}\n");
		return;
	}
	fprintf(o, "device:            %s\n", r->dev.props.deviceName);
	fprintf(o, "frames:            %llu\n", (unsigned long long)r->frames_done);
	fprintf(o, "replay time:       %.3f s\n", total);
	fprintf(o, "frames per second: %.1f\n", fps);
	fprintf(o, "frame CPU time:    median %.3f ms, p99 %.3f ms, max %.3f ms\n", cpu.med,
		cpu.p99, cpu.max);
	if (gpu)
		fprintf(o, "frame GPU time:    median %.3f ms, p99 %.3f ms, max %.3f ms (busy)\n"
			"GPU time:          %.3f s\n", gs.med, gs.p99, gs.max, gs.sum);
	else
		fprintf(o, "frame GPU time:    not measured (%s)\n", r->opt->no_gpu_time
			? "--no-gpu-time" : r->gpu_unmeasured
			? "a queue without timestamps, or not from vkGetDeviceQueue"
			: "no command buffer submitted");
	fprintf(o, "calls:             %llu (%.0f per second)\n", (unsigned long long)r->calls,
		total > 0 ? (double)r->calls / total : 0);
	for (uint32_t h = 0; h < r->dev.memory.memoryHeapCount; h++)
		fprintf(o, "heap %u peak:       %.1f MiB\n", h,
			(double)r->dev.heap_stats[h].memory_peak / (1024.0 * 1024.0));
}

int vkr_run(trace_reader *in, const vkr_options *opt)
{
	static vkr rs;
	vkr *r = &rs;
	r->opt = opt;
	r->fns = trace_xcalloc(vk_ncommands, sizeof(*r->fns));
	r->fn_done = trace_xcalloc(vk_ncommands, 1);
	trace_arena_init(&r->arena);
	r->h_buffer = vk_handle_lookup("VkBuffer");
	r->h_image = vk_handle_lookup("VkImage");
	r->h_memory = vk_handle_lookup("VkDeviceMemory");
	r->h_physical = vk_handle_lookup("VkPhysicalDevice");
	r->h_surface = vk_handle_lookup("VkSurfaceKHR");
	r->h_swapchain = vk_handle_lookup("VkSwapchainKHR");
	r->h_semaphore = vk_handle_lookup("VkSemaphore");
	r->h_fence = vk_handle_lookup("VkFence");
	r->h_queue = vk_handle_lookup("VkQueue");
	r->h_device = vk_handle_lookup("VkDevice");
	r->h_instance = vk_handle_lookup("VkInstance");
	r->s_allocator = vk_struct_lookup("VkAllocationCallbacks");
	if (vk_ncalls != vk_ncommands) {
		fprintf(stderr, "trace-replay: the generated thunks do not match the schema\n");
		return 1;
	}
	parse_header_memory(r, trace_reader_header(in));
	trace_frames_init(&r->frames);
	r->t_start = r->t_last_frame = now_s();
	trace_call *c;
	int k = 0;
	uint64_t records = 0;
	/* --loop: the records before the range replay as they come, the
	 * range's are kept, then replayed opt->loop times */
	bool looping = opt->loop > 1;
	if (looping)
		loop_init(r);
	while (!r->stop && (k = trace_reader_next(in, &c, &r->err)) > 0) {
		r->call = c;
		int64_t f = trace_frames_next(&r->frames, c, &r->err);
		if (f < 0)
			fatal(r, "%s", r->err.msg);
		trace_cli_progress(in, ++records);
		if (looping && f >= opt->first_frame) {
			keep(r, c, f, r->frames.ended);
			if (r->frames.ended && opt->last_frame >= 0 && f >= opt->last_frame)
				break;
			continue;
		}
		r->frame = f;
		replay_call(r, c);
		trace_arena_reset(&r->arena);
		if (r->frames.ended)
			frame_ended(r, f);
	}
	trace_cli_progress_done();
	r->call = NULL;
	if (!r->stop && k < 0) {
		trace_error_print(&r->err, trace_cli_self.prog, stderr);
		exit(1);
	}
	if (looping) {
		loop_check(r);
		r->t_last_frame = now_s();
		loop_run(r);
		loop_free(r);
	}
	if (r->dev.device) {
		vkDeviceWaitIdle(r->dev.device);
		gpu_poll(r, true);
	}
	double total = now_s() - r->t_start;
	if (r->frames_done)
		r->t_last_frame = now_s();
	if (r->next_shot < opt->nscreenshots)
		warn(r, "frame %llu: never presented, no screenshot",
		     (unsigned long long)opt->screenshots[r->next_shot]);
	if (opt->stats)
		print_stats(r, total);
	fflush(stdout);
	/* a stream that ends early (trace-trim, --frames) leaves the device */
	if (r->have_instance) {
		device_teardown(r);
		vkd_close(&r->dev);
	}
	if (r->warnings > WARNINGS_SHOWN && !opt->quiet)
		fprintf(stderr, "%s: %s: %llu more warnings not shown\n", trace_cli_self.prog,
			opt->input, (unsigned long long)(r->warnings - WARNINGS_SHOWN));
	tmap_free(&r->handles);
	for (size_t i = 0; i < r->sigs.cap; i++)
		if (tmap_used(&r->sigs, i))
			free((cmd_entry *)(uintptr_t)r->sigs.vals[i]);
	tmap_free(&r->sigs);
	free(r->fns);
	free(r->fn_done);
	free(r->frame_times);
	free(r->frame_gpu);
	trace_arena_free(&r->arena);
	int status = 0;
	if (r->dev.validation_errors) {
		fprintf(stderr, "%s: %s: %llu validation error%s\n", trace_cli_self.prog, opt->input,
			(unsigned long long)r->dev.validation_errors,
			r->dev.validation_errors == 1 ? "" : "s");
		status = 1;
	}
	if (r->errors) {
		fprintf(stderr, "%s: %s: %llu call%s failed that succeeded at capture\n",
			trace_cli_self.prog, opt->input, (unsigned long long)r->errors,
			r->errors == 1 ? "" : "s");
		status = 1;
	}
	return status;
}
