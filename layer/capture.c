/*
 * VK_LAYER_TRACEKIT_capture: a Vulkan layer (loader interface version 2)
 * that records every call the application makes into a tracekit trace.
 *
 * This file: the loader interface, instances and devices (the layer
 * chain walk and the tables that find them again), the device extensions
 * the layer lets through, and the generated wrappers' name table.  The
 * records and the thread that writes them are output.c's.
 *
 * The only global state here: the instance and device tables, keyed by
 * the loader's dispatch pointer.
 */
#include "layer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TK_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ */
/* Instances and devices, by the loader's dispatch pointer. */

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static tk_instance **instances;
static size_t ninstances;
static tk_device **devices;
static size_t ndevices;

static void *key_of(const void *dispatchable)
{
	return dispatchable ? *(void *const *)dispatchable : NULL;
}

/*
 * Physical devices share their instance's dispatch pointer; should a
 * loader ever differ, the only instance is the right one.
 */
tk_instance *tk_instance_of(const void *h)
{
	void *key = key_of(h);
	tk_instance *found = NULL;
	pthread_mutex_lock(&tables_lock);
	for (size_t i = 0; i < ninstances && !found; i++)
		if (instances[i]->key == key)
			found = instances[i];
	if (!found && ninstances == 1)
		found = instances[0];
	pthread_mutex_unlock(&tables_lock);
	return found;
}

/* Every device-level call looks its device up: each thread keeps its last
 * answer, good while the tables have not changed (tables_gen), instead of
 * taking tables_lock, which the threads of a driver such as zink passed
 * back and forth tens of thousands of times a second. */
static atomic_uint tables_gen;
static _Thread_local struct {
	void *key;
	tk_device *dev;
	unsigned gen;
} last_device;

tk_device *tk_device_of(const void *h)
{
	void *key = key_of(h);
	unsigned gen = atomic_load_explicit(&tables_gen, memory_order_acquire);
	if (last_device.dev && last_device.key == key && last_device.gen == gen)
		return last_device.dev;
	tk_device *found = NULL;
	pthread_mutex_lock(&tables_lock);
	for (size_t i = 0; i < ndevices && !found; i++)
		if (devices[i]->key == key)
			found = devices[i];
	if (!found && ndevices == 1)
		found = devices[0];
	gen = atomic_load_explicit(&tables_gen, memory_order_relaxed);
	pthread_mutex_unlock(&tables_lock);
	last_device.key = key;
	last_device.dev = found;
	last_device.gen = gen;
	return found;
}

static void table_add(void ***table, size_t *n, void *item)
{
	pthread_mutex_lock(&tables_lock);
	*table = realloc(*table, sizeof(void *) * (*n + 1));
	(*table)[(*n)++] = item;
	atomic_fetch_add_explicit(&tables_gen, 1, memory_order_release);
	pthread_mutex_unlock(&tables_lock);
}

static void table_del(void ***table, size_t *n, void *item)
{
	pthread_mutex_lock(&tables_lock);
	for (size_t i = 0; i < *n; i++)
		if ((*table)[i] == item) {
			(*table)[i] = (*table)[--*n];
			break;
		}
	atomic_fetch_add_explicit(&tables_gen, 1, memory_order_release);
	pthread_mutex_unlock(&tables_lock);
}


/* ------------------------------------------------------------------ */
/* Arguments the record holds otherwise than the call gave them. */

/* vkCmdDrawMulti*EXT read draw I at pInfo + I * stride, and the stride
 * may exceed the struct (zink lays VkMultiDrawInfoEXT's 8 bytes 12 apart).
 * The schema encodes an array of structs, so the record gets the draws
 * packed, in a copy of this thread's, and the struct's size as its stride:
 * what a replay passes is then the draws the application drew. */
static pthread_key_t draws_key;
static pthread_once_t draws_once = PTHREAD_ONCE_INIT;

typedef struct draws_buf {
	size_t cap;
	unsigned char data[];
} draws_buf;

static void draws_key_make(void)
{
	pthread_key_create(&draws_key, free);
}

/* N draws of SIZE bytes STRIDE apart at P, packed; P if they are already,
 * or where no copy can be made (the record then holds what the schema
 * reads: better than no draw call) */
static const void *pack_draws(const void *p, uint32_t n, uint32_t stride, size_t size)
{
	if (!p || n < 2 || stride == size)
		return p;
	pthread_once(&draws_once, draws_key_make);
	draws_buf *b = pthread_getspecific(draws_key);
	size_t need = (size_t)n * size;
	if (!b || b->cap < need) {
		draws_buf *nb = realloc(b, sizeof(*b) + need);
		if (!nb)
			return p;
		nb->cap = need;
		b = nb;
		pthread_setspecific(draws_key, b);
	}
	for (uint32_t i = 0; i < n; i++)
		memcpy(b->data + i * size, (const unsigned char *)p + (size_t)i * stride, size);
	return b->data;
}

void tk_pre_vkCmdDrawMultiEXT(tk_device *dev, vk_args_vkCmdDrawMultiEXT *a)
{
	(void)dev;
	a->pVertexInfo = pack_draws(a->pVertexInfo, a->drawCount, a->stride, sizeof(*a->pVertexInfo));
	if (a->pVertexInfo && a->drawCount > 1)
		a->stride = sizeof(*a->pVertexInfo);
}

void tk_pre_vkCmdDrawMultiIndexedEXT(tk_device *dev, vk_args_vkCmdDrawMultiIndexedEXT *a)
{
	(void)dev;
	a->pIndexInfo = pack_draws(a->pIndexInfo, a->drawCount, a->stride, sizeof(*a->pIndexInfo));
	if (a->pIndexInfo && a->drawCount > 1)
		a->stride = sizeof(*a->pIndexInfo);
}

/* ------------------------------------------------------------------ */
/* The generated wrappers and their name table. */

typedef struct tk_entry {
	const char *name;
	PFN_vkVoidFunction fn;
	int device;     /* a device-level command */
	size_t offset;  /* of its entry in tk_device_disp or tk_instance_disp */
} tk_entry;

static PFN_vkVoidFunction tk_device_next(tk_device *dev, size_t offset, const char *name);
static PFN_vkVoidFunction tk_instance_next(tk_instance *inst, size_t offset, const char *name);

#include "layer_gen.c"

static PFN_vkVoidFunction *slot_at(void *table, size_t offset)
{
	return (PFN_vkVoidFunction *)((char *)table + offset);
}

/* A table entry filled while wrappers of other threads may read it:
 * it goes from NULL to the next layer's answer, once. */
static PFN_vkVoidFunction slot_get(void *table, size_t offset)
{
	return __atomic_load_n(slot_at(table, offset), __ATOMIC_ACQUIRE);
}

static void slot_fill(void *table, size_t offset, PFN_vkVoidFunction fn)
{
	PFN_vkVoidFunction none = NULL;
	__atomic_compare_exchange_n(slot_at(table, offset), &none, fn, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

/* A wrapper whose table entry is empty was handed out by vkGetInstanceProcAddr
 * (the device's table was filled by vkGetDeviceProcAddr, which may answer
 * NULL for a command the next layer's vkGetInstanceProcAddr does give:
 * VK_EXT_debug_utils' device commands, not enabled): the instance's answer,
 * kept in the device's table from now on.  NULL, with a message, where
 * neither has one: the call is not made. */
static PFN_vkVoidFunction tk_device_next(tk_device *dev, size_t offset, const char *name)
{
	PFN_vkVoidFunction fn = dev && dev->inst ? slot_get(&dev->inst->ddisp, offset) : NULL;
	if (fn)
		slot_fill(&dev->disp, offset, fn);
	else
		fprintf(stderr, "tracekit: %s: the next layer gave no entry point for it: "
			"not called\n", name);
	return fn;
}

static PFN_vkVoidFunction tk_instance_next(tk_instance *inst, size_t offset, const char *name)
{
	PFN_vkVoidFunction fn = inst ? slot_get(&inst->disp, offset) : NULL;
	if (!fn)
		fprintf(stderr, "tracekit: %s: the next layer gave no entry point for it: "
			"not called\n", name);
	return fn;
}

static const tk_entry *entry_lookup(const char *name)
{
	size_t lo = 0, hi = sizeof(tk_entries) / sizeof(tk_entries[0]);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, tk_entries[mid].name);
		if (!c)
			return &tk_entries[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int by_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

static bool known_extension(const char *name)
{
	return bsearch(name, tk_known_extensions,
		       sizeof(tk_known_extensions) / sizeof(tk_known_extensions[0]),
		       sizeof(tk_known_extensions[0]), by_name) != NULL;
}

/* A physical device's extensions, less those the layer does not know. */
struct tk_exts {
	struct tk_exts *next;
	VkPhysicalDevice physical;
	uint32_t n;
	VkExtensionProperties ext[];
};

/* Asks the next layer for PHYSICAL's extensions: a new list, NULL and *R
 * set where that failed. */
static struct tk_exts *exts_down(tk_instance *inst, VkPhysicalDevice physical, VkResult *r)
{
	PFN_vkEnumerateDeviceExtensionProperties down = inst->disp.vkEnumerateDeviceExtensionProperties;
	struct tk_exts *e = NULL;
	uint32_t n = 0;
	do { /* the count may change between the two calls */
		*r = down(physical, NULL, &n, NULL);
		if (*r != VK_SUCCESS)
			break;
		free(e);
		e = malloc(sizeof(*e) + sizeof(e->ext[0]) * n);
		if (!e) {
			*r = VK_ERROR_OUT_OF_HOST_MEMORY;
			return NULL;
		}
		*r = down(physical, NULL, &n, e->ext);
	} while (*r == VK_INCOMPLETE);
	if (*r != VK_SUCCESS) {
		free(e);
		return NULL;
	}
	e->physical = physical;
	e->n = 0;
	for (uint32_t i = 0; i < n; i++)
		if (known_extension(e->ext[i].extensionName))
			e->ext[e->n++] = e->ext[i];
	return e;
}

/*
 * The device's extensions less those newer than the registry the layer
 * was built from (as GFXReconstruct does): their commands would reach the
 * driver through vkGetDeviceProcAddr unrecorded, and the trace would not
 * replay.  Asked for another layer's extensions, it passes down.
 *
 * The list is asked for once a physical device and kept with its
 * instance.  Each of the loader's answers (Debian's 1.3.239) zeroes a
 * fresh block of about 70 KB: glmark2-zink asks 8 times, which took 16
 * answers through the layer and 290 page faults (3.5 ms on this machine).
 */
VkResult tk_down_vkEnumerateDeviceExtensionProperties(tk_instance *inst,
						      vk_args_vkEnumerateDeviceExtensionProperties *a)
{
	if (a->pLayerName)
		return inst->disp.vkEnumerateDeviceExtensionProperties(
			a->physicalDevice, a->pLayerName, a->pPropertyCount, a->pProperties);
	VkResult r = VK_SUCCESS;
	pthread_mutex_lock(&inst->ext_lock);
	struct tk_exts *e = inst->exts;
	while (e && e->physical != a->physicalDevice)
		e = e->next;
	if (!e && (e = exts_down(inst, a->physicalDevice, &r))) {
		e->next = inst->exts;
		inst->exts = e;
	}
	pthread_mutex_unlock(&inst->ext_lock);
	if (!e)
		return r;
	if (!a->pProperties) {
		*a->pPropertyCount = e->n;
		return VK_SUCCESS;
	}
	if (*a->pPropertyCount < e->n)
		r = VK_INCOMPLETE;
	else
		*a->pPropertyCount = e->n;
	memcpy(a->pProperties, e->ext, sizeof(e->ext[0]) * *a->pPropertyCount);
	return r;
}

/* An application that enables a device extension the layer does not know
 * without asking for the list gets its device, and one warning a name. */
static void warn_unknown_extensions(const VkDeviceCreateInfo *ci)
{
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		if (!known_extension(ci->ppEnabledExtensionNames[i]))
			fprintf(stderr, "tracekit: %s is newer than the Vulkan registry the layer was "
				"built from: its commands are not recorded, and the trace may not "
				"replay\n", ci->ppEnabledExtensionNames[i]);
}

/* ------------------------------------------------------------------ */
/* Instances and devices: the layer chain walk. */

static VKAPI_ATTR VkResult VKAPI_CALL tk_vkCreateInstance(const VkInstanceCreateInfo *pCreateInfo,
							  const VkAllocationCallbacks *pAllocator,
							  VkInstance *pInstance)
{
	VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)pCreateInfo->pNext;
	while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
			 link->function == VK_LAYER_LINK_INFO))
		link = (VkLayerInstanceCreateInfo *)link->pNext;
	if (!link)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(VK_NULL_HANDLE, "vkCreateInstance");
	if (!create)
		return VK_ERROR_INITIALIZATION_FAILED;
	tk_output_start();

	tk_in();
	vk_args_vkCreateInstance a = { pCreateInfo, pAllocator, pInstance };
	tk_rec *rec = tk_enter(&vk_cmd_vkCreateInstance, &a);
	tk_out();
	a.result = create(pCreateInfo, pAllocator, pInstance);
	tk_in();
	if (a.result == VK_SUCCESS) {
		tk_instance *inst = calloc(1, sizeof(*inst));
		inst->handle = *pInstance;
		inst->key = key_of(*pInstance);
		inst->gipa = gipa;
		pthread_mutex_init(&inst->ext_lock, NULL);
		tk_instance_disp_init(&inst->disp, gipa, *pInstance);
		table_add((void ***)&instances, &ninstances, inst);
	}
	tk_leave(rec, &vk_cmd_vkCreateInstance, &a);
	tk_out();
	return a.result;
}

static VKAPI_ATTR void VKAPI_CALL tk_vkDestroyInstance(VkInstance instance,
						       const VkAllocationCallbacks *pAllocator)
{
	tk_instance *inst = tk_instance_of(instance);
	if (!inst)
		return;
	tk_in();
	vk_args_vkDestroyInstance a = { instance, pAllocator };
	tk_rec *rec = tk_enter(&vk_cmd_vkDestroyInstance, &a);
	tk_out();
	inst->disp.vkDestroyInstance(instance, pAllocator);
	tk_in();
	tk_leave(rec, &vk_cmd_vkDestroyInstance, &a);
	table_del((void ***)&instances, &ninstances, inst);
	while (inst->exts) {
		struct tk_exts *next = inst->exts->next;
		free(inst->exts);
		inst->exts = next;
	}
	pthread_mutex_destroy(&inst->ext_lock);
	free(inst);
	tk_out();
}

static VKAPI_ATTR VkResult VKAPI_CALL tk_vkCreateDevice(VkPhysicalDevice physicalDevice,
							const VkDeviceCreateInfo *pCreateInfo,
							const VkAllocationCallbacks *pAllocator,
							VkDevice *pDevice)
{
	VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)pCreateInfo->pNext;
	while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
			 link->function == VK_LAYER_LINK_INFO))
		link = (VkLayerDeviceCreateInfo *)link->pNext;
	tk_instance *inst = tk_instance_of(physicalDevice);
	if (!link || !inst)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(inst->handle, "vkCreateDevice");
	if (!create)
		return VK_ERROR_INITIALIZATION_FAILED;

	tk_in();
	warn_unknown_extensions(pCreateInfo);
	vk_args_vkCreateDevice a = { physicalDevice, pCreateInfo, pAllocator, pDevice };
	tk_rec *rec = tk_enter(&vk_cmd_vkCreateDevice, &a);
	tk_out();
	a.result = create(physicalDevice, pCreateInfo, pAllocator, pDevice);
	tk_in();
	if (a.result == VK_SUCCESS) {
		tk_device *dev = calloc(1, sizeof(*dev));
		dev->handle = *pDevice;
		dev->key = key_of(*pDevice);
		dev->physical = physicalDevice;
		dev->inst = inst;
		dev->gdpa = gdpa;
		tk_device_disp_init(&dev->disp, gdpa, *pDevice);
		inst->disp.vkGetPhysicalDeviceMemoryProperties(physicalDevice, &dev->memprops);
		tk_memory_init(dev);
		tk_screenshot_init(dev, pCreateInfo);
		table_add((void ***)&devices, &ndevices, dev);
		tk_output_describe(dev);
	}
	tk_leave(rec, &vk_cmd_vkCreateDevice, &a);
	tk_out();
	return a.result;
}

static VKAPI_ATTR void VKAPI_CALL tk_vkDestroyDevice(VkDevice device,
						     const VkAllocationCallbacks *pAllocator)
{
	tk_device *dev = tk_device_of(device);
	if (!dev)
		return;
	tk_in();
	vk_args_vkDestroyDevice a = { device, pAllocator };
	tk_rec *rec = tk_enter(&vk_cmd_vkDestroyDevice, &a);
	tk_screenshot_fini(dev);
	tk_out();
	dev->disp.vkDestroyDevice(device, pAllocator);
	tk_in();
	tk_leave(rec, &vk_cmd_vkDestroyDevice, &a);
	table_del((void ***)&devices, &ndevices, dev);
	tk_memory_fini(dev);
	free(dev);
	tk_out();
}

/* ------------------------------------------------------------------ */
/* Name lookups: ours where we record, the next layer's otherwise.  The
 * layer is invisible: it hands out its wrapper only where the next layer
 * answers, and then the wrapper calls exactly that answer (kept in the
 * table the wrapper reads: for a device command looked up by instance,
 * the instance's ddisp).  So a command of an extension the application
 * did not enable works, or not, as it does without the layer. */

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL tk_gipa(VkInstance instance, const char *name);
static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL tk_gdpa(VkDevice device, const char *name);

static PFN_vkVoidFunction own_entry(const char *name, bool device_only)
{
	static const tk_entry own[] = {
		{ "vkCreateDevice", (PFN_vkVoidFunction)tk_vkCreateDevice, 0 },
		{ "vkCreateInstance", (PFN_vkVoidFunction)tk_vkCreateInstance, 0 },
		{ "vkDestroyDevice", (PFN_vkVoidFunction)tk_vkDestroyDevice, 1 },
		{ "vkDestroyInstance", (PFN_vkVoidFunction)tk_vkDestroyInstance, 0 },
		{ "vkGetDeviceProcAddr", (PFN_vkVoidFunction)tk_gdpa, 1 },
		{ "vkGetInstanceProcAddr", (PFN_vkVoidFunction)tk_gipa, 0 },
	};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(name, own[i].name) && (!device_only || own[i].device))
			return own[i].fn;
	return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL tk_gipa(VkInstance instance, const char *name)
{
	PFN_vkVoidFunction fn = own_entry(name, false);
	if (fn)
		return fn;
	tk_instance *inst = instance ? tk_instance_of(instance) : NULL;
	if (!inst)
		return NULL;
	PFN_vkVoidFunction next = inst->gipa(instance, name);
	const tk_entry *e = entry_lookup(name);
	if (!next || !e)
		return next;
	slot_fill(e->device ? (void *)&inst->ddisp : (void *)&inst->disp, e->offset, next);
	return e->fn;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL tk_gdpa(VkDevice device, const char *name)
{
	PFN_vkVoidFunction fn = own_entry(name, true);
	if (fn)
		return fn;
	tk_device *dev = tk_device_of(device);
	if (!dev)
		return NULL;
	PFN_vkVoidFunction next = dev->gdpa(device, name);
	const tk_entry *e = entry_lookup(name);
	if (!next || !e || !e->device)
		return next;
	slot_fill(&dev->disp, e->offset, next);
	return e->fn;
}

TK_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,
									   const char *name)
{
	return tk_gipa(instance, name);
}

TK_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device,
									 const char *name)
{
	return tk_gdpa(device, name);
}

TK_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *p)
{
	if (!p || p->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT || p->loaderLayerInterfaceVersion < 2)
		return VK_ERROR_INITIALIZATION_FAILED;
	p->loaderLayerInterfaceVersion = 2;
	p->pfnGetInstanceProcAddr = tk_gipa;
	p->pfnGetDeviceProcAddr = tk_gdpa;
	p->pfnGetPhysicalDeviceProcAddr = NULL;
	return VK_SUCCESS;
}
