/*
 * VK_LAYER_TRACEKIT_capture: what the layer's files share.
 *
 * capture.c: the loader interface, instances and devices, the name
 * lookups, the trace writer thread; memory.c: object-based memory
 * tracking (shadow copies of mapped memory, update pseudo-calls at queue
 * submits); refs.c: what submitted command buffers may read, so that a
submit compares only that memory; screenshot.c: TRACEKIT_SCREENSHOT (presented images saved as
 * PNG with lib/png.c).  The wrappers are generated (build/gen/layer_gen.c).
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
	/* what command buffers reference (refs.c), under lock too */
	tk_map cbufs;     /* VkCommandBuffer -> tk_cbuf */
	tk_map views;     /* VkBufferView / VkImageView -> its buffer / image */
	tk_map fbs;       /* VkFramebuffer -> tk_fb */
	tk_map dsets;     /* VkDescriptorSet -> tk_dset */
	tk_map templates; /* VkDescriptorUpdateTemplate -> tk_template */
	bool full_scan;   /* every submit compares all mapped memory: a device
			   * address was handed out, or TRACEKIT_SCAN=all */
	uint64_t epoch;   /* of the last submit's scan */
	tk_mem **marked;  /* the memory that scan compares */
	size_t nmarked, capmarked;
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
 * written as a blob of the SIZE bytes at DATA. */
tk_rec *tk_enter_blob(const vk_command_info *cmd, const void *args, uint32_t param,
		      const void *data, uint64_t size);
/* Records its leave: the outputs and the result. */
void tk_leave(tk_rec *enter, const vk_command_info *cmd, const void *args);
/* Writes a tracekit.update pseudo-call. */
void tk_update(uint64_t object, uint64_t offset, const void *data, size_t size);
/* Whether calls are being recorded (false after an output error). */
bool tk_tracing(void);

/* The trace's path (TRACEKIT_OUTPUT or its default). */
const char *tk_output_path(void);

/* memory.c */
void tk_memory_init(tk_device *dev);
void tk_memory_fini(tk_device *dev);

/* refs.c: what a submit of command buffers may read.  Records the
 * objects command CMD (a vkCmd*) references; HOW caches what the schema
 * says of the command. */
void tk_cmd_refs(tk_device *dev, const vk_command_info *cmd, const void *args,
		 _Atomic uint8_t *how);
void tk_note_address(tk_device *dev);
/* The bytes of pData descriptor update template T reads
 * (vk_template_data_size); false for a template the layer does not know
 * or whose descriptors it cannot size. */
bool tk_template_size(tk_device *dev, uint64_t t, uint64_t *size);
void tk_refs_fini(tk_device *dev);
/* Under dev->lock: calls MARK for every buffer and image (by handle) that
 * command buffer CB and the secondaries it executes reference, directly
 * or through views, framebuffers and descriptor sets; false when that
 * cannot be known (the caller scans everything). */
bool tk_refs_collect(tk_device *dev, VkCommandBuffer cb,
		     void (*mark)(tk_device *dev, uint64_t handle));

/* screenshot.c */
void tk_screenshot_init(tk_device *dev, const VkDeviceCreateInfo *info);
void tk_screenshot_fini(tk_device *dev); /* before the device goes */

#endif
