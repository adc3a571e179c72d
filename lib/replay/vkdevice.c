/*
 * The replay device and the replayer's own memory allocator.  See
 * vkdevice.h for what it offers and trace-replay(1) for the rules it
 * follows (memory-type translation, block sizes, dedicated allocations).
 *
 * The allocator is deliberately plain: a block keeps its live ranges in
 * an array sorted by offset and a new range goes into the smallest gap
 * that takes it (best fit).  Recordings keep at most thousands of
 * allocations alive per block, where a linear scan costs less than the
 * vkCreateBuffer next to it.
 */
#include "internal.h"
#include "vkdevice.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vkd_block {
	vkd_pool *pool;        /* NULL for a dedicated allocation */
	vkd_block *next;       /* in its pool */
	VkDeviceMemory memory;
	VkDeviceSize size;
	uint32_t type;
	bool dedicated;
	struct vkd_range {
		VkDeviceSize offset, size;
		uint8_t kind;      /* vkd_kind */
	} *ranges;             /* live ranges, sorted by offset */
	size_t nranges, cap;
	void *mapped;          /* while map_refs > 0 */
	uint32_t map_refs;
};

struct vkd_pool {
	uint32_t type;
	VkDeviceSize block_size;
	uint64_t min_blocks, max_blocks; /* max 0: no limit */
	bool custom;
	bool ignore_granularity;
	bool address;          /* its blocks allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT */
	vkd_block *blocks;
	size_t nblocks;
	vkd_pool *next;        /* in the device's list of custom pools */
};

/* Fills err with a message about the device (the file is "vulkan"). */
static int fail(trace_error *err, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(trace_error *err, int status, const char *fmt, ...)
{
	va_list ap;
	snprintf(err->file, sizeof(err->file), "vulkan");
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->call = err->offset = err->file_offset = err->line = err->column = -1;
	return status;
}

static const char *result_name(VkResult r)
{
	switch (r) {
	case VK_SUCCESS: return "VK_SUCCESS";
	case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
	case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
	case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
	case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
	case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
	case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
	case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
	case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
	case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
	case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
	case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
	default: return "a VkResult";
	}
}


static inline VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

static inline VkDeviceSize align_down(VkDeviceSize v, VkDeviceSize a)
{
	return a > 1 ? v / a * a : v;
}

static inline unsigned popcount(uint32_t v)
{
	return (unsigned)__builtin_popcount(v);
}

/* ------------------------------------------------------------------ */
/* Names of flags, for statistics and messages. */

static const char *flags_name(char *out, size_t cap, uint32_t f, const char *const *names,
			      unsigned nnames)
{
	size_t n = 0;
	out[0] = 0;
	for (unsigned i = 0; i < 32; i++) {
		if (!(f & (1u << i)))
			continue;
		int k = i < nnames && names[i]
			? snprintf(out + n, cap - n, "%s%s", n ? "|" : "", names[i])
			: snprintf(out + n, cap - n, "%s0x%x", n ? "|" : "", 1u << i);
		if (k < 0 || (size_t)k >= cap - n)
			break;
		n += (size_t)k;
	}
	if (!n)
		snprintf(out, cap, "0");
	return out;
}

const char *vkd_memory_flags_name(char *out, size_t cap, VkMemoryPropertyFlags f)
{
	static const char *const names[] = {
		"DEVICE_LOCAL", "HOST_VISIBLE", "HOST_COHERENT", "HOST_CACHED",
		"LAZILY_ALLOCATED", "PROTECTED", "DEVICE_COHERENT_AMD", "DEVICE_UNCACHED_AMD",
		"RDMA_CAPABLE_NV",
	};
	return flags_name(out, cap, f, names, sizeof(names) / sizeof(names[0]));
}

const char *vkd_heap_flags_name(char *out, size_t cap, VkMemoryHeapFlags f)
{
	static const char *const names[] = {"DEVICE_LOCAL", "MULTI_INSTANCE"};
	return flags_name(out, cap, f, names, 2);
}

/* ------------------------------------------------------------------ */
/* The device. */

/* Whether a message is among the first of its kind, WHAT (a performance
 * warning: the first alone; an error or warning: the first
 * KIND_SHOWN): a program replayed says the same at every frame (zink
 * blitting mipmaps in the GENERAL layout: 540 performance warnings in 30
 * frames of glmark2-es2's refract; Godot 3 through zink, 9,579 errors
 * of one kind in 1,916 frames, zink's own, as the program run alone
 * without tracing has them). */
#define KIND_SHOWN 10

static bool shown(vkd_messages *m, const VkDebugUtilsMessengerCallbackDataEXT *data,
		  const char *what)
{
	uint64_t limit = !strcmp(what, "performance warning") ? 1 : KIND_SHOWN;
	int32_t id = data ? data->messageIdNumber : 0;
	for (size_t i = 0; i < m->nseen; i++)
		if (m->seen[i].id == id && !strcmp(m->seen[i].what, what)) {
			if (m->seen[i].shown < limit) {
				m->seen[i].shown++;
				return true;
			}
			m->seen[i].more++;
			return false;
		}
	if (m->nseen == m->capseen) {
		m->capseen = m->capseen ? 2 * m->capseen : 8;
		m->seen = trace_xrealloc(m->seen, m->capseen * sizeof(*m->seen));
	}
	m->seen[m->nseen++] = (struct vkd_seen){id, what, 1, 0,
		trace_xstrdup(data && data->pMessageIdName ? data->pMessageIdName : "(no name)")};
	return true;
}

void vkd_messages_end(vkd_messages *m)
{
	for (size_t i = 0; i < m->nseen; i++) {
		if (m->seen[i].more)
			fprintf(stderr, "%s: validation: %llu more %s%s %s, like the one%s shown\n",
				m->prog ? m->prog : "vulkan", (unsigned long long)m->seen[i].more,
				m->seen[i].what, m->seen[i].more == 1 ? "" : "s", m->seen[i].name,
				m->seen[i].shown == 1 ? "" : "s");
		free(m->seen[i].name);
	}
	free(m->seen);
	m->seen = NULL;
	m->nseen = m->capseen = 0;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
						 VkDebugUtilsMessageTypeFlagsEXT types,
						 const VkDebugUtilsMessengerCallbackDataEXT *data,
						 void *user)
{
	vkd_messages *m = user;
	const char *what;
	if (m->ignore && m->ignore())
		return VK_FALSE;
	if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
		m->errors++;
		what = "error";
	} else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
		m->warnings++;
		what = "warning";
	} else {
		return VK_FALSE;
	}
	if (m->quiet)
		return VK_FALSE;
	if ((types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT) &&
	    !(severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT))
		what = "performance warning";
	if (!shown(m, data, what))
		return VK_FALSE;
	if (!strcmp(what, "performance warning"))
		what = "warning";
	char about[160] = "";
	if (m->about)
		m->about(m->ctx, about, sizeof(about));
	fprintf(stderr, "%s: %s%svalidation %s: %s\n", m->prog ? m->prog : "vulkan", about,
		about[0] ? ": " : "", what, data && data->pMessage ? data->pMessage : "(no message)");
	return VK_FALSE;
}

static bool has_layer(const char *name)
{
	uint32_t n = 0;
	if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS)
		return false;
	VkLayerProperties *l = trace_xcalloc(n, sizeof(*l));
	bool found = false;
	if (vkEnumerateInstanceLayerProperties(&n, l) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = !strcmp(l[i].layerName, name);
	free(l);
	return found;
}

static bool device_has_extension(VkPhysicalDevice p, const char *name)
{
	uint32_t n = 0;
	if (vkEnumerateDeviceExtensionProperties(p, NULL, &n, NULL) != VK_SUCCESS)
		return false;
	VkExtensionProperties *e = trace_xcalloc(n, sizeof(*e));
	bool found = false;
	if (vkEnumerateDeviceExtensionProperties(p, NULL, &n, e) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = !strcmp(e[i].extensionName, name);
	free(e);
	return found;
}

static const char *device_type_name(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
	case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
	default: return "other";
	}
}

static int open_instance(vkd_device *d, const vkd_options *opt, const vkd_instance_request *req,
			 trace_error *err)
{
	const char *layers[1];
	uint32_t nlayers = 0, nexts = 0;
	const char **exts = trace_xcalloc((req ? req->nextensions : 0) + 1, sizeof(*exts));
	for (uint32_t i = 0; req && i < req->nextensions; i++)
		if (!opt->validate || strcmp(req->extensions[i], VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
			exts[nexts++] = req->extensions[i];
	VkDebugUtilsMessengerCreateInfoEXT mci = {
		.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
		.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
				   VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
		.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		.pfnUserCallback = on_message,
		.pUserData = d->msgs,
	};
	if (opt->validate) {
		if (!has_layer("VK_LAYER_KHRONOS_validation")) {
			free(exts);
			return fail(err, -1, "--validate needs VK_LAYER_KHRONOS_validation, which "
				    "is not installed (Debian: vulkan-validationlayers)");
		}
		layers[nlayers++] = "VK_LAYER_KHRONOS_validation";
		exts[nexts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
	}
	/* 1.1 for dedicated allocations and vkGet*MemoryRequirements2 in core */
	uint32_t version = VK_API_VERSION_1_0;
	if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS)
		version = VK_API_VERSION_1_0;
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = opt->prog ? opt->prog : "tracekit",
		.pEngineName = "tracekit",
		.apiVersion = version >= VK_API_VERSION_1_1 ? VK_API_VERSION_1_1 : VK_API_VERSION_1_0,
	};
	if (req && req->app) {
		/* the traced program's, its version capped at the loader's */
		app = *req->app;
		app.pNext = NULL;
		if (app.apiVersion < VK_API_VERSION_1_1 && version >= VK_API_VERSION_1_1)
			app.apiVersion = VK_API_VERSION_1_1;
		if (app.apiVersion > version)
			app.apiVersion = version;
	}
	VkInstanceCreateInfo ici = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pNext = opt->validate ? &mci : NULL,
		.flags = req ? req->flags : 0,
		.pApplicationInfo = &app,
		.enabledLayerCount = nlayers,
		.ppEnabledLayerNames = layers,
		.enabledExtensionCount = nexts,
		.ppEnabledExtensionNames = exts,
	};
	/* what the device may use: the lesser of this and its own version */
	d->api_version = app.apiVersion;
	VkResult r = vkCreateInstance(&ici, NULL, &d->instance);
	free(exts);
	if (r != VK_SUCCESS)
		return fail(err, -1, "vkCreateInstance failed: %s (%d); is a Vulkan driver "
			    "installed (Debian: mesa-vulkan-drivers)?", result_name(r), r);
	if (opt->validate) {
		PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
			vkGetInstanceProcAddr(d->instance, "vkCreateDebugUtilsMessengerEXT");
		if (!create || create(d->instance, &mci, NULL, &d->messenger) != VK_SUCCESS)
			return fail(err, -1, "cannot create the debug messenger of --validate");
	}
	return 0;
}

static int pick_device(vkd_device *d, uint32_t gpu, trace_error *err)
{
	uint32_t n = 0;
	VkResult r = vkEnumeratePhysicalDevices(d->instance, &n, NULL);
	if (r != VK_SUCCESS || !n)
		return fail(err, -1, "no Vulkan device (vkEnumeratePhysicalDevices: %s); "
			    "llvmpipe comes with Debian's mesa-vulkan-drivers", result_name(r));
	VkPhysicalDevice *p = trace_xcalloc(n, sizeof(*p));
	vkEnumeratePhysicalDevices(d->instance, &n, p);
	if (gpu >= n) {
		char list[400];
		size_t k = 0;
		list[0] = 0;
		for (uint32_t i = 0; i < n && k < sizeof(list); i++) {
			VkPhysicalDeviceProperties pp;
			vkGetPhysicalDeviceProperties(p[i], &pp);
			int w = snprintf(list + k, sizeof(list) - k, "%s%u: %s (%s)", i ? "; " : "",
					 i, pp.deviceName, device_type_name(pp.deviceType));
			if (w < 0)
				break;
			k += (size_t)w;
		}
		free(p);
		return fail(err, -2, "--gpu %u: there %s %u device%s (%s)", gpu,
			    n == 1 ? "is" : "are", n, n == 1 ? "" : "s", list);
	}
	d->physical = p[gpu];
	d->gpu = gpu;
	free(p);
	vkGetPhysicalDeviceProperties(d->physical, &d->props);
	vkGetPhysicalDeviceMemoryProperties(d->physical, &d->memory);
	if (d->props.apiVersion < d->api_version)
		d->api_version = d->props.apiVersion;
	return 0;
}

static int open_device(vkd_device *d, trace_error *err)
{
	uint32_t n = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(d->physical, &n, NULL);
	VkQueueFamilyProperties *q = trace_xcalloc(n, sizeof(*q));
	vkGetPhysicalDeviceQueueFamilyProperties(d->physical, &n, q);
	/* a graphics family where there is one: the Vulkan replayer wants it;
	 * the VMA replay submits nothing */
	uint32_t family = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		if (!q[i].queueCount)
			continue;
		if (family == UINT32_MAX || (q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT &&
					     !(q[family].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
			family = i;
	}
	free(q);
	if (family == UINT32_MAX)
		return fail(err, -1, "%s has no queue", d->props.deviceName);
	float priority = 1.0f;
	VkDeviceQueueCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = family,
		.queueCount = 1,
		.pQueuePriorities = &priority,
	};
	/* the spec requires enabling it where a device offers it (MoltenVK) */
	const char *exts[1];
	uint32_t nexts = 0;
	if (device_has_extension(d->physical, "VK_KHR_portability_subset"))
		exts[nexts++] = "VK_KHR_portability_subset";
	VkDeviceCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci,
		.enabledExtensionCount = nexts,
		.ppEnabledExtensionNames = exts,
	};
	VkResult r = vkCreateDevice(d->physical, &dci, NULL, &d->device);
	if (r != VK_SUCCESS)
		return fail(err, -1, "vkCreateDevice on %s failed: %s (%d)", d->props.deviceName,
			    result_name(r), r);
	d->queue_family = family;
	vkGetDeviceQueue(d->device, family, 0, &d->queue);
	return 0;
}

static void set_block_sizes(vkd_device *d);

static void messages_init(vkd_device *d, const vkd_options *opt)
{
	d->own.prog = opt->prog;
	d->own.quiet = opt->quiet_validation;
	d->msgs = opt->messages ? opt->messages : &d->own;
}

int vkd_open(vkd_device *d, const vkd_options *opt, trace_error *err)
{
	memset(d, 0, sizeof(*d));
	messages_init(d, opt);
	int k;
	if ((k = open_instance(d, opt, NULL, err)) < 0 || (k = pick_device(d, opt->gpu, err)) < 0 ||
	    (k = open_device(d, err)) < 0) {
		vkd_close(d);
		return k;
	}
	d->large_block = opt->large_heap_block_size;
	d->small_heap = opt->small_heap_max_size;
	set_block_sizes(d);
	return 0;
}

int vkd_open_instance(vkd_device *d, const vkd_options *opt, const vkd_instance_request *req,
		      trace_error *err)
{
	memset(d, 0, sizeof(*d));
	messages_init(d, opt);
	d->large_block = opt->large_heap_block_size;
	d->small_heap = opt->small_heap_max_size;
	int k;
	if ((k = open_instance(d, opt, req, err)) < 0 || (k = pick_device(d, opt->gpu, err)) < 0) {
		vkd_close(d);
		return k;
	}
	return 0;
}

void vkd_attach_device(vkd_device *d, VkDevice device, uint32_t queue_family, VkQueue queue)
{
	d->device = device;
	d->queue_family = queue_family;
	d->queue = queue;
	set_block_sizes(d);
}

void vkd_close_device(vkd_device *d)
{
	if (!d->device)
		return;
	for (uint32_t t = 0; t < VK_MAX_MEMORY_TYPES; t++) {
		if (d->default_pools[t])
			vkd_pool_destroy(d, d->default_pools[t]);
		if (d->address_pools[t])
			vkd_pool_destroy(d, d->address_pools[t]);
	}
	while (d->pools)
		vkd_pool_destroy(d, d->pools);
	vkDestroyDevice(d->device, NULL);
	d->device = VK_NULL_HANDLE;
	d->queue = VK_NULL_HANDLE;
}

VkResult vkd_own_commands(VkDevice device, uint32_t family, VkCommandPool *pool,
			  VkCommandBuffer *cb, VkFence *fence)
{
	VkCommandPoolCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = family,
	};
	VkResult res = vkCreateCommandPool(device, &pci, NULL, pool);
	if (res != VK_SUCCESS)
		return res;
	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = *pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	res = vkAllocateCommandBuffers(device, &ai, cb);
	if (res != VK_SUCCESS || *fence)
		return res;
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	return vkCreateFence(device, &fci, NULL, fence);
}

void vkd_own_commands_free(VkDevice device, VkCommandPool *pool, VkCommandBuffer *cb,
			   VkFence *fence)
{
	if (*fence)
		vkDestroyFence(device, *fence, NULL);
	if (*pool)
		vkDestroyCommandPool(device, *pool, NULL);
	*fence = VK_NULL_HANDLE;
	*pool = VK_NULL_HANDLE;
	*cb = VK_NULL_HANDLE;
}

static void set_block_sizes(vkd_device *d)
{
	VkDeviceSize large = d->large_block ? d->large_block : VKD_LARGE_HEAP_BLOCK_SIZE;
	VkDeviceSize small = d->small_heap ? d->small_heap : VKD_SMALL_HEAP_MAX_SIZE;
	for (uint32_t h = 0; h < d->memory.memoryHeapCount; h++) {
		VkDeviceSize hs = d->memory.memoryHeaps[h].size;
		d->block_size[h] = hs <= small ? align_up(hs / 8, 32) : large;
		if (!d->block_size[h])
			d->block_size[h] = 32;
	}
}

static void pool_free_blocks(vkd_device *d, vkd_pool *p);

void vkd_close(vkd_device *d)
{
	vkd_close_device(d);
	if (d->messenger) {
		PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)
			vkGetInstanceProcAddr(d->instance, "vkDestroyDebugUtilsMessengerEXT");
		if (destroy)
			destroy(d->instance, d->messenger, NULL);
	}
	if (d->instance)
		vkDestroyInstance(d->instance, NULL);
	d->device = VK_NULL_HANDLE;
	d->messenger = VK_NULL_HANDLE;
	d->instance = VK_NULL_HANDLE;
}

/* ------------------------------------------------------------------ */
/* Memory-type translation and choice. */

#define HOST_VISIBLE VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
#define DEVICE_LOCAL VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT

uint32_t vkd_translate_type(const vkd_device *d, const VkPhysicalDeviceMemoryProperties *rec,
			    uint32_t rec_type)
{
	VkMemoryPropertyFlags want = DEVICE_LOCAL;
	bool want_local_heap = true;
	if (rec && rec_type < rec->memoryTypeCount) {
		want = rec->memoryTypes[rec_type].propertyFlags;
		uint32_t h = rec->memoryTypes[rec_type].heapIndex;
		want_local_heap = h < rec->memoryHeapCount
			? (rec->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0
			: (want & DEVICE_LOCAL) != 0;
	}
	/* score: lower is better, compared field by field */
	uint32_t best = 0;
	uint64_t best_score = UINT64_MAX;
	for (uint32_t t = 0; t < d->memory.memoryTypeCount; t++) {
		VkMemoryPropertyFlags f = d->memory.memoryTypes[t].propertyFlags;
		const VkMemoryHeap *heap = &d->memory.memoryHeaps[d->memory.memoryTypes[t].heapIndex];
		uint64_t rank;        /* 0 exact, 1 superset, 2 neither */
		uint64_t key = 0;     /* within the rank */
		if (f == want) {
			rank = 0;
		} else if ((f & want) == want) {
			rank = 1;
			key = popcount(f & ~want);
		} else {
			rank = 2;
			/* DEVICE_LOCAL and HOST_VISIBLE as recorded first (a host
			 * pointer must stay a host pointer), then the most recorded
			 * bits kept, then the fewest extra bits */
			unsigned important = popcount((f ^ want) & (DEVICE_LOCAL | HOST_VISIBLE));
			unsigned missing = popcount(want & ~f);
			key = (uint64_t)important << 12 | (uint64_t)missing << 6 | popcount(f & ~want);
		}
		bool local_heap = (heap->flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
		uint64_t heap_key = local_heap == want_local_heap ? 0 : 1;
		/* larger heaps first: 63 - log2(size) */
		uint64_t size_key = 63 - (uint64_t)(heap->size ? 63 - __builtin_clzll(heap->size) : 0);
		uint64_t score = rank << 56 | key << 20 | heap_key << 19 | size_key << 12 | t;
		if (score < best_score) {
			best_score = score;
			best = t;
		}
	}
	return best;
}

int vkd_find_memory_type(const vkd_device *d, uint32_t type_bits, VkMemoryPropertyFlags required,
			 VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags not_preferred,
			 uint32_t exclude, uint32_t *type)
{
	unsigned best_cost = UINT32_MAX;
	int found = -1;
	for (uint32_t t = 0; t < d->memory.memoryTypeCount; t++) {
		if (!(type_bits & (1u << t)) || exclude & (1u << t))
			continue;
		VkMemoryPropertyFlags f = d->memory.memoryTypes[t].propertyFlags;
		if ((required & ~f) != 0)
			continue;
		unsigned cost = popcount(preferred & ~f) + popcount(f & not_preferred);
		if (cost < best_cost) {
			best_cost = cost;
			*type = t;
			found = 0;
			if (!cost)
				break;
		}
	}
	return found;
}

/* ------------------------------------------------------------------ */
/* Device memory, counted. */

static void stats_memory(vkd_device *d, uint32_t type, VkDeviceSize size, bool dedicated,
			 bool allocated)
{
	vkd_memory_stats *s[2] = {&d->type_stats[type],
				  &d->heap_stats[d->memory.memoryTypes[type].heapIndex]};
	for (int i = 0; i < 2; i++) {
		if (allocated) {
			s[i]->memory_allocations++;
			s[i]->memory_bytes += size;
			s[i]->dedicated += dedicated;
			s[i]->memory_live += size;
			if (s[i]->memory_live > s[i]->memory_peak)
				s[i]->memory_peak = s[i]->memory_live;
		} else {
			s[i]->memory_live -= size;
		}
	}
}

static void stats_use(vkd_device *d, uint32_t type, VkDeviceSize size, bool made)
{
	vkd_memory_stats *s[2] = {&d->type_stats[type],
				  &d->heap_stats[d->memory.memoryTypes[type].heapIndex]};
	for (int i = 0; i < 2; i++) {
		if (made) {
			s[i]->allocations++;
			s[i]->allocation_bytes += size;
			s[i]->used += size;
			if (s[i]->used > s[i]->used_peak)
				s[i]->used_peak = s[i]->used;
		} else {
			s[i]->used -= size;
		}
	}
}

static VkResult block_new(vkd_device *d, vkd_pool *pool, uint32_t type, VkDeviceSize size,
			  const vkd_request *dedicated, vkd_block **out)
{
	VkMemoryDedicatedAllocateInfo ded = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
	};
	VkMemoryAllocateFlagsInfo flags = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
		.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
	};
	VkMemoryAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = size,
		.memoryTypeIndex = type,
	};
	if (dedicated && (dedicated->dedicated_buffer || dedicated->dedicated_image) &&
	    d->api_version >= VK_API_VERSION_1_1) {
		ded.buffer = dedicated->dedicated_buffer;
		ded.image = dedicated->dedicated_image;
		ai.pNext = &ded;
	}
	if (pool ? pool->address : dedicated && dedicated->address) {
		flags.pNext = ai.pNext;
		ai.pNext = &flags;
	}
	VkDeviceMemory mem;
	VkResult r = vkAllocateMemory(d->device, &ai, NULL, &mem);
	if (r != VK_SUCCESS)
		return r;
	vkd_block *b = trace_xcalloc(1, sizeof(*b));
	b->pool = pool;
	b->memory = mem;
	b->size = size;
	b->type = type;
	b->dedicated = dedicated != NULL;
	if (pool) {
		b->next = pool->blocks;
		pool->blocks = b;
		pool->nblocks++;
	}
	stats_memory(d, type, size, b->dedicated, true);
	*out = b;
	return VK_SUCCESS;
}

static void block_release(vkd_device *d, vkd_block *b)
{
	if (b->map_refs)
		vkUnmapMemory(d->device, b->memory);
	vkFreeMemory(d->device, b->memory, NULL);
	stats_memory(d, b->type, b->size, b->dedicated, false);
	if (b->pool) {
		vkd_block **pp = &b->pool->blocks;
		while (*pp != b)
			pp = &(*pp)->next;
		*pp = b->next;
		b->pool->nblocks--;
	}
	free(b->ranges);
	free(b);
}

static inline bool kinds_conflict(uint8_t a, uint8_t b)
{
	return a == VKD_KIND_UNKNOWN || b == VKD_KIND_UNKNOWN || a != b;
}

static inline bool same_page(VkDeviceSize end_of_a, VkDeviceSize start_of_b, VkDeviceSize page)
{
	return align_down(end_of_a, page) == align_down(start_of_b, page);
}

/*
 * The best gap of b for a range of req: its index in ranges (the range
 * goes before ranges[*at]) and offset.  The granularity keeps a linear
 * and an optimal resource off one page, as the spec's
 * bufferImageGranularity asks.
 */
static bool block_fit(const vkd_block *b, const vkd_request *req, VkDeviceSize granularity,
		      size_t *at, VkDeviceSize *offset)
{
	VkDeviceSize best_waste = (VkDeviceSize)-1;
	bool found = false;
	for (size_t i = 0; i <= b->nranges; i++) {
		const struct vkd_range *prev = i ? &b->ranges[i - 1] : NULL;
		const struct vkd_range *next = i < b->nranges ? &b->ranges[i] : NULL;
		VkDeviceSize start = prev ? prev->offset + prev->size : 0;
		VkDeviceSize end = next ? next->offset : b->size;
		if (end - start < req->size)
			continue;
		VkDeviceSize off = align_up(start, req->alignment);
		if (granularity > 1 && prev && kinds_conflict(prev->kind, (uint8_t)req->kind) &&
		    same_page(start - 1, off, granularity))
			off = align_up(off, granularity);
		if (off > end || end - off < req->size)
			continue;
		if (granularity > 1 && next && kinds_conflict((uint8_t)req->kind, next->kind) &&
		    same_page(off + req->size - 1, next->offset, granularity))
			continue;
		VkDeviceSize waste = (end - start) - req->size;
		if (waste < best_waste) {
			best_waste = waste;
			*at = i;
			*offset = off;
			found = true;
			if (!waste)
				break;
		}
	}
	return found;
}

static void block_insert(vkd_block *b, size_t at, VkDeviceSize offset, VkDeviceSize size,
			 vkd_kind kind)
{
	if (b->nranges == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 8;
		b->ranges = trace_xrealloc(b->ranges, b->cap * sizeof(*b->ranges));
	}
	memmove(&b->ranges[at + 1], &b->ranges[at], (b->nranges - at) * sizeof(*b->ranges));
	b->ranges[at] = (struct vkd_range){offset, size, (uint8_t)kind};
	b->nranges++;
}

/* The index of the range at offset, or nranges. */
static size_t block_find(const vkd_block *b, VkDeviceSize offset)
{
	size_t lo = 0, hi = b->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->ranges[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nranges && b->ranges[lo].offset == offset ? lo : b->nranges;
}

static vkd_pool *pool_new(vkd_device *d, uint32_t type, VkDeviceSize block_size, bool custom)
{
	vkd_pool *p = trace_xcalloc(1, sizeof(*p));
	p->type = type;
	p->block_size = block_size ? block_size
				   : d->block_size[d->memory.memoryTypes[type].heapIndex];
	p->custom = custom;
	return p;
}

VkResult vkd_pool_create(vkd_device *d, uint32_t type, VkDeviceSize block_size,
			 uint64_t min_blocks, uint64_t max_blocks, bool ignore_granularity,
			 vkd_pool **out)
{
	*out = NULL;
	if (type >= d->memory.memoryTypeCount)
		return VK_ERROR_FEATURE_NOT_PRESENT;
	if (max_blocks && min_blocks > max_blocks)
		return VK_ERROR_INITIALIZATION_FAILED;
	vkd_pool *p = pool_new(d, type, block_size, true);
	p->min_blocks = min_blocks;
	p->max_blocks = max_blocks;
	p->ignore_granularity = ignore_granularity;
	for (uint64_t i = 0; i < min_blocks; i++) {
		vkd_block *b;
		VkResult r = block_new(d, p, type, p->block_size, NULL, &b);
		if (r != VK_SUCCESS) {
			pool_free_blocks(d, p);
			free(p);
			return r;
		}
	}
	p->next = d->pools;
	d->pools = p;
	*out = p;
	return VK_SUCCESS;
}

static void pool_free_blocks(vkd_device *d, vkd_pool *p)
{
	while (p->blocks)
		block_release(d, p->blocks);
}

void vkd_pool_destroy(vkd_device *d, vkd_pool *p)
{
	if (!p)
		return;
	pool_free_blocks(d, p);
	if (p->custom) {
		vkd_pool **pp = &d->pools;
		while (*pp && *pp != p)
			pp = &(*pp)->next;
		if (*pp)
			*pp = p->next;
	} else if (p->address) {
		d->address_pools[p->type] = NULL;
	} else {
		d->default_pools[p->type] = NULL;
	}
	free(p);
}

uint32_t vkd_pool_type(const vkd_pool *p)
{
	return p->type;
}

size_t vkd_pool_blocks(const vkd_pool *p)
{
	return p->nblocks;
}

static VkResult alloc_dedicated(vkd_device *d, uint32_t type, const vkd_request *req,
				vkd_allocation *out)
{
	vkd_block *b;
	VkResult r = block_new(d, NULL, type, req->size, req, &b);
	if (r != VK_SUCCESS)
		return r;
	block_insert(b, 0, 0, req->size, req->kind);
	*out = (vkd_allocation){.block = b, .memory = b->memory, .offset = 0, .size = req->size,
				.type = type, .dedicated = true};
	stats_use(d, type, req->size, true);
	return VK_SUCCESS;
}

VkResult vkd_alloc(vkd_device *d, vkd_pool *pool, uint32_t type, const vkd_request *req,
		   vkd_allocation *out)
{
	memset(out, 0, sizeof(*out));
	if (type >= d->memory.memoryTypeCount || !req->size)
		return VK_ERROR_FEATURE_NOT_PRESENT;
	VkDeviceSize default_block = d->block_size[d->memory.memoryTypes[type].heapIndex];
	if (!pool && (req->dedicated || req->size > default_block / 2))
		return alloc_dedicated(d, type, req, out);
	if (!pool) {
		vkd_pool **pools = req->address ? d->address_pools : d->default_pools;
		if (!pools[type]) {
			pools[type] = pool_new(d, type, 0, false);
			pools[type]->address = req->address;
		}
		pool = pools[type];
	} else if (req->address != pool->address) {
		return VK_ERROR_FEATURE_NOT_PRESENT;
	}
	if (req->size > pool->block_size)
		return VK_ERROR_OUT_OF_DEVICE_MEMORY;
	VkDeviceSize gran = pool->ignore_granularity ? 1 : d->props.limits.bufferImageGranularity;
	size_t at = 0;
	VkDeviceSize off = 0;
	vkd_block *b;
	for (b = pool->blocks; b; b = b->next)
		if (block_fit(b, req, gran, &at, &off))
			break;
	if (!b) {
		if (pool->max_blocks && pool->nblocks >= pool->max_blocks)
			return VK_ERROR_OUT_OF_DEVICE_MEMORY;
		/* VMA's retry: a default pool's block may come out smaller
		 * (1/2, 1/4, 1/8) when the whole one cannot be had */
		VkDeviceSize size = pool->block_size;
		VkResult r;
		for (int tries = 0;; tries++) {
			r = block_new(d, pool, type, size, NULL, &b);
			if (r == VK_SUCCESS || pool->custom || tries == 3 || size / 2 < req->size)
				break;
			size /= 2;
		}
		if (r != VK_SUCCESS)
			return r;
		at = 0;
		off = 0;
	}
	block_insert(b, at, off, req->size, req->kind);
	*out = (vkd_allocation){.block = b, .memory = b->memory, .offset = off,
				.size = req->size, .type = type};
	stats_use(d, type, req->size, true);
	return VK_SUCCESS;
}

void vkd_free(vkd_device *d, vkd_allocation *a)
{
	vkd_block *b = a->block;
	if (!b)
		return;
	while (a->map_count)
		vkd_unmap(d, a);
	size_t i = block_find(b, a->offset);
	if (i < b->nranges) {
		memmove(&b->ranges[i], &b->ranges[i + 1], (b->nranges - i - 1) * sizeof(*b->ranges));
		b->nranges--;
	}
	stats_use(d, a->type, a->size, false);
	memset(a, 0, sizeof(*a));
	if (b->dedicated) {
		block_release(d, b);
		return;
	}
	if (b->nranges)
		return;
	/* VMA keeps one empty block per pool, for the next allocation, and
	 * a custom pool's minimum */
	vkd_pool *p = b->pool;
	if (p->nblocks <= p->min_blocks)
		return;
	for (vkd_block *o = p->blocks; o; o = o->next)
		if (o != b && !o->nranges) {
			block_release(d, b);
			return;
		}
}

VkResult vkd_resize(vkd_device *d, vkd_allocation *a, VkDeviceSize size)
{
	vkd_block *b = a->block;
	if (!b || !size)
		return VK_ERROR_OUT_OF_POOL_MEMORY;
	if (size == a->size)
		return VK_SUCCESS;
	size_t i = block_find(b, a->offset);
	if (i == b->nranges || b->dedicated)
		return VK_ERROR_OUT_OF_POOL_MEMORY;
	VkDeviceSize limit = i + 1 < b->nranges ? b->ranges[i + 1].offset : b->size;
	if (a->offset + size > limit)
		return VK_ERROR_OUT_OF_POOL_MEMORY;
	/* no new allocation: only the bytes in use change */
	vkd_memory_stats *s[2] = {&d->type_stats[a->type],
				  &d->heap_stats[d->memory.memoryTypes[a->type].heapIndex]};
	for (int k = 0; k < 2; k++) {
		s[k]->used = s[k]->used - a->size + size;
		if (s[k]->used > s[k]->used_peak)
			s[k]->used_peak = s[k]->used;
	}
	b->ranges[i].size = size;
	a->size = size;
	return VK_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Maps, flushes, invalidations. */

void *vkd_map(vkd_device *d, vkd_allocation *a, VkResult *res)
{
	vkd_block *b = a->block;
	*res = VK_ERROR_MEMORY_MAP_FAILED;
	if (!b || !(d->memory.memoryTypes[b->type].propertyFlags & HOST_VISIBLE))
		return NULL;
	if (!b->map_refs) {
		VkResult r = vkMapMemory(d->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
		if (r != VK_SUCCESS) {
			*res = r;
			return NULL;
		}
	}
	b->map_refs++;
	a->map_count++;
	*res = VK_SUCCESS;
	return (char *)b->mapped + a->offset;
}

void vkd_unmap(vkd_device *d, vkd_allocation *a)
{
	vkd_block *b = a->block;
	if (!b || !a->map_count)
		return;
	a->map_count--;
	if (!--b->map_refs) {
		vkUnmapMemory(d->device, b->memory);
		b->mapped = NULL;
	}
}

typedef VkResult (VKAPI_PTR *ranges_fn)(VkDevice, uint32_t, const VkMappedMemoryRange *);

static VkResult ranges(vkd_device *d, vkd_allocation *a, VkDeviceSize offset, VkDeviceSize size,
		       ranges_fn fn)
{
	vkd_block *b = a->block;
	/* VMA flushes only HOST_VISIBLE memory; we flush coherent memory too
	 * (a no-op for the driver) so that the call is made and validated */
	if (!b || offset >= a->size ||
	    !(d->memory.memoryTypes[b->type].propertyFlags & HOST_VISIBLE))
		return VK_SUCCESS;
	VkDeviceSize atom = d->props.limits.nonCoherentAtomSize;
	VkDeviceSize start = a->offset + offset;
	VkDeviceSize end = size == VK_WHOLE_SIZE || size > a->size - offset ? a->offset + a->size
									   : start + size;
	if (start >= end)
		return VK_SUCCESS;
	start = align_down(start, atom);
	end = align_up(end, atom);
	if (end > b->size)
		end = b->size;
	bool mapped_here = false;
	VkResult r;
	if (!b->map_refs) {
		if (!vkd_map(d, a, &r))
			return r;
		mapped_here = true;
	}
	VkMappedMemoryRange range = {
		.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
		.memory = b->memory,
		.offset = start,
		.size = end - start,
	};
	r = fn(d->device, 1, &range);
	if (mapped_here)
		vkd_unmap(d, a);
	return r;
}

VkResult vkd_flush(vkd_device *d, vkd_allocation *a, VkDeviceSize offset, VkDeviceSize size)
{
	return ranges(d, a, offset, size, vkFlushMappedMemoryRanges);
}

VkResult vkd_invalidate(vkd_device *d, vkd_allocation *a, VkDeviceSize offset, VkDeviceSize size)
{
	return ranges(d, a, offset, size, vkInvalidateMappedMemoryRanges);
}
