/*
 * Small shared pieces: allocation that dies on exhaustion, the growable
 * buffer, arenas and the error type (the map: tmap.c).
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

void *trace_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "tracekit: out of memory (%zu bytes)\n", n);
		abort();
	}
	return p;
}

/*
 * Transparent huge pages for large buffers.  A first touch of fresh memory
 * takes a page fault for each 4 KiB page (11-13 us on a virtual machine
 * we measured, so 3 ms for a MiB); where the kernel gives huge pages on
 * request ("madvise", Debian's default), it takes one for each 2 MiB.  A
 * hint only: where the kernel declines (device memory, huge pages off),
 * nothing changes.
 */
#define HUGE_PAGE ((size_t)2 << 20)

static void advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE - 1);
	if (lo < hi)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

/* From 1 MiB, whole huge pages: a 1-MiB Snappy chunk took 256 faults,
 * and trace-encode's chunks and their compressed copies 600 of its 1,368
 * (49 ms a run of a 2-MB glxgears trace; 43 ms in huge pages). */
void *trace_xmalloc_huge(size_t n)
{
	if (n < HUGE_PAGE / 2)
		return trace_xmalloc(n);
	n = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	void *p;
	if (posix_memalign(&p, HUGE_PAGE, n) != 0) {
		fprintf(stderr, "tracekit: out of memory (%zu bytes)\n", n);
		abort();
	}
	advise_huge(p, n);
	return p;
}

void *trace_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		fprintf(stderr, "tracekit: out of memory (%zu x %zu bytes)\n", n, size);
		abort();
	}
	return p;
}

void *trace_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "tracekit: out of memory (%zu bytes)\n", n);
		abort();
	}
	return p;
}

int trace_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int failed = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return failed;
}

char *trace_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(trace_xmalloc(n), s, n);
}

/* ------------------------------------------------------------------ */

FILE *trace_open_input(const char *path, const char **name, trace_error *err)
{
	if (!path || !strcmp(path, "-")) {
		*name = "-";
		return stdin;
	}
	*name = path;
	FILE *f = fopen(path, "rb");
	if (!f)
		trace_error_errno(err, path, "cannot open");
	return f;
}

void tbuf_grow(tbuf *b, size_t extra)
{
	size_t want = b->len + extra;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap *= 2;
	b->data = trace_xrealloc(b->data, cap);
	b->cap = cap;
}

void tbuf_free(tbuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void tbuf_addf(tbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	tbuf_grow(b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* ------------------------------------------------------------------ */

struct trace_arena_chunk {
	trace_arena_chunk *next;
	size_t size;
	max_align_t data[];
};

/* Chunks start small (a held copy of a record costs about its size) and
 * double up to ARENA_CHUNK; one-off allocations above half of that get a
 * chunk of their own. */
#define ARENA_FIRST (1u << 10)
#define ARENA_CHUNK (64u << 10)

/*
 * The chunks of big one-offs (a memory update's bytes, a shader) that
 * arenas reset, kept for the next: fresh memory costs a page fault for
 * each page it touches, and a trace's large blobs come one a record.
 * Shared by the arenas of every thread, at most BIG_KEPT bytes.
 */
#define BIG_SLOTS 8
#define BIG_KEPT ((size_t)64 << 20)
#define BIG_MIN ((size_t)256 << 10)

static struct {
	pthread_mutex_t lock;
	trace_arena_chunk *slot[BIG_SLOTS];
	size_t kept;
} big = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A chunk of at least n bytes: the smallest kept one that holds them,
 * if it holds no more than twice as many (an arena's total counts its
 * chunks: the layer bounds the records in flight by it), else a new one. */
static trace_arena_chunk *big_take(size_t n)
{
	trace_arena_chunk *c = NULL;
	size_t at = 0;
	pthread_mutex_lock(&big.lock);
	for (size_t i = 0; i < BIG_SLOTS; i++) {
		trace_arena_chunk *s = big.slot[i];
		if (s && s->size >= n && s->size / 2 <= n && (!c || s->size < c->size)) {
			c = s;
			at = i;
		}
	}
	if (c) {
		big.slot[at] = NULL;
		big.kept -= c->size;
	}
	pthread_mutex_unlock(&big.lock);
	if (!c) {
		c = trace_xmalloc_huge(sizeof(*c) + n);
		c->size = n;
	}
	return c;
}

/* Keeps c for a later big_take, in place of a smaller one where full. */
static void big_give(trace_arena_chunk *c)
{
	pthread_mutex_lock(&big.lock);
	size_t at = BIG_SLOTS;
	for (size_t i = 0; i < BIG_SLOTS; i++) {
		if (!big.slot[i]) {
			at = i;
			break;
		}
		if (big.slot[i]->size < c->size &&
		    (at == BIG_SLOTS || big.slot[i]->size < big.slot[at]->size))
			at = i;
	}
	trace_arena_chunk *out = c;
	if (at < BIG_SLOTS) {
		size_t drop = big.slot[at] ? big.slot[at]->size : 0;
		if (big.kept - drop + c->size <= BIG_KEPT) {
			out = big.slot[at];
			big.slot[at] = c;
			big.kept += c->size - drop;
		}
	}
	pthread_mutex_unlock(&big.lock);
	free(out);
}

void trace_arena_prefetch(const trace_arena *a, size_t most)
{
	const trace_arena_chunk *c = a->head;
	size_t n = a->used < most ? a->used : most;
	if (!c)
		return;
	__builtin_prefetch(c);
	for (size_t at = 0; at < n; at += 64)
		__builtin_prefetch((const char *)c->data + at);
}

void trace_arena_init(trace_arena *a)
{
	memset(a, 0, sizeof(*a));
}

void *trace_arena_take(trace_arena *a, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (!a->head || a->head->size - a->used < n) {
		if (n > ARENA_CHUNK / 2) {
			/* a big one-off: its own chunk, kept behind the current one */
			trace_arena_chunk *c = big_take(n);
			n = c->size;
			if (a->head) {
				c->next = a->head->next;
				a->head->next = c;
			} else {
				c->next = NULL;
				a->head = c;
				a->used = n;
			}
			a->total += n;
			return c->data;
		}
		size_t size = a->head ? a->head->size * 2 : ARENA_FIRST;
		if (size > ARENA_CHUNK)
			size = ARENA_CHUNK;
		while (size < n)
			size *= 2;
		trace_arena_chunk *c = trace_xmalloc(sizeof(*c) + size);
		c->size = size;
		c->next = a->head;
		a->head = c;
		a->used = 0;
		a->total += size;
	}
	void *p = (char *)a->head->data + a->used;
	a->used += n;
	return p;
}

void *trace_arena_alloc(trace_arena *a, size_t n)
{
	return memset(trace_arena_take(a, n), 0, n);
}

char *trace_arena_strndup(trace_arena *a, const char *s, size_t n)
{
	char *p = trace_arena_take(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* Keeps the newest ordinary chunk (the largest), frees the rest: memory
 * follows the current record, not the largest one ever seen. */
void trace_arena_reset(trace_arena *a)
{
	trace_arena_chunk *c = a->head;
	if (c && !c->next && c->size <= ARENA_CHUNK) {
		a->used = 0; /* the usual case: one chunk, kept */
		return;
	}
	trace_arena_chunk *keep = NULL;
	while (c) {
		trace_arena_chunk *next = c->next;
		if (!keep && c->size <= ARENA_CHUNK) {
			keep = c;
			keep->next = NULL;
		} else if (c->size >= BIG_MIN) {
			big_give(c);
		} else {
			free(c);
		}
		c = next;
	}
	a->head = keep;
	a->used = 0;
	a->total = keep ? keep->size : 0;
}

void trace_arena_free(trace_arena *a)
{
	trace_arena_chunk *c = a->head;
	while (c) {
		trace_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	memset(a, 0, sizeof(*a));
}

/* ------------------------------------------------------------------ */

void trace_error_clear(trace_error *err)
{
	memset(err, 0, sizeof(*err));
	err->call = -1;
	err->offset = -1;
	err->file_offset = -1;
	err->line = -1;
	err->column = -1;
}

void trace_error_set(trace_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

void trace_error_errno(trace_error *err, const char *file, const char *what)
{
	int e = errno;
	trace_error_clear(err);
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "-");
	snprintf(err->msg, sizeof(err->msg), "%s: %s", what, strerror(e));
}

void trace_error_print(const trace_error *err, const char *prog, FILE *out)
{
	tbuf b = {0};
	if (prog)
		tbuf_addf(&b, "%s: ", prog);
	tbuf_addf(&b, "%s", err->file[0] ? err->file : "-");
	const char *sep = ": ";
	if (err->call >= 0) {
		tbuf_addf(&b, "%scall %lld", sep, (long long)err->call);
		sep = ", ";
	}
	if (err->line >= 0) {
		tbuf_addf(&b, "%sline %lld", sep, (long long)err->line);
		if (err->column >= 0)
			tbuf_addf(&b, " column %lld", (long long)err->column);
		sep = ", ";
	}
	if (err->offset >= 0) {
		tbuf_addf(&b, "%sbyte %lld", sep, (long long)err->offset);
		if (err->file_offset >= 0)
			tbuf_addf(&b, " (compressed input from file byte %lld)",
				  (long long)err->file_offset);
	}
	tbuf_addf(&b, ": %s\n", err->msg[0] ? err->msg : "error");
	fwrite(b.data, 1, b.len, out);
	tbuf_free(&b);
}
