/*
 * Object-based memory tracking (DESIGN.md, "Memory: object-based
 * tracing"): the trace carries what the application wrote into mapped
 * memory as tracekit.update records per buffer or image, with
 * object-relative offsets, so a replay can place objects in memory of its
 * own choosing.
 *
 * Memory that is mapped gets a shadow: what the trace has said the memory
 * holds, zeros at first (a replay's objects start zeroed), kept from the
 * first map to the free.  At each queue submit the ranges of the mapped
 * memory that are bound to the buffers and images the submitted command
 * buffers may read, the parts of them they may read (refs.c; all of them
 * where that cannot be known), and before an unmap or a free all of the
 * memory's, are compared with the shadow; the bytes that changed are
 * written as updates before the submit's record, and the shadow catches
 * up.  Bytes not compared stay different from the shadow, so they are
 * written at the first submit that may read them.  Bytes that aliasing
 * objects share are written once; images of optimal tiling are not
 * compared (their layout is the implementation's: what changes there is
 * what the device drew).  An object bound over bytes the shadow holds
 * gets them as if just written (the shadow is cleared there,
 * clear_uncovered()).
 *
 * The shadow is not a copy taken at map time: copying touched every page
 * of the mapping twice (the memory's, unwritten as yet, and the copy's),
 * a page fault each, 18 ms of a 12-scene glmark2-zink run for ten 2 MiB
 * maps, while most of a mapping is never read by a submit.  A zeroed
 * shadow costs nothing until compared, and every nonzero byte a submit
 * may read reaches the trace, also what the memory held before the
 * application wrote it (a copy hid that).  A large one is filled in
 * SHADOW_CHUNK at a time, as compares reach it, in one system call a
 * chunk (shadow_ready()): page by page, a compare read the zero page in
 * and the copy of what differed faulted again to replace it, a flush of
 * the other cores' TLBs each, which cost more than the copy at map time;
 * the whole shadow at once cost 3 ms on the main thread of every
 * glmark2-zink start, for pages mostly never compared.
 */
#include "layer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct tk_object {
	uint64_t handle;
	bool image;
	bool opaque;           /* an image of optimal tiling, or an object the
				* device only writes: not scanned */
	VkDeviceSize size;     /* a buffer's size, an image's memory requirement */
	tk_mem *mem;           /* bound memory, or NULL */
	VkDeviceSize offset;   /* in mem */
	uint64_t mark;         /* the submit (epoch) that may read it, */
	VkDeviceSize lo, hi;   /* these bytes of it (TK_ALL: to the end) */
};

struct tk_mem {
	uint64_t handle;
	VkDeviceSize size;
	bool host_visible;
	uint8_t *mapped;       /* the application's pointer, NULL when unmapped */
	VkDeviceSize map_offset, map_size;
	uint8_t *shadow;       /* size bytes, from the first map; see shadow_new() */
	uint64_t *ready;       /* chunks of it filled in (NULL: all are) */
	tk_object **objs;      /* the objects bound to it, by offset when sorted */
	size_t nobjs, capobjs;
	bool sorted;
	uint64_t mark;         /* the submit (epoch) that compares some of it */
	uint8_t *wlo, *whi;    /* the whole pages of the mapping watched for
				* writes (watch.c), or none */
	uint64_t *maydiff;     /* a bit per watched page: it may differ from
				* the shadow (written, or compared in part) */
	uint64_t seen, written_pages; /* watched pages compares took, and of
				* them written since (watch_pays()) */
	uint64_t probed, changed; /* unwatched: pages compares took, and of
				* them those that differed (watch_judge()) */
	bool watch_ok;         /* the last judgement: watch it while mapped */
	bool unwatchable;      /* the kernel refused to watch it */
};

/* ------------------------------------------------------------------ */
/* The map from handles to state. */

static size_t slot(const tk_map *m, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (m->cap - 1);
}

void *tk_map_get(const tk_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return NULL;
	for (size_t i = slot(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

static void grow(tk_map *m)
{
	tk_map bigger = { 0 };
	bigger.cap = m->cap ? m->cap * 2 : 64;
	bigger.keys = calloc(bigger.cap, sizeof(uint64_t));
	bigger.vals = calloc(bigger.cap, sizeof(void *));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] && m->vals[i])
			tk_map_put(&bigger, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = bigger;
}

/* Deleted entries keep their key with a NULL value (a tombstone). */
void tk_map_put(tk_map *m, uint64_t key, void *val)
{
	if (!key)
		return;
	if ((m->used + 1) * 2 > m->cap)
		grow(m);
	for (size_t i = slot(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return;
		}
		if (!m->keys[i]) {
			m->keys[i] = key;
			m->vals[i] = val;
			m->used++;
			return;
		}
	}
}

void *tk_map_del(tk_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return NULL;
	for (size_t i = slot(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			void *v = m->vals[i];
			m->vals[i] = NULL;
			return v;
		}
		if (!m->keys[i])
			return NULL;
	}
}

void tk_map_free(tk_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */

void tk_memory_init(tk_device *dev)
{
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->refs_lock, NULL);
	const char *scan = getenv("TRACEKIT_SCAN");
	if (scan && !strcmp(scan, "all"))
		dev->full_scan = true;
	else if (scan && *scan && strcmp(scan, "referenced"))
		fprintf(stderr, "tracekit: TRACEKIT_SCAN=%s: expected referenced or all; "
			"using referenced\n", scan);
}

/* Shadows from SHADOW_MMAP up are mappings of their own, filled in a
 * chunk at a time. */
#define SHADOW_MMAP (64u << 10)
#define SHADOW_CHUNK (64u << 10)

static void shadow_new(tk_mem *mem)
{
	if (mem->size < SHADOW_MMAP) {
		mem->shadow = calloc(1, mem->size ? mem->size : 1);
		return;
	}
	size_t chunks = (mem->size + SHADOW_CHUNK - 1) / SHADOW_CHUNK;
	if (mem->size > SIZE_MAX || !(mem->ready = calloc((chunks + 63) / 64, 8)))
		return;
	void *p = mmap(NULL, mem->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		free(mem->ready);
		mem->ready = NULL;
		return;
	}
	mem->shadow = p;
}

static void shadow_free(tk_mem *mem)
{
	if (mem->ready)
		munmap(mem->shadow, mem->size);
	else
		free(mem->shadow);
	free(mem->ready);
}

static bool chunk_ready(const tk_mem *mem, size_t c)
{
	return !mem->ready || (mem->ready[c / 64] >> (c % 64) & 1);
}

/* Fills in the chunks of the shadow over [lo, hi) not filled in yet, a
 * run of them with one madvise (from Linux 5.14; before it, and should
 * it fail, the pages come in as touched). */
static void shadow_ready(tk_mem *mem, VkDeviceSize lo, VkDeviceSize hi)
{
	if (!mem->ready || lo >= hi)
		return;
	size_t c = lo / SHADOW_CHUNK, end = (hi - 1) / SHADOW_CHUNK + 1;
	while (c < end) {
		if (chunk_ready(mem, c)) {
			c++;
			continue;
		}
		size_t from = c;
		for (; c < end && !chunk_ready(mem, c); c++)
			mem->ready[c / 64] |= 1ull << (c % 64);
#ifdef MADV_POPULATE_WRITE
		VkDeviceSize a = (VkDeviceSize)from * SHADOW_CHUNK, b = (VkDeviceSize)c * SHADOW_CHUNK;
		madvise(mem->shadow + a, (b < mem->size ? b : mem->size) - a, MADV_POPULATE_WRITE);
#else
		(void)from;
#endif
	}
}

/* ------------------------------------------------------------------ */
/* Write watching (watch.c): a page of the mapping not written since a
 * compare took all of it holds what the shadow holds, and is not
 * compared again.  The pages the mapping covers in part are never
 * watched: they are compared as before. */

static size_t page_of(const tk_mem *mem, const uint8_t *p)
{
	return (size_t)(p - mem->wlo) / tk_watch_page();
}

/* The watched pages over addresses [lo, hi) may differ from the shadow. */
static void maydiff_set(tk_mem *mem, const uint8_t *lo, const uint8_t *hi)
{
	if (lo < mem->wlo)
		lo = mem->wlo;
	if (hi > mem->whi)
		hi = mem->whi;
	if (lo >= hi)
		return;
	for (size_t i = page_of(mem, lo), end = page_of(mem, hi - 1) + 1; i < end; i++)
		mem->maydiff[i / 64] |= 1ull << (i % 64);
}

static bool maydiff_at(const tk_mem *mem, size_t i)
{
	return mem->maydiff[i / 64] >> (i % 64) & 1;
}

/* Pages [lo, hi) written since they were last looked at: counted where
 * a compare had taken them whole (watch_pays()). */
static void written(void *ctx, uintptr_t lo, uintptr_t hi)
{
	tk_mem *mem = ctx;
	for (size_t i = page_of(mem, (const uint8_t *)lo), end = page_of(mem, (const uint8_t *)hi - 1) + 1;
	     i < end; i++)
		if (!maydiff_at(mem, i)) {
			mem->written_pages++;
			mem->maydiff[i / 64] |= 1ull << (i % 64);
		}
}

static void watch_begin(tk_mem *mem)
{
	size_t ps = tk_watch_page();
	if (!ps || !mem->mapped || mem->map_size < ps || !(mem->watch_ok || tk_watch_always()) ||
	    mem->maydiff || mem->unwatchable)
		return;
	uintptr_t a = (uintptr_t)mem->mapped, b = a + mem->map_size;
	uint8_t *lo = (uint8_t *)((a + ps - 1) / ps * ps), *hi = (uint8_t *)(b / ps * ps);
	if (lo >= hi)
		return;
	if (!tk_watch_start(lo, (size_t)(hi - lo))) {
		mem->unwatchable = true; /* a device's I/O memory: asked once */
		return;
	}
	size_t pages = (size_t)(hi - lo) / ps;
	mem->maydiff = malloc((pages + 63) / 64 * 8);
	if (!mem->maydiff) {
		tk_watch_stop(lo, (size_t)(hi - lo));
		return;
	}
	mem->wlo = lo;
	mem->whi = hi;
	mem->seen = mem->written_pages = 0;
	/* what the memory held before the map, or wrote while unwatched,
	 * may differ from the shadow */
	memset(mem->maydiff, 0xff, (pages + 63) / 64 * 8);
}

/*
 * Whether watching pays, judged per memory from what its compares found
 * and from what a fault costs on this machine (watch.c).  A watched page
 * costs a fault at its first write after a compare, and is then compared
 * all the same; a page not written costs nothing, where unwatched it is
 * compared.  So watching pays where fewer than 1 in (1 + R) of the pages
 * compares take were written, R a fault's cost in page compares
 * (COMPARE_NS a page: 4 KiB compared with its shadow at 14 GB/s, as
 * here; a fault cost 2.7 us where the watching was first measured, and
 * 12 to 19 us on this machine since, under a hypervisor that keeps
 * shadow page tables: bench-calls submit took 10.1 ms a round watched,
 * 2.7 ms unwatched).
 *
 * A memory is mapped unwatched: its compares count the pages they take
 * and the pages that differed, and once PROBE_MIN pages are taken, under
 * half the break-even share differing starts the watch (a large vertex
 * buffer rewritten in part, a heap written a little a frame); more
 * (zink's streaming uploads: nearly every page) does not, and the counts
 * start again every PROBE_WINDOW pages, so that a memory that settles is
 * watched later.  A watched memory whose written pages cost more faults
 * than the compares they spared, by WATCH_SLACK page compares, is
 * unwatched and judged again the same way.  A page rewritten with the
 * bytes it held is a fault not seen unwatched: the watched count has it.
 */
#define COMPARE_NS 300.0
#define PROBE_MIN 256
#define PROBE_WINDOW 4096
#define WATCH_SLACK 1024

/* A fault's cost in page compares, at least 1 */
static double fault_pages(void)
{
	double r = tk_watch_fault_ns() / COMPARE_NS;
	return r > 1 ? r : 1;
}

static bool watch_pays(tk_mem *mem)
{
	if (tk_watch_always())
		return true;
	if (mem->seen > 16 * PROBE_WINDOW) { /* recent compares weigh most */
		mem->seen /= 2;
		mem->written_pages /= 2;
	}
	return (double)mem->written_pages * (1 + fault_pages()) <= (double)(mem->seen + WATCH_SLACK);
}

/* Counts an unwatched compare of PAGES pages, CHANGED of which differed,
 * and starts the watch where it pays. */
static void watch_judge(tk_mem *mem, size_t pages, size_t changed)
{
	if (!tk_watch_page() || !mem->mapped || mem->unwatchable)
		return;
	mem->probed += pages;
	mem->changed += changed;
	if (mem->probed < PROBE_MIN)
		return;
	if ((double)mem->changed * 2 * (1 + fault_pages()) <= (double)mem->probed) {
		mem->watch_ok = true;
		watch_begin(mem);
	} else if (mem->probed < PROBE_WINDOW) {
		return;
	}
	mem->probed = mem->changed = 0;
}

static void watch_end(tk_mem *mem)
{
	if (!mem->maydiff)
		return;
	tk_watch_stop(mem->wlo, (size_t)(mem->whi - mem->wlo));
	free(mem->maydiff);
	mem->maydiff = NULL;
	mem->wlo = mem->whi = NULL;
}

/* Zeroes the shadow over [lo, hi): chunks not filled in are zero already. */
static void shadow_zero(tk_mem *mem, VkDeviceSize lo, VkDeviceSize hi)
{
	if (mem->maydiff && lo < hi && hi > mem->map_offset &&
	    lo < mem->map_offset + mem->map_size) {
		VkDeviceSize a = lo > mem->map_offset ? lo : mem->map_offset;
		VkDeviceSize b = hi < mem->map_offset + mem->map_size ? hi
			: mem->map_offset + mem->map_size;
		maydiff_set(mem, mem->mapped + (a - mem->map_offset),
			    mem->mapped + (b - mem->map_offset));
	}
	while (lo < hi) {
		VkDeviceSize end = (lo / SHADOW_CHUNK + 1) * SHADOW_CHUNK;
		if (end > hi)
			end = hi;
		if (chunk_ready(mem, lo / SHADOW_CHUNK))
			memset(mem->shadow + lo, 0, end - lo);
		lo = end;
	}
}

static void mem_free(tk_mem *mem)
{
	watch_end(mem);
	for (size_t i = 0; i < mem->nobjs; i++)
		mem->objs[i]->mem = NULL;
	free(mem->objs);
	shadow_free(mem);
	free(mem);
}

void tk_memory_fini(tk_device *dev)
{
	for (size_t i = 0; i < dev->mems.cap; i++)
		if (dev->mems.vals[i])
			mem_free(dev->mems.vals[i]);
	for (size_t i = 0; i < dev->objects.cap; i++)
		free(dev->objects.vals[i]);
	tk_map_free(&dev->mems);
	tk_map_free(&dev->objects);
	tk_refs_fini(dev);
	free(dev->marked);
	free(dev->spans);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->refs_lock);
}

static void unbind(tk_object *o)
{
	tk_mem *mem = o->mem;
	if (!mem)
		return;
	for (size_t i = 0; i < mem->nobjs; i++)
		if (mem->objs[i] == o) {
			mem->objs[i] = mem->objs[--mem->nobjs];
			mem->sorted = false;
			break;
		}
	o->mem = NULL;
}

/* What a scan compares: [lo, hi) of the memory, for object o. */
struct tk_span {
	VkDeviceSize lo, hi;
	const tk_object *o;
	size_t order;          /* of o in the memory's objects, by offset */
};

static int by_start(const void *x, const void *y)
{
	const struct tk_span *a = x, *b = y;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Room for N spans in dev->spans. */
static void spans_fit(tk_device *dev, size_t n)
{
	if (dev->capspans < n) {
		dev->capspans = n * 2;
		dev->spans = realloc(dev->spans, sizeof(*dev->spans) * dev->capspans);
	}
}

/*
 * Clears the shadow over [lo, hi) (memory offsets) for object O, bound
 * there now, but where another object bound there covers it.  A replay
 * gives O memory of its own, holding nothing the trace said: whatever
 * the bytes already hold for it (an ended object's contents, say) must
 * reach the trace as if just written, which the cleared shadow makes them
 * at the next compare.  Except where O aliases a live object: a replay
 * keeps O in that object's memory, which holds what the shadow does.
 * Images of optimal tiling cover nothing (their bytes are never
 * compared).
 */
static void clear_uncovered(tk_device *dev, tk_mem *mem, const tk_object *o, VkDeviceSize lo,
			    VkDeviceSize hi)
{
	spans_fit(dev, mem->nobjs);
	size_t n = 0;
	for (size_t i = 0; i < mem->nobjs; i++) {
		const tk_object *p = mem->objs[i];
		VkDeviceSize plo = p->offset, phi = p->offset + p->size;
		if (p == o || p->opaque || phi <= lo || plo >= hi)
			continue;
		dev->spans[n++] = (struct tk_span){ plo > lo ? plo : lo, phi < hi ? phi : hi, p, i };
	}
	if (n > 1) /* spans may be unallocated: qsort(NULL, 0) is undefined */
		qsort(dev->spans, n, sizeof(*dev->spans), by_start);
	VkDeviceSize at = lo;
	for (size_t i = 0; i <= n; i++) {
		VkDeviceSize next = i < n ? dev->spans[i].lo : hi;
		if (next > at)
			shadow_zero(mem, at, next);
		if (i < n && dev->spans[i].hi > at)
			at = dev->spans[i].hi;
	}
}

static void bind(tk_device *dev, uint64_t object, uint64_t memory, VkDeviceSize offset)
{
	tk_object *o = tk_map_get(&dev->objects, object);
	tk_mem *mem = tk_map_get(&dev->mems, memory);
	if (!o || !mem)
		return;
	unbind(o);
	if (o->image) {
		VkMemoryRequirements req;
		dev->disp.vkGetImageMemoryRequirements(dev->handle, (VkImage)object, &req);
		o->size = req.size;
	}
	o->mem = mem;
	o->offset = offset;
	if (mem->shadow) {
		VkDeviceSize end = offset + o->size;
		if (end > mem->size || end < offset)
			end = mem->size;
		if (offset < end && !o->opaque)
			clear_uncovered(dev, mem, o, offset, end);
	}
	if (mem->nobjs == mem->capobjs) {
		mem->capobjs = mem->capobjs ? mem->capobjs * 2 : 4;
		mem->objs = realloc(mem->objs, sizeof(*mem->objs) * mem->capobjs);
	}
	mem->objs[mem->nobjs++] = o;
	mem->sorted = false;
}

/*
 * Writes the bytes of [lo, hi) (memory offsets, inside the mapping) that
 * differ from the shadow, as updates of object O, in runs: equal stretches
 * of up to GAP bytes do not split a run (a record costs more than they do).
 * Compared a word at a time: a submit compares hundreds of kilobytes, and
 * where an application rewrote vertices every byte differs (a byte loop
 * there cost a third of the scan on glmark2-zink).
 */
#define GAP 64
#define SKIP 4096

static uint64_t word_at(const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof(w));
	return w;
}

/* The first byte at or after I that differs, or N. */
static size_t next_diff(const uint8_t *live, const uint8_t *old, size_t i, size_t n)
{
	while (i + SKIP <= n && !memcmp(live + i, old + i, SKIP))
		i += SKIP;
	for (; i + 8 <= n; i += 8) {
		uint64_t x = word_at(live + i) ^ word_at(old + i);
		if (x)
			return i + (size_t)__builtin_ctzll(x) / 8; /* little-endian */
	}
	while (i < n && live[i] == old[i])
		i++;
	return i;
}

/* The last byte of the run that starts, differing, at START: the last
 * differing byte before an equal stretch of more than GAP bytes (or N).
 * Compared 32 bytes at a time: where every vertex changes, every block
 * differs, and the loop is the scan's cost. */
static size_t run_end(const uint8_t *live, const uint8_t *old, size_t start, size_t n)
{
	size_t last = start, i = start + 1;
	while (i + 32 <= n) {
		uint64_t x[4];
		for (int k = 0; k < 4; k++)
			x[k] = word_at(live + i + 8 * k) ^ word_at(old + i + 8 * k);
		if (x[0] | x[1] | x[2] | x[3]) {
			int k = x[3] ? 3 : x[2] ? 2 : x[1] ? 1 : 0;
			last = i + 8 * (size_t)k + (size_t)(63 - __builtin_clzll(x[k])) / 8;
		} else if (i + 32 - (last + 1) > GAP) {
			return last;
		}
		i += 32;
	}
	while (i + 8 <= n) {
		uint64_t x = word_at(live + i) ^ word_at(old + i);
		if (x)
			last = i + (size_t)(63 - __builtin_clzll(x)) / 8;
		else if (i + 8 - (last + 1) > GAP)
			return last;
		i += 8;
	}
	for (; i < n && i - last <= GAP; i++)
		if (live[i] != old[i])
			last = i;
	return last;
}

/*
 * A run of at least SPARSE_MIN bytes is written sparse (as the 4-byte
 * words that differ) if at most SPARSE_MAX of the first SPARSE_PROBE
 * words differ: where an application rewrites one member of each vertex,
 * most words of the run are equal, but no equal stretch is long enough
 * to split it.  Dense data (a texture, new vertices) stays dense; a
 * sparse run that turns out dense costs a mask of a 32nd of its size.
 */
#define SPARSE_MIN 1024
#define SPARSE_PROBE 256
#define SPARSE_MAX (SPARSE_PROBE * 3 / 4)

static bool mostly_equal(const uint8_t *live, const uint8_t *old)
{
	unsigned differ = 0;
	for (size_t w = 0; w < SPARSE_PROBE; w++) {
		uint32_t a, b;
		memcpy(&a, live + 4 * w, 4);
		memcpy(&b, old + 4 * w, 4);
		differ += a != b;
	}
	return differ <= SPARSE_MAX;
}

/*
 * Runs that follow one another across equal stretches of at most
 * CLUSTER_GAP bytes go out as one sparse update of the words from the
 * first's start to the last's end, up to CLUSTER_SPAN bytes: a record
 * costs its writer, its reader and the replay far more than a 32nd of the
 * stretch in mask bits does.  A video frame streamed through a mapped
 * buffer (mpv) differed from the last in a few bytes of every row, 300
 * runs a frame, each a record of its own.  Under a page, so a cluster's
 * pages are those of its runs.
 */
#define CLUSTER_GAP 1024
#define CLUSTER_SPAN 65536

/* Returns the number of pages (of the watch's size: 0 where none is
 * kept) of the memory with bytes that differed (watch_judge()). */
static size_t diff_bytes(tk_mem *mem, const tk_object *o, VkDeviceSize lo, VkDeviceSize hi)
{
	const uint8_t *live = mem->mapped + (lo - mem->map_offset);
	uint8_t *old = mem->shadow + lo;
	size_t n = hi - lo, i = 0, ps = tk_watch_page(), pages = 0;
	VkDeviceSize counted = 0; /* pages below this one are counted */
	shadow_ready(mem, lo, hi);
	while ((i = next_diff(live, old, i, n)) < n) {
		size_t last = run_end(live, old, i, n), len = last + 1 - i;
		/* the runs close after it */
		size_t runs = 1, j, bound;
		while (last + 1 < n) {
			bound = last + 1 + CLUSTER_GAP < n ? last + 1 + CLUSTER_GAP : n;
			if ((j = next_diff(live, old, last + 1, bound)) == bound)
				break;
			size_t end = run_end(live, old, j, n);
			if (end + 1 - i > CLUSTER_SPAN)
				break;
			last = end;
			runs++;
		}
		/* whole words of the object, the bytes added equal to the
		 * shadow (so written unchanged): an update that starts inside
		 * a word cannot join a sparse one, and trace-trim's setup
		 * wrote a vertex buffer whose floats differed byte by byte as
		 * a record per stretch (359 for glmark2's buffer scene) */
		size_t skew = (size_t)((lo - o->offset + i) % 4);
		if (skew <= i)
			i -= skew;
		size_t pad = (size_t)(3 - (lo - o->offset + last) % 4);
		if (last + pad < n)
			last += pad;
		len = last + 1 - i;
		if (ps) {
			VkDeviceSize first = (lo + i) / ps, end = (lo + last) / ps + 1;
			first = first > counted ? first : counted;
			pages += end > first ? (size_t)(end - first) : 0;
			counted = end;
		}
		if ((runs > 1 && len >= 4) || (len >= SPARSE_MIN && mostly_equal(live + i, old + i))) {
			/* the last 0-3 bytes that make no word go dense */
			if (!tk_update_sparse(o->handle, lo - o->offset + i, live + i, old + i,
					      len / 4))
				memcpy(old + i, live + i, len / 4 * 4);
			i += len / 4 * 4;
			len %= 4;
		}
		if (len) {
			tk_update(o->handle, lo - o->offset + i, live + i, len);
			memcpy(old + i, live + i, len);
		}
		i = last + 1;
	}
	return pages;
}

/* Compares [lo, hi) of object O in MEM: where the mapping is watched
 * and [lo, hi) takes WATCH_MIN pages of it or more, the pages written
 * since they were last compared whole, and the pages compared in part
 * before; elsewhere every byte.  (A page compared here without a look
 * may have been written: the kernel still says so at the next look.) */
#define WATCH_MIN 32
static void diff_range(tk_mem *mem, const tk_object *o, VkDeviceSize lo, VkDeviceSize hi)
{
	if (!mem->maydiff) {
		size_t changed = diff_bytes(mem, o, lo, hi), ps = tk_watch_page();
		if (ps)
			watch_judge(mem, (size_t)((hi + ps - 1) / ps - lo / ps), changed);
		return;
	}
	VkDeviceSize wlo = mem->map_offset + (VkDeviceSize)(mem->wlo - mem->mapped);
	VkDeviceSize whi = mem->map_offset + (VkDeviceSize)(mem->whi - mem->mapped);
	VkDeviceSize a = lo > wlo ? lo : wlo, b = hi < whi ? hi : whi;
	if (lo < wlo)  /* before the watched pages */
		diff_bytes(mem, o, lo, hi < wlo ? hi : wlo);
	if (a < b && b - a < WATCH_MIN * tk_watch_page()) {
		/* few pages: a look costs more than comparing them (and
		 * protecting them again, a fault at the next write) */
		diff_bytes(mem, o, a, b);
	} else if (a < b) {
		size_t ps = tk_watch_page();
		uint8_t *pa = mem->mapped + (a - mem->map_offset), *pb = mem->mapped + (b - mem->map_offset);
		uint8_t *from = mem->wlo + page_of(mem, pa) * ps;
		uint8_t *to = mem->wlo + (page_of(mem, pb - 1) + 1) * ps;
		for (size_t i = page_of(mem, from), end = page_of(mem, to - 1) + 1; i < end; i++)
			mem->seen += !maydiff_at(mem, i);
		if (tk_watch_written(from, (size_t)(to - from), written, mem) < 0)
			maydiff_set(mem, from, to);
		for (size_t i = page_of(mem, from), end = page_of(mem, to - 1) + 1; i < end;) {
			if (!maydiff_at(mem, i)) {
				i++;
				continue;
			}
			size_t j = i;
			while (j < end && maydiff_at(mem, j)) {
				uint8_t *p = mem->wlo + j * ps;
				/* a page compared whole holds what the shadow does */
				if (p >= pa && p + ps <= pb)
					mem->maydiff[j / 64] &= ~(1ull << (j % 64));
				j++;
			}
			uint8_t *rl = mem->wlo + i * ps, *rh = mem->wlo + j * ps;
			if (rl < pa)
				rl = pa;
			if (rh > pb)
				rh = pb;
			diff_bytes(mem, o, mem->map_offset + (VkDeviceSize)(rl - mem->mapped),
				   mem->map_offset + (VkDeviceSize)(rh - mem->mapped));
			i = j;
		}
	}
	if (hi > whi)  /* after them */
		diff_bytes(mem, o, lo > whi ? lo : whi, hi);
	if (!watch_pays(mem)) {
		watch_end(mem);
		mem->watch_ok = false;
		mem->probed = mem->changed = 0;
	}
}

/* By offset; of objects at one offset, the largest first, so that it
 * takes the shared bytes; then by handle, so that the choice is stable. */
static int by_offset(const void *x, const void *y)
{
	const tk_object *a = *(tk_object *const *)x, *b = *(tk_object *const *)y;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->handle < b->handle ? -1 : a->handle > b->handle;
}

/* The part of object O inside the mapping, in memory offsets; false if none. */
static bool clip(const tk_mem *mem, const tk_object *o, VkDeviceSize *lo, VkDeviceSize *hi)
{
	VkDeviceSize mlo = mem->map_offset, mhi = mem->map_offset + mem->map_size;
	if (o->opaque)
		return false;
	*lo = o->offset > mlo ? o->offset : mlo;
	*hi = o->offset + o->size < mhi ? o->offset + o->size : mhi;
	return *lo < *hi;
}

/* Narrows [*lo, *hi) to the bytes of O a submit may read. */
static void marked_part(const tk_object *o, VkDeviceSize *lo, VkDeviceSize *hi)
{
	VkDeviceSize end = o->hi < o->size ? o->hi : o->size;
	VkDeviceSize from = o->offset + (o->lo < end ? o->lo : end), to = o->offset + end;
	if (from > *lo)
		*lo = from;
	if (to < *hi)
		*hi = to;
}

/*
 * Under dev->lock.  Compares the objects (those the submit of EPOCH
 * marks, the part of them it may read, or all), each byte once: where
 * objects alias (their ranges overlap), a changed byte is written for
 * the first object whose compared part covers it, and aliasing objects
 * share their bytes on replay as they did here (zink binds two VkBuffers
 * over every range it hands out: writing both would double the trace).
 * Bytes no object covers are not compared: they are when an object is
 * bound over them.  The shadow catches up run by run.
 */
static void scan_some(tk_device *dev, tk_mem *mem, bool marked_only, uint64_t epoch)
{
	if (!mem->mapped || !mem->shadow)
		return;
	if (!mem->sorted) {
		if (mem->nobjs > 1) /* objs may be unallocated: qsort(NULL, 0) is undefined */
			qsort(mem->objs, mem->nobjs, sizeof(*mem->objs), by_offset);
		mem->sorted = true;
	}
	spans_fit(dev, mem->nobjs);
	size_t n = 0;
	for (size_t i = 0; i < mem->nobjs; i++) {
		const tk_object *o = mem->objs[i];
		VkDeviceSize lo, hi;
		if (marked_only && o->mark != epoch)
			continue;
		if (!clip(mem, o, &lo, &hi))
			continue;
		if (marked_only)
			marked_part(o, &lo, &hi);
		if (lo < hi)
			dev->spans[n++] = (struct tk_span){ lo, hi, o, i };
	}
	/* whole objects come by offset, so by start; parts need sorting */
	if (marked_only && n > 1)
		qsort(dev->spans, n, sizeof(*dev->spans), by_start);
	VkDeviceSize done = 0;
	for (size_t i = 0; i < n; i++) {
		VkDeviceSize lo = dev->spans[i].lo > done ? dev->spans[i].lo : done;
		if (lo < dev->spans[i].hi) {
			diff_range(mem, dev->spans[i].o, lo, dev->spans[i].hi);
			done = dev->spans[i].hi;
		}
	}
}

static void scan(tk_device *dev, tk_mem *mem)
{
	scan_some(dev, mem, false, 0);
}

/* Under dev->lock. */
static void scan_all(tk_device *dev)
{
	for (size_t i = 0; i < dev->mems.cap; i++) {
		tk_mem *mem = dev->mems.vals[i];
		if (mem && mem->mapped)
			scan(dev, mem);
	}
}

/* Bytes [lo, hi) of a buffer or image a submit may read (refs.c finds
 * them): its memory, if mapped, is compared, the part of that object
 * (the bounds of all its parts that the submit may read). */
static void mark(tk_device *dev, uint64_t handle, VkDeviceSize lo, VkDeviceSize hi)
{
	tk_object *o = tk_map_get(&dev->objects, handle);
	if (!o || !o->mem || o->opaque || !o->mem->mapped)
		return;
	if (o->mark == dev->epoch) {
		o->lo = lo < o->lo ? lo : o->lo;
		o->hi = hi > o->hi ? hi : o->hi;
		return;
	}
	o->mark = dev->epoch;
	o->lo = lo;
	o->hi = hi;
	tk_mem *mem = o->mem;
	if (mem->mark == dev->epoch)
		return;
	mem->mark = dev->epoch;
	if (dev->nmarked == dev->capmarked) {
		dev->capmarked = dev->capmarked ? dev->capmarked * 2 : 64;
		dev->marked = realloc(dev->marked, sizeof(*dev->marked) * dev->capmarked);
	}
	dev->marked[dev->nmarked++] = mem;
}

/*
 * Before a submit of N command buffers (CB(ctx, i) the i-th): compares
 * the memory of the buffers and images they may read, or all mapped
 * memory where that cannot be known (refs.c).  Bytes left uncompared stay
 * different from the shadow: the first submit that may read them (or the
 * unmap, or the free) writes them.
 */
static void scan_submit(tk_device *dev, size_t n, VkCommandBuffer (*cb)(const void *ctx, size_t i),
			const void *ctx)
{
	if (!tk_tracing())
		return;
	pthread_mutex_lock(&dev->lock);
	dev->epoch++;
	dev->nmarked = 0;
	bool known = !dev->full_scan;
	pthread_mutex_lock(&dev->refs_lock);
	for (size_t i = 0; known && i < n; i++)
		known = tk_refs_collect(dev, cb(ctx, i), mark);
	pthread_mutex_unlock(&dev->refs_lock);
	if (known) {
		for (size_t i = 0; i < dev->nmarked; i++)
			scan_some(dev, dev->marked[i], true, dev->epoch);
	} else {
		scan_all(dev);
	}
	pthread_mutex_unlock(&dev->lock);
}

/* ------------------------------------------------------------------ */
/* The hooks the generated wrappers call. */

/* The host-pointer import in an allocation's chain, or NULL. */
static const VkImportMemoryHostPointerInfoEXT *host_import(const void *next)
{
	for (const VkBaseInStructure *b = next; b; b = b->pNext)
		if (b->sType == VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT)
			return (const VkImportMemoryHostPointerInfoEXT *)b;
	return NULL;
}

void tk_post_vkAllocateMemory(tk_device *dev, vk_args_vkAllocateMemory *a)
{
	if (a->result != VK_SUCCESS)
		return;
	tk_mem *mem = calloc(1, sizeof(*mem));
	mem->handle = (uint64_t)*a->pMemory;
	mem->size = a->pAllocateInfo->allocationSize;
	uint32_t t = a->pAllocateInfo->memoryTypeIndex;
	mem->host_visible = t < dev->memprops.memoryTypeCount &&
		(dev->memprops.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
	const VkImportMemoryHostPointerInfoEXT *host = host_import(a->pAllocateInfo->pNext);
	pthread_mutex_lock(&dev->lock);
	tk_map_put(&dev->mems, mem->handle, mem);
	if (host && host->pHostPointer) {
		/* the application's own bytes: mapped for as long as the
		 * memory lives, compared at each submit as mapped memory is */
		mem->host_visible = true;
		mem->mapped = host->pHostPointer;
		mem->map_offset = 0;
		mem->map_size = mem->size;
		shadow_new(mem);
	}
	pthread_mutex_unlock(&dev->lock);
}

/* MEMORY's mapping ends, unmapped or the memory freed (FREED: taken out
 * of the map, for the caller to free): what the program wrote into it
 * since the last scan goes into the trace first.  Under dev->lock. */
static tk_mem *mapping_ends(tk_device *dev, uint64_t memory, bool freed)
{
	tk_mem *mem = freed ? tk_map_del(&dev->mems, memory) : tk_map_get(&dev->mems, memory);
	if (mem && tk_tracing())
		scan(dev, mem);
	return mem;
}

void tk_pre_vkFreeMemory(tk_device *dev, vk_args_vkFreeMemory *a)
{
	pthread_mutex_lock(&dev->lock);
	tk_mem *mem = mapping_ends(dev, (uint64_t)a->memory, true);
	if (mem)
		mem_free(mem);
	pthread_mutex_unlock(&dev->lock);
}

void tk_post_vkMapMemory(tk_device *dev, vk_args_vkMapMemory *a)
{
	if (a->result != VK_SUCCESS || !a->ppData || !*a->ppData)
		return;
	pthread_mutex_lock(&dev->lock);
	tk_mem *mem = tk_map_get(&dev->mems, (uint64_t)a->memory);
	if (mem) {
		mem->mapped = *a->ppData;
		mem->map_offset = a->offset;
		if (a->offset >= mem->size)
			mem->map_size = 0; /* invalid usage: nothing to compare */
		else if (a->size == VK_WHOLE_SIZE || a->size > mem->size - a->offset)
			mem->map_size = mem->size - a->offset;
		else
			mem->map_size = a->size;
		if (!mem->shadow)
			shadow_new(mem);
		if (mem->shadow)
			watch_begin(mem);
	}
	pthread_mutex_unlock(&dev->lock);
}

void tk_pre_vkUnmapMemory(tk_device *dev, vk_args_vkUnmapMemory *a)
{
	pthread_mutex_lock(&dev->lock);
	tk_mem *mem = mapping_ends(dev, (uint64_t)a->memory, false);
	if (mem) {
		watch_end(mem);
		mem->mapped = NULL; /* the shadow stays: the trace has said it */
	}
	pthread_mutex_unlock(&dev->lock);
}

static void add_object(tk_device *dev, uint64_t handle, bool image, bool opaque, VkDeviceSize size)
{
	tk_object *o = calloc(1, sizeof(*o));
	o->handle = handle;
	o->image = image;
	o->opaque = opaque;
	o->size = size;
	pthread_mutex_lock(&dev->lock);
	tk_map_put(&dev->objects, handle, o);
	pthread_mutex_unlock(&dev->lock);
}

static void del_object(tk_device *dev, uint64_t handle)
{
	pthread_mutex_lock(&dev->lock);
	tk_object *o = tk_map_del(&dev->objects, handle);
	if (o) {
		unbind(o);
		free(o);
	}
	pthread_mutex_unlock(&dev->lock);
}

/* A buffer or image the device can only write into, never read (a copy's
 * destination alone: ffmpeg's hwdownload, a readback): what the host
 * writes there never reaches the device, and what changes there is what
 * the device wrote, which the trace has as commands.  Not compared, as an
 * image of optimal tiling: ffmpeg's trace carried every frame it read
 * back as updates, a fifth of its bytes. */
static bool device_never_reads(VkFlags usage)
{
	return usage && !(usage & ~(VkFlags)VK_BUFFER_USAGE_TRANSFER_DST_BIT);
}

void tk_post_vkCreateBuffer(tk_device *dev, vk_args_vkCreateBuffer *a)
{
	if (a->result == VK_SUCCESS)
		add_object(dev, (uint64_t)*a->pBuffer, false, device_never_reads(a->pCreateInfo->usage),
			   a->pCreateInfo->size);
}

void tk_pre_vkDestroyBuffer(tk_device *dev, vk_args_vkDestroyBuffer *a)
{
	del_object(dev, (uint64_t)a->buffer);
}

void tk_post_vkCreateImage(tk_device *dev, vk_args_vkCreateImage *a)
{
	/* Optimal tiling lays texels out as the implementation likes: what a
	 * host writes there means nothing to another device, and what changes
	 * there is what the device drew or copied, which the trace has as
	 * commands.  Such images are not compared. */
	if (a->result == VK_SUCCESS)
		add_object(dev, (uint64_t)*a->pImage, true,
			   a->pCreateInfo->tiling == VK_IMAGE_TILING_OPTIMAL ||
			   device_never_reads(a->pCreateInfo->usage), 0);
}

void tk_pre_vkDestroyImage(tk_device *dev, vk_args_vkDestroyImage *a)
{
	del_object(dev, (uint64_t)a->image);
}

/* N binds of the second form, BUFFERS' or IMAGES', once the call
 * succeeded; a bind of the first form is one of the second. */
static void binds(tk_device *dev, VkResult r, uint32_t n, const VkBindBufferMemoryInfo *buffers,
		  const VkBindImageMemoryInfo *images)
{
	if (r != VK_SUCCESS)
		return;
	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < n; i++)
		if (buffers)
			bind(dev, (uint64_t)buffers[i].buffer, (uint64_t)buffers[i].memory,
			     buffers[i].memoryOffset);
		else
			bind(dev, (uint64_t)images[i].image, (uint64_t)images[i].memory,
			     images[i].memoryOffset);
	pthread_mutex_unlock(&dev->lock);
}

void tk_post_vkBindBufferMemory(tk_device *dev, vk_args_vkBindBufferMemory *a)
{
	VkBindBufferMemoryInfo b = {.buffer = a->buffer, .memory = a->memory,
				    .memoryOffset = a->memoryOffset};
	binds(dev, a->result, 1, &b, NULL);
}

void tk_post_vkBindImageMemory(tk_device *dev, vk_args_vkBindImageMemory *a)
{
	VkBindImageMemoryInfo b = {.image = a->image, .memory = a->memory,
				   .memoryOffset = a->memoryOffset};
	binds(dev, a->result, 1, NULL, &b);
}

void tk_post_vkBindBufferMemory2(tk_device *dev, vk_args_vkBindBufferMemory2 *a)
{
	binds(dev, a->result, a->bindInfoCount, a->pBindInfos, NULL);
}

void tk_post_vkBindBufferMemory2KHR(tk_device *dev, vk_args_vkBindBufferMemory2KHR *a)
{
	binds(dev, a->result, a->bindInfoCount, a->pBindInfos, NULL);
}

void tk_post_vkBindImageMemory2(tk_device *dev, vk_args_vkBindImageMemory2 *a)
{
	binds(dev, a->result, a->bindInfoCount, NULL, a->pBindInfos);
}

void tk_post_vkBindImageMemory2KHR(tk_device *dev, vk_args_vkBindImageMemory2KHR *a)
{
	binds(dev, a->result, a->bindInfoCount, NULL, a->pBindInfos);
}

/* The command buffers of a submit, in order, behind one index. */
typedef struct submits {
	uint32_t n;
	const VkSubmitInfo *v1;
	const VkSubmitInfo2 *v2;
} submits;

static size_t count_cbs(const submits *s)
{
	size_t n = 0;
	for (uint32_t i = 0; i < s->n; i++)
		n += s->v1 ? s->v1[i].commandBufferCount : s->v2[i].commandBufferInfoCount;
	return n;
}

static VkCommandBuffer nth_cb(const void *ctx, size_t k)
{
	const submits *s = ctx;
	for (uint32_t i = 0; i < s->n; i++) {
		size_t n = s->v1 ? s->v1[i].commandBufferCount : s->v2[i].commandBufferInfoCount;
		if (k < n)
			return s->v1 ? s->v1[i].pCommandBuffers[k]
				     : s->v2[i].pCommandBufferInfos[k].commandBuffer;
		k -= n;
	}
	return VK_NULL_HANDLE;
}

void tk_pre_vkQueueSubmit(tk_device *dev, vk_args_vkQueueSubmit *a)
{
	submits s = { a->pSubmits ? a->submitCount : 0, a->pSubmits, NULL };
	scan_submit(dev, count_cbs(&s), nth_cb, &s);
}

void tk_pre_vkQueueSubmit2(tk_device *dev, vk_args_vkQueueSubmit2 *a)
{
	submits s = { a->pSubmits ? a->submitCount : 0, NULL, a->pSubmits };
	scan_submit(dev, count_cbs(&s), nth_cb, &s);
}

void tk_pre_vkQueueSubmit2KHR(tk_device *dev, vk_args_vkQueueSubmit2KHR *a)
{
	submits s = { a->pSubmits ? a->submitCount : 0, NULL, a->pSubmits };
	scan_submit(dev, count_cbs(&s), nth_cb, &s);
}

