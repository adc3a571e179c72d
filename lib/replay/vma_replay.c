/*
 * The VMA replayer (vma_replay.h): a recording's calls replayed in record
 * order on one thread, whatever thread made them: VMA serialized them into
 * the recording in that order.
 */
#include "vma.h"
#include "vma_replay.h"
#include "vma_replay_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const vmar_fn_names[FN_COUNT] = {
	[FN_CREATE_ALLOCATOR] = "vmaCreateAllocator",
	[FN_DESTROY_ALLOCATOR] = "vmaDestroyAllocator",
	[FN_CREATE_POOL] = "vmaCreatePool",
	[FN_DESTROY_POOL] = "vmaDestroyPool",
	[FN_SET_USER_DATA] = "vmaSetAllocationUserData",
	[FN_CREATE_BUFFER] = "vmaCreateBuffer",
	[FN_DESTROY_BUFFER] = "vmaDestroyBuffer",
	[FN_CREATE_IMAGE] = "vmaCreateImage",
	[FN_DESTROY_IMAGE] = "vmaDestroyImage",
	[FN_FREE_MEMORY] = "vmaFreeMemory",
	[FN_FREE_MEMORY_PAGES] = "vmaFreeMemoryPages",
	[FN_CREATE_LOST] = "vmaCreateLostAllocation",
	[FN_ALLOCATE_MEMORY] = "vmaAllocateMemory",
	[FN_ALLOCATE_MEMORY_PAGES] = "vmaAllocateMemoryPages",
	[FN_ALLOCATE_FOR_BUFFER] = "vmaAllocateMemoryForBuffer",
	[FN_ALLOCATE_FOR_IMAGE] = "vmaAllocateMemoryForImage",
	[FN_MAP] = "vmaMapMemory",
	[FN_UNMAP] = "vmaUnmapMemory",
	[FN_FLUSH] = "vmaFlushAllocation",
	[FN_INVALIDATE] = "vmaInvalidateAllocation",
	[FN_TOUCH] = "vmaTouchAllocation",
	[FN_GET_INFO] = "vmaGetAllocationInfo",
	[FN_MAKE_LOST] = "vmaMakePoolAllocationsLost",
	[FN_RESIZE] = "vmaResizeAllocation",
	[FN_DEFRAG_BEGIN] = "vmaDefragmentationBegin",
	[FN_DEFRAG_END] = "vmaDefragmentationEnd",
	[FN_SET_POOL_NAME] = "vmaSetPoolName",
};

/* ------------------------------------------------------------------ */
/* Pointer -> object, for the handles a recording names (VMA never
 * returns a null handle, which a tmap cannot hold). */

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		fputs("trace-replay: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static void *handle_get(const tmap *m, uint64_t key)
{
	uint64_t v;
	return key && tmap_get(m, (const void *)(uintptr_t)key, &v) ? (void *)(uintptr_t)v : NULL;
}

static void *handle_take(tmap *m, uint64_t key)
{
	uint64_t v;
	return key && tmap_take(m, (const void *)(uintptr_t)key, &v) ? (void *)(uintptr_t)v : NULL;
}

static void handle_put(tmap *m, uint64_t key, void *val)
{
	tmap_put(m, (const void *)(uintptr_t)key, (uint64_t)(uintptr_t)val);
}

/* The object at slot I of a map, NULL where the slot is empty: a walk of
 * every object alive. */
static void *handle_at(const tmap *m, size_t i)
{
	return m->keys[i] ? (void *)(uintptr_t)m->vals[i] : NULL;
}



static void warn(replay *r, enum warning_kind k, const trace_call *c, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A warning names the record; past WARNINGS_SHOWN of one kind the rest
 * are only counted (a recording can repeat one mistake 10 000 times). */
static void warn(replay *r, enum warning_kind k, const trace_call *c, const char *fmt, ...)
{
	if (++r->warnings[k] > WARNINGS_SHOWN || r->quiet)
		return;
	trace_cli_progress_done();
	va_list ap;
	fprintf(stderr, "%s: %s: call %llu: warning: ", trace_cli_self.prog, r->input,
		(unsigned long long)c->no);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void replay_free(replay *r);

static noreturn void replay_fail(replay *r)
{
	trace_error e = r->err;
	replay_free(r);
	trace_cli_fail(&e);
}

static noreturn void malformed(replay *r, const trace_call *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static noreturn void malformed(replay *r, const trace_call *c, const char *fmt, ...)
{
	trace_error_clear(&r->err);
	snprintf(r->err.file, sizeof(r->err.file), "%s", r->input);
	r->err.call = (int64_t)c->no;
	r->err.offset = c->offset;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err.msg, sizeof(r->err.msg), fmt, ap);
	va_end(ap);
	replay_fail(r);
}

/* ------------------------------------------------------------------ */
/* Arguments, typed as vma.h's table says. */

static uint64_t arg_uint(replay *r, const trace_call *c, uint32_t i)
{
	const trace_value *v = &c->args[i];
	if (v->kind == TRACE_UINT)
		return v->u;
	if (v->kind == TRACE_BOOL)
		return v->b;
	malformed(r, c, "argument %s of %s is a %s, not a number", c->sig->arg_names[i],
		  c->sig->name, trace_value_kind_name((trace_value_kind)v->kind));
}

static uint64_t pointer_of(replay *r, const trace_call *c, const trace_value *v, const char *name)
{
	switch (v->kind) {
	case TRACE_POINTER:
	case TRACE_UINT:
		return v->u;
	case TRACE_NULL:
		return 0;
	}
	malformed(r, c, "argument %s of %s is a %s, not a pointer", name, c->sig->name,
		  trace_value_kind_name((trace_value_kind)v->kind));
}

static uint64_t arg_ptr(replay *r, const trace_call *c, uint32_t i)
{
	return pointer_of(r, c, &c->args[i], c->sig->arg_names[i]);
}

static const trace_value *arg_list(replay *r, const trace_call *c, uint32_t i)
{
	const trace_value *v = &c->args[i];
	if (v->kind != TRACE_ARRAY)
		malformed(r, c, "argument %s of %s is a %s, not a list of pointers",
			  c->sig->arg_names[i], c->sig->name,
			  trace_value_kind_name((trace_value_kind)v->kind));
	for (uint32_t k = 0; k < v->len; k++)
		pointer_of(r, c, &v->items[k], c->sig->arg_names[i]);
	return v;
}

/* The function of a record, its arguments checked against vma.h's table
 * once per signature. */
static enum fn function_of(replay *r, const trace_call *c)
{
	const trace_func_sig *sig = c->sig;
	for (size_t i = 0; i < r->nsigs; i++)
		if (r->sigs[i] == sig)
			return (enum fn)r->sig_fn[i];
	char why[sizeof(r->err.msg)];
	int kind = vma_record_kind(sig, "recording", why, sizeof(why));
	enum fn f = FN_NONE;
	if (kind == VMA_RECORD_BAD) {
		malformed(r, c, "%s", why);
	} else if (kind == VMA_RECORD_FRAME || kind == VMA_RECORD_TIME) {
		f = kind == VMA_RECORD_FRAME ? FN_FRAME : FN_TIME;
	} else if (kind == VMA_RECORD_SKIP) {
		f = FN_SKIP;
	} else {
		size_t n;
		const char *name = vma_functions(&n)[kind].name;
		for (int k = FN_CREATE_ALLOCATOR; k < FN_COUNT; k++)
			if (!strcmp(vmar_fn_names[k], name))
				f = (enum fn)k;
		if (f == FN_NONE)
			malformed(r, c, "%s is a VMA function this replayer does not know", name);
	}
	if (r->nsigs < sizeof(r->sigs) / sizeof(r->sigs[0])) {
		r->sigs[r->nsigs] = sig;
		r->sig_fn[r->nsigs++] = (uint8_t)f;
	}
	return f;
}

/* ------------------------------------------------------------------ */
/* The recording device, from the header's Config lines. */

static bool config_u64(const char *s, const char *prefix, uint64_t *v)
{
	size_t n = strlen(prefix);
	if (strncmp(s, prefix, n))
		return false;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s + n, &end, 10);
	if (errno || end == s + n || (*end && *end != ' '))
		return false;
	*v = x;
	return true;
}

/* "Type,3,propertyFlags,14" after the prefix: index and value. */
static bool config_indexed(const char *s, const char *prefix, const char *field, uint32_t *i,
			   uint64_t *v)
{
	size_t n = strlen(prefix);
	if (strncmp(s, prefix, n))
		return false;
	char *end;
	unsigned long idx = strtoul(s + n, &end, 10);
	if (end == s + n || *end != ',')
		return false;
	size_t fl = strlen(field);
	if (strncmp(end + 1, field, fl) || end[1 + fl] != ',')
		return false;
	char *vend;
	unsigned long long x = strtoull(end + 2 + fl, &vend, 10);
	if (vend == end + 2 + fl)
		return false;
	*i = (uint32_t)idx;
	*v = x;
	return true;
}

static void read_config(replay *r, const trace_header *h)
{
	r->rec_dedicated_ext = true;
	const char *nl = trace_header_get(h, VMA_PROP_CONFIG_LINES);
	unsigned long lines = nl ? strtoul(nl, NULL, 10) : 0;
	uint64_t type_count = 0, heap_count = 0;
	for (unsigned long k = 0; k < lines; k++) {
		char name[64];
		snprintf(name, sizeof(name), VMA_PROP_CONFIG_PREFIX "%lu", k);
		const char *s = trace_header_get(h, name);
		uint64_t v;
		uint32_t i;
		if (!s)
			continue;
		if (config_u64(s, "PhysicalDeviceMemory,TypeCount,", &v))
			type_count = v;
		else if (config_u64(s, "PhysicalDeviceMemory,HeapCount,", &v))
			heap_count = v;
		else if (config_indexed(s, "PhysicalDeviceMemory,Type,", "heapIndex", &i, &v) &&
			 i < VK_MAX_MEMORY_TYPES)
			r->rec.memoryTypes[i].heapIndex = (uint32_t)v;
		else if (config_indexed(s, "PhysicalDeviceMemory,Type,", "propertyFlags", &i, &v) &&
			 i < VK_MAX_MEMORY_TYPES)
			r->rec.memoryTypes[i].propertyFlags = (VkMemoryPropertyFlags)v;
		else if (config_indexed(s, "PhysicalDeviceMemory,Heap,", "size", &i, &v) &&
			 i < VK_MAX_MEMORY_HEAPS)
			r->rec.memoryHeaps[i].size = v;
		else if (config_indexed(s, "PhysicalDeviceMemory,Heap,", "flags", &i, &v) &&
			 i < VK_MAX_MEMORY_HEAPS)
			r->rec.memoryHeaps[i].flags = (VkMemoryHeapFlags)v;
		else if (config_u64(s, "Extension,VK_KHR_dedicated_allocation,", &v))
			r->rec_dedicated_ext = v != 0;
		else if (config_u64(s, "Macro,VMA_DEBUG_ALWAYS_DEDICATED_MEMORY,", &v))
			r->always_dedicated = v != 0;
		else if (config_u64(s, "Macro,VMA_DEFAULT_LARGE_HEAP_BLOCK_SIZE,", &v))
			r->rec_large_block = v;
		else if (config_u64(s, "Macro,VMA_SMALL_HEAP_MAX_SIZE,", &v))
			r->rec_small_heap = v;
	}
	r->rec.memoryTypeCount = (uint32_t)(type_count < VK_MAX_MEMORY_TYPES ? type_count
									     : VK_MAX_MEMORY_TYPES);
	r->rec.memoryHeapCount = (uint32_t)(heap_count < VK_MAX_MEMORY_HEAPS ? heap_count
									     : VK_MAX_MEMORY_HEAPS);
	r->rec_types = r->rec.memoryTypeCount > 0;
}

/* Recorded memory type bits as replay ones: through the translation when
 * the recording said its types, else every replay type (flags decide). */
static uint32_t translate_bits(const replay *r, uint32_t bits)
{
	uint32_t all = r->dev.memory.memoryTypeCount >= 32
		? UINT32_MAX : (1u << r->dev.memory.memoryTypeCount) - 1;
	if (!r->rec_types || !bits)
		return all;
	uint32_t out = 0;
	for (uint32_t i = 0; i < r->rec.memoryTypeCount; i++)
		if (bits & (1u << i))
			out |= 1u << r->translate[i];
	/* bits of types the recording did not describe */
	if (r->rec.memoryTypeCount < 32 && bits >> r->rec.memoryTypeCount)
		out |= all;
	return out ? out : all;
}

/* ------------------------------------------------------------------ */
/* Allocating as VMA would. */

typedef struct alloc_info {
	uint32_t flags, usage, required, preferred, type_bits; /* the create info's */
	uint64_t pool;
} alloc_info;

/* VMA's vmaFindMemoryTypeIndex: usage becomes required, preferred and
 * not-preferred flags. */
static void usage_flags(const replay *r, const alloc_info *ai, uint32_t *required,
			uint32_t *preferred, uint32_t *not_preferred)
{
	bool integrated = r->dev.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
	uint32_t req = ai->required, pref = ai->preferred, notp = 0;
	const uint32_t local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
	const uint32_t visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
	const uint32_t coherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	const uint32_t cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
	switch (ai->usage) {
	case USAGE_GPU_ONLY:
		if (!integrated || !(pref & visible))
			pref |= local;
		break;
	case USAGE_CPU_ONLY:
		req |= visible | coherent;
		break;
	case USAGE_CPU_TO_GPU:
		req |= visible;
		if (!integrated || !(pref & visible))
			pref |= local;
		break;
	case USAGE_GPU_TO_CPU:
		req |= visible;
		pref |= cached;
		break;
	case USAGE_CPU_COPY:
		notp |= local;
		break;
	case USAGE_GPU_LAZILY_ALLOCATED:
		req |= VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT;
		break;
	case USAGE_AUTO:
	case USAGE_AUTO_PREFER_DEVICE:
	case USAGE_AUTO_PREFER_HOST: {
		bool prefer_host = ai->usage == USAGE_AUTO_PREFER_HOST;
		if (ai->flags & CREATE_HOST_ACCESS_RANDOM) {
			req |= visible;
			pref |= cached;
		} else if (ai->flags & CREATE_HOST_ACCESS_SEQUENTIAL_WRITE) {
			req |= visible;
			notp |= cached;
			if (prefer_host)
				notp |= local;
			else
				pref |= local;
		} else if (prefer_host) {
			notp |= local;
		} else {
			pref |= local;
		}
		break;
	}
	default:
		break;
	}
	if (!((req | pref) & AMD_COHERENCE_BITS))
		notp |= AMD_COHERENCE_BITS;
	*required = req;
	*preferred = pref;
	*not_preferred = notp;
}

/*
 * Allocates for a: in its pool's type, or in the best type of bits for
 * the usage, trying the next best when one fails (as VMA did).
 */
static VkResult allocate(replay *r, const trace_call *c, alloc_obj *a, const alloc_info *ai,
			 uint32_t bits, vkd_request *req)
{
	if (r->always_dedicated || ai->flags & CREATE_DEDICATED_MEMORY)
		req->dedicated = true;
	if (ai->pool) {
		pool_obj *p = handle_get(&r->pools, ai->pool);
		if (!p) {
			warn(r, W_UNKNOWN, c, "%s in pool 0x%llx, which no call created; allocated "
			     "outside any pool", c->sig->name, (unsigned long long)ai->pool);
		} else if (!p->pool) {
			/* its creation failed and was reported */
		} else if (!(bits & (1u << vkd_pool_type(p->pool)))) {
			warn(r, W_FAILED, c, "pool 0x%llx (memory type %u here) cannot hold this "
			     "resource on %s; allocated outside the pool",
			     (unsigned long long)ai->pool, vkd_pool_type(p->pool),
			     r->dev.props.deviceName);
		} else {
			vkd_request preq = *req;
			preq.dedicated = false;
			VkResult res = vkd_alloc(&r->dev, p->pool, vkd_pool_type(p->pool), &preq, &a->mem);
			if (res == VK_SUCCESS) {
				a->pool = p;
				p->live++;
			}
			return res;
		}
	}
	uint32_t required, preferred, not_preferred, exclude = 0, type;
	usage_flags(r, ai, &required, &preferred, &not_preferred);
	VkResult res = VK_ERROR_FEATURE_NOT_PRESENT;
	while (!vkd_find_memory_type(&r->dev, bits, required, preferred, not_preferred, exclude,
				     &type)) {
		res = vkd_alloc(&r->dev, NULL, type, req, &a->mem);
		if (res == VK_SUCCESS)
			return res;
		exclude |= 1u << type;
	}
	return res;
}

/* Writes through a's mapping, so that the mapping is used for real: the
 * first 256 bytes, then one word per 4 KiB page. */
static void write_pattern(const alloc_obj *a, void *p)
{
	uint64_t seed = a->call * 0x9e3779b97f4a7c15ull;
	VkDeviceSize n = a->mem.size;
	unsigned char *b = p;
	for (VkDeviceSize o = 0; o + 8 <= n && o < 256; o += 8) {
		uint64_t w = seed ^ o;
		memcpy(b + o, &w, 8);
	}
	for (VkDeviceSize o = 4096; o + 8 <= n; o += 4096) {
		uint64_t w = seed ^ o;
		memcpy(b + o, &w, 8);
	}
}

static void map_for(replay *r, const trace_call *c, alloc_obj *a)
{
	VkResult res;
	void *p = vkd_map(&r->dev, &a->mem, &res);
	if (!p) {
		warn(r, W_FAILED, c, "cannot map allocation 0x%llx (memory type %u is not "
		     "HOST_VISIBLE here, or vkMapMemory failed: %d)",
		     (unsigned long long)a->ptr, a->mem.type, res);
		return;
	}
	r->maps++;
	write_pattern(a, p);
}

static alloc_obj *new_alloc(replay *r, const trace_call *c, uint64_t ptr, uint32_t flags);

static void release(replay *r, alloc_obj *a)
{
	if (a->pool)
		a->pool->live--;
	vkd_free(&r->dev, &a->mem);
	if (a->buffer)
		vkDestroyBuffer(r->dev.device, a->buffer, NULL);
	if (a->image)
		vkDestroyImage(r->dev.device, a->image, NULL);
	free(a);
}

/* The allocation a record names as made before, or NULL with a warning
 * (a null pointer is no warning: VMA takes it as "nothing"). */
static alloc_obj *find_alloc(replay *r, const trace_call *c, uint64_t ptr, bool destroy)
{
	if (!ptr)
		return NULL;
	alloc_obj *a = destroy ? handle_take(&r->allocs, ptr) : handle_get(&r->allocs, ptr);
	if (!a)
		warn(r, W_UNKNOWN, c, "%s of allocation 0x%llx, which no call created; %s",
		     c->sig->name, (unsigned long long)ptr, destroy ? "nothing destroyed" : "ignored");
	return a;
}

static alloc_obj *new_alloc(replay *r, const trace_call *c, uint64_t ptr, uint32_t flags)
{
	alloc_obj *old = handle_take(&r->allocs, ptr);
	if (old) {
		warn(r, W_MISUSE, c, "%s returns allocation 0x%llx, which call %llu made and "
		     "no call destroyed; the old one is freed", c->sig->name,
		     (unsigned long long)ptr, (unsigned long long)old->call);
		release(r, old);
	}
	alloc_obj *a = xcalloc(1, sizeof(*a));
	a->ptr = ptr;
	a->call = c->no;
	a->flags = flags;
	a->last_use = r->frame;
	handle_put(&r->allocs, ptr, a);
	return a;
}

/* After a successful allocation: counts, persistent map. */
static void made(replay *r, const trace_call *c, alloc_obj *a)
{
	r->allocations++;
	if (a->flags & CREATE_MAPPED &&
	    r->dev.memory.memoryTypes[a->mem.type].propertyFlags &
		    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
		map_for(r, c, a);
		a->persistent = a->mem.map_count > 0;
	}
}

static void read_alloc_info(replay *r, const trace_call *c, uint32_t first, alloc_info *ai)
{
	ai->flags = (uint32_t)arg_uint(r, c, first);
	ai->usage = (uint32_t)arg_uint(r, c, first + 1);
	ai->required = (uint32_t)arg_uint(r, c, first + 2);
	ai->preferred = (uint32_t)arg_uint(r, c, first + 3);
	ai->type_bits = (uint32_t)arg_uint(r, c, first + 4);
	ai->pool = arg_ptr(r, c, first + 5);
}

/* The replay device's requirements of a resource, with its dedicated hints. */
static void requirements(replay *r, VkBuffer buffer, VkImage image, VkMemoryRequirements *mr,
			 bool *dedicated)
{
	if (r->dev.api_version >= VK_API_VERSION_1_1) {
		VkMemoryDedicatedRequirements dr = {
			.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS,
		};
		VkMemoryRequirements2 m2 = {.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2,
					    .pNext = &dr};
		if (buffer) {
			VkBufferMemoryRequirementsInfo2 bi = {
				.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2,
				.buffer = buffer};
			vkGetBufferMemoryRequirements2(r->dev.device, &bi, &m2);
		} else {
			VkImageMemoryRequirementsInfo2 ii = {
				.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2,
				.image = image};
			vkGetImageMemoryRequirements2(r->dev.device, &ii, &m2);
		}
		*mr = m2.memoryRequirements;
		*dedicated = dr.requiresDedicatedAllocation ||
			     (dr.prefersDedicatedAllocation && r->rec_dedicated_ext);
		return;
	}
	*dedicated = false;
	if (buffer)
		vkGetBufferMemoryRequirements(r->dev.device, buffer, mr);
	else
		vkGetImageMemoryRequirements(r->dev.device, image, mr);
}

/* Memory for a made buffer or image, bound unless DONT_BIND. */
static void allocate_resource(replay *r, const trace_call *c, alloc_obj *a, const alloc_info *ai,
			      vkd_kind kind)
{
	VkMemoryRequirements mr;
	bool dedicated;
	requirements(r, a->buffer, a->image, &mr, &dedicated);
	uint32_t bits = translate_bits(r, ai->type_bits) & mr.memoryTypeBits;
	if (!bits)
		bits = mr.memoryTypeBits;
	vkd_request req = {
		.size = mr.size,
		.alignment = mr.alignment,
		.kind = kind,
		.dedicated = dedicated,
		.dedicated_buffer = a->buffer,
		.dedicated_image = a->image,
	};
	VkResult res = allocate(r, c, a, ai, bits, &req);
	if (res != VK_SUCCESS) {
		r->failed++;
		warn(r, W_FAILED, c, "%s: no memory for %llu bytes on %s (%d)", c->sig->name,
		     (unsigned long long)mr.size, r->dev.props.deviceName, res);
		return;
	}
	if (!(ai->flags & CREATE_DONT_BIND)) {
		res = a->buffer ? vkBindBufferMemory(r->dev.device, a->buffer, a->mem.memory,
						     a->mem.offset)
				: vkBindImageMemory(r->dev.device, a->image, a->mem.memory,
						    a->mem.offset);
		if (res != VK_SUCCESS)
			warn(r, W_FAILED, c, "%s: binding memory failed (%d)", c->sig->name, res);
	}
	made(r, c, a);
}

/* Vulkan 1.0 usage and create bits only: the rest need features or
 * extensions the replay device is not asked for (device addresses, sparse
 * binding, acceleration structures). */
#define BUFFER_USAGE_CORE 0x1ffu
#define IMAGE_USAGE_CORE 0xffu
#define IMAGE_FLAGS_KEPT 0x38u /* MUTABLE_FORMAT, CUBE_COMPATIBLE, 2D_ARRAY_COMPATIBLE */

static void create_buffer(replay *r, const trace_call *c)
{
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = arg_uint(r, c, 1),
		.usage = (VkBufferUsageFlags)arg_uint(r, c, 2) & BUFFER_USAGE_CORE,
		/* CONCURRENT needs the queue families, which VMA did not record */
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	(void)arg_uint(r, c, 0);
	(void)arg_uint(r, c, 3);
	alloc_info ai;
	read_alloc_info(r, c, 4, &ai);
	uint64_t ptr = arg_ptr(r, c, 10);
	if (!ptr)
		return; /* it failed when recorded */
	alloc_obj *a = new_alloc(r, c, ptr, ai.flags);
	if (!bci.size) {
		r->failed++;
		warn(r, W_FAILED, c, "vmaCreateBuffer of size 0: no buffer made");
		return;
	}
	VkResult res = vkCreateBuffer(r->dev.device, &bci, NULL, &a->buffer);
	if (res != VK_SUCCESS) {
		a->buffer = VK_NULL_HANDLE;
		r->failed++;
		warn(r, W_FAILED, c, "vkCreateBuffer of %llu bytes failed (%d)",
		     (unsigned long long)bci.size, res);
		return;
	}
	r->buffers++;
	allocate_resource(r, c, a, &ai, VKD_KIND_LINEAR);
}

static void create_image(replay *r, const trace_call *c)
{
	uint32_t v[13];
	for (uint32_t i = 0; i < 13; i++)
		v[i] = (uint32_t)arg_uint(r, c, i);
	alloc_info ai;
	read_alloc_info(r, c, 13, &ai);
	uint64_t ptr = arg_ptr(r, c, 19);
	if (!ptr)
		return;
	alloc_obj *a = new_alloc(r, c, ptr, ai.flags);
	VkImageCreateInfo ici = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
		.flags = v[0] & IMAGE_FLAGS_KEPT,
		.imageType = (VkImageType)v[1],
		.format = (VkFormat)v[2],
		.extent = {v[3], v[4], v[5]},
		.mipLevels = v[6],
		.arrayLayers = v[7],
		.samples = (VkSampleCountFlagBits)v[8],
		.tiling = (VkImageTiling)v[9],
		.usage = v[10] & IMAGE_USAGE_CORE,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
		.initialLayout = v[12] == VK_IMAGE_LAYOUT_PREINITIALIZED
			? VK_IMAGE_LAYOUT_PREINITIALIZED : VK_IMAGE_LAYOUT_UNDEFINED,
	};
	/* what the device cannot make is reported, not handed to the driver */
	VkImageFormatProperties fp;
	const char *why = NULL;
	if (!v[3] || !v[4] || !v[5] || !v[6] || !v[7] || !v[8] || v[1] > VK_IMAGE_TYPE_3D ||
	    v[9] > VK_IMAGE_TILING_LINEAR || !ici.usage)
		why = "the recorded create info is not a valid one";
	else if (vkGetPhysicalDeviceImageFormatProperties(r->dev.physical, ici.format,
							  ici.imageType, ici.tiling, ici.usage,
							  ici.flags, &fp) != VK_SUCCESS)
		why = "the device does not support this format, type, tiling and usage";
	else if (v[3] > fp.maxExtent.width || v[4] > fp.maxExtent.height ||
		 v[5] > fp.maxExtent.depth || v[6] > fp.maxMipLevels ||
		 v[7] > fp.maxArrayLayers || !(fp.sampleCounts & v[8]))
		why = "the device's limits for this format are smaller";
	if (why) {
		r->failed++;
		warn(r, W_FAILED, c, "vmaCreateImage %ux%ux%u format %u: %s; no image made",
		     v[3], v[4], v[5], v[2], why);
		return;
	}
	VkResult res = vkCreateImage(r->dev.device, &ici, NULL, &a->image);
	if (res != VK_SUCCESS) {
		a->image = VK_NULL_HANDLE;
		r->failed++;
		warn(r, W_FAILED, c, "vkCreateImage failed (%d)", res);
		return;
	}
	r->images++;
	allocate_resource(r, c, a, &ai,
			  ici.tiling == VK_IMAGE_TILING_LINEAR ? VKD_KIND_LINEAR : VKD_KIND_OPTIMAL);
}

/* vmaAllocateMemory, ...Pages, ...ForBuffer, ...ForImage: memory with the
 * recorded requirements, no resource. */
static void allocate_memory(replay *r, const trace_call *c, enum fn f)
{
	bool for_resource = f == FN_ALLOCATE_FOR_BUFFER || f == FN_ALLOCATE_FOR_IMAGE;
	uint32_t ci = for_resource ? 5 : 3;
	vkd_request req = {
		.size = arg_uint(r, c, 0),
		.alignment = arg_uint(r, c, 1),
		.kind = f == FN_ALLOCATE_FOR_BUFFER ? VKD_KIND_LINEAR : VKD_KIND_UNKNOWN,
	};
	uint32_t rec_bits = (uint32_t)arg_uint(r, c, 2);
	if (for_resource)
		req.dedicated = arg_uint(r, c, 3) || (arg_uint(r, c, 4) && r->rec_dedicated_ext);
	alloc_info ai;
	read_alloc_info(r, c, ci, &ai);
	uint32_t bits = translate_bits(r, rec_bits) & translate_bits(r, ai.type_bits);
	if (!bits)
		bits = translate_bits(r, rec_bits);
	uint64_t one = 0;
	const trace_value *list = NULL;
	uint32_t n = 1;
	if (f == FN_ALLOCATE_MEMORY_PAGES) {
		list = arg_list(r, c, ci + 6);
		n = list->len;
	} else {
		one = arg_ptr(r, c, ci + 6);
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ptr = list ? pointer_of(r, c, &list->items[i], "allocations") : one;
		if (!ptr)
			continue;
		alloc_obj *a = new_alloc(r, c, ptr, ai.flags);
		if (!req.size) {
			r->failed++;
			warn(r, W_FAILED, c, "%s of size 0: nothing allocated", c->sig->name);
			continue;
		}
		VkResult res = allocate(r, c, a, &ai, bits, &req);
		if (res != VK_SUCCESS) {
			r->failed++;
			warn(r, W_FAILED, c, "%s: no memory for %llu bytes on %s (%d)", c->sig->name,
			     (unsigned long long)req.size, r->dev.props.deviceName, res);
			continue;
		}
		made(r, c, a);
	}
}

static void create_pool(replay *r, const trace_call *c)
{
	uint32_t rec_type = (uint32_t)arg_uint(r, c, 0);
	uint32_t flags = (uint32_t)arg_uint(r, c, 1);
	uint64_t block_size = arg_uint(r, c, 2), min = arg_uint(r, c, 3), max = arg_uint(r, c, 4);
	uint32_t frame_in_use = (uint32_t)arg_uint(r, c, 5);
	uint64_t ptr = arg_ptr(r, c, 6);
	if (!ptr)
		return;
	pool_obj *p = handle_take(&r->pools, ptr);
	if (p) {
		warn(r, W_MISUSE, c, "vmaCreatePool returns pool 0x%llx, which call %llu made and "
		     "no call destroyed; the old one is kept", (unsigned long long)ptr,
		     (unsigned long long)p->call);
		/* its allocations still point at it: keep it, under no name */
	}
	p = xcalloc(1, sizeof(*p));
	p->ptr = ptr;
	p->call = c->no;
	p->frame_in_use = frame_in_use;
	handle_put(&r->pools, ptr, p);
	uint32_t type = r->rec_types ? (rec_type < r->rec.memoryTypeCount ? r->translate[rec_type]
									  : vkd_translate_type(&r->dev, NULL, rec_type))
				     : vkd_translate_type(&r->dev, NULL, rec_type);
	VkResult res = vkd_pool_create(&r->dev, type, block_size, min, max,
				       flags & POOL_IGNORE_BUFFER_IMAGE_GRANULARITY, &p->pool);
	if (res != VK_SUCCESS) {
		r->failed++;
		warn(r, W_FAILED, c, "vmaCreatePool: %llu block%s of %llu bytes in memory type %u "
		     "failed (%d); its allocations go outside pools", (unsigned long long)min,
		     min == 1 ? "" : "s", (unsigned long long)block_size, type, res);
		return;
	}
	r->pools_made++;
}

static void free_alloc_call(replay *r, const trace_call *c, uint64_t ptr)
{
	alloc_obj *a = find_alloc(r, c, ptr, true);
	if (a)
		release(r, a);
}

static void destroy_pool(replay *r, const trace_call *c)
{
	uint64_t ptr = arg_ptr(r, c, 0);
	if (!ptr)
		return;
	pool_obj *p = handle_take(&r->pools, ptr);
	if (!p) {
		warn(r, W_UNKNOWN, c, "vmaDestroyPool of pool 0x%llx, which no call created; "
		     "nothing destroyed", (unsigned long long)ptr);
		return;
	}
	if (p->live) {
		warn(r, W_ALIVE, c, "vmaDestroyPool of pool 0x%llx with %llu allocation%s still "
		     "in it; they are freed", (unsigned long long)ptr, (unsigned long long)p->live,
		     p->live == 1 ? "" : "s");
		for (size_t i = 0; i < r->allocs.cap; i++) {
			alloc_obj *a = handle_at(&r->allocs, i);
			if (a && a->pool == p) {
				handle_take(&r->allocs, a->ptr);
				release(r, a);
				i--; /* the shift may have moved another entry here */
			}
		}
	}
	vkd_pool_destroy(&r->dev, p->pool);
	free(p);
}

/* vmaMakePoolAllocationsLost: what may become lost (CAN_BECOME_LOST) and
 * was not used in the pool's last frameInUseCount frames loses its memory. */
static void make_lost(replay *r, const trace_call *c)
{
	uint64_t ptr = arg_ptr(r, c, 0);
	pool_obj *p = handle_get(&r->pools, ptr);
	if (!p) {
		if (ptr)
			warn(r, W_UNKNOWN, c, "vmaMakePoolAllocationsLost of pool 0x%llx, which no "
			     "call created; ignored", (unsigned long long)ptr);
		return;
	}
	for (size_t i = 0; i < r->allocs.cap; i++) {
		alloc_obj *a = handle_at(&r->allocs, i);
		if (!a || a->pool != p || a->lost || !(a->flags & CREATE_CAN_BECOME_LOST))
			continue;
		if ((uint64_t)a->last_use + p->frame_in_use >= r->frame)
			continue;
		vkd_free(&r->dev, &a->mem);
		a->lost = true;
		a->maps = 0;
		p->live--;
		a->pool = NULL;
		r->made_lost++;
	}
}

/* At a vmaDestroyAllocator (C), the warning for an object the recording
 * left alive; none where the replay frees what is left (C NULL). */
static void alive(replay *r, const trace_call *c, const char *what, uint64_t ptr,
		  uint64_t call, const char *fate)
{
	if (c)
		warn(r, W_ALIVE, c, "vmaDestroyAllocator with %s 0x%llx (made by call %llu) "
		     "still alive; it is %s", what, (unsigned long long)ptr,
		     (unsigned long long)call, fate);
}

/* Frees every allocation still alive, each with its warning at a
 * vmaDestroyAllocator (alive). */
static void free_allocs(replay *r, const trace_call *c)
{
	alloc_obj *a;
	for (size_t i = 0; i < r->allocs.cap; i++)
		if ((a = handle_at(&r->allocs, i))) {
			alive(r, c, "allocation", a->ptr, a->call, "freed");
			release(r, a);
		}
	tmap_free(&r->allocs);
}

/* The same for the pools, after their allocations. */
static void free_pools(replay *r, const trace_call *c)
{
	pool_obj *p;
	for (size_t i = 0; i < r->pools.cap; i++)
		if ((p = handle_at(&r->pools, i))) {
			alive(r, c, "pool", p->ptr, p->call, "destroyed");
			vkd_pool_destroy(&r->dev, p->pool);
			free(p);
		}
	tmap_free(&r->pools);
}

static void destroy_allocator(replay *r, const trace_call *c)
{
	free_allocs(r, c);
	free_pools(r, c);
	tmap_free(&r->defrags);
}

static void flush(replay *r, const trace_call *c, bool invalidate)
{
	alloc_obj *a = find_alloc(r, c, arg_ptr(r, c, 0), false);
	uint64_t offset = arg_uint(r, c, 1), size = arg_uint(r, c, 2);
	if (!a || !a->mem.block)
		return;
	VkResult res = invalidate ? vkd_invalidate(&r->dev, &a->mem, offset, size)
				  : vkd_flush(&r->dev, &a->mem, offset, size);
	if (res != VK_SUCCESS)
		warn(r, W_FAILED, c, "%s failed (%d)", c->sig->name, res);
	r->flushes++;
}

static void note_thread(replay *r, uint32_t t)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i] == t)
			return;
	if (r->nthreads == r->cap_threads) {
		r->cap_threads = r->cap_threads ? 2 * r->cap_threads : 16;
		r->threads = realloc(r->threads, r->cap_threads * sizeof(*r->threads));
		if (!r->threads)
			abort();
	}
	r->threads[r->nthreads++] = t;
}

static void note_time(replay *r, const trace_call *c)
{
	const trace_value *v = &c->args[0];
	double t;
	if (v->kind == TRACE_DOUBLE)
		t = v->d;
	else if (v->kind == TRACE_FLOAT)
		t = v->f;
	else if (v->kind == TRACE_UINT)
		t = (double)v->u;
	else if (v->kind == TRACE_STRING)
		t = strtod(v->str, NULL);
	else
		malformed(r, c, "tracekit.time's seconds is %s, not a number",
			  trace_value_kind_name((trace_value_kind)v->kind));
	if (!r->t_seen)
		r->t_first = t;
	r->t_seen = true;
	r->t_last = t;
}

static void replay_call(replay *r, const trace_call *c)
{
	enum fn f = function_of(r, c);
	if (f == FN_SKIP)
		return;
	if (f == FN_FRAME) {
		r->frame = (uint32_t)arg_uint(r, c, 0);
		return;
	}
	if (f == FN_TIME) {
		note_time(r, c);
		return;
	}
	r->calls++;
	r->fn_calls[f]++;
	note_thread(r, c->thread);
	alloc_obj *a;
	switch (f) {
	case FN_CREATE_ALLOCATOR:
	case FN_SET_USER_DATA:
	case FN_SET_POOL_NAME:
		break;
	case FN_DESTROY_ALLOCATOR: destroy_allocator(r, c); break;
	case FN_CREATE_POOL: create_pool(r, c); break;
	case FN_DESTROY_POOL: destroy_pool(r, c); break;
	case FN_CREATE_BUFFER: create_buffer(r, c); break;
	case FN_CREATE_IMAGE: create_image(r, c); break;
	case FN_DESTROY_BUFFER:
	case FN_DESTROY_IMAGE:
	case FN_FREE_MEMORY:
		free_alloc_call(r, c, arg_ptr(r, c, 0));
		break;
	case FN_FREE_MEMORY_PAGES: {
		const trace_value *list = arg_list(r, c, 0);
		for (uint32_t i = 0; i < list->len; i++)
			free_alloc_call(r, c, pointer_of(r, c, &list->items[i], "allocations"));
		break;
	}
	case FN_CREATE_LOST: {
		uint64_t ptr = arg_ptr(r, c, 0);
		if (ptr) {
			new_alloc(r, c, ptr, 0)->lost = true;
			r->lost++;
		}
		break;
	}
	case FN_ALLOCATE_MEMORY:
	case FN_ALLOCATE_MEMORY_PAGES:
	case FN_ALLOCATE_FOR_BUFFER:
	case FN_ALLOCATE_FOR_IMAGE:
		allocate_memory(r, c, f);
		break;
	case FN_MAP:
		if ((a = find_alloc(r, c, arg_ptr(r, c, 0), false)) && a->mem.block) {
			uint32_t before = a->mem.map_count;
			map_for(r, c, a);
			a->maps += a->mem.map_count > before;
		}
		break;
	case FN_UNMAP:
		if ((a = find_alloc(r, c, arg_ptr(r, c, 0), false)) && a->mem.block) {
			if (!a->maps) {
				warn(r, W_MISUSE, c, "vmaUnmapMemory of allocation 0x%llx, which "
				     "is not mapped; ignored", (unsigned long long)a->ptr);
				break;
			}
			a->maps--;
			vkd_unmap(&r->dev, &a->mem);
		}
		break;
	case FN_FLUSH:
	case FN_INVALIDATE:
		flush(r, c, f == FN_INVALIDATE);
		break;
	case FN_TOUCH:
	case FN_GET_INFO:
		if ((a = find_alloc(r, c, arg_ptr(r, c, 0), false)) && !a->lost)
			a->last_use = r->frame;
		break;
	case FN_MAKE_LOST: make_lost(r, c); break;
	case FN_RESIZE:
		if ((a = find_alloc(r, c, arg_ptr(r, c, 0), false)) && a->mem.block) {
			uint64_t size = arg_uint(r, c, 1);
			/* VMA 2.2 resized in place or failed; a bound resource keeps
			 * its own size either way */
			if (vkd_resize(&r->dev, &a->mem, size) != VK_SUCCESS)
				r->resizes_failed++;
		}
		break;
	case FN_DEFRAG_BEGIN: {
		/* allocations stay where they are: moving them needs the
		 * contents copied on the GPU, which comes with the Vulkan
		 * replayer; the call is counted and its context kept */
		arg_list(r, c, 1);
		arg_list(r, c, 2);
		uint64_t ctx = arg_ptr(r, c, 8);
		r->defrags_done++;
		if (ctx)
			handle_put(&r->defrags, ctx, r);
		break;
	}
	case FN_DEFRAG_END: {
		uint64_t ctx = arg_ptr(r, c, 0);
		if (ctx && !handle_take(&r->defrags, ctx))
			warn(r, W_UNKNOWN, c, "vmaDefragmentationEnd of context 0x%llx, which no "
			     "call began; ignored", (unsigned long long)ctx);
		break;
	}
	default:
		break;
	}
}


/* ------------------------------------------------------------------ */

static void replay_free(replay *r)
{
	free_allocs(r, NULL);
	free_pools(r, NULL);
	tmap_free(&r->defrags);
	free(r->threads);
	r->threads = NULL;
	vkd_close(&r->dev);
}

int vmar_run(trace_reader *in, const vmar_options *o)
{
	static replay r;
	vkd_options opt = o->dev;
	const trace_header *h = trace_reader_header(in);
	const char *version = trace_header_get(h, VMA_PROP_VERSION);

	r.input = o->input;
	r.quiet = o->quiet;
	trace_error_clear(&r.err);
	if (strncmp(version, "1,", 2)) {
		trace_error_clear(&r.err);
		snprintf(r.err.file, sizeof(r.err.file), "%s", r.input);
		trace_error_set(&r.err, "VMA recording format %s: only 1,0 to 1,%d replay", version,
				VMA_VERSION_MINOR_MAX);
		trace_cli_fail(&r.err);
	}
	snprintf(r.version, sizeof(r.version), "%s", version);
	read_config(&r, h);
	if (!opt.large_heap_block_size)
		opt.large_heap_block_size = r.rec_large_block;
	opt.small_heap_max_size = r.rec_small_heap;

	int k = vkd_open(&r.dev, &opt, &r.err);
	if (k < 0) {
		if (k == -2)
			trace_cli_usage_error("%s", r.err.msg);
		trace_cli_fail(&r.err);
	}
	for (uint32_t t = 0; t < r.rec.memoryTypeCount; t++)
		r.translate[t] = vkd_translate_type(&r.dev, &r.rec, t);

	double t0 = vmar_seconds_now();
	trace_call *call;
	while ((k = trace_reader_next(in, &call, &r.err)) > 0) {
		replay_call(&r, call);
		trace_cli_progress(in, ++r.records);
	}
	trace_cli_progress_done();
	if (k < 0) {
		replay_fail(&r);
	}
	/* a stream cut before vmaDestroyAllocator (trace-trim) leaves objects:
	 * freed quietly, as a program's exit would */
	free_allocs(&r, NULL);
	vkDeviceWaitIdle(r.dev.device);
	r.playback = vmar_seconds_now() - t0;

	for (int w = 0; w < W_COUNT; w++)
		if (r.warnings[w] > WARNINGS_SHOWN && !r.quiet)
			fprintf(stderr, "%s: %s: %llu more warnings like the above not shown\n",
				trace_cli_self.prog, r.input,
				(unsigned long long)(r.warnings[w] - WARNINGS_SHOWN));
	if (o->stats == 1)
		vmar_print_text(&r, stdout);
	else if (o->stats == 2)
		vmar_print_json(&r, stdout);
	fflush(stdout);
	uint64_t verrors = r.dev.msgs->errors;
	replay_free(&r);
	/* the layer may speak while the device and instance go */
	verrors = r.dev.msgs->errors > verrors ? r.dev.msgs->errors : verrors;
	vkd_messages_end(r.dev.msgs);
	if (verrors) {
		fprintf(stderr, "%s: %s: %llu validation error%s\n", trace_cli_self.prog, r.input,
			(unsigned long long)verrors, verrors == 1 ? "" : "s");
		return 1;
	}
	return 0;
}
