/*
 * VK_LAYER_TRACEKIT_capture: what the layer's files share.
 *
 * capture.c: the loader interface, instances and devices, the name
 * lookups, the device extensions let through; output.c: the records, the
 * trace writer thread, the header's properties, the flushes for endings;
 * ending.c: the signals a program ends by (fatal ones, Ctrl-C, kill);
 * memory.c: object-based memory tracking (shadow copies of mapped memory,
 * update pseudo-calls at queue submits); watch.c: the pages of mapped
 * memory written since the last submit; refs.c: what submitted command
 * buffers may read, so that a submit compares only that memory;
 * screenshot.c: TRACEKIT_SCREENSHOT (presented images saved as PNG with
 * lib/base/png.c).  The wrappers are generated (build/gen/layer_gen.c, included
 * by capture.c only).
 */
#ifndef LAYER_H
#define LAYER_H

#include "vkschema_cmds.h" /* <vulkan/vulkan.h> with the platforms we build */
#include <vulkan/vk_layer.h>

#include <pthread.h>

#include "layer_gen.h"

#define TK_LAYER_NAME "VK_LAYER_TRACEKIT_capture"

typedef struct tk_mem tk_mem;
typedef struct tk_swapchain tk_swapchain;
typedef struct tk_object tk_object;

/* A small open-addressing map from a 64-bit handle to a pointer. */
typedef struct tk_map {
	uint64_t *keys;
	void **vals;
	size_t cap, used;
} tk_map;

void *tk_map_get(const tk_map *m, uint64_t key);
void tk_map_put(tk_map *m, uint64_t key, void *val);
void *tk_map_del(tk_map *m, uint64_t key);
void tk_map_free(tk_map *m);

typedef struct tk_instance {
	void *key;                     /* the loader's dispatch pointer */
	VkInstance handle;
	PFN_vkGetInstanceProcAddr gipa; /* the next layer's */
	tk_instance_disp disp;
	/* what the next layer's vkGetInstanceProcAddr answered for device
	 * commands the application looked up there: a device's wrapper
	 * falls back on it where the device's own table has none */
	tk_device_disp ddisp;
	/* each physical device's extension list as the layer answers it
	 * (capture.c), under ext_lock */
	pthread_mutex_t ext_lock;
	struct tk_exts *exts;
} tk_instance;

typedef struct tk_device {
	void *key;
	VkDevice handle;
	VkPhysicalDevice physical;
	tk_instance *inst;
	PFN_vkGetDeviceProcAddr gdpa;
	tk_device_disp disp;
	VkPhysicalDeviceMemoryProperties memprops;
	/* memory tracking (memory.c), under lock */
	pthread_mutex_t lock;
	tk_map mems;     /* VkDeviceMemory -> tk_mem */
	tk_map objects;  /* VkBuffer / VkImage -> tk_object */
	/* what command buffers reference (refs.c), under refs_lock: apart,
	 * so that recording does not wait for a submit's compare (zink
	 * records on one thread and submits on another); a submit takes
	 * lock, then refs_lock */
	pthread_mutex_t refs_lock;
	tk_map cbufs;     /* VkCommandBuffer -> tk_cbuf */
	tk_map views;     /* VkBufferView / VkImageView -> its buffer / image and range */
	tk_map fbs;       /* VkFramebuffer -> tk_fb */
	tk_map dsets;     /* VkDescriptorSet -> tk_dset */
	tk_map templates; /* VkDescriptorUpdateTemplate -> tk_template */
	bool full_scan;   /* every submit compares all mapped memory: a device
			   * address was handed out, or TRACEKIT_SCAN=all */
	uint64_t epoch;   /* of the last submit's scan */
	tk_mem **marked;  /* the memory that scan compares */
	size_t nmarked, capmarked;
	struct tk_span *spans; /* scratch for a scan: what it compares */
	size_t capspans;
	/* screenshots (screenshot.c), under shot_lock */
	PFN_vkSetDeviceLoaderData set_loader_data;
	pthread_mutex_t shot_lock;
	tk_map queues;       /* VkQueue -> queue family + 1 */
	tk_map swapchains;   /* VkSwapchainKHR -> tk_swapchain */
	VkCommandPool *pools; /* per queue family, created on first use */
	uint32_t npools;
} tk_device;

tk_instance *tk_instance_of(const void *dispatchable);
tk_device *tk_device_of(const void *dispatchable);

/* A record handed to the writer thread. */
typedef struct tk_rec tk_rec;

/* Records the enter event of a call (NULL when not tracing). */
tk_rec *tk_enter(const vk_command_info *cmd, const void *args);
/* tk_enter, with parameter PARAM (a void* the registry gives no length)
 * written as a blob of SIZE bytes, zeroed, then filled by FILL(CTX, blob). */
tk_rec *tk_enter_blob(const vk_command_info *cmd, const void *args, uint32_t param,
		      uint64_t size, void (*fill)(void *ctx, uint8_t *blob), void *ctx);
/* Records its leave: the outputs and the result. */
void tk_leave(tk_rec *enter, const vk_command_info *cmd, const void *args);
/* Writes a tracekit.update pseudo-call. */
void tk_update(uint64_t object, uint64_t offset, const void *data, size_t size);
/* Writes a tracekit.update.sparse of the NWORDS 4-byte words at LIVE that
 * differ from OLD, and copies them into OLD (vk_update_gather); false,
 * OLD as it was, when not tracing. */
bool tk_update_sparse(uint64_t object, uint64_t offset, const uint8_t *live, uint8_t *old,
		      size_t nwords);
/* Whether calls are being recorded (false after an output error). */
bool tk_tracing(void);

/* The trace's path (TRACEKIT_OUTPUT or its default). */
const char *tk_output_path(void);
/* Opens the output and starts the writer thread, once a process (at the
 * first vkCreateInstance). */
void tk_output_start(void);
/* The header's device properties, from the first device made; the
 * writer waits for them before it writes the header. */
void tk_output_describe(tk_device *dev);
/* What is queued now, written and put into the file whole; LAST: the
 * trace then ends (tracing stops, the file is closed).  Waits for it, at
 * most TIMEOUT_MS; false when that passed.  Not from a signal handler. */
bool tk_output_flush(bool last, int timeout_ms);
/* From a fatal signal's handler: tracing stops, the queue and this
 * thread's calls in flight are written, the file closed (5 s at most). */
void tk_output_crash(void);

/* ending.c: the handlers of fatal and ending signals, and the thread that
 * flushes for them; once, when the output starts. */
void tk_endings_start(void);
/*
 * In the layer's own code (an entry point's, the driver's call it makes
 * left out) a thread may hold the layer's locks: a program's handler of an
 * ending signal that came meanwhile, if it called Vulkan, would wait for
 * them for ever.  It is put off until the thread leaves (ending.c).
 * Initial-exec: read in a signal handler.
 */
extern _Thread_local unsigned tk_inside __attribute__((tls_model("initial-exec")));
extern _Thread_local int tk_put_off __attribute__((tls_model("initial-exec")));
void tk_run_put_off(void);
static inline void tk_in(void)
{
	tk_inside++;
}
static inline void tk_out(void)
{
	if (!--tk_inside && tk_put_off)
		tk_run_put_off();
}
/* In a child of fork(): the program's signal dispositions back. */
void tk_endings_forked(void);

/* memory.c */
void tk_memory_init(tk_device *dev);
void tk_memory_fini(tk_device *dev);

/* watch.c: the pages of mapped memory written.  The page size, or 0 when
 * nothing can be watched; watching the whole pages [ADDR, ADDR + LEN)
 * begun (false: it cannot be) and ended; the runs of those pages written
 * since they were last looked at (or the watch began), each to FN, and
 * protected again: -1 when that cannot be said (every page may be). */
size_t tk_watch_page(void);
bool tk_watch_start(void *addr, size_t len);
/* what a watched page's first write costs here, in ns (0: none watched);
 * whether every mapping is to be watched, paying or not (TRACEKIT_WATCH) */
double tk_watch_fault_ns(void);
bool tk_watch_always(void);
void tk_watch_stop(void *addr, size_t len);
int tk_watch_written(void *addr, size_t len, void (*fn)(void *ctx, uintptr_t lo, uintptr_t hi),
		     void *ctx);

/* refs.c: what a submit of command buffers may read.  Records the
 * objects command CMD (a vkCmd*) references; HOW caches what the schema
 * says of the command. */
void tk_cmd_refs(tk_device *dev, const vk_command_info *cmd, const void *args,
		 _Atomic uint8_t *how);
void tk_note_address(tk_device *dev);
/* Records vkCreateDescriptorUpdateTemplate{,KHR} (ARGS, its pCreateInfo
 * at *INFO) with the entries packed (vk_template_pack), as the trace
 * holds every template whose pData the layer can size. */
tk_rec *tk_enter_template_create(const vk_command_info *cmd, void *args,
				 const VkDescriptorUpdateTemplateCreateInfo **info);
/* Records a call whose parameter PARAM is the pData of update template T:
 * a blob of the bytes T's entries read, packed as the trace's template
 * says; an address where the layer cannot size them. */
tk_rec *tk_enter_template_data(tk_device *dev, const vk_command_info *cmd, const void *args,
			       uint32_t param, uint64_t t, const void *data);
void tk_refs_fini(tk_device *dev);
/* Up to the end of an object, in a range [lo, hi) of its bytes. */
#define TK_ALL UINT64_MAX
/* Buffer or image HANDLE, of which bytes [lo, hi) may be read. */
typedef void tk_mark_fn(tk_device *dev, uint64_t handle, VkDeviceSize lo, VkDeviceSize hi);
/* Under dev->lock and dev->refs_lock: calls MARK for every buffer and
 * image that command buffer CB and the secondaries it executes
 * reference, directly or through views, framebuffers and descriptor
 * sets, with the range they may read (a buffer descriptor's, a buffer
 * view's, a copy's source regions; otherwise all); false when that cannot
 * be known (the caller scans everything). */
bool tk_refs_collect(tk_device *dev, VkCommandBuffer cb, tk_mark_fn *mark);

/* screenshot.c */
void tk_screenshot_init(tk_device *dev, const VkDeviceCreateInfo *info);
void tk_screenshot_fini(tk_device *dev); /* before the device goes */

#endif
