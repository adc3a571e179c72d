/*
 * Opening a stream: the container from the first bytes of the input,
 * then the encoding from the first byte inside it ('{' is text, anything
 * else the binary format), so even a gzip-compressed text trace reads.
 *
 * A trace cut off (the capture killed, the disk full) reads to its last
 * whole record; the reader then holds the one warning that says so.
 */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct decode_ahead decode_ahead;

struct trace_reader {
	trace_source src;
	trace_sigtab *sigs;
	trace_header header;
	trace_arena header_arena;
	trace_format format;
	trace_binreader *bin;
	trace_textreader *text;
	char *name;
	int64_t last_no;   /* the last complete call returned, or -1 */
	bool end_due;      /* the header promises a TRACE_END record */
	bool end_seen;     /* and it came */
	trace_error cut;   /* the warning, once the end of a cut trace is read */
	int index;         /* the seek index: 0 not looked for, 1 loaded, -1 none */
	trace_seekindex ix;
	int64_t jumped;    /* the stream offset of the last jump, or -1 */
	decode_ahead *ahead; /* records decoded on a thread (trace_reader_decode_ahead) */
};

static trace_reader *open_source(trace_reader *r, trace_error *err)
{
	r->src.name = r->name;
	r->last_no = -1;
	r->jumped = -1;
	trace_error_clear(&r->cut);
	r->sigs = trace_sigtab_new();
	trace_arena_init(&r->header_arena);
	if (trace_source_open(&r->src, err) < 0)
		goto fail;
	if (trace_source_need(&r->src, 1, err) < 0)
		goto fail;
	if (r->src.p == r->src.end) {
		trace_error_clear(err);
		trace_source_locate(&r->src, err, 0);
		if (r->src.cut)
			trace_error_set(err, "truncated %s stream: it ends before the trace's "
					"header (the capture was cut off)",
					trace_format_name(r->src.container));
		else
			trace_error_set(err, "empty %s stream: not a trace",
					trace_format_name(r->src.container));
		goto fail;
	}
	const uint8_t *p = r->src.p;
	if (r->src.end - p >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		r->src.p += 3; /* a byte order mark an editor left */
	if (*p == '{' || *p == '#' || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' ||
	    *p == 0xef) {
		r->format = TRACE_FMT_TEXT;
		r->text = trace_textreader_new(&r->src, r->sigs);
		if (trace_textreader_header(r->text, &r->header, &r->header_arena, err) < 0)
			goto fail;
	} else {
		r->format = r->src.container == TRACE_FMT_TEXT ? TRACE_FMT_RAW : r->src.container;
		r->bin = trace_binreader_new(&r->src, r->sigs);
		if (trace_binreader_header(r->bin, &r->header, &r->header_arena, err) < 0)
			goto fail;
	}
	r->end_due = trace_header_get(&r->header, TRACE_END) != NULL;
	return r;
fail:
	trace_reader_close(r);
	return NULL;
}

trace_reader *trace_reader_open_file(FILE *f, const char *name, trace_error *err)
{
	trace_reader *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->name = trace_xstrdup(name ? name : "-");
	r->src.file = f;
	return open_source(r, err);
}

trace_reader *trace_reader_open(const char *path, trace_error *err)
{
	const char *name;
	FILE *f = trace_open_input(path, &name, err);
	if (!f)
		return NULL;
	trace_reader *r = trace_reader_open_file(f, name, err);
	if (f == stdin)
		return r;
	if (r)
		r->src.own_file = true;
	else
		fclose(f);
	return r;
}

trace_reader *trace_reader_open_memory(const void *data, size_t size, const char *name,
				       trace_error *err)
{
	trace_reader *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->name = trace_xstrdup(name ? name : "memory");
	r->src.mem = data;
	r->src.memsize = size;
	return open_source(r, err);
}

const trace_header *trace_reader_header(trace_reader *r) { return &r->header; }
trace_format trace_reader_format(trace_reader *r) { return r->format; }
trace_sigtab *trace_reader_sigtab(trace_reader *r) { return r->sigs; }

/* The warning of a trace cut off, read to its end. */
static void describe_cut(trace_reader *r)
{
	trace_error *w = &r->cut;
	/* all of the input was read: where it ends (a memory block is the
	 * window itself, not read through) */
	uint64_t end = r->src.mem ? r->src.memsize : r->src.inpos;
	snprintf(w->file, sizeof(w->file), "%s", r->name);
	w->file_offset = (int64_t)end;
	w->call = r->last_no;
	char after[48] = "before its first call";
	if (r->last_no >= 0)
		snprintf(after, sizeof(after), "after call %lld", (long long)r->last_no);
	trace_error_set(w, "trace ends mid-record at byte %llu %s: the capture was cut off",
			(unsigned long long)end, after);
}

static int next_record(trace_reader *r, trace_call **call, trace_error *err)
{
	return r->text ? trace_textreader_next(r->text, call, err)
		       : trace_binreader_next(r->bin, call, err);
}

/* A record that does not read after a jump may be the index's doing (a
 * point that is not a record's start): the message says where it went. */
static void after_jump(trace_reader *r, trace_error *err)
{
	size_t n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, " (read from stream byte %lld, where the "
		 "seek index sent it; TRACE_SEEK=0 reads from the start)", (long long)r->jumped);
}

static int read_next(trace_reader *r, trace_call **call, trace_error *err)
{
	int k = next_record(r, call, err);
	/* (the first letter first: this runs for every record) */
	if (k > 0 && r->end_due && (*call)->sig->name[0] == TRACE_END[0] &&
	    !strcmp((*call)->sig->name, TRACE_END)) {
		r->end_seen = true;
		k = next_record(r, call, err);
	}
	if (k > 0 && !((*call)->flags & TRACE_CALL_INCOMPLETE))
		r->last_no = (int64_t)(*call)->no;
	else if (k == 0 && (r->src.cut || (r->end_due && !r->end_seen)) && !r->cut.msg[0])
		describe_cut(r);
	else if (k < 0 && r->jumped >= 0)
		after_jump(r, err);
	return k;
}

/* ------------------------------------------------------------------ */
/*
 * Decoding ahead: a thread reads and decodes the records (and runs the
 * caller's hook on each) while the caller works on earlier ones, so that
 * a replay bound by its own CPU pays for its driver calls and checks, not
 * for the decoding.  The thread hands records over through a ring of
 * slots; a slot's call goes back to the thread's free calls once the
 * caller asked for the next.  Either side spins, then sleeps, where the
 * other is behind: the thread wakes a caller asleep once AHEAD_BATCH
 * records wait (or before it sleeps itself), the caller wakes a thread
 * asleep once half the ring is free, not at every record.
 */
#define AHEAD_SLOTS 256u            /* a power of two */
#define AHEAD_BYTES ((size_t)64 << 20) /* records' arenas held ahead */
#define AHEAD_SPIN 100
/* The caller spins longer before it sleeps: a thread as quick as it is
 * (reading and decoding take about what replaying takes, mpv on an H100)
 * catches up in microseconds, and a wake-up costs tens of them. */
#define AHEAD_SPIN_CALLER 4000
/* A caller asleep is woken once this many records wait for it (or the
 * last one, or the thread may be about to wait for input itself). */
#define AHEAD_BATCH 32
/* The bytes of the next record asked for ahead of the caller's reading. */
#define AHEAD_PREFETCH 2048
#define AHEAD_PREFETCH_DECODED 256
/* The cores from which the hook gets a thread of its own (hook_main). */
#define HOOK_THREAD_CORES 8

/* One turn of a spin: the CPU told, where it has a way. */
static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

typedef struct ahead_slot {
	trace_call *call; /* NULL: the end (k of the thread's last read) */
	uint64_t pos;     /* input consumed once it was read */
	size_t bytes;
	bool last;        /* the input read to its end so far */
} ahead_slot;

/*
 * What each side writes lies on cache lines of its own (a line written by
 * one core and read by the other moves between them; head, tail and a
 * byte count both sides changed lay on one line before).  Each side reads
 * the other's counters only when its own copy of them says it must wait:
 * the counts only grow, so a copy never says there is more than there is.
 */
#define LINE 64

struct decode_ahead {
	/* the thread's: written for each record */
	_Alignas(LINE) _Atomic uint64_t head; /* slots filled */
	_Atomic uint64_t bytes_in;  /* records' bytes in the slots filled */
	uint64_t tail_seen, out_seen; /* the caller's tail and bytes_out, as last read */
	_Atomic uint64_t full, full_slept; /* its waits */
	int end;                   /* the last read's result (0 or -1) */
	/* the caller's: written for each record */
	_Alignas(LINE) _Atomic uint64_t tail; /* slots given back */
	_Atomic uint64_t bytes_out; /* their bytes */
	uint64_t next;             /* the slot it reads next */
	uint64_t seen;             /* head as it last loaded it */
	bool holding;              /* slot next - 1 is its current record */
	bool ended;                /* it was given the end */
	uint64_t pos;
	uint64_t empty, empty_slept; /* its waits */
	uint64_t empty_ns;         /* and their time */
	/* the hook thread's (where there is one): written for each record */
	_Alignas(LINE) _Atomic uint64_t hooked; /* slots whose hook ran */
	uint64_t head_seen;        /* head as it last loaded it */
	_Atomic uint64_t hook_idle, hook_slept; /* its waits */
	/* written rarely: at a wait, the start and the end */
	_Alignas(LINE) _Atomic bool stop;
	_Atomic bool hook_waits;
	bool hook_thread_on;       /* the hook runs on a thread of its own */
	pthread_t hook_thread;
	pthread_cond_t work;       /* the hook thread's: records read */
	_Atomic bool caller_waits, thread_waits;
	_Atomic uint64_t wake_at;  /* head that wakes the caller asleep */
	size_t limit;              /* AHEAD_BYTES (TRACE_DECODE_AHEAD_BYTES: tests) */
	trace_decode_hook hook;    /* run on each record read, with ctx */
	void *ctx;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t filled, emptied;
	trace_error err;           /* the last read's error */
	_Alignas(LINE) ahead_slot slot[AHEAD_SLOTS];
};

/* Whether the thread, asleep for want of room, may go on: half the ring
 * and half the bytes free (or nothing held at all). */
static bool ahead_roomy(decode_ahead *a, uint64_t head)
{
	uint64_t tail = atomic_load(&a->tail);
	uint64_t held = atomic_load(&a->bytes_in) - atomic_load(&a->bytes_out);
	return head == tail || (head - tail <= AHEAD_SLOTS / 2 && held <= a->limit / 2);
}

static bool full_as_seen(const decode_ahead *a, uint64_t head)
{
	uint64_t held = atomic_load_explicit(&a->bytes_in, memory_order_relaxed) - a->out_seen;
	return head - a->tail_seen >= AHEAD_SLOTS || (head != a->tail_seen && held >= a->limit);
}

/* The thread's: whether the ring is full, the caller's counters read
 * again only where they were last seen so. */
static bool ahead_full(decode_ahead *a, uint64_t head)
{
	if (!full_as_seen(a, head))
		return false;
	a->tail_seen = atomic_load(&a->tail);
	a->out_seen = atomic_load(&a->bytes_out);
	return full_as_seen(a, head);
}

static void *ahead_main(void *arg)
{
	trace_reader *r = arg;
	decode_ahead *a = r->ahead;
	pthread_setname_np(pthread_self(), "tracekit-decode");
	for (uint64_t head = 0;; head++) {
		if (ahead_full(a, head)) {
			atomic_fetch_add_explicit(&a->full, 1, memory_order_relaxed);
			for (int i = 0; i < AHEAD_SPIN && ahead_full(a, head); i++)
				spin_pause();
			if (!ahead_full(a, head))
				goto room;
			atomic_fetch_add_explicit(&a->full_slept, 1, memory_order_relaxed);
			pthread_mutex_lock(&a->lock);
			/* a caller asleep waits for AHEAD_BATCH records: full of
			 * bytes before them, the thread wakes it first */
			pthread_cond_signal(&a->filled);
			atomic_store(&a->thread_waits, true);
			while (!atomic_load(&a->stop) && !ahead_roomy(a, head))
				pthread_cond_wait(&a->emptied, &a->lock);
			atomic_store(&a->thread_waits, false);
			pthread_mutex_unlock(&a->lock);
		}
	room:
		if (atomic_load(&a->stop))
			return NULL;
		ahead_slot *s = &a->slot[head % AHEAD_SLOTS];
		if (s->call) /* given back a ring ago */
			trace_binreader_give_back(r->bin, s->call);
		trace_call *c;
		int k = read_next(r, &c, &a->err);
		s->call = k > 0 ? trace_binreader_keep(r->bin) : NULL;
		if (s->call && a->hook && !a->hook_thread_on)
			s->call->decoded = a->hook(a->ctx, s->call);
		s->pos = r->src.inpos;
		s->bytes = k > 0 ? c->arena.total : 0;
		s->last = r->src.p == r->src.end;
		if (k <= 0)
			a->end = k;
		atomic_store_explicit(&a->bytes_in,
				      atomic_load_explicit(&a->bytes_in, memory_order_relaxed) +
					      s->bytes, memory_order_relaxed);
		atomic_store_explicit(&a->head, head + 1, memory_order_release);
		/* the store seen before caller_waits is read: else both may
		 * read the other's old value (a store and a later load of
		 * another variable pass each other on x86) */
		atomic_thread_fence(memory_order_seq_cst);
		if (a->hook_thread_on ? atomic_load(&a->hook_waits) :
		    atomic_load(&a->caller_waits) &&
		    (head + 1 >= atomic_load(&a->wake_at) || k <= 0 || s->last)) {
			pthread_mutex_lock(&a->lock);
			pthread_cond_signal(a->hook_thread_on ? &a->work : &a->filled);
			pthread_mutex_unlock(&a->lock);
		}
		if (k <= 0)
			return NULL;
	}
}

/* The hook thread's: waits for slot H read. */
static void hook_wait(decode_ahead *a, uint64_t h)
{
	atomic_fetch_add_explicit(&a->hook_idle, 1, memory_order_relaxed);
	for (int i = 0; i < AHEAD_SPIN_CALLER; i++) {
		if ((a->head_seen = atomic_load(&a->head)) > h || atomic_load(&a->stop))
			return;
		spin_pause();
	}
	atomic_fetch_add_explicit(&a->hook_slept, 1, memory_order_relaxed);
	pthread_mutex_lock(&a->lock);
	atomic_store(&a->hook_waits, true);
	while (!atomic_load(&a->stop) && (a->head_seen = atomic_load(&a->head)) <= h)
		pthread_cond_wait(&a->work, &a->lock);
	atomic_store(&a->hook_waits, false);
	pthread_mutex_unlock(&a->lock);
}

/*
 * The hook on a thread of its own, where the cores allow (16 on an H100's
 * machine): reading a record and decoding its arguments took one thread
 * about as long as the replay took to replay it (mpv, callgrind on
 * llvmpipe: 4,700 instructions a record against the replay thread's
 * 2,200, llvmpipe's recording of the commands among them), so on an H100
 * the replay waited for it in most runs, 5 to 47 ms of mpv's 55 to 100 ms
 * of frames.  The reading thread reads; this
 * one runs the hook on each slot read, in order, and wakes the caller.
 */
static void *hook_main(void *arg)
{
	trace_reader *r = arg;
	decode_ahead *a = r->ahead;
	pthread_setname_np(pthread_self(), "tracekit-hook");
	for (uint64_t h = 0;; h++) {
		if (a->head_seen <= h && (a->head_seen = atomic_load(&a->head)) <= h)
			hook_wait(a, h);
		if (atomic_load(&a->stop))
			return NULL;
		/* (the slot read before it is handed over: the caller may give
		 * it back, and the reading thread fill it again, at once) */
		const ahead_slot *s = &a->slot[h % AHEAD_SLOTS];
		trace_call *c = s->call;
		bool last = s->last;
		if (c)
			c->decoded = a->hook(a->ctx, c);
		atomic_store_explicit(&a->hooked, h + 1, memory_order_release);
		atomic_thread_fence(memory_order_seq_cst);
		/* (as the reading thread does without it; and where this one
		 * caught up with the reading, which may be about to wait) */
		if (atomic_load(&a->caller_waits) &&
		    (h + 1 >= atomic_load(&a->wake_at) || !c || last ||
		     atomic_load(&a->head) == h + 1)) {
			pthread_mutex_lock(&a->lock);
			pthread_cond_signal(&a->filled);
			pthread_mutex_unlock(&a->lock);
		}
		if (!c)
			return NULL;
	}
}

/* The slots the caller may take: read, and hooked where a thread hooks. */
static inline uint64_t ahead_ready(decode_ahead *a)
{
	return atomic_load(a->hook_thread_on ? &a->hooked : &a->head);
}

/* The caller's next record from the ring. */
static int ahead_next(trace_reader *r, trace_call **call, trace_error *err)
{
	decode_ahead *a = r->ahead;
	if (a->holding) {
		a->holding = false;
		atomic_store_explicit(&a->bytes_out,
				      atomic_load_explicit(&a->bytes_out, memory_order_relaxed) +
					      a->slot[(a->next - 1) % AHEAD_SLOTS].bytes,
				      memory_order_relaxed);
		atomic_store_explicit(&a->tail, a->next, memory_order_release);
		/* the room made seen before thread_waits is read: else the
		 * thread, going to sleep, could see the old tail while this
		 * saw it awake, and both sleep for good (a fuzz run hung so,
		 * one run in many) */
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load(&a->thread_waits) && ahead_roomy(a, atomic_load(&a->head))) {
			pthread_mutex_lock(&a->lock);
			pthread_cond_signal(&a->emptied);
			pthread_mutex_unlock(&a->lock);
		}
	}
	if (a->next == a->seen && (a->seen = ahead_ready(a)) == a->next) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		a->empty++;
		for (int i = 0; i < AHEAD_SPIN_CALLER && (a->seen = ahead_ready(a)) == a->next; i++)
			spin_pause();
		if (a->next == a->seen) {
			a->empty_slept++;
			pthread_mutex_lock(&a->lock);
			atomic_store(&a->wake_at, a->next + AHEAD_BATCH);
			atomic_store(&a->caller_waits, true);
			while ((a->seen = ahead_ready(a)) == a->next)
				pthread_cond_wait(&a->filled, &a->lock);
			atomic_store(&a->caller_waits, false);
			pthread_mutex_unlock(&a->lock);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		a->empty_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000 +
					  (t1.tv_nsec - t0.tv_nsec));
	}
	const ahead_slot *s = &a->slot[a->next % AHEAD_SLOTS];
	a->pos = s->pos;
	if (!s->call) {
		a->ended = true;
		if (a->end < 0)
			*err = a->err;
		return a->end;
	}
	a->next++;
	a->holding = true;
	*call = s->call;
	/* what the thread filled on its core, asked for ahead of the reading
	 * here (cache misses on the records' values were most of what
	 * reading them cost the caller): slots 8 on, the call 2 on, and the
	 * next one's bytes, its call read now that it was asked for a record
	 * ago (read as it was asked for, it cost the replay a wait on the
	 * other core's line a record: 18% of mpv's time on an H100, sampled) */
	uint64_t seen = a->seen;
	if (a->next + 8 < seen)
		__builtin_prefetch(&a->slot[(a->next + 8) % AHEAD_SLOTS]);
	if (a->next + 1 < seen) {
		const trace_call *n2 = a->slot[(a->next + 1) % AHEAD_SLOTS].call;
		if (n2) {
			__builtin_prefetch(n2);
			__builtin_prefetch((const char *)n2 + 64);
		}
	}
	if (a->next < seen) {
		const trace_call *n = a->slot[a->next % AHEAD_SLOTS].call;
		if (n) {
			trace_arena_prefetch(&n->arena, AHEAD_PREFETCH);
			/* and what the hook made of it (the replay's decoded
			 * arguments: their first touch was 2.7% of its time) */
			for (size_t at = 0; n->decoded && at < AHEAD_PREFETCH_DECODED; at += 64)
				__builtin_prefetch((const char *)n->decoded + at);
		}
	}
	return 1;
}

/* Stops the threads (the reading one where it started) and frees it all. */
static void ahead_free(trace_reader *r, bool reading)
{
	decode_ahead *a = r->ahead;
	pthread_mutex_lock(&a->lock);
	atomic_store(&a->stop, true);
	pthread_cond_signal(&a->emptied);
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
	if (reading)
		pthread_join(a->thread, NULL);
	if (a->hook_thread_on)
		pthread_join(a->hook_thread, NULL);
	for (size_t i = 0; i < AHEAD_SLOTS; i++)
		if (a->slot[i].call)
			trace_binreader_give_back(r->bin, a->slot[i].call);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->filled);
	pthread_cond_destroy(&a->emptied);
	pthread_cond_destroy(&a->work);
	free(a);
	r->ahead = NULL;
}

int trace_reader_decode_ahead(trace_reader *r, trace_decode_hook hook, void *ctx)
{
	const char *env = getenv("TRACE_DECODE_AHEAD");
	struct stat st;
	if (r->ahead || !r->bin)
		return 0;
	/* by default where the cores leave the thread one of its own: on an
	 * H100's 16, mpv's replay (its arguments decoded on the thread too)
	 * ran 9,334 frames/s at the median against 6,592; on 2, where the
	 * sides waited for each other, --check of its trace took 1.4-2x as
	 * long */
	if (env && *env ? !strcmp(env, "0") : sysconf(_SC_NPROCESSORS_ONLN) < 4)
		return 0;
	/* a thread that may block on a pipe could not be stopped */
	if (!r->src.mem && (!r->src.file || fstat(fileno(r->src.file), &st) < 0 ||
			    !S_ISREG(st.st_mode)))
		return 0;
	decode_ahead *a = aligned_alloc(LINE, sizeof(*a));
	if (!a)
		return 0;
	memset(a, 0, sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->filled, NULL);
	pthread_cond_init(&a->emptied, NULL);
	pthread_cond_init(&a->work, NULL);
	trace_error_clear(&a->err);
	const char *lim = getenv("TRACE_DECODE_AHEAD_BYTES");
	a->limit = lim && *lim ? (size_t)strtoull(lim, NULL, 10) : AHEAD_BYTES;
	a->hook = hook;
	a->ctx = ctx;
	a->pos = r->src.inpos;
	r->ahead = a;
	/* the hook on a thread of its own where the cores leave one
	 * (TRACE_DECODE_HOOK_THREAD=0 or 1 says so instead: measuring, tests) */
	const char *ht = getenv("TRACE_DECODE_HOOK_THREAD");
	bool hook_thread = hook && (ht && *ht ? strcmp(ht, "0") != 0 :
				    sysconf(_SC_NPROCESSORS_ONLN) >= HOOK_THREAD_CORES);
	a->hook_thread_on = hook_thread && !trace_thread_start(&a->hook_thread, hook_main, r);
	if (trace_thread_start(&a->thread, ahead_main, r)) {
		ahead_free(r, false);
		return 0;
	}
	return 1;
}


int trace_reader_next(trace_reader *r, trace_call **call, trace_error *err)
{
	return r->ahead ? ahead_next(r, call, err) : read_next(r, call, err);
}

void trace_reader_ahead_waits(trace_reader *r, trace_ahead_waits *w)
{
	const decode_ahead *a = r->ahead;
	*w = (trace_ahead_waits){0};
	if (!a)
		return;
	w->caller = a->empty;
	w->caller_slept = a->empty_slept;
	w->caller_seconds = (double)a->empty_ns * 1e-9;
	w->thread = atomic_load_explicit(&a->full, memory_order_relaxed);
	w->thread_slept = atomic_load_explicit(&a->full_slept, memory_order_relaxed);
	w->hook_thread = a->hook_thread_on;
	w->hook = atomic_load_explicit(&a->hook_idle, memory_order_relaxed);
	w->hook_slept = atomic_load_explicit(&a->hook_slept, memory_order_relaxed);
}

uint64_t trace_reader_position(trace_reader *r)
{
	return r->ahead ? r->ahead->pos : r->src.inpos;
}

/* How many points lie before the first one a record selected may
 * precede: calls numbered from FIRST_CALL, frames from FIRST_FRAME. */
static size_t points_before(const trace_seekindex *ix, uint64_t first_call,
			    uint64_t first_frame)
{
	size_t lo = 0, hi = ix->nsyncs;
	while (lo < hi) {
		size_t i = (lo + hi) / 2;
		if (ix->syncs[i].call <= first_call || ix->syncs[i].frame < first_frame)
			lo = i + 1;
		else
			hi = i;
	}
	return lo;
}

/* The zstd frame that holds stream byte POS. */
static size_t frame_of(const trace_seekindex *ix, uint64_t pos)
{
	size_t lo = 0, hi = ix->nframes;
	while (lo + 1 < hi) {
		size_t i = (lo + hi) / 2;
		if (ix->out[i] <= pos)
			lo = i;
		else
			hi = i;
	}
	return lo;
}

int trace_reader_skip(trace_reader *r, uint64_t first_call, uint64_t first_frame,
		      trace_skip_point *at, trace_error *err)
{
	if (!r->bin || r->ahead || r->src.container != TRACE_FMT_ZSTD || !r->src.file ||
	    r->src.mem)
		return 0;
	if (!r->index) {
		/* looked for once: TRACE_SEEK=0 reads from the start */
		const char *env = getenv("TRACE_SEEK");
		int k = env && !strcmp(env, "0") ? 0 :
			trace_seekindex_load(fileno(r->src.file), r->name, &r->ix, err);
		if (k < 0)
			return -1;
		r->index = k ? 1 : -1;
	}
	if (r->index < 0 || !trace_binreader_settled(r->bin))
		return 0;
	/* both tests hold on a first run of the points, as calls and frames
	 * only grow: their union is the run of the longer */
	size_t n = points_before(&r->ix, first_call, first_frame);
	if (!n)
		return 0;
	const trace_sync *y = &r->ix.syncs[n - 1];
	size_t f = frame_of(&r->ix, y->pos);
	/* past one zstd frame not begun at least, or reading on is as quick */
	if (r->ix.out[f] <= trace_source_offset(&r->src))
		return 0;
	if (trace_source_jump(&r->src, r->ix.in[f], r->ix.out[f], y->pos - r->ix.out[f],
			      err) < 0)
		return -1;
	if (trace_binreader_jump(r->bin, y->call, r->ix.defs, (size_t)y->defs, err) < 0) {
		char what[sizeof(err->msg)];
		memcpy(what, err->msg, sizeof(what));
		trace_error_set(err, "seek index at file byte %llu, byte %llu of its log of "
				"definitions: %.400s", (unsigned long long)r->ix.defs_at,
				(unsigned long long)err->offset, what);
		err->offset = err->file_offset = err->call = -1;
		return -1;
	}
	r->last_no = (int64_t)y->call - 1;
	r->jumped = (int64_t)y->pos;
	at->call = y->call;
	at->frame = y->frame;
	return 1;
}

const trace_error *trace_reader_cut(trace_reader *r)
{
	/* (the thread may have read to a cut the caller never reached) */
	if (r->ahead && !r->ahead->ended)
		return NULL;
	return r->cut.msg[0] ? &r->cut : NULL;
}

void trace_reader_close(trace_reader *r)
{
	if (!r)
		return;
	if (r->ahead)
		ahead_free(r, true);
	trace_binreader_free(r->bin);
	trace_seekindex_free(&r->ix);
	trace_textreader_free(r->text);
	bool own = r->src.own_file;
	FILE *f = r->src.file;
	r->src.own_file = false;
	trace_source_close(&r->src);
	if (own && f)
		fclose(f);
	trace_sigtab_free(r->sigs);
	trace_arena_free(&r->header_arena);
	free(r->name);
	free(r);
}
