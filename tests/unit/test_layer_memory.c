/*
 * The layer's memory tracking (layer/memory.c) through its hooks, with
 * the output stubbed: mapped memory, a buffer bound in it, bytes written
 * and a submit.  The updates it writes, applied to a zeroed copy of the
 * buffer (what a replay starts from), must give the buffer's bytes;
 * bytes of the memory outside the buffer reach no update; a submit that
 * follows no write writes nothing; and written bytes cost no more than
 * the runs they make; a buffer the device only writes gets no update.
 * Dense and sparse runs, the GAP between runs, runs close enough to go
 * out as one sparse update (CLUSTER_GAP), and the vectorised compares
 * are all reached by the patterns below.  The
 * memory is page-aligned, so where the kernel can (watch.c) its pages
 * are watched for writes, and a submit compares only those written,
 * also by a system call (a read() into the buffer); TRACEKIT_WATCH=off
 * runs the same without.
 */
#include "../../layer/memory.c"
#include "../../layer/watch.c"
#include "unit.h"

#include <sys/mman.h>

/* ------------------------------------------------------------------ */
/* The rest of the layer, as the memory code sees it. */

#define BUF 0x200
#define BUF_SIZE (96u << 10)
#define BUF_AT 4096u /* in the memory */
#define MEM_SIZE (128u << 10)

#define BUF2 0x600 /* judged(): a buffer over a memory of its own */
#define BUF2_PAGES 64u

static uint8_t replayed[BUF_SIZE]; /* the buffer as the updates leave it */
static uint8_t replayed2[BUF2_PAGES << 12];
static size_t updates, bytes_out, outside, records;

bool tk_tracing(void)
{
	return true;
}

bool tk_refs_collect(tk_device *dev, VkCommandBuffer cb, tk_mark_fn *fn)
{
	(void)dev, (void)cb, (void)fn;
	return false; /* not known: every mapped byte is compared */
}

void tk_refs_fini(tk_device *dev)
{
	(void)dev;
}

static void apply(uint64_t object, uint64_t offset, const uint8_t *data, size_t size)
{
	updates++;
	bytes_out += size;
	if (object == BUF2 && offset <= sizeof(replayed2) && size <= sizeof(replayed2) - offset) {
		memcpy(replayed2 + offset, data, size);
		return;
	}
	if (object != BUF || offset > BUF_SIZE || size > BUF_SIZE - offset) {
		outside++;
		return;
	}
	memcpy(replayed + offset, data, size);
}

void tk_update(uint64_t object, uint64_t offset, const void *data, size_t size)
{
	records++;
	apply(object, offset, data, size);
}

bool tk_update_sparse(uint64_t object, uint64_t offset, const uint8_t *live, uint8_t *old,
		      size_t nwords)
{
	records++;
	for (size_t w = 0; w < nwords; w++)
		if (memcmp(live + 4 * w, old + 4 * w, 4)) {
			apply(object, offset + 4 * w, live + 4 * w, 4);
			memcpy(old + 4 * w, live + 4 * w, 4);
		}
	return true;
}

/* ------------------------------------------------------------------ */

static uint64_t seed = 23;
static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 33);
}

static void submit(tk_device *dev)
{
	updates = bytes_out = outside = records = 0;
	VkCommandBuffer cb = (VkCommandBuffer)(uintptr_t)0x300;
	VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
			    .pCommandBuffers = &cb };
	vk_args_vkQueueSubmit a = { .submitCount = 1, .pSubmits = &si };
	tk_pre_vkQueueSubmit(dev, &a);
}

/*
 * Whether a memory is watched, at a fault's cost of FAULT ns (as
 * tk_watch_fault_ns() measures it; 19 us under a hypervisor with shadow
 * page tables, 1 us on a host): mapped unwatched; watched once compares
 * find fewer than half the break-even share of pages differing; a
 * watched memory whose every page is written is unwatched again
 * (TRACEKIT_WATCH=always: watched from the map, and stays).  The
 * updates give the buffer's bytes throughout.
 */
static void judged(tk_device *dev, double fault, uint64_t handle, unsigned every, bool watch)
{
	tk_watch_fault_ns();
	fault_ns = fault;
	size_t size = BUF2_PAGES << 12;
	VkDeviceMemory memory = (VkDeviceMemory)(uintptr_t)handle;
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				    .allocationSize = size };
	vk_args_vkAllocateMemory am = { .pAllocateInfo = &ai, .pMemory = &memory };
	tk_post_vkAllocateMemory(dev, &am);
	uint8_t *live = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *p = live;
	vk_args_vkMapMemory mm = { .memory = memory, .size = VK_WHOLE_SIZE, .ppData = &p };
	tk_post_vkMapMemory(dev, &mm);
	VkBuffer buffer = (VkBuffer)(uintptr_t)BUF2;
	VkBufferCreateInfo bi = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size };
	vk_args_vkCreateBuffer cbuf = { .pCreateInfo = &bi, .pBuffer = &buffer };
	tk_post_vkCreateBuffer(dev, &cbuf);
	vk_args_vkBindBufferMemory bm = { .buffer = buffer, .memory = memory };
	tk_post_vkBindBufferMemory(dev, &bm);
	tk_mem *mem = tk_map_get(&dev->mems, handle);
	memset(replayed2, 0, sizeof(replayed2));
	bool forced = tk_watch_always(); /* TRACEKIT_WATCH=always: watched throughout */
	watch = watch || forced;
	check(!mem->maydiff == !forced, "fault %.0f ns: a memory is mapped %s", fault,
	      forced ? "watched (TRACEKIT_WATCH=always)" : "unwatched");
	/* one page written every EVERY submits */
	int n = 0;
	for (; n < 40 && !mem->maydiff; n++) {
		if (n % every == 0)
			live[(rnd() % BUF2_PAGES) << 12 | rnd() % 4096] ^= (uint8_t)(rnd() | 1);
		submit(dev);
		check(!memcmp(replayed2, live, size), "fault %.0f ns, submit %d: the updates give the bytes",
		      fault, n);
	}
	check(!mem->maydiff == !watch, "fault %.0f ns, a page written every %u submits of %u pages: "
	      "watched %s after %d submits", fault, every, BUF2_PAGES, mem->maydiff ? "yes" : "no", n);
	if (mem->maydiff) {
		/* every page written: not watched for long */
		for (n = 0; n < 10 && mem->maydiff; n++) {
			for (size_t i = 0; i < size; i += 4096)
				live[i + rnd() % 4096] ^= (uint8_t)(rnd() | 1);
			submit(dev);
			check(!memcmp(replayed2, live, size), "fault %.0f ns, every page written, "
			      "submit %d: the updates give the bytes", fault, n);
		}
		check(forced ? mem->maydiff != NULL : !mem->maydiff && n <= 6,
		      "fault %.0f ns: every page written: %s after %d submits", fault,
		      mem->maydiff ? "watched" : "unwatched", n);
	}
	vk_args_vkDestroyBuffer db = { .buffer = buffer };
	tk_pre_vkDestroyBuffer(dev, &db);
	vk_args_vkFreeMemory fm = { .memory = memory };
	tk_pre_vkFreeMemory(dev, &fm);
	munmap(live, size);
}

int main(void)
{
	static tk_device dev;
	tk_memory_init(&dev);
	dev.memprops.memoryTypeCount = 1;
	dev.memprops.memoryTypes[0].propertyFlags = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;

	VkDeviceMemory memory = (VkDeviceMemory)(uintptr_t)0x100;
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				    .allocationSize = MEM_SIZE };
	vk_args_vkAllocateMemory am = { .pAllocateInfo = &ai, .pMemory = &memory };
	tk_post_vkAllocateMemory(&dev, &am);
	uint8_t *mapped = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
	void *p = mapped;
	vk_args_vkMapMemory mm = { .memory = memory, .size = VK_WHOLE_SIZE, .ppData = &p };
	tk_post_vkMapMemory(&dev, &mm);
	VkBuffer buffer = (VkBuffer)(uintptr_t)BUF;
	VkBufferCreateInfo bi = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = BUF_SIZE };
	vk_args_vkCreateBuffer cbuf = { .pCreateInfo = &bi, .pBuffer = &buffer };
	tk_post_vkCreateBuffer(&dev, &cbuf);
	vk_args_vkBindBufferMemory bm = { .buffer = buffer, .memory = memory,
					  .memoryOffset = BUF_AT };
	tk_post_vkBindBufferMemory(&dev, &bm);
	uint8_t *live = mapped + BUF_AT;
	tk_mem *mem = tk_map_get(&dev.mems, (uint64_t)(uintptr_t)memory);
	/* watched, from here, exactly where it is asked for and the kernel
	 * offers the asynchronous write protection (Linux 6.7 or later,
	 * userfaultfd allowed): probed here apart from watch_init; the
	 * judgement of whether it pays is judged() below */
	mem->watch_ok = true;
	watch_begin(mem);
	printf("test_layer_memory: pages watched for writes: %s\n", mem->maydiff ? "yes" : "no");
	const char *want = getenv("TRACEKIT_WATCH");
	uint64_t offered = 0;
	int probe = uffd_open(0, &offered);
	bool kernel = probe >= 0 && (offered & (UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED)) ==
					    (UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED);
	if (probe >= 0)
		close(probe);
	bool off = want && !strcmp(want, "off");
	check(!mem->maydiff == (off || !kernel), "pages watched: %s, TRACEKIT_WATCH=%s, kernel offers it: %s",
	      mem->maydiff ? "yes" : "no", want ? want : "(unset)", kernel ? "yes" : "no");

	/* rounds of writes, each a different pattern, each then a submit */
	for (int round = 0; round < 15; round++) {
		size_t changed = 0, most = SIZE_MAX, least = 0;
		switch (round % 5) {
		case 0: /* scattered bytes, each alone */
			for (int k = 0; k < 200; k++)
				live[rnd() % BUF_SIZE] = (uint8_t)rnd();
			break;
		case 1: /* one member of each 32-byte vertex: a sparse run */
			for (size_t at = rnd() % 64 * 4; at + 4 <= BUF_SIZE / 2; at += 32)
				memcpy(live + at, &(uint32_t){ rnd() | 1 }, 4);
			break;
		case 2: { /* a dense block, odd ends */
			size_t at = rnd() % (BUF_SIZE - 9000), n = 1 + rnd() % 9000;
			for (size_t i = 0; i < n; i++)
				live[at + i] = (uint8_t)rnd();
			break;
		}
		case 3: /* runs just under and over GAP apart, near the end */
			for (size_t at = BUF_SIZE - 3000; at < BUF_SIZE; at += GAP + rnd() % 3)
				live[at] ^= 0x5a;
			most = 1 + 1;  /* one cluster, and its last 0-3 bytes */
			break;
		case 4: { /* a few bytes of each row, as a video frame streamed
			   * through a buffer: rows 1 KiB apart or less make a
			   * record of 64 KiB, farther apart one each */
			size_t row = round < 10 ? 320 : 1100, n = 0;
			for (size_t at = rnd() % 64; at + 8 <= BUF_SIZE; at += row, n++)
				memcpy(live + at, &(uint64_t){ rnd() | 1ull << 40 | 1 }, 5);
			most = row < 1024 ? 2 * 2 : n;
			least = row < 1024 ? 1 : n;
			break;
		}
		}
		/* and bytes of the memory that no object holds */
		mapped[rnd() % BUF_AT] = (uint8_t)(rnd() | 1);
		mapped[BUF_AT + BUF_SIZE + rnd() % (MEM_SIZE - BUF_AT - BUF_SIZE)] ^= 0xff;
		for (size_t i = 0; i < BUF_SIZE; i++)
			changed += live[i] != replayed[i];
		submit(&dev);
		check(!memcmp(replayed, live, BUF_SIZE),
		      "round %d: the updates applied give the buffer's bytes", round);
		check(!outside, "round %d: %zu updates outside the buffer", round, outside);
		/* each run's gaps (at most GAP bytes) count, no more */
		check(bytes_out <= changed * (GAP + 1), "round %d: %zu bytes for %zu changed",
		      round, bytes_out, changed);
		check(records <= most && records >= least, "round %d: %zu records (%zu to %zu)", round,
		      records, least, most);
		submit(&dev);
		check(updates == 0, "round %d: a submit after no write wrote %zu updates", round,
		      updates);
	}

	/* bytes a system call writes (no fault in user mode) */
	int fds[2];
	uint8_t bytes[300];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(rnd() | 1);
	if (pipe(fds) == 0 && write(fds[1], bytes, sizeof(bytes)) == (ssize_t)sizeof(bytes)) {
		ssize_t got = read(fds[0], live + 3 * 4096 - 100, sizeof(bytes));
		check(got == (ssize_t)sizeof(bytes), "read() into watched memory: %zd", got);
		submit(&dev);
		check(!memcmp(replayed, live, BUF_SIZE),
		      "the bytes a read() wrote reach the updates");
		close(fds[0]);
		close(fds[1]);
	}

	/* a buffer the device only writes (a readback's destination), bound
	 * over the memory past BUF: what changes there reaches no update */
	VkBuffer dst = (VkBuffer)(uintptr_t)0x400;
	VkBufferCreateInfo di = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 8192,
				  .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT };
	vk_args_vkCreateBuffer cdst = { .pCreateInfo = &di, .pBuffer = &dst };
	tk_post_vkCreateBuffer(&dev, &cdst);
	vk_args_vkBindBufferMemory bd = { .buffer = dst, .memory = memory,
					  .memoryOffset = BUF_AT + BUF_SIZE };
	tk_post_vkBindBufferMemory(&dev, &bd);
	memset(mapped + BUF_AT + BUF_SIZE, 0x77, 8192);
	submit(&dev);
	check(updates == 0, "a buffer of usage TRANSFER_DST alone: %zu updates", updates);
	/* the same with TRANSFER_SRC too: the device may read it */
	VkBuffer both = (VkBuffer)(uintptr_t)0x500;
	di.usage |= VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
	vk_args_vkCreateBuffer cboth = { .pCreateInfo = &di, .pBuffer = &both };
	tk_post_vkCreateBuffer(&dev, &cboth);
	bd.buffer = both;
	tk_post_vkBindBufferMemory(&dev, &bd);
	submit(&dev);
	check(updates > 0 && bytes_out >= 8192, "a buffer the device may read: %zu updates, %zu bytes",
	      updates, bytes_out);
	bool can = tk_watch_page() != 0;
	printf("test_layer_memory: a watched page's first write costs %.0f ns here\n", tk_watch_fault_ns());
	judged(&dev, 1000, 0x700, 1, can);
	judged(&dev, 19000, 0x800, 1, false);
	judged(&dev, 19000, 0x900, 4, can);
	tk_memory_fini(&dev);
	munmap(mapped, MEM_SIZE);
	return unit_done("test_layer_memory");
}
