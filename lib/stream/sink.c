/*
 * Output containers.  Bytes of the uncompressed stream gather in one
 * buffer; a full buffer becomes one Snappy chunk (never more than 1 MiB
 * uncompressed, or apitrace cannot read it) or one zstd frame, feeds the
 * Brotli encoder, or goes out as it is (raw and text).
 *
 * zstd is written in zstd's seekable format, as apitrace writes it: each
 * block an independent frame, and at the close a seek table (a skippable
 * frame of each frame's compressed and uncompressed size, then their
 * count and the seekable magic), which any zstd reader skips.  Before
 * the seek table, the writer's seek index may come (seekindex.c).
 *
 * A named output is written whole or not at all (trace_output_open).
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define PLAIN_BLOCK (256u << 10)

static int put(trace_sink *k, const void *p, size_t n, trace_error *err)
{
	if (n && fwrite(p, 1, n, k->file) != n) {
		trace_error_errno(err, k->name, "write error");
		k->failed = true;
		return -1;
	}
	return 0;
}

/*
 * A named output: a regular file (or a new name) is written under a
 * temporary name in the same folder, *TMP, and renamed into place by
 * trace_output_close only when all went well.  A name that is not a
 * regular file (/dev/null, a FIFO a reader waits on, a terminal) is opened
 * and written as it is, *TMP = NULL: renaming a file over it would replace
 * the device or the pipe.
 */
FILE *trace_output_open(const char *path, char **tmp, trace_error *err)
{
	struct stat node;
	*tmp = NULL;
	if (stat(path, &node) == 0 && !S_ISREG(node.st_mode)) {
		FILE *f = fopen(path, "wb");
		if (!f)
			trace_error_errno(err, path, "cannot open output");
		return f;
	}
	size_t n = strlen(path) + 16;
	char *t = trace_xmalloc(n);
	snprintf(t, n, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(t);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
	if (!f) {
		trace_error_errno(err, path, "cannot create output");
		if (fd >= 0) {
			close(fd);
			unlink(t);
		}
		free(t);
		return NULL;
	}
	/* mkstemp makes 0600; an output is an ordinary file: 0666 less umask */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	*tmp = t;
	return f;
}

/*
 * Closes F; OK: renames TMP to PATH (returns 0, or -1 with err filled);
 * not OK: removes TMP (returns -1, err left as it was).  Frees TMP.
 */
int trace_output_close(FILE *f, const char *path, char *tmp, bool ok, trace_error *err)
{
	int e = errno;
	if (fclose(f) != 0 && ok) {
		trace_error_errno(err, path, "write error");
		ok = false;
	}
	errno = e;
	if (tmp && ok && rename(tmp, path) != 0) {
		trace_error_errno(err, path, "cannot rename output into place");
		ok = false;
	}
	if (tmp && !ok)
		unlink(tmp);
	free(tmp);
	return ok ? 0 : -1;
}

int trace_sink_open(trace_sink *k, const char *path, FILE *f, const char *name,
		    trace_format container, int quality, trace_error *err)
{
	memset(k, 0, sizeof(*k));
	k->container = container;
	k->quality = quality;
	/* the codec's library before the file: where it cannot be loaded,
	 * no output is made */
	if (container == TRACE_FMT_SNAPPY || container == TRACE_FMT_BROTLI) {
		trace_error_clear(err);
		snprintf(err->file, sizeof(err->file), "%s",
			 path && strcmp(path, "-") ? path : f && name ? name : "-");
		if (container == TRACE_FMT_SNAPPY ? !(k->snappy = trace_snappy_lib(err))
						  : !(k->brotli = trace_brotli_enc_lib(err)))
			return -1;
	}
	if (path && strcmp(path, "-")) {
		if (!(k->file = trace_output_open(path, &k->tmp, err)))
			return -1;
		k->own_file = true;
		k->path = trace_xstrdup(path);
		k->name = k->path;
	} else {
		k->file = f ? f : stdout;
		k->name = f && name ? name : "-";
	}
	k->cap = container == TRACE_FMT_SNAPPY ? TRACE_SNAPPY_CHUNK
		 : container == TRACE_FMT_ZSTD ? TRACE_ZSTD_FRAME : PLAIN_BLOCK;
	k->buf = trace_xmalloc_huge(k->cap);
	switch (container) {
	case TRACE_FMT_SNAPPY:
		k->ocap = k->snappy->max_compressed_length(TRACE_SNAPPY_CHUNK) + 4;
		k->obuf = trace_xmalloc_huge(k->ocap);
		return put(k, "at", 2, err);
	case TRACE_FMT_RAW:
		return put(k, "tr", 2, err);
	case TRACE_FMT_ZSTD: {
		ZSTD_CCtx *cc = ZSTD_createCCtx();
		if (!cc)
			abort();
		ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, quality < 0 ? 3 : quality);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
		k->codec = cc;
		k->ocap = ZSTD_compressBound(TRACE_ZSTD_FRAME);
		k->obuf = trace_xmalloc_huge(k->ocap);
		return 0;
	}
	case TRACE_FMT_BROTLI: {
		const trace_brotli_enc *b = k->brotli;
		BrotliEncoderState *st = b->create(NULL, NULL, NULL);
		if (!st)
			abort();
		b->set_parameter(st, BROTLI_PARAM_QUALITY, (uint32_t)(quality < 0 ? 11 : quality));
		/* the window apitrace 11.1's repack uses */
		b->set_parameter(st, BROTLI_PARAM_LGWIN, 24);
		k->codec = st;
		k->ocap = 1u << 20;
		k->obuf = trace_xmalloc_huge(k->ocap);
		return 0;
	}
	case TRACE_FMT_TEXT:
		return 0;
	default:
		trace_error_clear(err);
		snprintf(err->file, sizeof(err->file), "%s", k->name);
		trace_error_set(err, "cannot write the %s container",
				trace_format_name(container));
		return -1;
	}
}

static int brotli_run(trace_sink *k, BrotliEncoderOperation op, trace_error *err)
{
	BrotliEncoderState *st = k->codec;
	size_t avail_in = k->len;
	const uint8_t *next_in = k->buf;
	for (;;) {
		size_t avail_out = k->ocap;
		uint8_t *next_out = k->obuf;
		if (!k->brotli->compress_stream(st, op, &avail_in, &next_in, &avail_out, &next_out,
						NULL)) {
			trace_error_clear(err);
			snprintf(err->file, sizeof(err->file), "%s", k->name);
			trace_error_set(err, "Brotli encoder failed");
			return -1;
		}
		if (put(k, k->obuf, k->ocap - avail_out, err) < 0)
			return -1;
		if (avail_in == 0 && !k->brotli->has_more_output(st) &&
		    (op != BROTLI_OPERATION_FINISH || k->brotli->is_finished(st)))
			return 0;
	}
}

/*
 * Snappy chunks and zstd frames are compressed and written by a worker
 * thread while the caller fills the next block: on two cores, compression
 * then costs the writer almost nothing.  The worker starts with the second
 * block, so a small trace never makes a thread.
 */
typedef struct trace_sink_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint8_t *block;          /* the block handed over, or NULL when idle */
	size_t len;
	bool stop;
	int error;               /* errno of a failed write, or 0 */
	trace_sink *k;
	pthread_t feeder;        /* the thread that made it and hands it blocks */
} trace_sink_worker;

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Compresses one block into one zstd frame and writes it, noting its
 * sizes for the seek table; errno-style result. */
static int zstd_frame(trace_sink *k, const uint8_t *block, size_t len)
{
	size_t olen = ZSTD_compress2(k->codec, k->obuf, k->ocap, block, len);
	if (ZSTD_isError(olen))
		abort();  /* a bound-sized buffer: only a bug gets here */
	if (fwrite(k->obuf, 1, olen, k->file) != olen)
		return errno ? errno : EIO;
	if (k->nseek == k->capseek) {
		k->capseek = k->capseek ? 2 * k->capseek : 64;
		k->seek = trace_xrealloc(k->seek, k->capseek * 2 * sizeof(*k->seek));
	}
	k->seek[2 * k->nseek] = (uint32_t)olen;
	k->seek[2 * k->nseek + 1] = (uint32_t)len;
	k->nseek++;
	return 0;
}

/* The seek table after the last frame: a skippable frame of the frames'
 * sizes, their count, a descriptor (no checksums) and the magic. */
static int zstd_seek_table(trace_sink *k, trace_error *err)
{
	size_t n = 8 + 8 * k->nseek + 9;
	uint8_t *t = trace_xmalloc(n);
	put_u32(t, 0x184D2A5E);
	put_u32(t + 4, (uint32_t)(n - 8));
	for (size_t i = 0; i < k->nseek; i++) {
		put_u32(t + 8 + 8 * i, k->seek[2 * i]);
		put_u32(t + 12 + 8 * i, k->seek[2 * i + 1]);
	}
	put_u32(t + n - 9, (uint32_t)k->nseek);
	t[n - 5] = 0;
	put_u32(t + n - 4, 0x8F92EAB1);
	int r = put(k, t, n, err);
	free(t);
	return r;
}

/* tracekit's seek index, a skippable frame of its own between the last
 * frame and the seek table (where a seekable-format reader, which finds
 * the table from the end and the frames from the start, never looks). */
static int zstd_index(trace_sink *k, trace_error *err)
{
	uint8_t h[8];
	put_u32(h, TRACE_SEEKINDEX_MAGIC);
	put_u32(h + 4, (uint32_t)k->index.len);
	if (put(k, h, 8, err) < 0)
		return -1;
	return put(k, k->index.data, k->index.len, err);
}

/* Compresses one block into k->obuf and writes it; errno-style result. */
static int snappy_chunk(trace_sink *k, const uint8_t *block, size_t len)
{
	size_t olen = k->ocap - 4;
	if (k->snappy->compress((const char *)block, len, (char *)k->obuf + 4, &olen) != SNAPPY_OK)
		abort();
	k->obuf[0] = (uint8_t)olen;
	k->obuf[1] = (uint8_t)(olen >> 8);
	k->obuf[2] = (uint8_t)(olen >> 16);
	k->obuf[3] = (uint8_t)(olen >> 24);
	if (fwrite(k->obuf, 1, olen + 4, k->file) != olen + 4)
		return errno ? errno : EIO;
	return 0;
}

static int compress_block(trace_sink *k, const uint8_t *block, size_t len)
{
	return k->container == TRACE_FMT_ZSTD ? zstd_frame(k, block, len)
					      : snappy_chunk(k, block, len);
}

/* The worker runs as the thread that feeds it: a writer whose
 * scheduling changes (the capture layer raises its SCHED_IDLE writer
 * while the program waits for it) takes its compressor along. */
static void follow_sched(pthread_t feeder, int *policy)
{
	struct sched_param sp;
	int p;
	if (pthread_getschedparam(feeder, &p, &sp) == 0 && p != *policy &&
	    pthread_setschedparam(pthread_self(), p, &sp) == 0)
		*policy = p;
}

static void *worker_main(void *arg)
{
	trace_sink_worker *wk = arg;
	pthread_setname_np(pthread_self(), "tracekit-pack");
	struct sched_param sp;
	int policy = SCHED_OTHER;
	pthread_getschedparam(pthread_self(), &policy, &sp);
	pthread_mutex_lock(&wk->lock);
	for (;;) {
		while (!wk->block && !wk->stop)
			pthread_cond_wait(&wk->cond, &wk->lock);
		if (!wk->block)
			break;
		uint8_t *block = wk->block;
		size_t len = wk->len;
		pthread_mutex_unlock(&wk->lock);
		follow_sched(wk->feeder, &policy);
		int e = wk->error ? 0 : compress_block(wk->k, block, len);
		pthread_mutex_lock(&wk->lock);
		if (e)
			wk->error = e;
		wk->block = NULL;
		pthread_cond_broadcast(&wk->cond);
	}
	pthread_mutex_unlock(&wk->lock);
	return NULL;
}

/* 0 for no error, else -1 with err filled from errno value E. */
static int write_failed(trace_sink *k, int e, trace_error *err)
{
	if (!e)
		return 0;
	errno = e;
	trace_error_errno(err, k->name, "write error");
	k->failed = true;
	return -1;
}

/* Waits until the worker holds no block; its write error, if any. */
static int worker_idle(trace_sink *k, trace_error *err)
{
	trace_sink_worker *wk = k->worker;
	pthread_mutex_lock(&wk->lock);
	while (wk->block)
		pthread_cond_wait(&wk->cond, &wk->lock);
	int e = wk->error;
	pthread_mutex_unlock(&wk->lock);
	return write_failed(k, e, err);
}

static void worker_stop(trace_sink *k)
{
	trace_sink_worker *wk = k->worker;
	if (!wk)
		return;
	pthread_mutex_lock(&wk->lock);
	while (wk->block)
		pthread_cond_wait(&wk->cond, &wk->lock);
	wk->stop = true;
	pthread_cond_broadcast(&wk->cond);
	pthread_mutex_unlock(&wk->lock);
	pthread_join(wk->thread, NULL);
	pthread_mutex_destroy(&wk->lock);
	pthread_cond_destroy(&wk->cond);
	free(wk);
	k->worker = NULL;
}

/*
 * Hands the full buffer to the worker and goes on in the spare one.  The
 * sink owns both buffers; the worker borrows one block at a time, and the
 * spare is only refilled after worker_idle() says the loan is over.
 */
static int block_handoff(trace_sink *k, trace_error *err)
{
	trace_sink_worker *wk = k->worker;
	/* the last block of a trace that made no worker: here, not on a
	 * thread made for it (that cost a capture's exit milliseconds) */
	if (!wk && k->closing)
		return write_failed(k, compress_block(k, k->buf, k->len), err);
	if (!wk) {
		wk = calloc(1, sizeof(*wk));
		if (!wk)
			abort();
		wk->k = k;
		wk->feeder = pthread_self();
		pthread_mutex_init(&wk->lock, NULL);
		pthread_cond_init(&wk->cond, NULL);
		if (pthread_create(&wk->thread, NULL, worker_main, wk) != 0) {
			pthread_mutex_destroy(&wk->lock);
			pthread_cond_destroy(&wk->cond);
			free(wk);
			/* no thread: compress here */
			return write_failed(k, compress_block(k, k->buf, k->len), err);
		}
		k->worker = wk;
	}
	if (worker_idle(k, err) < 0)
		return -1;
	uint8_t *full = k->buf;
	k->buf = k->spare ? k->spare : trace_xmalloc_huge(k->cap);
	k->spare = full;
	pthread_mutex_lock(&wk->lock);
	wk->block = full;
	wk->len = k->len;
	pthread_cond_broadcast(&wk->cond);
	pthread_mutex_unlock(&wk->lock);
	return 0;
}

/* Waits for the last block and ends the worker; its error, if any. */
static int worker_finish(trace_sink *k, trace_error *err)
{
	if (!k->worker)
		return 0;
	int r = worker_idle(k, err);
	worker_stop(k);
	return r;
}

int trace_sink_flush_block(trace_sink *k, trace_error *err)
{
	if (k->failed)
		return -1;
	int r = 0;
	switch (k->container) {
	case TRACE_FMT_SNAPPY:
	case TRACE_FMT_ZSTD:
		if (k->len)
			r = block_handoff(k, err);
		break;
	case TRACE_FMT_BROTLI:
		r = brotli_run(k, BROTLI_OPERATION_PROCESS, err);
		break;
	default:
		r = put(k, k->buf, k->len, err);
		break;
	}
	k->written += k->len;
	k->len = 0;
	return r;
}

/*
 * Every byte accepted so far goes into the file, whole: the block as a
 * Snappy chunk (the worker's write waited for) or a Brotli flush (all of
 * the stream so far decodes), then stdio's buffer.  A file opened
 * unbuffered (the capture layer's) then gets each chunk in one write().
 */
int trace_sink_flush(trace_sink *k, trace_error *err)
{
	if (k->failed)
		return -1;
	int r;
	if (k->container == TRACE_FMT_BROTLI) {
		r = brotli_run(k, BROTLI_OPERATION_FLUSH, err);
		k->written += k->len;
		k->len = 0;
	} else {
		r = trace_sink_flush_block(k, err);
		if (r == 0 && k->worker)
			r = worker_idle(k, err);
	}
	if (r == 0 && fflush(k->file) != 0) {
		trace_error_errno(err, k->name, "write error");
		k->failed = true;
		r = -1;
	}
	return r;
}

int trace_sink_write_slow(trace_sink *k, const void *p, size_t n, trace_error *err)
{
	const uint8_t *s = p;
	while (n) {
		size_t room = k->cap - k->len;
		if (!room) {
			if (trace_sink_flush_block(k, err) < 0)
				return -1;
			continue;
		}
		size_t take = n < room ? n : room;
		memcpy(k->buf + k->len, s, take);
		k->len += take;
		s += take;
		n -= take;
	}
	return 0;
}

static void release(trace_sink *k)
{
	worker_stop(k);
	free(k->spare);
	if (k->container == TRACE_FMT_BROTLI && k->codec)
		k->brotli->destroy(k->codec);
	if (k->container == TRACE_FMT_ZSTD && k->codec)
		ZSTD_freeCCtx(k->codec);
	free(k->seek);
	tbuf_free(&k->index);
	free(k->buf);
	free(k->obuf);
	free(k->path);
	free(k->tmp);
	memset(k, 0, sizeof(*k));
}

int trace_sink_close(trace_sink *k, trace_error *err)
{
	k->closing = true;
	int r = trace_sink_flush_block(k, err);
	if (r == 0)
		r = worker_finish(k, err);
	if (r == 0 && k->container == TRACE_FMT_BROTLI)
		r = brotli_run(k, BROTLI_OPERATION_FINISH, err);
	if (r == 0 && k->container == TRACE_FMT_ZSTD && k->index.len)
		r = zstd_index(k, err);
	if (r == 0 && k->container == TRACE_FMT_ZSTD)
		r = zstd_seek_table(k, err);
	if (r == 0 && fflush(k->file) != 0) {
		trace_error_errno(err, k->name, "write error");
		r = -1;
	}
	if (k->own_file) {
		r = trace_output_close(k->file, k->path, k->tmp, r == 0, err);
		k->file = NULL;
		k->tmp = NULL;
	}
	release(k);
	return r;
}

/*
 * A file is removed.  A pipe (or a FIFO or device named as the output)
 * keeps what was written: the buffer holds whole records only, and the
 * records before a bad one are worth having (the calls before a crash);
 * the exit status says the stream is short.
 */
void trace_sink_abort(trace_sink *k)
{
	trace_error ignored;
	if (k->own_file && k->tmp) {
		worker_stop(k);
		trace_output_close(k->file, k->path, k->tmp, false, &ignored);
		k->file = NULL;
		k->tmp = NULL;
	} else if (k->file && !k->failed) {
		if (trace_sink_flush_block(k, &ignored) == 0 && worker_finish(k, &ignored) == 0 &&
		    k->container == TRACE_FMT_BROTLI)
			brotli_run(k, BROTLI_OPERATION_FINISH, &ignored);
		fflush(k->file);
	}
	if (k->own_file && k->file)
		fclose(k->file);
	release(k);
}
