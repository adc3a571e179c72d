/*
 * Write watching of mapped memory (memory.c): which pages of a mapping
 * the program wrote since the last look, so that a submit compares
 * those pages with the shadow and not every byte it may read.
 *
 * Linux's asynchronous userfaultfd write protection does it with no
 * signal and no thread: a registered page, write-protected, takes its
 * first write as a fault the kernel resolves by itself (a write from a
 * system call too, such as a read() into mapped memory), noting the page
 * written; PAGEMAP_SCAN on /proc/self/pagemap returns the pages written
 * in a range and protects them again, atomically, so a write racing the
 * look is seen at the next one.  It needs Linux 6.7 (PAGEMAP_SCAN,
 * UFFD_FEATURE_WP_ASYNC), and memory the kernel can write-protect
 * (anonymous or shared memory, as llvmpipe's is; not a device's mapped
 * I/O memory, whose registration fails).  Where any of it is missing,
 * nothing is watched and every byte a submit may read is compared, as
 * before.  TRACEKIT_WATCH=off turns it off; =always watches every
 * mapping from its map, whether or not it pays (memory.c), to test it.
 *
 * A watched page's first write costs a fault, whose price varies with
 * the machine far more than a compare's: 2.7 us where this was first
 * measured, 19 us under a hypervisor that keeps shadow page tables (a
 * compare of the page: about 0.3 us on both).  tk_watch_fault_ns()
 * measures it once, on pages of its own, for memory.c to judge with.
 *
 * GFXReconstruct watches with mprotect and a SIGSEGV handler: a signal
 * per page written, and a system call that writes into a protected page
 * fails with EFAULT instead.
 *
 * The kernel's headers on Debian 12 (Linux 6.1) lack the 6.7 interface:
 * its ABI is defined here where they do.
 */
#include "layer.h"

#include <fcntl.h>
#include <stdio.h>
#include <linux/userfaultfd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start, end, categories;
};
struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_WRITTEN (1 << 1)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int uffd = -1, pagemap = -1;
static size_t page;
static bool always;

/* A userfaultfd with FEATURES asked for (-1 if refused); into *HAVE what
 * the kernel offers, when FEATURES is 0. */
static int uffd_open(uint64_t features, uint64_t *have)
{
	/* user-mode only: what an unprivileged process may open (the
	 * asynchronous faults never reach the handler anyway) */
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0)
		return -1;
	struct uffdio_api api = {.api = UFFD_API, .features = features};
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		close(fd);
		return -1;
	}
	if (have)
		*have = api.features;
	return fd;
}

static void watch_init(void)
{
	const char *env = getenv("TRACEKIT_WATCH");
	if (env && !strcmp(env, "off"))
		return;
	always = env && !strcmp(env, "always");
	if (env && *env && strcmp(env, "on") && !always)
		fprintf(stderr, "tracekit: TRACEKIT_WATCH=%s: expected on, off or always; using on\n",
			env);
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t have = 0, need = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED;
	/* the features are asked for once per descriptor: a first one says
	 * which there are */
	int probe = uffd_open(0, &have);
	if (probe < 0 || ps <= 0 || (have & need) != need) {
		if (probe >= 0)
			close(probe);
		return;
	}
	close(probe);
	int fd = uffd_open(need | (have & UFFD_FEATURE_WP_HUGETLBFS_SHMEM), NULL);
	int pm = fd >= 0 ? open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC) : -1;
	if (pm < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	page = (size_t)ps;
	uffd = fd;
	pagemap = pm;
}

size_t tk_watch_page(void)
{
	pthread_once(&once, watch_init);
	return uffd >= 0 ? page : 0;
}

static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static double fault_ns;

/* FAULT_PAGES pages written once, protected, then written again: the
 * cheapest of FAULT_ROUNDS rounds (a round a thread was preempted in
 * costs more, not less). */
#define FAULT_PAGES 16
#define FAULT_ROUNDS 3
static void measure_faults(void)
{
	size_t len = FAULT_PAGES * page;
	volatile uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	memset((void *)p, 1, len);
	double best = 0;
	for (int r = 0; r < FAULT_ROUNDS; r++) {
		if (!tk_watch_start((void *)p, len))
			break;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (size_t i = 0; i < FAULT_PAGES; i++)
			p[i * page] = (uint8_t)r;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		tk_watch_stop((void *)p, len);
		double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
			    FAULT_PAGES;
		if (!best || ns < best)
			best = ns;
	}
	munmap((void *)p, len);
	fault_ns = best;
}

bool tk_watch_always(void)
{
	return tk_watch_page() && always;
}

double tk_watch_fault_ns(void)
{
	if (!tk_watch_page())
		return 0;
	pthread_once(&fault_once, measure_faults);
	return fault_ns;
}

bool tk_watch_start(void *addr, size_t len)
{
	if (!tk_watch_page() || !len)
		return false;
	struct uffdio_register reg = {
		.range = {(uintptr_t)addr, len}, .mode = UFFDIO_REGISTER_MODE_WP};
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		return false;
	struct uffdio_writeprotect wp = {
		.range = {(uintptr_t)addr, len}, .mode = UFFDIO_WRITEPROTECT_MODE_WP};
	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) < 0) {
		tk_watch_stop(addr, len);
		return false;
	}
	return true;
}

void tk_watch_stop(void *addr, size_t len)
{
	struct uffdio_range r = {(uintptr_t)addr, len};
	if (uffd >= 0 && len)
		ioctl(uffd, UFFDIO_UNREGISTER, &r);
}

int tk_watch_written(void *addr, size_t len, void (*fn)(void *ctx, uintptr_t lo, uintptr_t hi),
		     void *ctx)
{
	uintptr_t at = (uintptr_t)addr, end = at + len;
	struct page_region v[64];
	while (at < end) {
		struct pm_scan_arg s = {
			.size = sizeof(s), .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
			.start = at, .end = end, .vec = (uintptr_t)v, .vec_len = 64,
			.category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN,
		};
		long n = ioctl(pagemap, PAGEMAP_SCAN, &s);
		if (n < 0 || s.walk_end <= at)
			return -1;
		for (long i = 0; i < n; i++)
			fn(ctx, (uintptr_t)v[i].start, (uintptr_t)v[i].end);
		at = (uintptr_t)s.walk_end;
	}
	return 0;
}
