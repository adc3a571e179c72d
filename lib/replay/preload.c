/*
 * Records decoded before they replay: on the reader's thread as it reads
 * ahead (vkr_decode_hook), and with --preload.
 *
 * --preload: the range's records read, copied and decoded into Vulkan's
 * structures before the first of them replays, so that its frames pay
 * for what the calls do and not for reading the trace (gfxrecon-replay's
 * --preload-measurement-range).  Where the replay is bound by its own CPU
 * that is most of a record's cost: on an H100, mpv's 85 records a frame
 * took 0.47 us each to read and 0.37 us to decode, of some 1.2 us.
 *
 * Decoding is the schema's alone (vk_decode_args), so it can be done
 * ahead; handles are made live, and every check made, as each record
 * replays.  A record that does not decode is kept as read: replayed, it
 * stops the replay with the message it stopped it with before, after
 * the records before it.  At most PRELOAD_BYTES are held: what does not
 * fit is read as it replays.
 */
#include "replay_internal.h"

#include <stdlib.h>

#define PRELOAD_BYTES ((size_t)1 << 30)

typedef struct pre_rec {
	trace_call call;  /* its values in the preload's arena */
	cmd_entry *e;     /* with args: the record decoded; else NULL */
	void *args;
	int64_t frame;
	bool ends;        /* it ends its frame */
} pre_rec;

/* A record's Vulkan arguments, decoded on the reader's thread as it reads
 * ahead (trace_reader_decode_ahead): the schema's alone, no state of the
 * replay's, in the record's own arena. */
typedef struct decoded {
	const vk_command_info *cmd;
	void *args;              /* a vk_update where cmd is NULL */
} decoded;

/* C's arguments for CMD, decoded into A; NULL where they do not decode
 * (decoded again as the record replays, which stops there with the
 * message). */
static void *decode_into(const vk_command_info *cmd, const trace_call *c, trace_arena *a,
			 void *args)
{
	trace_error err;
	return vk_decode_args(cmd, c, a, args, &err) < 0 ? NULL : args;
}

/* The commands of the signatures the decoding thread met, looked up once
 * for each (a search of the registry's names cost 7.5% of the thread's
 * work on mpv's trace).  Thread-local: the hook runs on the reader's
 * thread alone, which starts with the cache empty and ends with its
 * reader, so a signature's address is never one of another trace's. */
#define DECODE_CACHE_BITS 8
#define DECODE_CACHE (1 << DECODE_CACHE_BITS)
static _Thread_local struct {
	const trace_func_sig *sig[DECODE_CACHE];
	const vk_command_info *cmd[DECODE_CACHE];
} decode_cache;

static const vk_command_info *command_of(const trace_func_sig *sig)
{
	size_t slot = trace_ptr_slot(sig, DECODE_CACHE_BITS);
	if (decode_cache.sig[slot] == sig)
		return decode_cache.cmd[slot];
	const char *name = sig->name;
	const vk_command_info *cmd =
		name[0] == 'v' && name[1] == 'k' ? vk_command_lookup(name) : NULL;
	decode_cache.sig[slot] = sig;
	decode_cache.cmd[slot] = cmd;
	return cmd;
}

/* An update record read, its runs listed (the mask's scan was 60% of
 * what mpv's updates cost the replay's thread). */
static void *update_ahead(trace_call *c)
{
	vk_update *u = trace_arena_alloc(&c->arena, sizeof(*u));
	trace_error err;
	if (vk_update_read(c, u, &err) < 0)
		return NULL;
	vk_update_list(u, &c->arena);
	decoded *d = trace_arena_alloc(&c->arena, sizeof(*d));
	d->cmd = NULL;
	d->args = u;
	return d;
}

void *vkr_decode_hook(void *ctx, trace_call *c)
{
	(void)ctx;
	const char *name = c->sig->name;
	if (name[0] == 't' && vk_is_update(name))
		return update_ahead(c);
	const vk_command_info *cmd = command_of(c->sig);
	if (!cmd)
		return NULL;
	/* the arguments right after what points at them: the reader asks
	 * for both before the replay reads them (trace_reader_next) */
	decoded *d = trace_arena_alloc(&c->arena, sizeof(*d) + cmd->args_size);
	d->cmd = cmd;
	d->args = d + 1;
	return decode_into(cmd, c, &c->arena, d->args) ? d : NULL;
}

void *vkr_decoded_args(const trace_call *c, const cmd_entry *e)
{
	const decoded *d = c->decoded;
	return d && d->cmd == e->cmd ? d->args : NULL;
}

const vk_update *vkr_decoded_update(const trace_call *c)
{
	const decoded *d = c->decoded;
	return d && !d->cmd ? d->args : NULL;
}

/* The bytes a preload may hold (TRACE_REPLAY_PRELOAD_BYTES: for tests). */
static size_t preload_limit(void)
{
	const char *env = getenv("TRACE_REPLAY_PRELOAD_BYTES");
	return env && *env ? (size_t)strtoull(env, NULL, 10) : PRELOAD_BYTES;
}

/* REC's call decoded, where it is a Vulkan command that decodes. */
static void decode_kept(vkr *r, trace_arena *a, pre_rec *rec)
{
	const char *name = rec->call.sig->name;
	if (name[0] == 't' && !strncmp(name, "tracekit.", 9))
		return;
	cmd_entry *e = vkr_entry_of(r, &rec->call);
	if (!e || e->special == SP_SKIP ||
	    !(rec->args = decode_into(e->cmd, &rec->call, a, trace_arena_alloc(a, e->cmd->args_size))))
		return;
	rec->e = e;
}

int vkr_preload(vkr *r, trace_reader *in, trace_call *c, int64_t f, uint64_t *last_whole,
		uint64_t *records)
{
	double t0 = vkr_now_s();
	size_t limit = preload_limit();
	trace_arena a;
	trace_arena_init(&a);
	pre_rec *v = NULL;
	size_t n = 0, cap = 0;
	int k = 1;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			v = trace_xrealloc(v, cap * sizeof(*v));
		}
		pre_rec *p = &v[n++];
		memset(p, 0, sizeof(*p));
		trace_call_copy_into(&a, &p->call, c);
		p->frame = f;
		p->ends = r->frames.ended;
		decode_kept(r, &a, p);
		vkr_watchdog_note(c);
		if ((p->ends && r->opt->last_frame >= 0 && f >= r->opt->last_frame) || r->stop ||
		    a.total >= limit)
			break;
		while ((k = trace_reader_next(in, &c, &r->err)) > 0 &&
		       trace_call_out_of_place(c, last_whole))
			;
		if (k <= 0)
			break;
		r->call = c;
		if ((f = trace_frames_next(&r->frames, c, &r->err)) < 0)
			vkr_fatal(r, "%s", r->err.msg);
		trace_cli_progress(in, ++*records);
	}
	/* (the reader's error, printed once the records before it replayed) */
	trace_error err = r->err;
	r->preload_records += n;
	for (size_t i = 0; i < n; i++)
		r->preload_decoded += v[i].args != NULL;
	r->preload_bytes += a.total;
	/* the range's first frame begins once its records are in */
	r->t_last_frame = vkr_now_s();
	r->preload_s += r->t_last_frame - t0;
	for (size_t i = 0; i < n && !r->stop; i++) {
		pre_rec *p = &v[i];
		r->call = &p->call;
		r->frame = p->frame;
		vkr_replay_decoded(r, &p->call, p->e, p->args);
		trace_arena_reset(&r->arena);
		if (p->ends)
			vkr_frame_ended(r, p->frame);
	}
	r->call = NULL;
	trace_arena_free(&a);
	free(v);
	if (k < 0)
		r->err = err;
	return k;
}
