/*
 * Memory, object-based: each buffer and image placed in an allocation of
 * its own (vkdevice.c), in one spanning a small capture memory, or in
 * that of an object it aliased at capture; the bytes the trace wrote
 * (tracekit.update records) copied in, and copied between aliasing
 * objects placed apart.
 */
#include "replay_internal.h"

void vkr_parse_header_memory(vkr *r, const trace_header *h)
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

obj *vkr_obj_get(vkr *r, uint64_t cap)
{
	uint64_t *e = tmap_at(&r->objects, cap, TAG_OBJ);
	return e ? (obj *)(uintptr_t)*e : NULL;
}

static memobj *mem_get(vkr *r, uint64_t cap)
{
	uint64_t *e = tmap_at(&r->mems, cap, TAG_MEM);
	return e ? (memobj *)(uintptr_t)*e : NULL;
}

/* A framebuffer's extent and layers within the replay device's limits
 * (layers edited from 1 to 4294967295 made llvmpipe write past its
 * memory at the draw: mutants.py seed 2252925239, vkcube), and none of
 * them 0 (VUID-VkFramebufferCreateInfo-width-00885, height-00887,
 * layers-00889: layers edited from 1 to 0 crashed llvmpipe's thread at
 * the draw: seed 1886620611). */
void vkr_framebuffer_limits(vkr *r, const VkFramebufferCreateInfo *ci)
{
	const struct { const char *name; uint32_t v; } dims[] = {
		{"width", ci->width}, {"height", ci->height}, {"layers", ci->layers},
	};
	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++)
		if (!dims[i].v)
			vkr_fatal(r, "pCreateInfo: %s 0: a framebuffer has 1 at least", dims[i].name);
	if (r->checking)
		return;
	const VkPhysicalDeviceLimits *l = &r->d->vk.props.limits;
	const struct { const char *name; uint32_t v, max; } lim[] = {
		{"width", ci->width, l->maxFramebufferWidth},
		{"height", ci->height, l->maxFramebufferHeight},
		{"layers", ci->layers, l->maxFramebufferLayers},
	};
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
		if (lim[i].max && lim[i].v > lim[i].max)
			vkr_fatal(r, "pCreateInfo: %s %u, but %s makes framebuffers of %u at most",
				  lim[i].name, lim[i].v, r->d->vk.props.deviceName, lim[i].max);
}

obj *vkr_new_obj(vkr *r, uint64_t cap, uint64_t live, bool image, bool linear, VkDeviceSize size)
{
	obj *o = trace_xcalloc(1, sizeof(*o));
	o->cap = cap;
	o->live = live;
	o->image = image;
	o->linear = linear;
	o->create_size = size;
	o->dev = r->d;
	obj *old = vkr_obj_get(r, cap);
	if (old) {
		vkr_release_obj(r, old);
		free(old);
	}
	tmap_set(&r->objects, cap, TAG_OBJ, (uint64_t)(uintptr_t)o);
	return o;
}

void vkr_unlink_obj(obj *o)
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

void vkr_park_obj(obj *o)
{
	vkr_unlink_obj(o);
	/* an object bound later to its memory at its bytes would overwrite
	 * them: its group no longer takes objects it is not bound over */
	if (o->group)
		o->group->whole = false;
}

static void group_free(vkr *r, group *g)
{
	vkr_ahead_group_gone(r, g);
	vkd_free(&g->dev->vk, &g->alloc);
	free(g);
}

static void group_flush(group *g, VkDeviceSize off, VkDeviceSize len)
{
	vkd_flush(&g->dev->vk, &g->alloc, off, len);
}

void vkr_release_obj(vkr *r, obj *o)
{
	vkr_unlink_obj(o);
	vkr_rename_free(o);
	group *g = o->group;
	o->group = NULL;
	(void)r;
	if (g && !--g->refs)
		group_free(r, g);
}

/*
 * An import in an allocation's chain (any VkImport* struct the registry
 * defines): its objects get memory of the replay's own, like any other.
 * Host memory's bytes are in the trace (the layer compares them as it
 * does mapped memory); a file descriptor's, a dma-buf's, an Android or
 * Windows handle's are not, and the replay says so rather than compute
 * on whatever that memory holds.
 */
static void imported_contents(vkr *r, const void *next)
{
	for (const VkBaseInStructure *b = next; b; b = b->pNext) {
		const vk_struct_info *s = vk_struct_by_stype((int32_t)b->sType);
		if (!s || strncmp(s->sig.name, "VkImport", 8) ||
		    b->sType == VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT)
			continue;
		vkr_warn(r, "memory imported through %s: its contents were not captured, "
			 "and its objects start zeroed here", s->sig.name);
	}
}

void vkr_alloc_memory(vkr *r, vk_args_vkAllocateMemory *a)
{
	if (!a->pMemory || !*a->pMemory || !a->pAllocateInfo)
		return;  /* failed at capture */
	imported_contents(r, a->pAllocateInfo->pNext);
	memobj *m = trace_xcalloc(1, sizeof(*m));
	m->cap = (uint64_t)(uintptr_t)*a->pMemory;
	m->size = a->pAllocateInfo->allocationSize;
	m->cap_type = a->pAllocateInfo->memoryTypeIndex;
	m->dev = r->d;
	memobj *old = mem_get(r, m->cap);
	if (old) {
		while (old->objs)
			vkr_unlink_obj(old->objs);
		free(old);
	}
	tmap_set(&r->mems, m->cap, TAG_MEM, (uint64_t)(uintptr_t)m);
}

void vkr_free_memory(vkr *r, uint64_t cap)
{
	uint64_t v;
	if (!cap || !tmap_del(&r->mems, cap, TAG_MEM, &v))
		return;
	memobj *m = (memobj *)(uintptr_t)v;
	while (m->objs)
		vkr_unlink_obj(m->objs);
	free(m);
}

static VkMemoryPropertyFlags cap_flags(vkr *r, const memobj *m)
{
	const VkPhysicalDeviceMemoryProperties *p = vkr_cap_mem(r);
	if (p && m->cap_type < p->memoryTypeCount)
		return p->memoryTypes[m->cap_type].propertyFlags;
	return VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
}

/*
 * Aliasing.  The capture layer writes each byte objects share once, as an
 * update of one of them, and the device may write through one and read
 * through another: objects bound over each other at capture must share
 * their bytes here too.  A memory of WHOLE_SMALL bytes or less gets, at
 * its first bind, one allocation as large as the whole memory, where
 * every object bound to it later takes its capture offset, in any order
 * (a buffer bound over part of an image before the image); so does a
 * larger one where that costs at most WHOLE_SLACK more than its first
 * object (a dedicated allocation, RenderDoc's buffer over the whole of
 * one).  A large block suballocated by the program (VMA's 256 MB) is not
 * copied whole: its objects get allocations of their own, and one bound
 * over another's bytes shares its allocation where it fits there.
 */
#define WHOLE_SMALL ((VkDeviceSize)4 << 20)
#define WHOLE_SLACK ((VkDeviceSize)64 << 10)
/* a whole allocation's alignment, for the objects bound after the first
 * (NVIDIA's images ask for 1 KiB) */
#define WHOLE_ALIGN ((VkDeviceSize)1024)

/* Buffers and linear images: bytes the host lays out, which an update
 * writes and which mean the same through any object over them. */
static bool host_layout(const obj *o)
{
	return !o->image || o->linear;
}

/* A + B, at most UINT64_MAX (an edited bind offset) */
static VkDeviceSize sat_add(VkDeviceSize a, VkDeviceSize b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Whether O was bound at capture over bytes of [OFF, OFF + LEN) of its
 * memory. */
static bool meets(const obj *o, VkDeviceSize off, VkDeviceSize len)
{
	return off < sat_add(o->mem_off, o->cap_extent) && o->mem_off < sat_add(off, len);
}

/* The end, in its capture memory, of the bytes of O its allocation here
 * holds: its capture extent, cut at the allocation's end. */
static VkDeviceSize held_end(const obj *o)
{
	const group *g = o->group;
	VkDeviceSize room = g->alloc.size > o->rel ? g->alloc.size - o->rel : 0;
	return sat_add(o->mem_off, o->cap_extent < room ? o->cap_extent : room);
}

/* Where O, bound at capture offset OFF with requirements REQ (SIZE bytes
 * here), goes in G at its capture offset: *REL; false where it does not
 * fit there. */
static bool fits(const group *g, const obj *o, VkDeviceSize off, const VkMemoryRequirements *req,
		 VkDeviceSize size, VkDeviceSize *rel)
{
	VkDeviceSize align = req->alignment ? req->alignment : 1;
	if (off < g->cap_base)
		return false;
	VkDeviceSize rr = off - g->cap_base;
	if (rr > g->alloc.size || size > g->alloc.size - rr || (g->alloc.offset + rr) % align ||
	    !(req->memoryTypeBits & (1u << g->alloc.type)) || (o->address && !g->address))
		return false;
	*rel = rr;
	return true;
}

/* Whether O at REL (SIZE bytes) in G would share a bufferImageGranularity
 * page with an object there of the other kind (linear or optimal) that it
 * does not alias: the capture device's granularity kept them apart, this
 * device's may be coarser. */
static bool granule_clash(vkr *r, const memobj *m, const group *g, const obj *o,
			  VkDeviceSize rel, VkDeviceSize size)
{
	VkDeviceSize page = r->d->vk.props.limits.bufferImageGranularity;
	if (page <= 1 || !size)
		return false;
	VkDeviceSize a0 = g->alloc.offset + rel, a1 = a0 + size;
	for (const obj *q = m->objs; q; q = q->next_in_mem) {
		if (q->group != g || !q->span || host_layout(q) == host_layout(o))
			continue;
		VkDeviceSize b0 = g->alloc.offset + q->rel, b1 = b0 + q->span;
		if (a0 < b1 && b0 < a1)
			continue;  /* aliased: no granularity between them */
		if ((a1 <= b0 && (a1 - 1) / page == b0 / page) ||
		    (b1 <= a0 && (b1 - 1) / page == a0 / page))
			return true;
	}
	return false;
}

/* Whether O at REL (SIZE bytes) in G would overlap an object placed
 * there that it does not alias at capture: this device's requirements
 * may be larger than the capture's (libplacebo's planes, 77,824 bytes
 * apart in one memory, make a 320x240 R8 image of 76,800 bytes on
 * llvmpipe and of more on NVIDIA's), and the object's tail would land on
 * its neighbour's bytes. */
static bool crowds(const memobj *m, const group *g, const obj *o, VkDeviceSize rel,
		   VkDeviceSize size)
{
	for (const obj *q = m->objs; q; q = q->next_in_mem)
		if (q->group == g && q->span && !meets(q, o->mem_off, o->cap_extent) &&
		    rel < sat_add(q->rel, q->span) && q->rel < sat_add(rel, size))
			return true;
	return false;
}

/* A group of M that O (bound at capture offset OFF) shares: that of an
 * object it overlaps at capture, or one spanning M, where O fits at its
 * capture offset; NULL where none.  One that O only neighbours there
 * must be mapped where O's bytes are the host's (a whole group made for
 * an optimal image may not be, on a discrete GPU): its updates would be
 * left out. */
static group *shared_group(vkr *r, memobj *m, const obj *o, VkDeviceSize off,
			   const VkMemoryRequirements *req, VkDeviceSize size, VkDeviceSize *rel)
{
	bool host = (cap_flags(r, m) & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && host_layout(o);
	const group *tried = NULL;  /* (a whole memory's objects: one group, tried once) */
	for (const obj *p = m->objs; p; p = p->next_in_mem) {
		group *g = p->group;
		if (!g || g == tried)
			continue;
		if (!meets(p, off, o->cap_extent) && (!g->whole || (host && !g->mapped)))
			continue;
		if (fits(g, o, off, req, size, rel) && !granule_clash(r, m, g, o, *rel, size) &&
		    !crowds(m, g, o, *rel, size))
			return g;
		tried = g;
	}
	return NULL;
}

/* Memory for O, bound at capture offset OFF of M (REQ: its requirements,
 * SIZE bytes here), in an allocation of its own, or spanning M where M is
 * worth it (above); *REL its offset there. */
static group *new_group(vkr *r, memobj *m, obj *o, VkDeviceSize off, const VkMemoryRequirements *req,
			VkDeviceSize size, VkDeviceSize *rel)
{
	bool image = o->image;
	VkMemoryPropertyFlags cf = cap_flags(r, m);
	bool host = (cf & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && host_layout(o);
	VkMemoryPropertyFlags required = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT : 0;
	VkMemoryPropertyFlags preferred = (cf & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) |
		(host ? VK_MEMORY_PROPERTY_HOST_COHERENT_BIT : 0);
	uint32_t type;
	if (vkd_find_memory_type(&r->d->vk, req->memoryTypeBits, required, preferred, 0, 0, &type) < 0)
		vkr_fatal(r, "no memory type of %s fits a %s (bits 0x%x%s)", r->d->vk.props.deviceName,
			  image ? "image" : "buffer", req->memoryTypeBits, host ? ", host-visible" : "");
	/* the size may be the capture's (an image's requirements): never
	 * more than the heap holds (an edited requirement asked llvmpipe
	 * for 2^64 - 1 bytes) */
	const VkPhysicalDeviceMemoryProperties *mp = &r->d->vk.memory;
	uint32_t heap = mp->memoryTypes[type].heapIndex;
	VkDeviceSize heap_size = mp->memoryHeaps[heap].size;
	if (size > heap_size)
		vkr_fatal(r, "%s: %s 0x%llx needs %llu bytes%s, more than heap %u of %s holds (%llu)",
			  image ? "image" : "buffer", image ? "VkImage" : "VkBuffer",
			  (unsigned long long)o->cap, (unsigned long long)size,
			  size > req->size ? " (its requirements at capture)" : "", heap,
			  r->d->vk.props.deviceName, (unsigned long long)heap_size);
	VkDeviceSize align = req->alignment ? req->alignment : 1;
	VkDeviceSize total = sat_add(off, size) > m->size ? sat_add(off, size) : m->size;
	bool whole = off % align == 0 && total <= heap_size &&
		     (total <= WHOLE_SMALL || total - size <= WHOLE_SLACK);
	group *g = trace_xcalloc(1, sizeof(*g));
	g->dev = r->d;
	VkResult res;
	for (;;) {
		vkd_request rq = {
			.size = whole ? total : size,
			.alignment = whole && align < WHOLE_ALIGN ? WHOLE_ALIGN : align,
			/* a whole memory may hold both kinds: kept a
			 * granularity page from its neighbours */
			.kind = whole ? VKD_KIND_UNKNOWN : host_layout(o) ? VKD_KIND_LINEAR
									  : VKD_KIND_OPTIMAL,
			/* zink makes every buffer so: from a pool of such blocks
			 * (a VkDeviceMemory each cost glmark2-zink's replay an
			 * allocation, a map and a free on NVIDIA's driver) */
			.address = o->address,
		};
		res = vkd_alloc(&r->d->vk, NULL, type, &rq, &g->alloc);
		if (res == VK_SUCCESS || !whole)
			break;
		whole = false;  /* no room for the whole memory: the object's own */
	}
	if (res != VK_SUCCESS)
		vkr_fatal(r, "cannot allocate %llu bytes of memory type %u: %s",
			  (unsigned long long)size, type, vkr_result_name(res));
	g->whole = whole;
	g->address = o->address;
	g->cap_base = whole ? 0 : off;
	*rel = whole ? off : 0;
	VkMemoryPropertyFlags tf = mp->memoryTypes[type].propertyFlags;
	if (tf & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
		g->mapped = vkd_map(&g->dev->vk, &g->alloc, &res);
		g->coherent = (tf & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
		/* zeroed where objects are bound (zero_uncovered); for the
		 * tests, a driver whose new memory holds what it held before */
		if (g->mapped && r->poison)
			memset(g->mapped, 0xa5, g->alloc.size);
	}
	return g;
}

/* X's bytes over [LO, HI) of their capture memory (held by both) into Y,
 * flushed where Y's memory is not coherent. */
static void copy_between(obj *y, const obj *x, VkDeviceSize lo, VkDeviceSize hi)
{
	group *gy = y->group;
	VkDeviceSize at = y->rel + (lo - y->mem_off);
	memmove(gy->mapped + at, x->group->mapped + x->rel + (lo - x->mem_off), hi - lo);
	if (!gy->coherent)
		group_flush(gy, at, hi - lo);
}

/* O, just placed, overlaps at capture objects of M placed in other
 * groups (it did not fit theirs): each pair said once, at the later
 * bind.  Where both hold bytes the host lays out in mapped memory, O
 * takes what the other holds over its bytes, as the capture's memory
 * held them, and each update of either is copied to the other from now
 * on (vkr_update); what the device writes through one is not. */
static void keep_apart(vkr *r, memobj *m, obj *o)
{
	for (obj *p = m->objs; p; p = p->next_in_mem) {
		if (p == o || !p->group || p->group == o->group ||
		    !meets(p, o->mem_off, o->cap_extent))
			continue;
		bool share = host_layout(o) && host_layout(p) && o->group->mapped && p->group->mapped;
		const char *instead = share
			? "the trace's writes to either copied to the other (not what the device writes)"
			: host_layout(o) && host_layout(p)
			? "their contents not shared (memory the host cannot see)"
			: "their contents not shared (an optimal-tiling image's bytes have no layout)";
		vkr_warn(r, "%s 0x%llx aliases %s 0x%llx at capture, but does not fit its allocation "
			 "on this device: placed apart, %s", o->image ? "VkImage" : "VkBuffer",
			 (unsigned long long)o->cap, p->image ? "VkImage" : "VkBuffer",
			 (unsigned long long)p->cap, instead);
		if (!share)
			continue;
		o->apart = p->apart = true;
		VkDeviceSize lo = o->mem_off > p->mem_off ? o->mem_off : p->mem_off;
		VkDeviceSize hi = held_end(o) < held_end(p) ? held_end(o) : held_end(p);
		if (lo < hi)
			copy_between(o, p, lo, hi);
	}
}

static void zero_uncovered(vkr *r, const memobj *m, obj *o, group *g, bool fresh);

/* Places o (bound at capture to cap_mem at offset): in an allocation it
 * shares with objects bound over the same memory at capture where it fits
 * there (shared_group), else in one of its own (new_group). */
void vkr_bind_obj(vkr *r, uint64_t cap_obj, uint64_t cap_mem, VkDeviceSize offset,
		  bool image, VkResult cap_res)
{
	obj *o = vkr_obj_get(r, cap_obj);
	memobj *m = mem_get(r, cap_mem);
	if (!o)
		vkr_fatal(r, "%s: %s 0x%llx: no earlier record made it, or it is destroyed%s",
			  image ? "image" : "buffer", image ? "VkImage" : "VkBuffer",
			  (unsigned long long)cap_obj, r->errors ? " (or its create failed here)" : "");
	if (!m)
		vkr_fatal(r, "memory: VkDeviceMemory 0x%llx: no earlier record made it, or it is "
			  "destroyed%s", (unsigned long long)cap_mem,
			  r->errors ? " (or its allocation failed here)" : "");
	if (vkr_failed(cap_res))
		return;
	if (r->checking) {
		o->bound = true;  /* placed by the replay: nothing to check */
		return;
	}
	if (o->group) {
		vkr_warn(r, "%s bound twice", image ? "image" : "buffer");
		return;
	}
	VkMemoryRequirements req;
	if (image)
		vkGetImageMemoryRequirements(r->d->vk.device, (VkImage)(uintptr_t)o->live, &req);
	else
		vkGetBufferMemoryRequirements(r->d->vk.device, (VkBuffer)(uintptr_t)o->live, &req);
	VkDeviceSize size = req.size;
	if (image && o->cap_req > size)
		size = o->cap_req;  /* images: at least as large as at capture */
	o->cap_extent = o->cap_req ? o->cap_req : image ? size : o->create_size;
	o->mem_off = offset;
	VkDeviceSize rel = 0;
	group *g = shared_group(r, m, o, offset, &req, size, &rel);
	bool shared = g != NULL;
	if (!g)
		g = new_group(r, m, o, offset, &req, size, &rel);
	VkResult res = image
		? vkBindImageMemory(r->d->vk.device, (VkImage)(uintptr_t)o->live, g->alloc.memory,
				    g->alloc.offset + rel)
		: vkBindBufferMemory(r->d->vk.device, (VkBuffer)(uintptr_t)o->live, g->alloc.memory,
				     g->alloc.offset + rel);
	r->calls++;
	if (res != VK_SUCCESS) {
		vkr_check_result(r, NULL, true, cap_res, res);
		if (!g->refs)
			group_free(r, g);
		return;
	}
	g->refs++;
	o->group = g;
	o->rel = rel;
	o->span = size;
	o->mem = m;
	o->next_in_mem = m->objs;
	m->objs = o;
	if (g->mapped && host_layout(o))
		zero_uncovered(r, m, o, g, !shared);
	keep_apart(r, m, o);
}

/* The bytes of an update go into group G's mapped memory: those at
 * offsets [lo, hi) of the object it names, at byte REL of the group's
 * allocation onward; through the staging buffer, ordered on the queue,
 * where running ahead says so (STAGED), gathered and staged together
 * (update_flush): refused, the copies land and these and the rest go
 * from the host. */
#define RUNS_AT_ONCE 256
#define RUN_BYTES_AT_ONCE ((VkDeviceSize)8 << 20)

/*
 * An update of more runs than this is not staged: what running ahead
 * owes is paid, and it goes from the host.  Each run staged is a region
 * of a copy on the device, behind a barrier.  mpv streams its video
 * frames as sparse updates of up to thousands of runs (64 to 128, the
 * most common), and on an H100 its replay ran at 1,969-4,839 frames/s
 * staging them (median of 6 about 2,400), 4,905-5,367 with every wait
 * made as captured; vkd3d-gears' updates are a run each, and staging
 * them, it ran 17,507-18,790 frames/s, 12,874-14,417 waiting.
 */
#define STAGE_RUNS_MOST 16

typedef struct update_to {
	vkr *r;
	group *g;
	VkDeviceSize rel;  /* where the update's byte LO goes */
	uint64_t lo, hi;
	bool staged;
	stage_run *runs;  /* gathered while STAGED: RUNS_AT_ONCE, the caller's */
	size_t nruns;
	VkDeviceSize run_bytes;
} update_to;

static void update_flush(update_to *t)
{
	if (!t->nruns)
		return;
	if (!vkr_ahead_stage(t->r, t->g, t->runs, t->nruns, t->run_bytes)) {
		vkr_ahead_unstaged(t->r, t->g);
		t->staged = false;
		for (size_t i = 0; i < t->nruns; i++)
			memcpy(t->g->mapped + t->runs[i].off, t->runs[i].data, t->runs[i].len);
	}
	t->nruns = 0;
	t->run_bytes = 0;
}

static void update_run(void *ctx, uint64_t off, const uint8_t *data, uint64_t len)
{
	update_to *t = ctx;
	uint64_t a = off > t->lo ? off : t->lo;
	uint64_t e = off + len < t->hi ? off + len : t->hi;  /* vk_update_read: no overflow */
	if (a >= e)
		return;
	if (t->staged && (t->nruns == RUNS_AT_ONCE || t->run_bytes + (e - a) > RUN_BYTES_AT_ONCE))
		update_flush(t);
	if (t->staged) {
		t->runs[t->nruns++] = (stage_run){t->rel + (a - t->lo), e - a, data + (a - off)};
		t->run_bytes += e - a;
		return;
	}
	memcpy(t->g->mapped + t->rel + (a - t->lo), data + (a - off), e - a);
}

static int by_lo(const void *x, const void *y)
{
	const VkDeviceSize *a = x, *b = y;
	return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* Zeros for update_run, a chunk at a time. */
static const uint8_t zeros[64 << 10];

/* The bytes of O, placed in G (mapped) at its capture offset, that no
 * other object of G bound now over the same bytes of M holds: zeroed,
 * staged like an update, or from the host where G is FRESH (no batch has
 * used it).  The capture layer takes them so (it clears its shadow there
 * at the bind, clear_uncovered(): a replay's objects start zeroed, and
 * bytes equal to what the capture mapped are not in the trace), and a
 * whole memory's allocation here still holds what an object destroyed
 * before left there (neverball through zink: a 256 KiB texture upload
 * went out as the bytes that differ from zero, over the previous
 * texture's).  Only objects' bytes: a new allocation zeroed whole, as it
 * was, cost glmark2-zink's replay on llvmpipe 602 us a vkBindBufferMemory
 * on average, 351 us now (zink binds 235 buffers into 17 memories of up
 * to 2 MiB, each placed whole at its first bind, every page faulted in). */
static void zero_uncovered(vkr *r, const memobj *m, obj *o, group *g, bool fresh)
{
	VkDeviceSize lo = o->mem_off, hi = held_end(o);
	uint32_t n = 0, cap = 0;
	VkDeviceSize *sp = NULL;  /* pairs [lo, hi) of the others, capture offsets */
	for (const obj *p = m->objs; p; p = p->next_in_mem) {
		if (p == o || p->group != g || !host_layout(p) || !meets(p, lo, hi - lo))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			sp = trace_xrealloc(sp, 2 * cap * sizeof(*sp));
		}
		sp[2 * n] = p->mem_off;
		sp[2 * n + 1] = held_end(p);
		n++;
	}
	if (n > 1)
		qsort(sp, n, 2 * sizeof(*sp), by_lo);
	stage_run runs[RUNS_AT_ONCE];  /* (not cleared: a copy an update would pay) */
	update_to t = {.r = r, .g = g, .rel = o->rel, .lo = 0, .hi = hi - lo,
		       .staged = !fresh && vkr_ahead_stages(r, g), .runs = runs};
	VkDeviceSize at = lo;
	for (uint32_t i = 0; i <= n; i++) {
		VkDeviceSize next = i < n ? sp[2 * i] : hi;
		while (at < next) {
			VkDeviceSize len = next - at < sizeof(zeros) ? next - at : sizeof(zeros);
			update_run(&t, at - lo, zeros, len);
			at += len;
		}
		if (i < n && sp[2 * i + 1] > at)
			at = sp[2 * i + 1];
	}
	update_flush(&t);
	if (!t.staged && !g->coherent)
		group_flush(g, o->rel, hi - lo);
	free(sp);
}

/* U, an update of O, also into P, placed apart from O and bound over
 * some of the same capture bytes: shifted by the difference of their
 * bind offsets, clipped to what both hold. */
static void update_apart(vkr *r, const vk_update *u, const obj *o, obj *p)
{
	group *g = p->group;
	VkDeviceSize o0 = o->mem_off, p0 = p->mem_off, p1 = held_end(p);
	stage_run runs[RUNS_AT_ONCE];
	update_to t = {
		.r = r,
		.g = g,
		.lo = p0 > o0 ? p0 - o0 : 0,
		.hi = p1 > o0 ? p1 - o0 : 0,
		.runs = runs,
	};
	if (t.lo >= t.hi || u->end <= t.lo || u->offset >= t.hi)
		return;
	t.rel = p->rel + (o0 + t.lo - p0);
	t.staged = vkr_ahead_stages(r, g);
	vk_update_runs(u, update_run, &t);
	update_flush(&t);
	if (!t.staged && !g->coherent) {
		uint64_t a = u->offset > t.lo ? u->offset : t.lo;
		uint64_t e = u->end < t.hi ? u->end : t.hi;
		group_flush(g, p->rel + (o0 + a - p0), e - a);
	}
}

void vkr_update(vkr *r, const trace_call *c)
{
	const vk_update *ahead = vkr_decoded_update(c);
	vk_update u;
	if (ahead) {
		u = *ahead;
	} else {
		trace_error_clear(&r->err);
		if (vk_update_read(c, &u, &r->err) < 0)
			vkr_fatal(r, "%s", r->err.msg);
	}
	obj *o = vkr_obj_get(r, u.object);
	if (!o) {
		vkr_warn(r, "%s of 0x%llx, no buffer or image: left out", c->sig->name,
			 (unsigned long long)u.object);
		return;
	}
	if (r->checking)
		return;
	if (!o->group) {
		vkr_warn(r, "%s of an object with no memory: left out", c->sig->name);
		return;
	}
	group *g = o->group;
	if (!g->mapped) {
		vkr_warn(r, "%s of an object in memory the host cannot see: left out", c->sig->name);
		return;
	}
	uint64_t room = g->alloc.size > o->rel ? g->alloc.size - o->rel : 0;
	if (u.end > room) {
		vkr_warn(r, "%s past the end of its object (bytes %llu to %llu): cut", c->sig->name,
			 (unsigned long long)u.offset, (unsigned long long)u.end);
		if (u.offset >= room)
			return;
	}
	stage_run runs[RUNS_AT_ONCE];
	update_to t = {.r = r, .g = g, .rel = o->rel, .lo = 0, .hi = room,
		       .staged = vkr_ahead_stages(r, g), .runs = runs};
	if (t.staged && vk_update_nruns(&u, STAGE_RUNS_MOST) > STAGE_RUNS_MOST) {
		vkr_ahead_unstaged(r, g);
		t.staged = false;
	}
	/* (inside the room, from the host: every run as it is) */
	if (!t.staged && u.end <= room)
		vk_update_copy(&u, g->mapped + o->rel);
	else
		vk_update_runs(&u, update_run, &t);
	update_flush(&t);
	if (!t.staged && !g->coherent)
		group_flush(g, o->rel + u.offset, (u.end < room ? u.end : room) - u.offset);
	/* the capture wrote these bytes once, for every object over them */
	for (obj *p = o->apart && o->mem ? o->mem->objs : NULL; p; p = p->next_in_mem)
		if (p != o && p->apart && p->group && p->group != g && p->group->mapped &&
		    host_layout(p) && meets(p, o->mem_off, o->cap_extent))
			update_apart(r, &u, o, p);
}
