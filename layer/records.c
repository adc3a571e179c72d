/*
 * Where the layer's records get their memory (records.h): the spare
 * records the writer thread gives back, taken by application threads a
 * batch at a time, and the blocks that large update bytes go back to.
 */
#include "records.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <stdlib.h>
#include <string.h>

/*
 * Update bytes of TK_BLOCK_MIN and more go back, written, to a pool of
 * blocks (at most TK_BLOCK_KEEP bytes in all) for the next updates.
 * Through malloc they came and went as fresh pages: a buffer rewritten
 * every frame (glmark2's buffer scene: 144 KB, four times a frame) cost a
 * page fault per 4 KB on the submitting thread, every frame.
 */
#define TK_BLOCK_KEEP (64u << 20)

typedef struct tk_block {
	struct tk_block *next;
	size_t cap;
} tk_block;

static struct {
	pthread_mutex_t lock;
	tk_block *list;
	size_t bytes;
} blocks = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A block for N bytes (N >= TK_BLOCK_MIN), its capacity in *CAP: a kept
 * one no more than twice as large, else a new one. */
uint8_t *tk_block_take(size_t n, size_t *cap)
{
	pthread_mutex_lock(&blocks.lock);
	for (tk_block **at = &blocks.list; *at; at = &(*at)->next) {
		tk_block *b = *at;
		if (b->cap >= n && b->cap / 2 <= n) {
			*at = b->next;
			blocks.bytes -= b->cap;
			pthread_mutex_unlock(&blocks.lock);
			*cap = b->cap;
			return (uint8_t *)b;
		}
	}
	pthread_mutex_unlock(&blocks.lock);
	*cap = n;
	return malloc(n);
}

static void block_give(uint8_t *p, size_t cap)
{
	pthread_mutex_lock(&blocks.lock);
	if (blocks.bytes + cap <= TK_BLOCK_KEEP) {
		tk_block *b = (tk_block *)p;
		b->cap = cap;
		b->next = blocks.list;
		blocks.list = b;
		blocks.bytes += cap;
		p = NULL;
	}
	pthread_mutex_unlock(&blocks.lock);
	free(p);
}

/* The kept blocks, when the writer ends. */
static void blocks_free(void)
{
	pthread_mutex_lock(&blocks.lock);
	for (tk_block *b = blocks.list, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	blocks.list = NULL;
	blocks.bytes = 0;
	pthread_mutex_unlock(&blocks.lock);
}

/* The update bytes of R go back. */
static void own_free(tk_rec *r)
{
	if (r->own && r->own_cap >= TK_BLOCK_MIN)
		block_give(r->own, r->own_cap);
	else
		free(r->own);
	r->own = NULL;
	r->own_len = r->own_cap = 0;
}

/* Written records go back to application threads (pool.spare), their
 * arena's chunk kept, each of at most TK_SPARE_BYTES, up to TK_SPARE_POOL
 * bytes in all: a malloc and a free for the record and its chunk on
 * either side were about a tenth of the layer's instructions on
 * glmark2-zink (callgrind).  The pool is counted in bytes, not records,
 * so that it holds a backlog of small records whole: a record made anew
 * is fresh memory, whose first touch costs 7-12 us a page under this
 * machine's hypervisor.  Beside two spinning processes, where the writer
 * falls behind, bench-calls mix took 382-513 ns a call with at most 8192
 * spares (11,700-16,400 page faults) and 257-290 ns with the pool
 * (8,500-9,000); on a quiet machine both take 166 ns a dynamic-state set.
 */
#define TK_SPARE_POOL (32u << 20)
#define TK_SPARE_BYTES 4096

/*
 * A thread takes spares a batch at a time, and while it fills one record
 * the next one's lines are fetched (tk_prefetch): the record's, and as
 * much of its chunk as its last record used (192 bytes at least).  A
 * spare was last written by the writer thread, on another core: taken one
 * at a time from a list under out.lock, reading its link was most of push
 * (perf), and its lines and its chunk's, each a miss from the other
 * core's cache, most of the encoding.  bench-calls, medians of 5 runs in
 * turns (2-core AMD EPYC): a dynamic-state set 420 ns a call one at a
 * time, 266 in batches, 240 with the prefetches; a barrier 905, 777, 581.
 * Batches of 16 did as well as of 64, and a thread that stops calling
 * holds at most 16 spares out of the pool (TK_SPARE_BYTES each at most).
 */
#define TK_SPARE_BATCH 16

/* What a spare record holds, for the pool's count. */
static size_t spare_size(const tk_rec *r)
{
	return sizeof(*r) + r->call.arena.total;
}

/* Written records, reset, for reuse: batches linked by next_batch. */
static struct {
	pthread_mutex_t lock;
	tk_rec *spare;
	size_t spare_bytes;      /* their spare_size, summed */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* This thread's batch of spares (TK_SPARE_BATCH), linked by next; the key,
 * set to its address, frees them should the thread end first. */
static _Thread_local tk_rec *spares;
static _Thread_local bool spares_keyed;
static pthread_key_t spare_key;
void tk_rec_free(tk_rec *r)
{
	trace_call_free(&r->call);
	own_free(r);
	free(r);
}

/* Frees a list of records linked by next. */
static void free_list(tk_rec *r)
{
	while (r) {
		tk_rec *next = r->next;
		tk_rec_free(r);
		r = next;
	}
}

static void free_spares(void *list)
{
	free_list(*(tk_rec **)list);
}

/* Whether the CPU has PREFETCHW, which fetches a line to be written
 * (AMD64 has had it always; Intel from Broadwell on): set at start. */
static bool has_prefetchw;

static void prefetchw_probe(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	has_prefetchw = __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_PRFCHW);
#endif
}

/* The LEN bytes at P (LEN up to a kilobyte) into this core's cache, to be
 * written: with PREFETCHW a line another core holds comes over without
 * its copy left there, which the write would then have to take away (a
 * barrier took 720 ns a call against 777 with PREFETCHT0's copy). */
static inline void tk_prefetch(const void *p, size_t len)
{
	if (len > 1024)
		len = 1024;
	for (size_t i = 0; i < len; i += 64) {
#if defined(__x86_64__) || defined(__i386__)
		if (has_prefetchw) {
			__asm__ volatile("prefetchw %0" : : "m"(*((const char *)p + i)));
			continue;
		}
#endif
		__builtin_prefetch((const char *)p + i, 1, 3);
	}
}

/* This thread's next batch of spares from the pool, if it has one. */
static void take_batch(void)
{
	pthread_mutex_lock(&pool.lock);
	spares = pool.spare;
	if (spares) {
		pool.spare = spares->next_batch;
		pool.spare_bytes -= spares->batch_bytes;
	}
	pthread_mutex_unlock(&pool.lock);
	if (spares && !spares_keyed)
		spares_keyed = pthread_setspecific(spare_key, &spares) == 0;
}

tk_rec *tk_rec_new(void)
{
	if (!spares)
		take_batch();
	tk_rec *r = spares;
	if (r) {
		spares = r->next;
		if (spares) {
			tk_prefetch(spares, sizeof(*spares));
			if (r->next_chunk)
				tk_prefetch(r->next_chunk,
					    r->next_used < 176 ? 192 : 16 + (size_t)r->next_used);
		}
		return r;
	}
	r = calloc(1, sizeof(*r));
	trace_call_init(&r->call);
	return r;
}

void tk_rec_retire(tk_rec **done, tk_rec *r)
{
	own_free(r);
	r->used = r->call.arena.used > UINT32_MAX ? UINT32_MAX : (uint32_t)r->call.arena.used;
	trace_call_reset(&r->call);
	if (r->call.arena.total > TK_SPARE_BYTES) {
		tk_rec_free(r);
		return;
	}
	r->enter = NULL;
	r->leave = false;
	r->folded = false;
	r->next = *done;
	*done = r;
}

/*
 * The records of DONE become spares, as many as fit, in batches of
 * TK_SPARE_BATCH linked by next_batch; the rest are freed.  Walked outside
 * pool.lock, which application threads take for their batches: only this
 * (the writer) thread adds spares, so the room can only have grown.
 */
void tk_spares_keep(tk_rec *done)
{
	pthread_mutex_lock(&pool.lock);
	size_t room = TK_SPARE_POOL - pool.spare_bytes;
	pthread_mutex_unlock(&pool.lock);
	tk_rec *head = NULL, *batch = NULL, *prev = NULL;
	size_t n = 0;
	unsigned k = 0;
	while (done && n + spare_size(done) <= room) {
		tk_rec *r = done;
		done = r->next;
		r->next = NULL;
		r->next_chunk = NULL;
		if (k++ % TK_SPARE_BATCH == 0) {
			r->next_batch = NULL;
			r->batch_bytes = 0;
			if (batch)
				batch->next_batch = r;
			else
				head = r;
			batch = r;
		} else {
			prev->next = r;
			prev->next_chunk = r->call.arena.head;
			prev->next_used = r->used;
		}
		batch->batch_bytes += spare_size(r);
		n += spare_size(r);
		prev = r;
	}
	free_list(done);
	if (!head)
		return;
	pthread_mutex_lock(&pool.lock);
	batch->next_batch = pool.spare;
	pool.spare = head;
	pool.spare_bytes += n;
	pthread_mutex_unlock(&pool.lock);
}

void tk_records_init(void)
{
	pthread_key_create(&spare_key, free_spares);
	prefetchw_probe();
}

/* The spares in the pool and the kept blocks, when the writer ends (a
 * thread's batch goes with the thread). */
void tk_records_end(void)
{
	pthread_mutex_lock(&pool.lock);
	while (pool.spare) {
		tk_rec *next = pool.spare->next_batch;
		free_list(pool.spare);
		pool.spare = next;
	}
	pool.spare_bytes = 0;
	pthread_mutex_unlock(&pool.lock);
	blocks_free();
}
