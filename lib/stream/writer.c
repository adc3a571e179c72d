/*
 * Writing a stream: the binary encoder (apitrace's format, version 6) and
 * the text encoder, behind one trace_writer.
 *
 * Records arrive in the order apitrace's parser returns calls: at their
 * leave.  In the binary format a call's number is implied by the order of
 * enter events, so to keep every number, enters must go out in number
 * order while leaves keep the records' order.  Records that arrive ahead
 * of a smaller number (calls that overlapped on other threads) are held,
 * copied, until the smaller ones come.  Programs that drop records say so
 * with trace_writer_skip(), so their gaps cost nothing; a stream with
 * gaps nobody announced (a hand-edited text) releases its held records
 * after REORDER_WINDOW of them, and the binary then numbers those calls
 * densely, as apitrace's own trim does.
 *
 * A zstd stream also gets tracekit's seek index (seekindex.c): points
 * where no call is between its enter and its leave, with the state a
 * reader needs to start there (the next call number, the frame, and how
 * much of the log of signature definitions comes before).  Every
 * signature's definition is encoded once, into that log, and written to
 * the stream from there.
 */
#include "binformat.h"
#include "frames.h"
#include "internal.h"

#include <stdlib.h>

#define REORDER_WINDOW 16384


typedef struct held {
	trace_call call;   /* a deep copy */
	bool entered;
	uint64_t out_no;
} held;

struct trace_writer {
	trace_format fmt;
	trace_sink k;
	trace_error *err;
	/* binary */
	tmap funcs, structs, enums, bitmasks, frames;
	uint64_t nfuncs, nstructs, nenums, nbitmasks, nframes;
	/* signatures by content: records from two readers, or made by the
	 * schema, share one id per signature (canon pointer -> id) */
	trace_sigtab *canon;
	tmap canon_ids;
	bool by_pointer;     /* trace_writer_options.sigs_by_pointer */
	uint64_t next_no;    /* the next input call number to enter */
	uint64_t out_no;     /* the next output call number */
	held **queue;        /* held records, in arrival order */
	size_t nqueue, cqueue, qhead; /* live entries are queue[qhead..nqueue) */
	tmap waiting;        /* call number + 1 -> held record not yet entered */
	tmap skipped;        /* call numbers + 1 announced as dropped, not reached */
	/* text */
	tbuf line;
	trace_textcache *cache;
	bool end_marker;     /* the header says, and close writes, TRACE_END */
	/* the seek index (zstd only) */
	tbuf defs;           /* each definition: kind, id, its bytes */
	trace_sync *syncs;
	size_t nsyncs, csyncs;
	uint64_t nentered;   /* enter events written: the reader's numbering */
	uint64_t open_calls; /* entered, not left (never, for incomplete ones) */
	uint64_t sync_block; /* the sink's block of the last point */
	trace_frames counter; /* fed each call at its leave, as a reader counts */
	uint64_t last_frame;
	bool no_index;       /* frames went backwards: no point can be trusted */
};

const char *trace_format_name(trace_format f)
{
	switch (f) {
	case TRACE_FMT_SNAPPY: return "snappy";
	case TRACE_FMT_BROTLI: return "brotli";
	case TRACE_FMT_GZIP: return "gzip";
	case TRACE_FMT_RAW: return "none";
	case TRACE_FMT_TEXT: return "text";
	case TRACE_FMT_ZSTD: return "zstd";
	default: return "auto";
	}
}

bool trace_format_is_binary(trace_format f)
{
	return f == TRACE_FMT_SNAPPY || f == TRACE_FMT_BROTLI || f == TRACE_FMT_GZIP ||
	       f == TRACE_FMT_RAW || f == TRACE_FMT_ZSTD;
}

/* ------------------------------------------------------------------ */
/* Primitives. */

static inline int w_bytes(trace_writer *w, const void *p, size_t n)
{
	return trace_sink_write(&w->k, p, n, w->err);
}

static inline int w_byte(trace_writer *w, uint8_t c)
{
	trace_sink *k = &w->k;
	if (TRACE_LIKELY(k->len < k->cap)) {
		k->buf[k->len++] = c;
		return 0;
	}
	return trace_sink_write_slow(k, &c, 1, w->err);
}

static inline int w_uint(trace_writer *w, uint64_t v)
{
	trace_sink *k = &w->k;
	if (TRACE_LIKELY(k->cap - k->len >= 10)) { /* straight into the buffer */
		k->len += trace_uint_encode(k->buf + k->len, v);
		return 0;
	}
	uint8_t tmp[10];
	return w_bytes(w, tmp, trace_uint_encode(tmp, v));
}

static int w_string(trace_writer *w, const char *s, size_t n)
{
	if (w_uint(w, n) < 0)
		return -1;
	return w_bytes(w, s, n);
}

static int w_cstring(trace_writer *w, const char *s)
{
	return w_string(w, s ? s : "", s ? strlen(s) : 0);
}

#define TRY(x)                   \
	do {                     \
		if ((x) < 0)     \
			return -1; \
	} while (0)

/* An id for sig: (id, false) when already written, (id, true) when new.
 * A pointer seen for the first time is looked up by its content (CANON:
 * the signature interned in the writer's own table), so that signatures
 * alike from different tables get one id. */
static const void *canon_of(trace_writer *w, enum sig_kind k, const void *sig)
{
	if (!w->canon)
		w->canon = trace_sigtab_new();
	switch (k) {
	case SK_FUNC: {
		const trace_func_sig *f = sig;
		return trace_sigtab_func(w->canon, f->name, f->nargs,
					 (const char *const *)f->arg_names);
	}
	case SK_STRUCT: {
		const trace_struct_sig *st = sig;
		return trace_sigtab_struct(w->canon, st->name, st->nmembers,
					   (const char *const *)st->member_names);
	}
	case SK_ENUM: {
		const trace_enum_sig *e = sig;
		return trace_sigtab_enum(w->canon, e->nvalues, e->values);
	}
	case SK_BITMASK: {
		const trace_bitmask_sig *b = sig;
		return trace_sigtab_bitmask(w->canon, b->nflags, b->flags);
	}
	default: return trace_sigtab_frame(w->canon, sig);
	}
}

static bool sig_id(trace_writer *w, tmap *m, uint64_t *count, enum sig_kind k, const void *sig,
		   uint64_t *id)
{
	if (tmap_get(m, sig, id))
		return false;
	const void *canon = w->by_pointer ? NULL : canon_of(w, k, sig);
	if (canon && tmap_get(&w->canon_ids, canon, id)) {
		tmap_put(m, sig, *id);
		return false;
	}
	*id = (*count)++;
	tmap_put(m, sig, *id);
	if (canon)
		tmap_put(&w->canon_ids, canon, *id);
	return true;
}

/* The log of definitions: encoded there, then written from there. */
static void d_cstring(tbuf *t, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	tbuf_add_uint(t, n);
	tbuf_add(t, s, n);
}

static void d_sint(tbuf *t, int64_t v)
{
	tbuf_addc(t, v < 0 ? V_SINT : V_UINT);
	tbuf_add_uint(t, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

/* A definition's entry in the log: its kind and id; what follows, up to
 * def_write, is also the stream's. */
static size_t def_begin(trace_writer *w, enum sig_kind k, uint64_t id)
{
	tbuf_addc(&w->defs, (char)k);
	tbuf_add_uint(&w->defs, id);
	return w->defs.len;
}

static int def_write(trace_writer *w, size_t from)
{
	return w_bytes(w, w->defs.data + from, w->defs.len - from);
}

/* A function's or struct's signature id and, the first time it is
 * written, its name and its N argument or member names. */
static int w_named_sig(trace_writer *w, tmap *m, uint64_t *count, enum sig_kind k,
		       const void *sig, const char *name, uint32_t n, const char *const *names)
{
	uint64_t id;
	bool fresh = sig_id(w, m, count, k, sig, &id);
	TRY(w_uint(w, id));
	if (!fresh)
		return 0;
	size_t from = def_begin(w, k, id);
	d_cstring(&w->defs, name);
	tbuf_add_uint(&w->defs, n);
	for (uint32_t i = 0; i < n; i++)
		d_cstring(&w->defs, names[i]);
	return def_write(w, from);
}

static int w_sint(trace_writer *w, int64_t v)
{
	if (v < 0) {
		TRY(w_byte(w, V_SINT));
		return w_uint(w, (uint64_t)0 - (uint64_t)v);
	}
	TRY(w_byte(w, V_UINT));
	return w_uint(w, (uint64_t)v);
}

/*
 * An enum's or a bitmask's tag and signature id and, the first time the
 * signature is written, its entries: a name and a value each, the value
 * encoded by PUT (d_sint for an enum's, tbuf_add_uint for a bitmask's).
 * TABLE and COUNT are the writer's ids of the kind, COUNT_FIELD and LIST the
 * signature's entries.  It uses w_value's w and id.
 */
#define W_NAMED_VALUES(TAG, SIG, TABLE, COUNT, KIND, COUNT_FIELD, LIST, PUT)       \
	do {                                                                      \
		TRY(w_byte(w, TAG));                                              \
		bool fresh = sig_id(w, TABLE, COUNT, KIND, SIG, &id);             \
		TRY(w_uint(w, id));                                               \
		if (fresh) {                                                      \
			size_t from = def_begin(w, KIND, id);                     \
			tbuf_add_uint(&w->defs, (SIG)->COUNT_FIELD);              \
			for (uint32_t i = 0; i < (SIG)->COUNT_FIELD; i++) {       \
				d_cstring(&w->defs, (SIG)->LIST[i].name);         \
				PUT(&w->defs, (SIG)->LIST[i].value);              \
			}                                                         \
			TRY(def_write(w, from));                                  \
		}                                                                 \
	} while (0)

static int w_value(trace_writer *w, const trace_value *v)
{
	uint64_t id;
	switch ((trace_value_kind)v->kind) {
	case TRACE_MISSING:
	case TRACE_NULL:
		return w_byte(w, V_NULL);
	case TRACE_BOOL:
		return w_byte(w, v->b ? V_TRUE : V_FALSE);
	case TRACE_SINT:
		return w_sint(w, v->i);
	case TRACE_UINT:
		TRY(w_byte(w, V_UINT));
		return w_uint(w, v->u);
	case TRACE_FLOAT:
		TRY(w_byte(w, V_FLOAT));
		return w_bytes(w, &v->f, 4);
	case TRACE_DOUBLE:
		TRY(w_byte(w, V_DOUBLE));
		return w_bytes(w, &v->d, 8);
	case TRACE_STRING:
		TRY(w_byte(w, V_STRING));
		return w_string(w, v->str, v->len);
	case TRACE_BLOB:
		TRY(w_byte(w, V_BLOB));
		return w_string(w, (const char *)v->blob, v->len);
	case TRACE_WSTRING:
		TRY(w_byte(w, V_WSTRING));
		TRY(w_uint(w, v->len));
		for (uint32_t i = 0; i < v->len; i++)
			TRY(w_uint(w, v->wstr[i]));
		return 0;
	case TRACE_ENUM:
		W_NAMED_VALUES(V_ENUM, v->en.sig, &w->enums, &w->nenums, SK_ENUM, nvalues, values,
			       d_sint);
		return w_sint(w, v->en.value);
	case TRACE_BITMASK:
		W_NAMED_VALUES(V_BITMASK, v->bm.sig, &w->bitmasks, &w->nbitmasks, SK_BITMASK, nflags,
			       flags, tbuf_add_uint);
		return w_uint(w, v->bm.value);
	case TRACE_ARRAY:
		TRY(w_byte(w, V_ARRAY));
		TRY(w_uint(w, v->len));
		for (uint32_t i = 0; i < v->len; i++)
			TRY(w_value(w, &v->items[i]));
		return 0;
	case TRACE_STRUCT: {
		const trace_struct_sig *sig = v->st.sig;
		TRY(w_byte(w, V_STRUCT));
		TRY(w_named_sig(w, &w->structs, &w->nstructs, SK_STRUCT, sig, sig->name,
				sig->nmembers, (const char *const *)sig->member_names));
		for (uint32_t i = 0; i < sig->nmembers; i++)
			TRY(w_value(w, &v->st.members[i]));
		return 0;
	}
	case TRACE_POINTER:
		TRY(w_byte(w, V_OPAQUE));
		return w_uint(w, v->u);
	case TRACE_REPR:
		TRY(w_byte(w, V_REPR));
		TRY(w_value(w, &v->items[0]));
		return w_value(w, &v->items[1]);
	}
	return w_byte(w, V_NULL);
}

#undef W_NAMED_VALUES

static int w_frame(trace_writer *w, const trace_frame *f)
{
	uint64_t id;
	bool fresh = sig_id(w, &w->frames, &w->nframes, SK_FRAME, f, &id);
	TRY(w_uint(w, id));
	if (!fresh)
		return 0;
	tbuf *d = &w->defs;
	size_t from = def_begin(w, SK_FRAME, id);
	if (f->module) {
		tbuf_addc(d, 1);
		d_cstring(d, f->module);
	}
	if (f->function) {
		tbuf_addc(d, 2);
		d_cstring(d, f->function);
	}
	if (f->filename) {
		tbuf_addc(d, 3);
		d_cstring(d, f->filename);
	}
	if (f->line >= 0) {
		tbuf_addc(d, 4);
		tbuf_add_uint(d, (uint64_t)f->line);
	}
	if (f->offset >= 0) {
		tbuf_addc(d, 5);
		tbuf_add_uint(d, (uint64_t)f->offset);
	}
	tbuf_addc(d, 0);
	return def_write(w, from);
}

/* ------------------------------------------------------------------ */
/* Points of the seek index. */

/* At most one point per this much of the stream, and per zstd frame. */
#define SYNC_SPACING (64u << 10)

/* Before an enter: a point here when no call is open and the sink began
 * a frame since the last point. */
static void sync_point(trace_writer *w)
{
	const trace_sink *k = &w->k;
	uint64_t pos = k->written + k->len;
	if (w->open_calls || w->no_index)
		return;
	if (w->nsyncs && (k->written == w->sync_block ||
			  pos - w->syncs[w->nsyncs - 1].pos < SYNC_SPACING))
		return;
	if (w->nsyncs == w->csyncs) {
		w->csyncs = w->csyncs ? 2 * w->csyncs : 64;
		w->syncs = trace_xrealloc(w->syncs, w->csyncs * sizeof(*w->syncs));
	}
	w->syncs[w->nsyncs++] = (trace_sync){pos, w->nentered, w->counter.frame, w->defs.len};
	w->sync_block = k->written;
}

/* The shortest stream given a seek index: 16 MiB (seekindex.c), or
 * TRACE_SEEK_INDEX_MIN bytes (for tests). */
static uint64_t index_min(void)
{
	const char *env = getenv("TRACE_SEEK_INDEX_MIN");
	char *end;
	unsigned long long v = env ? strtoull(env, &end, 10) : 0;
	return env && *env && !*end ? v : 16u << 20;
}

/* A call's leave was written: the frame counter sees it, as a reader's
 * would, in the order of leaves. */
static void sync_left(trace_writer *w, const trace_call *c)
{
	w->open_calls--;
	if (w->fmt != TRACE_FMT_ZSTD || w->no_index)
		return;
	trace_error ignored;
	int64_t f = trace_frames_next(&w->counter, c, &ignored);
	if (f < 0 || (uint64_t)f < w->last_frame)
		w->no_index = true;
	else
		w->last_frame = (uint64_t)f;
}

/* The enter event: as apitrace writes it, flags and backtrace first. */
static int w_enter(trace_writer *w, const trace_call *c)
{
	const trace_func_sig *sig = c->sig;
	if (w->fmt == TRACE_FMT_ZSTD)
		sync_point(w);
	w->nentered++;
	w->open_calls++;
	TRY(w_byte(w, EV_ENTER));
	TRY(w_uint(w, c->thread));
	TRY(w_named_sig(w, &w->funcs, &w->nfuncs, SK_FUNC, sig, sig->name, sig->nargs,
			(const char *const *)sig->arg_names));
	if (c->flags & TRACE_CALL_FAKE) {
		TRY(w_byte(w, D_FLAGS));
		TRY(w_uint(w, 1));
	}
	if (c->nframes) {
		TRY(w_byte(w, D_BACKTRACE));
		TRY(w_uint(w, c->nframes));
		for (uint32_t i = 0; i < c->nframes; i++)
			TRY(w_frame(w, c->backtrace[i]));
	}
	for (uint32_t i = 0; i < sig->nargs; i++) {
		if (c->args[i].kind == TRACE_MISSING)
			continue;
		TRY(w_byte(w, D_ARG));
		TRY(w_uint(w, i));
		TRY(w_value(w, &c->args[i]));
	}
	return w_byte(w, D_END);
}

static int w_leave(trace_writer *w, const trace_call *c, uint64_t no)
{
	/* a call that never returned has no leave: the reader flags it again */
	if (c->flags & TRACE_CALL_INCOMPLETE)
		return 0;
	TRY(w_byte(w, EV_LEAVE));
	TRY(w_uint(w, no));
	if (c->ret) {
		TRY(w_byte(w, D_RET));
		TRY(w_value(w, c->ret));
	}
	TRY(w_byte(w, D_END));
	sync_left(w, c);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Deep copies, for held records. */

static void copy_value(trace_arena *a, trace_value *dst, const trace_value *src)
{
	*dst = *src;
	switch ((trace_value_kind)src->kind) {
	case TRACE_STRING:
		dst->str = trace_arena_strndup(a, src->str, src->len);
		break;
	case TRACE_BLOB: {
		uint8_t *p = trace_arena_alloc(a, src->len ? src->len : 1);
		memcpy(p, src->blob, src->len);
		dst->blob = p;
		break;
	}
	case TRACE_WSTRING: {
		uint32_t *p = trace_arena_alloc(a, sizeof(*p) * (src->len + 1));
		memcpy(p, src->wstr, sizeof(*p) * src->len);
		dst->wstr = p;
		break;
	}
	case TRACE_ARRAY:
	case TRACE_REPR: {
		uint32_t n = src->kind == TRACE_REPR ? 2 : src->len;
		dst->items = trace_arena_alloc(a, sizeof(trace_value) * n);
		for (uint32_t i = 0; i < n; i++)
			copy_value(a, &dst->items[i], &src->items[i]);
		break;
	}
	case TRACE_STRUCT: {
		uint32_t n = src->st.sig->nmembers;
		dst->st.members = trace_arena_alloc(a, sizeof(trace_value) * n);
		for (uint32_t i = 0; i < n; i++)
			copy_value(a, &dst->st.members[i], &src->st.members[i]);
		break;
	}
	default:
		break;
	}
}

void trace_call_copy_into(trace_arena *a, trace_call *dst, const trace_call *src)
{
	trace_arena keep = dst->arena;
	*dst = *src;
	dst->arena = keep;
	dst->decoded = NULL;  /* (in src's arena) */
	dst->args = trace_arena_alloc(a, sizeof(trace_value) * src->sig->nargs);
	for (uint32_t i = 0; i < src->sig->nargs; i++)
		copy_value(a, &dst->args[i], &src->args[i]);
	if (src->ret) {
		dst->ret = trace_arena_alloc(a, sizeof(trace_value));
		copy_value(a, dst->ret, src->ret);
	}
	if (src->nframes) {
		dst->backtrace = trace_arena_alloc(a, sizeof(*dst->backtrace) * src->nframes);
		memcpy(dst->backtrace, src->backtrace, sizeof(*dst->backtrace) * src->nframes);
	}
}

void trace_call_copy(trace_call *dst, const trace_call *src)
{
	trace_call_reset(dst);
	trace_call_copy_into(&dst->arena, dst, src);
}

/* ------------------------------------------------------------------ */
/* Ordering. */

#define NOKEY(no) ((const void *)(uintptr_t)((no) + 1))

static held *take_waiting(trace_writer *w, uint64_t no)
{
	uint64_t v;
	return tmap_take(&w->waiting, NOKEY(no), &v) ? (held *)(uintptr_t)v : NULL;
}

static size_t queued(const trace_writer *w)
{
	return w->nqueue - w->qhead;
}

static void enqueue(trace_writer *w, held *h)
{
	if (w->qhead && w->qhead == w->nqueue)
		w->qhead = w->nqueue = 0;
	if (w->nqueue == w->cqueue) {
		if (w->qhead > w->cqueue / 2) {
			memmove(w->queue, w->queue + w->qhead, queued(w) * sizeof(*w->queue));
			w->nqueue -= w->qhead;
			w->qhead = 0;
		} else {
			w->cqueue = w->cqueue ? w->cqueue * 2 : 64;
			w->queue = trace_xrealloc(w->queue, w->cqueue * sizeof(*w->queue));
		}
	}
	w->queue[w->nqueue++] = h;
}

/* Writes every enter and leave that can go out now. */
static int pump(trace_writer *w, bool drain)
{
	for (;;) {
		for (;;) {
			held *h = take_waiting(w, w->next_no);
			if (h) {
				TRY(w_enter(w, &h->call));
				h->entered = true;
				h->out_no = w->out_no++;
				w->next_no++;
			} else if (tmap_take(&w->skipped, NOKEY(w->next_no), NULL)) {
				w->next_no++;
			} else {
				break;
			}
		}
		while (queued(w) && w->queue[w->qhead]->entered) {
			held *h = w->queue[w->qhead++];
			TRY(w_leave(w, &h->call, h->out_no));
			trace_call_free(&h->call);
			free(h);
		}
		if (!queued(w) || (!drain && queued(w) < REORDER_WINDOW))
			return 0;
		/* a gap nobody announced: go on from the smallest number held */
		uint64_t min = UINT64_MAX;
		for (size_t i = w->qhead; i < w->nqueue; i++)
			if (!w->queue[i]->entered && w->queue[i]->call.no < min)
				min = w->queue[i]->call.no;
		w->next_no = min;
	}
}

static int write_binary_call(trace_writer *w, const trace_call *c)
{
	if (!queued(w) && c->no == w->next_no) {
		TRY(w_enter(w, c));
		TRY(w_leave(w, c, w->out_no));
		w->out_no++;
		w->next_no++;
		return 0;
	}
	held *h = trace_xmalloc(sizeof(*h));
	trace_call_init(&h->call);
	trace_call_copy(&h->call, c);
	h->entered = false;
	uint64_t v;
	if (c->no < w->next_no || tmap_get(&w->waiting, NOKEY(c->no), &v)) {
		/* behind a gap given up on, or a number seen twice: it goes
		 * out where it stands */
		TRY(w_enter(w, c));
		h->entered = true;
		h->out_no = w->out_no++;
	} else {
		tmap_put(&w->waiting, NOKEY(c->no), (uint64_t)(uintptr_t)h);
	}
	enqueue(w, h);
	return pump(w, false);
}

static int event_level(trace_writer *w, trace_error *err)
{
	w->err = err;
	if (w->fmt != TRACE_FMT_TEXT)
		return 0;
	trace_error_clear(err);
	snprintf(err->file, sizeof(err->file), "%s", w->k.name);
	trace_error_set(err, "enter and leave events are written in the binary format only");
	return -1;
}

int trace_writer_enter(trace_writer *w, trace_call *c, trace_error *err)
{
	TRY(event_level(w, err));
	c->no = w->out_no++;
	w->next_no = w->out_no;
	return w_enter(w, c);
}

int trace_writer_leave(trace_writer *w, const trace_call *c, trace_error *err)
{
	TRY(event_level(w, err));
	TRY(w_byte(w, EV_LEAVE));
	TRY(w_uint(w, c->no));
	for (uint32_t i = 0; i < c->sig->nargs; i++) {
		if (c->args[i].kind == TRACE_MISSING)
			continue;
		TRY(w_byte(w, D_ARG));
		TRY(w_uint(w, i));
		TRY(w_value(w, &c->args[i]));
	}
	if (c->ret) {
		TRY(w_byte(w, D_RET));
		TRY(w_value(w, c->ret));
	}
	TRY(w_byte(w, D_END));
	sync_left(w, c);
	return 0;
}

void trace_writer_skip_to(trace_writer *w, uint64_t no)
{
	if (w->fmt != TRACE_FMT_TEXT && !queued(w) && no > w->next_no)
		w->next_no = no;
}

void trace_writer_skip(trace_writer *w, uint64_t no)
{
	if (w->fmt == TRACE_FMT_TEXT || no < w->next_no)
		return;
	if (!queued(w) && no == w->next_no) {
		w->next_no++;
		return;
	}
	tmap_put(&w->skipped, NOKEY(no), 1);
}

/* ------------------------------------------------------------------ */

static trace_writer *open_sink(const char *path, FILE *f, const char *name,
			       const trace_writer_options *opt, trace_error *err)
{
	trace_writer *w = calloc(1, sizeof(*w));
	if (!w)
		abort();
	w->fmt = opt && opt->format ? opt->format : TRACE_FMT_SNAPPY;
	w->end_marker = opt && opt->end_marker;
	w->by_pointer = opt && opt->sigs_by_pointer;
	if (trace_sink_open(&w->k, path, f, name, w->fmt, opt ? opt->quality : -1, err) < 0) {
		free(w);
		return NULL;
	}
	return w;
}

trace_writer *trace_writer_open_file(FILE *f, const char *name,
				     const trace_writer_options *opt, trace_error *err)
{
	return open_sink(NULL, f, name, opt, err);
}

trace_writer *trace_writer_open(const char *path, const trace_writer_options *opt,
				trace_error *err)
{
	return open_sink(path, NULL, NULL, opt, err);
}

int trace_writer_header(trace_writer *w, const trace_header *h, trace_error *err)
{
	w->err = err;
	if (w->fmt == TRACE_FMT_TEXT) {
		/* the end marker's promise is only its writer's to make */
		trace_header own = *h;
		own.props = trace_xcalloc(h->nprops + 1, sizeof(*own.props));
		own.nprops = 0;
		for (uint32_t i = 0; i < h->nprops; i++)
			if (strcmp(h->props[i].name, TRACE_END))
				own.props[own.nprops++] = h->props[i];
		w->line.len = 0;
		trace_text_header(&w->line, &own);
		free(own.props);
		tbuf_addc(&w->line, '\n');
		return w_bytes(w, w->line.data, w->line.len);
	}
	TRY(w_uint(w, TRACE_FORMAT_VERSION));
	TRY(w_uint(w, h->semantic_version));
	for (uint32_t i = 0; i < h->nprops; i++) {
		/* an empty name would end the list; the end marker's promise
		 * is only this writer's to make */
		if (!h->props[i].name[0] || !strcmp(h->props[i].name, TRACE_END))
			continue;
		TRY(w_cstring(w, h->props[i].name));
		TRY(w_cstring(w, h->props[i].value));
	}
	if (w->end_marker) {
		TRY(w_cstring(w, TRACE_END));
		TRY(w_cstring(w, "its last record"));
	}
	return w_uint(w, 0);
}

int trace_writer_call(trace_writer *w, const trace_call *c, trace_error *err)
{
	w->err = err;
	if (w->fmt == TRACE_FMT_TEXT) {
		w->line.len = 0;
		if (!w->cache)
			w->cache = trace_textcache_new();
		trace_text_call(&w->line, c, w->cache);
		tbuf_addc(&w->line, '\n');
		return w_bytes(w, w->line.data, w->line.len);
	}
	return write_binary_call(w, c);
}

int trace_writer_flush(trace_writer *w, trace_error *err)
{
	w->err = err;
	return trace_sink_flush(&w->k, err);
}

static void release(trace_writer *w)
{
	for (size_t i = w->qhead; i < w->nqueue; i++) {
		trace_call_free(&w->queue[i]->call);
		free(w->queue[i]);
	}
	free(w->queue);
	TMAP_FREE(&w->funcs, &w->structs, &w->enums, &w->bitmasks, &w->frames, &w->canon_ids);
	if (w->canon)
		trace_sigtab_free(w->canon);
	tmap_free(&w->waiting);
	tmap_free(&w->skipped);
	tbuf_free(&w->line);
	tbuf_free(&w->defs);
	free(w->syncs);
	trace_textcache_free(w->cache);
	free(w);
}

/* The last record of a stream that promised it: it ended whole. */
static int write_end(trace_writer *w, trace_error *err)
{
	static const trace_func_sig end_sig = { TRACE_END, 0, NULL };
	trace_call c = { .sig = &end_sig };
	TRY(trace_writer_enter(w, &c, err));
	return trace_writer_leave(w, &c, err);
}

int trace_writer_close(trace_writer *w, trace_error *err)
{
	w->err = err;
	int r = 0;
	if (w->end_marker)
		r = write_end(w, err);
	if (r == 0 && w->fmt != TRACE_FMT_TEXT)
		r = pump(w, true);
	if (r == 0 && w->fmt == TRACE_FMT_ZSTD && !w->no_index && w->nsyncs &&
	    w->k.written + w->k.len >= index_min())
		trace_seekindex_encode(&w->k.index, w->syncs, w->nsyncs, w->defs.data,
				       w->defs.len);
	if (r == 0)
		r = trace_sink_close(&w->k, err);
	else
		trace_sink_abort(&w->k);
	release(w);
	return r;
}

void trace_writer_abort(trace_writer *w)
{
	trace_sink_abort(&w->k);
	release(w);
}
