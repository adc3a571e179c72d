/*
 * Input containers.  A trace_source turns the bytes of a file, a pipe or
 * a memory block into one window over the uncompressed stream, whatever
 * the container: apitrace's Snappy chunks, zstd frames or Brotli, gzip,
 * our raw "tr" stream, or plain text.  The parsers above only ever see the
 * window.
 *
 * Detection follows apitrace ('a' 't' is Snappy, 28 b5 is a zstd frame's
 * magic, 1f 8b is gzip, anything else is Brotli, which has no magic), with
 * two additions of ours that cannot start a Brotli stream we would meet:
 * "tr" (raw) and '{' (text).
 *
 * A compressed regular file is read and decompressed ahead on a thread of
 * its own (TRACE_READ_AHEAD=0 turns it off): the reader then takes each
 * block over as its window.  Decompressing was 9% of trace-replay's time on
 * an H200 replaying mpv, all of it on the thread that calls the driver.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define READ_BLOCK (256u << 10)
/* The most one fill reserves: a hostile length grows the window only as
 * fast as real bytes arrive. */
#define FILL_STEP_MAX (16u << 20)

static size_t fill_step(size_t want)
{
	return want < READ_BLOCK ? READ_BLOCK : want > FILL_STEP_MAX ? FILL_STEP_MAX : want;
}

/* Reads up to n bytes of the compressed input; returns how many. */
static size_t raw_read(trace_source *s, void *dst, size_t n, trace_error *err)
{
	uint8_t *d = dst;
	size_t got = 0;
	while (s->npeek && got < n) {
		d[got++] = s->peek[0];
		memmove(s->peek, s->peek + 1, --s->npeek);
	}
	if (s->mem) {
		size_t left = s->memsize - s->mempos;
		size_t take = n - got < left ? n - got : left;
		memcpy(d + got, s->mem + s->mempos, take);
		s->mempos += take;
		got += take;
	} else {
		while (got < n) {
			size_t r = fread(d + got, 1, n - got, s->file);
			got += r;
			if (r == 0) {
				if (ferror(s->file)) {
					trace_error_errno(err, s->name, "read error");
					return (size_t)-1;
				}
				break;
			}
		}
	}
	s->inpos += got;
	return got;
}

static void locate_here(trace_source *s, trace_error *err)
{
	trace_source_locate(s, err, s->base + (uint64_t)(s->end - s->win));
}

/* Makes room for `extra` more bytes after the window's end, with `lead`
 * bytes kept free before the window (the read-ahead thread's: the reader
 * puts its unread bytes there when it takes the storage over). */
static void reserve(trace_source *s, size_t extra)
{
	size_t avail = (size_t)(s->end - s->p);
	size_t need = s->lead + avail + extra;
	if (!s->buf || s->cap < need) {
		/* new storage, the unread bytes alone copied: realloc would
		 * copy all the old storage holds */
		size_t cap = s->cap ? s->cap : READ_BLOCK;
		while (cap < need)
			cap *= 2;
		uint8_t *buf = trace_xmalloc_huge(cap);
		if (avail)
			memcpy(buf + s->lead, s->p, avail);
		free(s->buf);
		s->base += (uint64_t)(s->p - s->win);
		s->buf = buf;
		s->cap = cap;
		s->p = s->win = buf + s->lead;
		s->end = s->p + avail;
		return;
	}
	if (s->p != s->buf + s->lead) {
		/* compact: the parsers have consumed everything before p */
		s->base += (uint64_t)(s->p - s->win);
		memmove(s->buf + s->lead, s->p, avail);
		s->p = s->win = s->buf + s->lead;
		s->end = s->p + avail;
	}
}

/* The room after the window's end for one fill of a stream codec: what
 * reserve(s, fill_step(want)) made, not all the storage has (the read-
 * ahead thread's is larger than one block should be). */
static size_t room(const trace_source *s, size_t want)
{
	size_t left = s->cap - (size_t)(s->end - s->buf);
	size_t step = fill_step(want);
	return left < step ? left : step;
}

/*
 * The input ends inside a chunk or a compressed stream: a capture cut off
 * (killed, a full disk).  Not an error: what came out before is the
 * stream, the rest is lost, and the reader says so once (trace_reader_cut).
 * Only the end can be short, so damage in the middle still fails.
 */
static int cut_off(trace_source *s)
{
	s->eof = true;
	s->cut = true;
	return 0;
}

/* ------------------------------------------------------------------ */

static int fill_plain(trace_source *s, size_t want, trace_error *err)
{
	reserve(s, fill_step(want));
	size_t room = s->cap - (size_t)(s->end - s->buf);
	size_t r = raw_read(s, (uint8_t *)s->end, room, err);
	if (r == (size_t)-1)
		return -1;
	if (r == 0)
		s->eof = true;
	s->end += r;
	return 0;
}

static int fill_snappy(trace_source *s, size_t want, trace_error *err)
{
	(void)want;
	uint8_t lenb[4];
	int64_t at = (int64_t)s->inpos;
	size_t r = raw_read(s, lenb, 4, err);
	if (r == (size_t)-1)
		return -1;
	if (r == 0) {
		s->eof = true;
		return 0;
	}
	if (r < 4)
		return cut_off(s);
	size_t clen = (size_t)lenb[0] | (size_t)lenb[1] << 8 | (size_t)lenb[2] << 16 |
		      (size_t)lenb[3] << 24;
	s->chunk_at = at;
	if (clen > s->snappy->max_compressed_length(TRACE_SNAPPY_CHUNK_MAX)) {
		locate_here(s, err);
		trace_error_set(err, "Snappy chunk of %zu bytes is larger than any chunk a "
			       "trace writer makes", clen);
		return -1;
	}
	if (s->ccap < clen) {
		s->cbuf = trace_xrealloc(s->cbuf, clen);
		s->ccap = clen;
	}
	r = raw_read(s, s->cbuf, clen, err);
	if (r == (size_t)-1)
		return -1;
	if (r < clen)
		return cut_off(s);
	size_t ulen;
	if (s->snappy->uncompressed_length((char *)s->cbuf, clen, &ulen) != SNAPPY_OK ||
	    ulen > TRACE_SNAPPY_CHUNK_MAX) {
		locate_here(s, err);
		trace_error_set(err, "corrupt Snappy chunk (bad uncompressed length)");
		return -1;
	}
	reserve(s, ulen);
	size_t out = ulen;
	if (s->snappy->uncompress((char *)s->cbuf, clen, (char *)s->end, &out) != SNAPPY_OK ||
	    out != ulen) {
		locate_here(s, err);
		trace_error_set(err, "corrupt Snappy chunk");
		return -1;
	}
	s->end += out;
	return 0;
}

static int read_input(trace_source *s, trace_error *err)
{
	if (!s->inbuf) {
		s->inbuf = trace_xmalloc(READ_BLOCK);
		s->incap = READ_BLOCK;
	}
	size_t r = raw_read(s, s->inbuf, READ_BLOCK, err);
	if (r == (size_t)-1)
		return -1;
	s->inlen = r;
	s->inoff = 0;
	return 0;
}

static int fill_brotli(trace_source *s, size_t want, trace_error *err)
{
	BrotliDecoderState *st = s->codec;
	reserve(s, fill_step(want));
	uint8_t *start = (uint8_t *)s->end;
	for (;;) {
		size_t avail_in = s->inlen - s->inoff;
		const uint8_t *next_in = s->inbuf ? s->inbuf + s->inoff : NULL;
		size_t avail_out = room(s, want);
		uint8_t *next_out = (uint8_t *)s->end;
		BrotliDecoderResult res = s->brotli->decompress_stream(st, &avail_in, &next_in,
								       &avail_out, &next_out, NULL);
		s->inoff = s->inlen - avail_in;
		s->end = next_out;
		if (res == BROTLI_DECODER_RESULT_ERROR) {
			locate_here(s, err);
			err->file_offset = (int64_t)(s->inpos - avail_in);
			trace_error_set(err, "corrupt Brotli stream (%s)",
					s->brotli->error_string(s->brotli->error_code(st)));
			return -1;
		}
		if (res == BROTLI_DECODER_RESULT_SUCCESS) {
			s->eof = true;
			return 0;
		}
		if (res == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT || s->end > start)
			return 0;
		/* needs more input */
		if (read_input(s, err) < 0)
			return -1;
		if (s->inlen == 0)
			return cut_off(s);
	}
}

/* Grows the compressed input to hold n bytes from inoff, as far as the
 * input goes: 0, or -1 on a read error. */
static int input_hold(trace_source *s, size_t n, trace_error *err)
{
	size_t have = s->inlen - s->inoff;
	if (have >= n)
		return 0;
	if (s->inoff) {
		memmove(s->inbuf, s->inbuf + s->inoff, have);
		s->inlen = have;
		s->inoff = 0;
	}
	if (s->incap < n) {
		s->inbuf = trace_xrealloc(s->inbuf, n);
		s->incap = n;
	}
	size_t r = raw_read(s, s->inbuf + s->inlen, n - s->inlen, err);
	if (r == (size_t)-1)
		return -1;
	s->inlen += r;
	return 0;
}

/*
 * The fast way through a zstd frame: once the input holds it whole,
 * decoded in one pass straight into the window (zstd's streaming decoder
 * goes through a buffer of its own, then ours, then the window: three
 * copies where this makes one).  Returns 1 when it took a frame (or a
 * skippable frame, or found the end), 0 when the streaming path is to
 * take the next one: a frame cut off, of no stated size or larger than
 * any we write, or damaged (the streaming path then says where), and -1
 * on a read error.
 */
static int zstd_whole_frame(trace_source *s, trace_error *err)
{
	size_t want = READ_BLOCK;
	for (;;) {
		if (input_hold(s, want, err) < 0)
			return -1;
		size_t have = s->inlen - s->inoff;
		if (have == 0) {
			s->eof = true;
			return 1;
		}
		const uint8_t *in = s->inbuf + s->inoff;
		size_t size = ZSTD_findFrameCompressedSize(in, have);
		if (ZSTD_isError(size)) {
			/* the input holds less than the frame: more, up to the
			 * most a frame we would take can compress to */
			if (ZSTD_getErrorCode(size) != ZSTD_error_srcSize_wrong || have < want ||
			    want >= ZSTD_COMPRESSBOUND(2 * TRACE_ZSTD_FRAME))
				return 0;
			want *= 2;
			continue;
		}
		if ((in[0] & 0xf0) == 0x50 && in[1] == 0x2a && in[2] == 0x4d && in[3] == 0x18) {
			/* a skippable frame (the seek table): its size said it
			 * is whole */
			s->inoff += size;
			return 1;
		}
		unsigned long long out = ZSTD_getFrameContentSize(in, have);
		if (out == ZSTD_CONTENTSIZE_UNKNOWN || out == ZSTD_CONTENTSIZE_ERROR ||
		    out > 2 * TRACE_ZSTD_FRAME)
			return 0;
		reserve(s, (size_t)out);
		size_t got = ZSTD_decompressDCtx(s->codec, (uint8_t *)s->end, (size_t)out, in, size);
		if (ZSTD_isError(got) || got != out) {
			ZSTD_DCtx_reset(s->codec, ZSTD_reset_session_only);
			return 0;
		}
		s->end += got;
		s->inoff += size;
		return 1;
	}
}

/*
 * zstd frames one after another (and skippable frames, such as the
 * seekable format's seek table, which the decoder passes over).  A frame
 * joins the window only once it ended and its checksum held, as a Snappy
 * chunk does: the input may end only where a frame does, and a frame cut
 * off is lost whole, never read in part.
 */
static int fill_zstd(trace_source *s, size_t want, trace_error *err)
{
	(void)want;
	int whole;
	while (!s->zstd_inside && (whole = zstd_whole_frame(s, err)) != 0) {
		if (whole < 0)
			return -1;
		if (s->end > s->p || s->eof)
			return 0;
	}
	for (;;) {
		if (s->inoff == s->inlen) {
			if (read_input(s, err) < 0)
				return -1;
			if (s->inlen == 0) {
				if (s->zstd_inside)
					return cut_off(s);
				s->eof = true;
				return 0;
			}
		}
		if (s->ccap - s->clen < ZSTD_BLOCKSIZE_MAX) {
			if (s->ccap >= TRACE_ZSTD_FRAME_MAX) {
				locate_here(s, err);
				trace_error_set(err, "zstd frame of more than %u bytes: larger than any "
						"a trace writer makes", TRACE_ZSTD_FRAME_MAX);
				return -1;
			}
			s->ccap = s->ccap ? 2 * s->ccap : TRACE_ZSTD_FRAME;
			s->cbuf = trace_xrealloc(s->cbuf, s->ccap);
		}
		ZSTD_inBuffer in = { s->inbuf, s->inlen, s->inoff };
		ZSTD_outBuffer out = { s->cbuf, s->ccap, s->clen };
		size_t res = ZSTD_decompressStream(s->codec, &out, &in);
		s->inoff = in.pos;
		s->clen = out.pos;
		if (ZSTD_isError(res)) {
			locate_here(s, err);
			err->file_offset = (int64_t)(s->inpos - (s->inlen - s->inoff));
			trace_error_set(err, "corrupt zstd stream (%s)", ZSTD_getErrorName(res));
			return -1;
		}
		s->zstd_inside = res != 0;
		if (res == 0 && s->clen) {
			reserve(s, s->clen);
			memcpy((uint8_t *)s->end, s->cbuf, s->clen);
			s->end += s->clen;
			s->clen = 0;
			return 0;
		}
	}
}

static int fill_gzip(trace_source *s, size_t want, trace_error *err)
{
	z_stream *z = s->codec;
	reserve(s, fill_step(want));
	uint8_t *start = (uint8_t *)s->end;
	for (;;) {
		if (s->inoff == s->inlen) {
			if (read_input(s, err) < 0)
				return -1;
			if (s->inlen == 0)
				return cut_off(s);
		}
		z->next_in = s->inbuf + s->inoff;
		z->avail_in = (uInt)(s->inlen - s->inoff);
		z->next_out = (uint8_t *)s->end;
		z->avail_out = (uInt)room(s, want);
		int res = inflate(z, Z_NO_FLUSH);
		s->inoff = s->inlen - z->avail_in;
		s->end = z->next_out;
		if (res == Z_STREAM_END) {
			/* gzip files may hold several members, one after another */
			if (s->inoff == s->inlen) {
				if (read_input(s, err) < 0)
					return -1;
			}
			if (s->inoff == s->inlen) {
				s->eof = true;
				return 0;
			}
			inflateReset(z);
			if (s->end > start)
				return 0;
			continue;
		}
		if (res != Z_OK && res != Z_BUF_ERROR) {
			locate_here(s, err);
			err->file_offset = (int64_t)(s->inpos - z->avail_in);
			trace_error_set(err, "corrupt gzip stream (%s)",
					z->msg ? z->msg : "inflate failed");
			return -1;
		}
		if (s->end > start)
			return 0;
	}
}

/* ------------------------------------------------------------------ */
/* Reading ahead.  The thread runs the container's fill on a source of its
 * own (the input, the codec and a window), and hands each fill's bytes
 * over as a block, with where the input stood after it; the reader's fill
 * takes the blocks in order.  An error or the end travels as the last
 * block, so what the reader sees, messages and offsets included, is what
 * reading in place would give. */

#define AHEAD_BLOCKS 2   /* waiting at most: the memory stays flat */
/* Room before each block for the reader's unread bytes (a record cut at
 * the block's end), so that the reader takes the block's storage as its
 * window and copies only those; a longer rest is copied with the block. */
#define AHEAD_LEAD (64u << 10)
/* A block's storage: a frame of ours (2 MiB) and the lead, on huge pages
 * (the thread's storage is touched first by the decoder: a page fault a
 * page was a quarter of trace-replay --check's time on mpv's trace). */
#define AHEAD_CAP ((size_t)4 << 20)

typedef struct ahead_block {
	uint8_t *buf;            /* a window's storage, handed over whole */
	size_t cap, off, len;
	uint64_t inpos;
	int64_t chunk_at;
	bool eof, cut, failed;
	trace_error err;
} ahead_block;

struct readahead {
	trace_source in;         /* the thread's: input, codec, window */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	ahead_block q[AHEAD_BLOCKS];
	size_t head, n;          /* blocks waiting */
	uint8_t *spare[AHEAD_BLOCKS + 1];
	size_t sparecap[AHEAD_BLOCKS + 1], nspare;
	bool stop;
};

static void *ahead_main(void *arg)
{
	struct readahead *a = arg;
	trace_source *in = &a->in;
	pthread_setname_np(pthread_self(), "tracekit-read");
	for (;;) {
		pthread_mutex_lock(&a->lock);
		while (!a->stop && a->n == AHEAD_BLOCKS)
			pthread_cond_wait(&a->cond, &a->lock);
		bool stop = a->stop;
		/* a window of its own for this block: a spare, or none yet */
		uint8_t *buf = NULL;
		size_t cap = 0;
		if (!stop && a->nspare) {
			a->nspare--;
			buf = a->spare[a->nspare];
			cap = a->sparecap[a->nspare];
		}
		pthread_mutex_unlock(&a->lock);
		if (stop)
			return NULL;
		if (!buf) {
			/* room for any frame we write: storage reused, never
			 * grown, takes no page faults after its first use */
			cap = AHEAD_CAP;
			buf = trace_xmalloc_huge(cap);
		}
		/* everything before is the reader's: the window starts empty */
		in->base += (uint64_t)(in->end - in->win);
		in->buf = buf;
		in->cap = cap;
		in->p = in->win = in->end = buf ? buf + in->lead : NULL;
		ahead_block b = {0};
		trace_error_clear(&b.err);
		b.failed = in->fill(in, READ_BLOCK, &b.err) < 0;
		b.buf = in->buf;
		b.cap = in->cap;
		b.off = (size_t)(in->p - in->buf);
		b.len = (size_t)(in->end - in->p);
		b.inpos = in->inpos;
		b.chunk_at = in->chunk_at;
		b.eof = in->eof;
		b.cut = in->cut;
		in->buf = NULL;
		pthread_mutex_lock(&a->lock);
		a->q[(a->head + a->n) % AHEAD_BLOCKS] = b;
		a->n++;
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
		if (b.failed || b.eof)
			return NULL;
	}
}

static int fill_ahead(trace_source *s, size_t want, trace_error *err)
{
	(void)want;
	struct readahead *a = s->ahead;
	pthread_mutex_lock(&a->lock);
	while (!a->n)
		pthread_cond_wait(&a->cond, &a->lock);
	ahead_block b = a->q[a->head];
	pthread_mutex_unlock(&a->lock);
	size_t avail = (size_t)(s->end - s->p);
	if (b.len && avail + b.len <= b.cap) {
		/* the block's storage becomes the window, the unread bytes
		 * put before its own (in the lead left for them, or with its
		 * bytes moved up when they are more); the window's storage
		 * goes to the thread */
		size_t at = b.off;
		if (at < avail) {
			memmove(b.buf + avail, b.buf + b.off, b.len);
			at = avail;
		}
		if (avail)
			memcpy(b.buf + at - avail, s->p, avail);
		uint8_t *old = s->buf;
		size_t oldcap = s->cap;
		s->base += (uint64_t)(s->p - s->win);
		s->buf = b.buf;
		s->cap = b.cap;
		s->p = s->win = b.buf + at - avail;
		s->end = b.buf + at + b.len;
		b.buf = old;
		b.cap = oldcap;
	} else if (b.len) {
		reserve(s, b.len);
		memcpy((uint8_t *)s->end, b.buf + b.off, b.len);
		s->end += b.len;
	}
	s->inpos = b.inpos;
	s->chunk_at = b.chunk_at;
	s->eof = b.eof || b.failed;
	s->cut = b.cut;
	pthread_mutex_lock(&a->lock);
	a->head = (a->head + 1) % AHEAD_BLOCKS;
	a->n--;
	if (b.buf && a->nspare < AHEAD_BLOCKS + 1) {
		a->spare[a->nspare] = b.buf;
		a->sparecap[a->nspare++] = b.cap;
		b.buf = NULL;
	}
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	free(b.buf);
	if (b.failed) {
		*err = b.err;
		return -1;
	}
	return 0;
}

static void ahead_start(trace_source *s)
{
	const char *env = getenv("TRACE_READ_AHEAD");
	struct stat st;
	if ((env && !strcmp(env, "0")) || fstat(fileno(s->file), &st) < 0 || !S_ISREG(st.st_mode))
		return;
	struct readahead *a = trace_xcalloc(1, sizeof(*a));
	a->in = *s;
	a->in.own_file = false;
	/* the window is the reader's (a jump restarts the thread with one
	 * in use): the thread's windows are its own */
	a->in.buf = NULL;
	a->in.cap = 0;
	a->in.p = a->in.win = a->in.end = NULL;
	a->in.lead = AHEAD_LEAD;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	if (trace_thread_start(&a->thread, ahead_main, a)) {
		pthread_mutex_destroy(&a->lock);
		pthread_cond_destroy(&a->cond);
		free(a);
		return;
	}
	/* the input and the codec are the thread's now */
	s->codec = NULL;
	s->inbuf = s->cbuf = NULL;
	s->incap = s->ccap = 0;
	s->npeek = 0;
	s->ahead = a;
	s->fill = fill_ahead;
}

static void ahead_stop(trace_source *s)
{
	struct readahead *a = s->ahead;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	for (size_t i = 0; i < a->n; i++)
		free(a->q[(a->head + i) % AHEAD_BLOCKS].buf);
	for (size_t i = 0; i < a->nspare; i++)
		free(a->spare[i]);
	a->in.file = NULL;
	trace_source_close(&a->in);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a);
	s->ahead = NULL;
}

/* ------------------------------------------------------------------ */

/* ERR cleared and located at the start of S's input: for what is wrong
 * with the input as a whole (empty, its container's library missing). */
static void at_start(const trace_source *s, trace_error *err)
{
	trace_error_clear(err);
	snprintf(err->file, sizeof(err->file), "%s", s->name);
	err->offset = 0;
}

int trace_source_open(trace_source *s, trace_error *err)
{
	s->chunk_at = -1;
	uint8_t magic[2];
	size_t n = raw_read(s, magic, 2, err);
	if (n == (size_t)-1)
		return -1;
	s->inpos = 0;
	if (n == 0) {
		at_start(s, err);
		trace_error_set(err, "empty input: not a trace");
		return -1;
	}
	bool consume = false;
	if (n == 2 && magic[0] == 'a' && magic[1] == 't') {
		s->container = TRACE_FMT_SNAPPY;
		s->fill = fill_snappy;
		consume = true;
		at_start(s, err);
		if (!(s->snappy = trace_snappy_lib(err)))
			return -1;
	} else if (n == 2 && magic[0] == 0x28 && magic[1] == 0xb5) {
		s->container = TRACE_FMT_ZSTD;
		s->fill = fill_zstd;
		s->codec = ZSTD_createDCtx();
		if (!s->codec)
			abort();
	} else if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
		s->container = TRACE_FMT_GZIP;
		s->fill = fill_gzip;
		z_stream *z = calloc(1, sizeof(*z));
		if (!z || inflateInit2(z, 15 + 16) != Z_OK)
			abort();
		s->codec = z;
	} else if (n == 2 && magic[0] == 't' && magic[1] == 'r') {
		s->container = TRACE_FMT_RAW;
		s->fill = fill_plain;
		consume = true;
	} else if (magic[0] == '{' || magic[0] == '#' || magic[0] == ' ' || magic[0] == '\t' ||
		   magic[0] == '\r' || magic[0] == '\n' || (n == 2 && magic[0] == 0xef &&
							  magic[1] == 0xbb)) {
		/* text, perhaps after blank lines or a UTF-8 byte order mark */
		s->container = TRACE_FMT_TEXT;
		s->fill = fill_plain;
	} else {
		s->container = TRACE_FMT_BROTLI;
		s->fill = fill_brotli;
		at_start(s, err);
		if (!(s->brotli = trace_brotli_dec_lib(err)))
			return -1;
		s->codec = s->brotli->create(NULL, NULL, NULL);
		if (!s->codec)
			abort();
	}
	if (!consume) {
		memcpy(s->peek, magic, n);
		s->npeek = n;
	} else {
		s->inpos = 2;
	}
	if (s->mem && s->fill == fill_plain) {
		/* no copy: the window is the memory block itself */
		s->win = s->p = s->mem + (consume ? 2 : 0);
		s->end = s->mem + s->memsize;
		s->npeek = 0;
		s->mempos = s->memsize;
		s->eof = true;
	}
	if (s->file && !s->mem && s->fill != fill_plain)
		ahead_start(s);
	return 0;
}

int trace_source_jump(trace_source *s, uint64_t in, uint64_t out, uint64_t skip,
		      trace_error *err)
{
	bool ahead = s->ahead != NULL;
	if (ahead) {
		/* the thread took the codec: the source gets one again */
		ahead_stop(s);
		s->fill = fill_zstd;
		s->codec = ZSTD_createDCtx();
		if (!s->codec)
			abort();
	} else {
		ZSTD_DCtx_reset(s->codec, ZSTD_reset_session_only);
	}
	if (fseeko(s->file, (off_t)in, SEEK_SET) != 0) {
		trace_error_errno(err, s->name, "cannot seek");
		return -1;
	}
	s->inpos = in;
	s->inlen = s->inoff = s->clen = 0;
	s->npeek = 0;
	s->zstd_inside = false;
	s->eof = s->cut = false;
	s->base = out;
	s->p = s->win = s->end = s->buf;
	if (ahead)
		ahead_start(s);
	if (trace_source_need(s, skip, err) < 0)
		return -1;
	if ((uint64_t)(s->end - s->p) < skip) {
		trace_source_locate(s, err, out);
		trace_error_set(err, "the seek index points %llu bytes into a frame that holds "
				"%zu", (unsigned long long)skip, (size_t)(s->end - s->p));
		return -1;
	}
	s->p += skip;
	return 0;
}

int trace_source_need_slow(trace_source *s, size_t n, trace_error *err)
{
	while ((size_t)(s->end - s->p) < n && !s->eof) {
		if (s->fill(s, n - (size_t)(s->end - s->p), err) < 0)
			return -1;
	}
	return 0;
}

void trace_source_locate(const trace_source *s, trace_error *err, uint64_t offset)
{
	snprintf(err->file, sizeof(err->file), "%s", s->name ? s->name : "-");
	err->offset = (int64_t)offset;
	if (s->container == TRACE_FMT_SNAPPY)
		err->file_offset = s->chunk_at;
}

void trace_source_close(trace_source *s)
{
	if (s->ahead)
		ahead_stop(s);
	if (s->container == TRACE_FMT_BROTLI && s->codec)
		s->brotli->destroy(s->codec);
	if (s->container == TRACE_FMT_ZSTD && s->codec)
		ZSTD_freeDCtx(s->codec);
	if (s->container == TRACE_FMT_GZIP && s->codec) {
		inflateEnd(s->codec);
		free(s->codec);
	}
	s->codec = NULL;
	free(s->buf);
	free(s->inbuf);
	free(s->cbuf);
	if (s->own_file && s->file)
		fclose(s->file);
	memset(s, 0, sizeof(*s));
}
