/*
 * VK_LAYER_TRACEKIT_capture: what the layer's files share.
 *
 * capture.c: the loader interface, instances and devices, the name
 * lookups, the trace writer thread; memory.c: object-based memory
 * tracking (shadow copies of mapped memory, update pseudo-calls at queue
 * submits).  The wrappers are generated (build/gen/layer_gen.c).
 */
#ifndef LAYER_H
#define LAYER_H

#include "vkschema_cmds.h" /* <vulkan/vulkan.h> with the platforms we build */
#include <vulkan/vk_layer.h>

#include <pthread.h>

#include "layer_gen.h"

#define TK_LAYER_NAME "VK_LAYER_TRACEKIT_capture"

typedef struct tk_mem tk_mem;
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
} tk_device;

tk_instance *tk_instance_of(const void *dispatchable);
tk_device *tk_device_of(const void *dispatchable);

/* A record handed to the writer thread. */
typedef struct tk_rec tk_rec;

/* Records the enter event of a call (NULL when not tracing). */
tk_rec *tk_enter(const vk_command_info *cmd, const void *args);
/* Records its leave: the outputs and the result. */
void tk_leave(tk_rec *enter, const vk_command_info *cmd, const void *args);
/* Writes a tracekit.update pseudo-call. */
void tk_update(uint64_t object, uint64_t offset, const void *data, size_t size);
/* Whether calls are being recorded (false after an output error). */
bool tk_tracing(void);

/* memory.c */
void tk_memory_init(tk_device *dev);
void tk_memory_fini(tk_device *dev);

#endif
