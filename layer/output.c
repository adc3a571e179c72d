/*
 * The layer's output: the records application threads queue, the one
 * writer thread that encodes them (a thread of the sink compresses), the
 * trace's header properties, and the fatal signals that flush what is
 * queued before the process dies.
 *
 * Application threads only copy: each wrapper turns its arguments into a
 * record (the generated schema's deep copy) and queues it.  The writer
 * and the compressor run at the lowest priority, SCHED_IDLE
 * (TRACEKIT_WRITER_SCHED=normal for the usual): they take what CPU the
 * application leaves, and where it leaves none, the queue's limit makes
 * the application wait for them.  The enter event is queued before the
 * call goes down (or, for a call that writes nothing back, held by its
 * thread until it returns), so a call that crashes the driver is in the
 * trace.
 *
 * The file is always whole chunks, and at most one partial one that holds
 * under a quarter second of calls: the writer ends its chunk when it is
 * full and TK_FLUSH_MS after its first record, and writes each with one
 * write() (the FILE is unbuffered).  So a program killed, or a full
 * disk, loses about the last quarter second at most (readers salvage the
 * rest); the endings the layer can see flush everything (ending.c).
 *
 * The only global state: the one output.
 */
#include "layer.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Above this many queued bytes, application threads wait for the writer. */
#define TK_QUEUE_LIMIT (256u << 20)
/* The writer is woken when this many bytes or records are queued, else
 * it looks every TK_WAKE_MS: a wake-up for every record costs the
 * application more than the copying (two context switches a call). */
#define TK_WAKE_BYTES (256u << 10)
#define TK_WAKE_RECORDS 2048
#define TK_WAKE_MS 10
/* A chunk goes to the file at most this long after its first record
 * (TRACEKIT_FLUSH_MS, 1 to 60000). */
#define TK_FLUSH_MS 240
static long flush_ms = TK_FLUSH_MS;
/* Records this old not yet handed to the trace writer make application
 * threads wait for it: at SCHED_IDLE on a machine the program keeps
 * busy, the writer can fall seconds behind, all of it lost to a kill.
 * Checked every TK_STALE_EVERY records. */
#define TK_STALE_MS 100
#define TK_STALE_EVERY 64

/* ------------------------------------------------------------------ */
/* The output: a queue of records and the thread that writes them. */

struct tk_rec {
	tk_rec *next;
	tk_rec *enter;  /* for a leave: its enter, which numbered the call */
	bool leave;
	bool folded;    /* an enter queued at its leave, standing for both */
	tk_rec *outer;  /* for a folded enter: the thread's call it is inside */
	uint8_t *own;   /* an update's bytes, up to megabytes: kept out of the
			 * arena, whose chunk a spare record keeps */
	size_t own_len, own_cap;
	/* a spare (keep_spares): the next spare's arena chunk and the bytes
	 * of it its last record used, to prefetch (retire: this one's); the
	 * first of a batch: the next batch and this one's bytes */
	void *next_chunk;
	uint32_t next_used, used;
	tk_rec *next_batch;
	size_t batch_bytes;
	trace_call call;
};

/*
 * Update bytes of TK_BLOCK_MIN and more go back, written, to a pool of
 * blocks (at most TK_BLOCK_KEEP bytes in all) for the next updates.
 * Through malloc they came and went as fresh pages: a buffer rewritten
 * every frame (glmark2's buffer scene: 144 KB, four times a frame) cost a
 * page fault per 4 KB on the submitting thread, every frame.
 */
#define TK_BLOCK_MIN (64u << 10)
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
static uint8_t *block_take(size_t n, size_t *cap)
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

/* Written records go back to application threads (out.spare), their
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

#define TK_MAX_PROPS 48

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more, room;
	tk_rec *head, *tail;
	tk_rec *spare;           /* written records, reset, for reuse */
	size_t spare_bytes;      /* their spare_size, summed */
	size_t queued;           /* bytes in the queue */
	size_t nqueued;          /* records in the queue */
	bool header_ready;       /* device properties known (or giving up on them) */
	bool stop;
	bool running;
	bool started;            /* the writer thread was started */
	bool closed;             /* the writer has ended the trace */
	uint64_t flush_asked;    /* flushes asked for (tk_output_flush) */
	uint64_t flush_done;     /* the last one the writer did */
	uint64_t head_ms;        /* when the queue's first record came */
	uint64_t writing_ms;     /* the writer's batch's, until it is written; 0 */
	bool idle;               /* the writer runs at SCHED_IDLE, */
	bool raised;             /* or did until a thread waited for it */
	pthread_cond_t done;     /* flush_done moved, or closed */
	pthread_t thread;
	trace_writer *w;
	FILE *f;
	char *path;
	trace_property props[TK_MAX_PROPS];
	uint32_t nprops;
	sem_t flushed;
} out = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.more = PTHREAD_COND_INITIALIZER,
	.room = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

static atomic_bool tracing;
static atomic_uint next_thread;
static _Thread_local uint32_t thread_plus1;
/* This thread's batch of spares (TK_SPARE_BATCH), linked by next; the key,
 * set to its address, frees them should the thread end first. */
static _Thread_local tk_rec *spares;
static _Thread_local bool spares_keyed;
static pthread_key_t spare_key;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;

const char *tk_output_path(void)
{
	return out.path;
}

bool tk_tracing(void)
{
	return atomic_load_explicit(&tracing, memory_order_relaxed);
}

static uint32_t thread_no(void)
{
	if (!thread_plus1)
		thread_plus1 = atomic_fetch_add(&next_thread, 1) + 1;
	return thread_plus1 - 1;
}

/* Under out.lock. */
static void add_prop(const char *name, const char *value)
{
	for (uint32_t i = 0; i < out.nprops; i++)
		if (!strcmp(out.props[i].name, name))
			return;
	if (out.nprops < TK_MAX_PROPS) {
		out.props[out.nprops].name = strdup(name);
		out.props[out.nprops].value = strdup(value);
		out.nprops++;
	}
}

static void free_rec(tk_rec *r)
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
		free_rec(r);
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

static tk_rec *new_rec(void)
{
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

/* R, written, reset onto the list *DONE for reuse, or freed (a large
 * one: the spares stay small). */
static void retire(tk_rec **done, tk_rec *r)
{
	own_free(r);
	r->used = r->call.arena.used > UINT32_MAX ? UINT32_MAX : (uint32_t)r->call.arena.used;
	trace_call_reset(&r->call);
	if (r->call.arena.total > TK_SPARE_BYTES) {
		free_rec(r);
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
 * out.lock, which application threads wait for: only this (the writer)
 * thread adds spares, so the room can only have grown.
 */
static void keep_spares(tk_rec *done)
{
	pthread_mutex_lock(&out.lock);
	size_t room = TK_SPARE_POOL - out.spare_bytes;
	pthread_mutex_unlock(&out.lock);
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
	pthread_mutex_lock(&out.lock);
	batch->next_batch = out.spare;
	out.spare = head;
	out.spare_bytes += n;
	pthread_mutex_unlock(&out.lock);
}

/* Under out.lock: R at the queue's tail. */
static void append(tk_rec *r)
{
	r->next = NULL;
	if (out.tail)
		out.tail->next = r;
	else
		out.head = r;
	out.tail = r;
}

/* R, not to be written: a folded record or a leave and its enter are
 * freed; an enter alone is left to the leave, whose owner frees it. */
static void discard(tk_rec *r)
{
	if (r->folded) {
		free_rec(r);
	} else if (r->leave) {
		free_rec(r->enter);
		free_rec(r);
	}
}

/* A coarse clock (a few ns), in milliseconds. */
static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Under out.lock: records older than TK_STALE_MS that the writer has not
 * written (taken and being written, or still queued). */
static bool writer_behind(void)
{
	uint64_t oldest = out.writing_ms ? out.writing_ms : out.head ? out.head_ms : 0;
	return oldest && out.header_ready && now_ms() - oldest > TK_STALE_MS;
}

/*
 * Under out.lock.  The first time a thread of the program has to wait for
 * the writer, the writer (and so the compressor, which follows the thread
 * that feeds it: lib/stream/sink.c) leaves SCHED_IDLE for the usual
 * scheduling, for good: on cores that other processes keep busy, a
 * writer at SCHED_IDLE gets almost no CPU, and the program waits on it.
 * glmark2-zink's default list (5 frames a scene) beside two spinning
 * processes took +40 to +113 s under the layer (native 8-11 s); raised
 * only while a thread waited and lowered once it had caught up, +7 to
 * +45 s, for it fell behind again at once.  A program that never waits
 * keeps its idle writer.
 */
static void writer_raise(void)
{
	if (!out.idle || out.raised)
		return;
	struct sched_param sp = { 0 };
	if (pthread_setschedparam(out.thread, SCHED_OTHER, &sp) == 0)
		out.raised = true;
}

/* TRACEKIT_TEST_TERM_AT=N, for the tests: the Nth record pushed raises
 * SIGTERM while its thread holds out.lock (ending.c puts the program's
 * handler off until the thread leaves the layer). */
static long test_term_at;
static atomic_long pushes;

static void push(tk_rec *r)
{
	size_t bytes = r->call.arena.total + r->own_len + sizeof(*r);
	pthread_mutex_lock(&out.lock);
	if (test_term_at && atomic_fetch_add(&pushes, 1) + 1 == test_term_at)
		raise(SIGTERM);
	if (!out.running) {
		pthread_mutex_unlock(&out.lock);
		discard(r);
		return;
	}
	while (out.queued > TK_QUEUE_LIMIT && out.header_ready && out.running) {
		writer_raise();
		pthread_cond_wait(&out.room, &out.lock);
	}
	if (out.nqueued % TK_STALE_EVERY == TK_STALE_EVERY - 1)
		while (out.running && !out.stop && writer_behind()) {
			writer_raise();
			pthread_cond_wait(&out.room, &out.lock);
		}
	if (!out.head)
		out.head_ms = now_ms();
	append(r);
	out.queued += bytes;
	if (!spares && out.spare) {
		spares = out.spare;
		out.spare = spares->next_batch;
		out.spare_bytes -= spares->batch_bytes;
		if (!spares_keyed)
			spares_keyed = pthread_setspecific(spare_key, &spares) == 0;
	}
	/* the writer sleeps until the first record, then until a batch */
	if (++out.nqueued == 1 || out.nqueued == TK_WAKE_RECORDS ||
	    (out.queued >= TK_WAKE_BYTES && out.queued - bytes < TK_WAKE_BYTES))
		pthread_cond_signal(&out.more);
	pthread_mutex_unlock(&out.lock);
}

static tk_rec *enter_rec(const vk_command_info *cmd, const void *args)
{
	tk_rec *r = new_rec();
	r->call.thread = thread_no();
	vk_encode_args(cmd, &r->call, args, VK_PHASE_ENTER);
	return r;
}

/*
 * A vkCmd* (void, no output parameter) has a leave record of nothing.
 * Its enter is queued at the leave instead, and written as both: half
 * the records, locks and wake ups of recording command buffers.  While the call is down, its record
 * is the thread's `inflight` (a stack, should the call come back in
 * through a callback), which a fatal signal queues as an enter alone: a
 * call that crashes the driver is in the trace all the same.  The order
 * of the trace stays one the program could have made: what another
 * thread does because of this call comes after the call returned.
 */
static _Thread_local tk_rec *inflight;

/*
 * Only vkCmd* calls: they touch nothing but their command buffer.  A
 * vkDestroy* or vkFree* also writes nothing back, but queued at its
 * return it could follow another thread's create that got the freed
 * handle again, and the trace would destroy the new object.
 */
static bool leaves_nothing(const vk_command_info *cmd)
{
	if (cmd->action != VK_ACTION_RECORD || cmd->ret)
		return false;
	for (uint32_t i = 0; i < cmd->nparams; i++)
		if (cmd->params[i].flags & VK_F_OUT)
			return false;
	return true;
}

static void enqueue_enter(tk_rec *r, const vk_command_info *cmd)
{
	if (!leaves_nothing(cmd)) {
		push(r);
		return;
	}
	r->folded = true;
	r->outer = inflight;
	atomic_signal_fence(memory_order_seq_cst); /* whole before the handler sees it */
	inflight = r;
}

tk_rec *tk_enter(const vk_command_info *cmd, const void *args)
{
	if (!tk_tracing())
		return NULL;
	tk_rec *r = enter_rec(cmd, args);
	enqueue_enter(r, cmd);
	return r;
}

static void set_blob(trace_value *v, const uint8_t *p, size_t n)
{
	v->kind = TRACE_BLOB;
	v->len = (uint32_t)n;
	v->blob = p;
}

tk_rec *tk_enter_blob(const vk_command_info *cmd, const void *args, uint32_t param,
		      uint64_t size, void (*fill)(void *ctx, uint8_t *blob), void *ctx)
{
	if (!tk_tracing())
		return NULL;
	tk_rec *r = enter_rec(cmd, args);
	trace_value *v = &r->call.args[param];
	if (size <= UINT32_MAX) {
		uint8_t *blob = trace_arena_alloc(&r->call.arena, size ? size : 1); /* zeroed */
		fill(ctx, blob);
		set_blob(v, blob, size);
	}
	enqueue_enter(r, cmd);
	return r;
}

void tk_leave(tk_rec *enter, const vk_command_info *cmd, const void *args)
{
	if (!enter)
		return;
	if (enter->folded) {
		inflight = enter->outer;
		/* off the stack before queued: a fatal signal in between must
		 * not queue it twice */
		atomic_signal_fence(memory_order_seq_cst);
		enter->outer = NULL;
		push(enter);
		return;
	}
	tk_rec *r = new_rec();
	r->call.thread = enter->call.thread;
	vk_encode_args(cmd, &r->call, args, VK_PHASE_LEAVE);
	r->leave = true;
	r->enter = enter;
	push(r);
}

/* An update record of OBJECT at OFFSET under SIG (args 0 and 1 set),
 * with SIZE bytes of its own for the caller to fill; NULL when not
 * tracing, or out of memory (tracing stops: a trace without these bytes
 * would replay wrong, silently). */
static tk_rec *update_rec(const trace_func_sig *sig, uint64_t object, uint64_t offset, size_t size)
{
	if (!tk_tracing())
		return NULL;
	size_t cap = size;
	uint8_t *own = size >= TK_BLOCK_MIN ? block_take(size, &cap) : malloc(size ? size : 1);
	if (!own) {
		atomic_store(&tracing, false);
		fprintf(stderr, "tracekit: out of memory for %zu bytes of an update; the trace "
			"stops here, the application runs on untraced\n", size);
		return NULL;
	}
	tk_rec *e = new_rec();
	e->call.thread = thread_no();
	e->call.sig = sig;
	e->call.args = trace_call_values(&e->call, sig->nargs);
	e->call.args[0].kind = TRACE_POINTER;
	e->call.args[0].u = object;
	e->call.args[1].kind = TRACE_UINT;
	e->call.args[1].u = offset;
	e->own = own;
	e->own_cap = cap;
	e->own_len = size;
	e->folded = true; /* written as its enter and an empty leave */
	return e;
}

void tk_update(uint64_t object, uint64_t offset, const void *data, size_t size)
{
	tk_rec *e = update_rec(&vk_update_sig, object, offset, size);
	if (!e)
		return;
	memcpy(e->own, data, size);
	set_blob(&e->call.args[2], e->own, size);
	push(e);
}

bool tk_update_sparse(uint64_t object, uint64_t offset, const uint8_t *live, uint8_t *old,
		      size_t nwords)
{
	size_t mlen = (nwords + 7) / 8;
	tk_rec *e = update_rec(&vk_update_sparse_sig, object, offset, mlen + 4 * nwords);
	if (!e)
		return false;
	size_t k = vk_update_gather(live, old, nwords, e->own, e->own + mlen);
	e->own_len = mlen + 4 * k;
	set_blob(&e->call.args[2], e->own, mlen);
	set_blob(&e->call.args[3], e->own + mlen, 4 * k);
	push(e);
	return true;
}

/* Stops tracing after an output error: one message, the program goes on. */
static void give_up(const trace_error *err)
{
	atomic_store(&tracing, false);
	trace_error_print(err, "tracekit", stderr);
	fprintf(stderr, "tracekit: the trace stops here; %s keeps what was written, "
		"the application runs on untraced\n", out.path);
}

static const trace_func_sig no_outputs = { "", 0, NULL };

static int write_rec(tk_rec *r, tk_rec **done, trace_error *err)
{
	if (r->folded) {
		if (trace_writer_enter(out.w, &r->call, err) < 0) {
			retire(done, r);
			return -1;
		}
		trace_call leave = { .no = r->call.no, .thread = r->call.thread, .sig = &no_outputs };
		int rc = trace_writer_leave(out.w, &leave, err);
		retire(done, r);
		return rc;
	}
	if (!r->leave)
		return trace_writer_enter(out.w, &r->call, err);
	r->call.no = r->enter->call.no;
	int rc = trace_writer_leave(out.w, &r->call, err);
	retire(done, r->enter);
	retire(done, r);
	return rc;
}

/*
 * The writer's scheduling, TRACEKIT_WRITER_SCHED: auto (the default),
 * SCHED_IDLE until a thread of the program first waits for it, then as
 * usual (writer_raise); idle, SCHED_IDLE throughout; normal, as usual.
 * Threads it starts (the sink's compressor) follow it.  On 2 cores
 * running glmark2-zink, whose threads leave a core idle about half the
 * time, SCHED_IDLE took the capture's wall-time overhead from 0.23 s to
 * 0.13 s (medians of each turn's difference, 10 turns).
 */
static void writer_sched(void)
{
	const char *v = getenv("TRACEKIT_WRITER_SCHED");
	if (v && !strcmp(v, "normal"))
		return;
	bool stay = v && !strcmp(v, "idle");
	if (v && *v && !stay && strcmp(v, "auto"))
		fprintf(stderr, "tracekit: TRACEKIT_WRITER_SCHED=%s: expected auto, idle or normal; "
			"using auto\n", v);
	struct sched_param sp = { 0 };
	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0) {
		fprintf(stderr, "tracekit: cannot lower the writer's priority; it runs as usual\n");
		return;
	}
	if (stay)
		return;
	pthread_mutex_lock(&out.lock);
	out.idle = true;
	pthread_mutex_unlock(&out.lock);
}

/* The realtime clock MS milliseconds from now, for timed waits. */
static void deadline_in(struct timespec *t, long ms)
{
	clock_gettime(CLOCK_REALTIME, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static bool passed(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	return !before(&now, t);
}

/* What the writer thread keeps between batches. */
typedef struct tk_writer {
	bool header_written, failed;
	bool unflushed;           /* records written since the last flush */
	struct timespec flush_at; /* then: when they go to the file */
	trace_error err;
} tk_writer;

/*
 * Under out.lock: until there is work.  Records come in batches: after
 * the first, a batch's worth or TK_WAKE_MS; else a flush asked for, the
 * end, or FLUSH_AT (NULL: nothing waits in the chunk).
 */
static void wait_for_work(const struct timespec *flush_at)
{
	bool waited = false;
	while (!out.stop && out.flush_asked == out.flush_done) {
		bool batch = out.head && out.header_ready;
		if (batch && (waited || out.queued >= TK_WAKE_BYTES || out.nqueued >= TK_WAKE_RECORDS))
			return;
		struct timespec until;
		if (batch) {
			deadline_in(&until, TK_WAKE_MS);
			if (flush_at && before(flush_at, &until))
				until = *flush_at;
		} else if (flush_at) {
			until = *flush_at;
		} else {
			pthread_cond_wait(&out.more, &out.lock);
			waited = false;
			continue;
		}
		if (pthread_cond_timedwait(&out.more, &out.lock, &until) == ETIMEDOUT) {
			if (flush_at && passed(flush_at))
				return;
			waited = true;
		}
	}
}

/* Under out.lock: the queue, emptied. */
static tk_rec *take_queue(void)
{
	tk_rec *list = out.head;
	out.head = out.tail = NULL;
	out.queued = 0;
	out.nqueued = 0;
	pthread_cond_broadcast(&out.room);
	return list;
}

/* The header (first time), then the records of LIST. */
static void write_batch(tk_writer *wr, const trace_header *h, tk_rec *list)
{
	if (!wr->header_written && !wr->failed) {
		wr->header_written = true;
		if (trace_writer_header(out.w, h, &wr->err) < 0) {
			wr->failed = true;
			give_up(&wr->err);
		}
	}
	if (list && !wr->failed && !wr->unflushed) {
		wr->unflushed = true;
		deadline_in(&wr->flush_at, flush_ms);
	}
	tk_rec *done = NULL;
	while (list) {
		tk_rec *next = list->next;
		if (wr->failed) {
			discard(list);
		} else if (write_rec(list, &done, &wr->err) < 0) {
			wr->failed = true;
			give_up(&wr->err);
		}
		list = next;
	}
	keep_spares(done);
}

/* The chunk so far into the file, whole, when ASKED or its time came. */
static void flush_chunk(tk_writer *wr, bool asked)
{
	if (!wr->unflushed || wr->failed || (!asked && !passed(&wr->flush_at)))
		return;
	wr->unflushed = false;
	if (trace_writer_flush(out.w, &wr->err) < 0) {
		wr->failed = true;
		give_up(&wr->err);
	}
}

/* After the last batch: the spares go, the trace is closed (or dropped
 * after an error: the file keeps what was written). */
static void writer_end(tk_writer *wr)
{
	out.running = false;
	while (out.spare) {
		tk_rec *next = out.spare->next_batch;
		free_list(out.spare);
		out.spare = next;
	}
	out.spare_bytes = 0;
	blocks_free();
	pthread_cond_broadcast(&out.room);
	pthread_mutex_unlock(&out.lock);
	if (!wr->failed && trace_writer_close(out.w, &wr->err) < 0)
		give_up(&wr->err);
	else if (wr->failed)
		trace_writer_abort(out.w);
	out.w = NULL;
	fclose(out.f);
	out.f = NULL;
	pthread_mutex_lock(&out.lock);
	out.closed = true;
	pthread_cond_broadcast(&out.done);
	pthread_mutex_unlock(&out.lock);
	sem_post(&out.flushed);
}

static void *writer_main(void *unused)
{
	(void)unused;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals go to the application's threads */
	pthread_setname_np(pthread_self(), "tracekit-write");
	writer_sched();
	/* before any record: an earlier file of the same name, cut to the
	 * container's magic that opening wrote (the FILE is unbuffered) */
	off_t magic = lseek(fileno(out.f), 0, SEEK_CUR);
	if (ftruncate(fileno(out.f), magic > 0 ? magic : 0) != 0 && errno != EINVAL)
		fprintf(stderr, "tracekit: cannot truncate %s: %s\n", out.path, strerror(errno));
	tk_writer wr = {0};
	trace_error_clear(&wr.err);
	pthread_mutex_lock(&out.lock);
	for (;;) {
		wait_for_work(wr.unflushed ? &wr.flush_at : NULL);
		out.writing_ms = out.head ? out.head_ms : 0;
		tk_rec *list = take_queue();
		bool stop = out.stop;
		uint64_t asked = out.flush_asked;
		trace_header h = { .version = TRACE_FORMAT_VERSION,
				   .semantic_version = TRACE_FORMAT_VERSION,
				   .nprops = out.nprops, .props = out.props };
		pthread_mutex_unlock(&out.lock);
		write_batch(&wr, &h, list);
		if (!stop)
			flush_chunk(&wr, asked != out.flush_done);
		pthread_mutex_lock(&out.lock);
		if (out.writing_ms) {
			out.writing_ms = 0;
			pthread_cond_broadcast(&out.room);
		}
		if (out.flush_done != asked) {
			out.flush_done = asked;
			pthread_cond_broadcast(&out.done);
		}
		if (stop && !out.head)
			break;
	}
	writer_end(&wr);
	return NULL;
}

/*
 * Ends the trace: everything queued is written and the file closed.  At
 * exit (atexit), so a program that ends without destroying its instance
 * leaves a whole trace; when an ending signal is already closing it
 * (tk_output_flush), waits for that instead.
 */
static void finish(void)
{
	if (!out.started)
		return; /* a child of fork(): the trace is its parent's */
	pthread_mutex_lock(&out.lock);
	bool join = out.running && !out.stop;
	out.stop = true;
	out.header_ready = true;
	writer_raise(); /* the program waits for it now */
	pthread_cond_signal(&out.more);
	while (!join && out.started && !out.closed)
		pthread_cond_wait(&out.done, &out.lock);
	pthread_mutex_unlock(&out.lock);
	if (join)
		pthread_join(out.thread, NULL);
}

bool tk_output_flush(bool last, int timeout_ms)
{
	struct timespec until;
	deadline_in(&until, timeout_ms);
	pthread_mutex_lock(&out.lock);
	if (last) {
		atomic_store(&tracing, false);
		out.stop = true;
		out.header_ready = true;
	}
	uint64_t asked = ++out.flush_asked;
	pthread_cond_signal(&out.more);
	bool timed_out = false;
	while (out.started && !out.closed && (last || out.flush_done < asked) && !timed_out)
		timed_out = pthread_cond_timedwait(&out.done, &out.lock, &until) == ETIMEDOUT;
	pthread_mutex_unlock(&out.lock);
	return !timed_out;
}

/* ------------------------------------------------------------------ */
/* A fatal signal: what is queued, and the calls in flight, written. */

/* Under out.lock, in a fatal signal's handler: the calls of this thread
 * that are down (folded enters, not queued yet), outermost first, as
 * enters alone. */
static void queue_inflight(void)
{
	tk_rec *calls[64];
	size_t n = 0;
	for (tk_rec *r = inflight; r && n < 64; r = r->outer)
		calls[n++] = r;
	while (n--) {
		calls[n]->folded = false;
		append(calls[n]);
	}
	inflight = NULL;
}

/*
 * Threads that fault at once each come here: the first writes the trace,
 * the others wait for it (6 s at most) before their signal, as the
 * program had it, ends the process.  Returning at once, the second
 * killed the process while the first wrote: neverball through zink,
 * whose two llvmpipe threads ran freed code as it quit (without the
 * layer too), lost its trace's last quarter second, and a program that
 * faulted in its first quarter second its whole trace.
 */
void tk_output_crash(void)
{
	static atomic_bool in_crash, written;
	struct timespec pause = { 0, 1000000 };
	if (atomic_exchange(&in_crash, true)) {
		for (int i = 0; i < 6000 && !atomic_load(&written); i++)
			nanosleep(&pause, NULL);
		return;
	}
	atomic_store(&tracing, false);
	/* the crashing thread may hold the lock: try for a while */
	for (int i = 0; i < 1000 && out.running; i++) {
		if (pthread_mutex_trylock(&out.lock) == 0) {
			queue_inflight();
			out.stop = true;
			out.header_ready = true;
			pthread_cond_signal(&out.more);
			pthread_mutex_unlock(&out.lock);
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 5;
			while (sem_timedwait(&out.flushed, &until) < 0 && errno == EINTR)
				;
			break;
		}
		nanosleep(&pause, NULL);
	}
	atomic_store(&written, true);
}

/* ------------------------------------------------------------------ */
/* fork(): the child runs untraced, as without the layer.  The trace, its
 * writer thread (not in the child) and its signal watcher are the
 * parent's: a child that called exit() waited for a writer it does not
 * have (it hung or crashed), and one that SIGTERM ended asked the parent's
 * watcher to close the parent's trace and kill the parent. */

static void forked(void)
{
	atomic_store(&tracing, false);
	/* another thread may have held it as the process forked */
	pthread_mutex_init(&out.lock, NULL);
	out.running = false;
	out.started = false;
	tk_endings_forked();
}

/* ------------------------------------------------------------------ */
/* Starting: the configuration, the header's process properties. */

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static void start(void)
{
	const char *name = program_invocation_short_name;
	const char *env = getenv("TRACEKIT_OUTPUT");
	char def[512];
	snprintf(def, sizeof(def), "%s.trace", name && *name ? name : "vulkan");
	out.path = strdup(env && *env ? env : def);

	/* the end marker: a trace without it was cut off (killed, disk full) */
	/* zstd by default: 0.5-0.6 times Snappy's size on content-heavy
	 * programs (textures, meshes), where Snappy was no smaller than
	 * GFXReconstruct's LZ4; apitrace 11 reads only Snappy, one variable
	 * away.  Level 2, not zstd's 3: the compressor was the largest part
	 * of the capture's added CPU time (a tenth of glmark2-zink's whole
	 * run), and on its 72 MB stream level 2 took 0.19 s against 0.27 s
	 * for 12% more bytes (level 1: 0.15 s, 24% more) */
	/* every signature is the schema's: interning them by content cost the
	 * writer about 3 ms of each program's start (perf: VkStructureType's
	 * thousand names, one lookup each) */
	trace_writer_options opt = { .format = TRACE_FMT_ZSTD, .quality = 2, .end_marker = true,
				     .sigs_by_pointer = true };
	const char *flush = getenv("TRACEKIT_FLUSH_MS");
	if (flush && *flush) {
		char *end;
		long ms = strtol(flush, &end, 10);
		if (*end || ms < 1 || ms > 60000)
			fprintf(stderr, "tracekit: TRACEKIT_FLUSH_MS=%s: expected milliseconds, 1 to "
				"60000; using %d\n", flush, TK_FLUSH_MS);
		else
			flush_ms = ms;
	}
	const char *term = getenv("TRACEKIT_TEST_TERM_AT");
	test_term_at = term ? atol(term) : 0;
	const char *z = getenv("TRACEKIT_COMPRESSION");
	if (z && *z) {
		char kind[16] = "";
		int level = -1, used = 0;
		if (sscanf(z, "%15[a-z]%n:%d%n", kind, &used, &level, &used) < 1 || z[used] ||
		    (level != -1 && (strcmp(kind, "zstd") && strcmp(kind, "brotli")))) {
			kind[0] = 0;
			level = -1;
		}
		if (!strcmp(kind, "brotli"))
			opt.format = TRACE_FMT_BROTLI;
		else if (!strcmp(kind, "snappy"))
			opt.format = TRACE_FMT_SNAPPY;
		else if (!strcmp(kind, "none"))
			opt.format = TRACE_FMT_RAW;
		else if (strcmp(kind, "zstd"))
			fprintf(stderr, "tracekit: TRACEKIT_COMPRESSION=%s: expected zstd[:LEVEL], snappy, "
				"brotli[:LEVEL] or none; using zstd\n", z);
		if (opt.format == TRACE_FMT_BROTLI)
			opt.quality = -1;
		if (level != -1) {
			int lo = opt.format == TRACE_FMT_ZSTD ? 1 : 0;
			int hi = opt.format == TRACE_FMT_ZSTD ? 19 : 11;
			opt.quality = level < lo ? lo : level > hi ? hi : level;
		}
	}
	/* not truncated here but by the writer thread: dropping the pages of
	 * an earlier capture of the same name took milliseconds (4 ms for
	 * 14 MB) of the application's vkCreateInstance */
	bool made = true;  /* the file is new: gone again if no writer comes of it */
	int fd = open(out.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0 && errno == EEXIST) {
		/* (a FIFO, an earlier trace; a dangling link: made at its target) */
		made = false;
		fd = open(out.path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			fd = open(out.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	}
	out.f = fd < 0 ? NULL : fdopen(fd, "wb");
	if (fd >= 0 && !out.f)
		close(fd);
	/* each chunk in one write(): a kill or a full disk leaves whole ones */
	if (out.f)
		setvbuf(out.f, NULL, _IONBF, 0);
	trace_error err;
	trace_error_clear(&err);
	if (!out.f) {
		fprintf(stderr, "tracekit: cannot write %s: %s; the application runs untraced\n",
			out.path, strerror(errno));
		return;
	}
	out.w = trace_writer_open_file(out.f, out.path, &opt, &err);
	if (!out.w) {
		/* (a container whose library cannot be loaded) */
		trace_error_print(&err, "tracekit", stderr);
		fprintf(stderr, "tracekit: the application runs untraced\n");
		fclose(out.f);
		if (made)
			unlink(out.path);
		return;
	}

	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	size_t len = 0;
	char *cmdline = read_file("/proc/self/cmdline", &len);
	for (size_t i = 0; cmdline && len && i < len - 1; i++)
		if (!cmdline[i])
			cmdline[i] = ' ';
	char pid[32];
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	pthread_mutex_lock(&out.lock);
	add_prop("api", "Vulkan");
	add_prop("process.name", n > 0 ? exe : name);
	add_prop("process.cmdline", cmdline ? cmdline : "");
	add_prop("process.pid", pid);
	add_prop("tracekit.layer.version", TRACE_TOOL_VERSION);
	add_prop("tracekit.layer", TK_LAYER_NAME);
	pthread_mutex_unlock(&out.lock);
	free(cmdline);

	sem_init(&out.flushed, 0, 0);
	pthread_key_create(&spare_key, free_spares);
	prefetchw_probe();
	out.running = true;
	atomic_store(&tracing, true);
	if (pthread_create(&out.thread, NULL, writer_main, NULL) != 0) {
		out.running = false;
		atomic_store(&tracing, false);
		fprintf(stderr, "tracekit: cannot start the writer thread; the application runs untraced\n");
		return;
	}
	out.started = true;
	atexit(finish);
	pthread_atfork(NULL, NULL, forked);
	tk_endings_start();
}

void tk_output_start(void)
{
	pthread_once(&start_once, start);
}

void tk_output_describe(tk_device *dev)
{
	VkPhysicalDeviceProperties p;
	dev->inst->disp.vkGetPhysicalDeviceProperties(dev->physical, &p);
	const VkPhysicalDeviceMemoryProperties *m = &dev->memprops;
	char buf[2048];
	pthread_mutex_lock(&out.lock);
	if (out.header_ready) {
		pthread_mutex_unlock(&out.lock);
		return;
	}
	add_prop("device.name", p.deviceName);
	snprintf(buf, sizeof(buf), "0x%04x", p.vendorID);
	add_prop("device.vendor", buf);
	snprintf(buf, sizeof(buf), "0x%04x", p.deviceID);
	add_prop("device.id", buf);
	snprintf(buf, sizeof(buf), "%u", p.deviceType);
	add_prop("device.type", buf);
	snprintf(buf, sizeof(buf), "%u.%u.%u", VK_API_VERSION_MAJOR(p.apiVersion),
		 VK_API_VERSION_MINOR(p.apiVersion), VK_API_VERSION_PATCH(p.apiVersion));
	add_prop("device.api_version", buf);
	snprintf(buf, sizeof(buf), "0x%08x", p.driverVersion);
	add_prop("device.driver_version", buf);
	size_t k = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < m->memoryHeapCount && k < sizeof(buf) - 64; i++)
		k += snprintf(buf + k, sizeof(buf) - k, "%s%u: size %llu flags 0x%x", i ? "; " : "", i,
			      (unsigned long long)m->memoryHeaps[i].size, m->memoryHeaps[i].flags);
	add_prop("memory.heaps", buf);
	k = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < m->memoryTypeCount && k < sizeof(buf) - 64; i++)
		k += snprintf(buf + k, sizeof(buf) - k, "%s%u: heap %u flags 0x%x", i ? "; " : "", i,
			      m->memoryTypes[i].heapIndex, m->memoryTypes[i].propertyFlags);
	add_prop("memory.types", buf);
	const VkPhysicalDeviceLimits *l = &p.limits;
#define LIMIT(field, fmt, cast)                                        \
	snprintf(buf, sizeof(buf), fmt, (cast)l->field);               \
	add_prop("limits." #field, buf);
	LIMIT(maxImageDimension2D, "%u", unsigned)
	LIMIT(maxMemoryAllocationCount, "%u", unsigned)
	LIMIT(maxUniformBufferRange, "%u", unsigned)
	LIMIT(maxStorageBufferRange, "%u", unsigned)
	LIMIT(bufferImageGranularity, "%llu", unsigned long long)
	LIMIT(nonCoherentAtomSize, "%llu", unsigned long long)
	LIMIT(minMemoryMapAlignment, "%llu", unsigned long long)
	LIMIT(minUniformBufferOffsetAlignment, "%llu", unsigned long long)
	LIMIT(timestampPeriod, "%g", double)
#undef LIMIT
	out.header_ready = true;
	pthread_cond_signal(&out.more);
	pthread_mutex_unlock(&out.lock);
}
