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
#include "records.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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
/* The header waits this long at most for the first device (header_ready). */
#define TK_HEADER_WAIT_MS 2000
static long flush_ms = TK_FLUSH_MS;
/* Records this old not yet handed to the trace writer make application
 * threads wait for it: at SCHED_IDLE on a machine the program keeps
 * busy, the writer can fall seconds behind, all of it lost to a kill.
 * Checked every TK_STALE_EVERY records. */
#define TK_STALE_MS 100
#define TK_STALE_EVERY 64

/* ------------------------------------------------------------------ */
/* The output: a queue of records and the thread that writes them. */

#define TK_MAX_PROPS 48

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more, room;
	tk_rec *head, *tail;
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
		tk_rec_free(r);
	} else if (r->leave) {
		tk_rec_free(r->enter);
		tk_rec_free(r);
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
	/* the writer sleeps until the first record, then until a batch */
	if (++out.nqueued == 1 || out.nqueued == TK_WAKE_RECORDS ||
	    (out.queued >= TK_WAKE_BYTES && out.queued - bytes < TK_WAKE_BYTES))
		pthread_cond_signal(&out.more);
	pthread_mutex_unlock(&out.lock);
}

static tk_rec *enter_rec(const vk_command_info *cmd, const void *args)
{
	tk_rec *r = tk_rec_new();
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
	tk_rec *r = tk_rec_new();
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
	uint8_t *own = size >= TK_BLOCK_MIN ? tk_block_take(size, &cap) : malloc(size ? size : 1);
	if (!own) {
		atomic_store(&tracing, false);
		fprintf(stderr, "tracekit: out of memory for %zu bytes of an update; the trace "
			"stops here, the application runs on untraced\n", size);
		return NULL;
	}
	tk_rec *e = tk_rec_new();
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
			tk_rec_retire(done, r);
			return -1;
		}
		trace_call leave = { .no = r->call.no, .thread = r->call.thread, .sig = &no_outputs };
		int rc = trace_writer_leave(out.w, &leave, err);
		tk_rec_retire(done, r);
		return rc;
	}
	if (!r->leave)
		return trace_writer_enter(out.w, &r->call, err);
	r->call.no = r->enter->call.no;
	int rc = trace_writer_leave(out.w, &r->call, err);
	tk_rec_retire(done, r->enter);
	tk_rec_retire(done, r);
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

/* Under out.lock: whether the records may go, the header with them.  It
 * waits for the first device's properties (tk_output_describe), but no
 * longer than TK_HEADER_WAIT_MS after the first record: a process that
 * makes an instance and no device yet (Chromium's GPU process looks at
 * the device first; a program that loads for a while) left nothing in
 * its file when killed.  The header then goes without them.  (The
 * loader's vkCreateInstance alone takes 0.1 s here, loading every
 * driver, and more on a loaded machine.) */
static bool header_ready(void)
{
	if (!out.header_ready && out.head && now_ms() - out.head_ms >= TK_HEADER_WAIT_MS)
		out.header_ready = true;
	return out.header_ready;
}

/*
 * Under out.lock: until there is work.  Records come in batches: after
 * the first, a batch's worth or TK_WAKE_MS; else a flush asked for, the
 * end, or FLUSH_AT (NULL: nothing waits in the chunk).
 */
static void wait_for_work(const struct timespec *flush_at)
{
	bool waited = false;
	while (!out.stop && out.flush_asked == out.flush_done) {
		bool batch = out.head && header_ready();
		if (batch && (waited || out.queued >= TK_WAKE_BYTES || out.nqueued >= TK_WAKE_RECORDS))
			return;
		struct timespec until;
		if (batch) {
			deadline_in(&until, TK_WAKE_MS);
			if (flush_at && before(flush_at, &until))
				until = *flush_at;
		} else if (flush_at) {
			until = *flush_at;
		} else if (out.head) {
			deadline_in(&until, TK_WAKE_MS); /* records wait for the header */
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
	tk_spares_keep(done);
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
	tk_records_end();
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

/*
 * FD, the output, locked for this process; where another process holds
 * it (a program that starts another Vulkan program, which inherits
 * TRACEKIT_OUTPUT: Hedgewars' Qt front end and its engine), a file of
 * this one's instead, NAME.PID.trace: the second truncated the first's
 * file and the first then wrote at its own offset, and both traces were
 * lost.  *MADE: whether the file is new.
 */
static int own_output(int fd, bool *made)
{
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
		return fd;
	close(fd);
	const char *dot = strrchr(out.path, '.');
	size_t stem = dot && !strcmp(dot, ".trace") ? (size_t)(dot - out.path) : strlen(out.path);
	size_t len = strlen(out.path) + 32;
	char *mine = malloc(len);
	if (!mine)
		return -1;
	snprintf(mine, len, "%.*s.%ld.trace", (int)stem, out.path, (long)getpid());
	fprintf(stderr, "tracekit: %s is being written by another process; this one (pid %ld) "
		"writes %s\n", out.path, (long)getpid(), mine);
	free(out.path);
	out.path = mine;
	*made = true;
	fd = open(out.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd >= 0)
		flock(fd, LOCK_EX | LOCK_NB);
	return fd;
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
	fd = own_output(fd, &made);
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
	tk_records_init();
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
