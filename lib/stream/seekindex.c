/*
 * tracekit's seek index: what lets a reader of a zstd trace start in the
 * middle of the file, decompressing nothing before.
 *
 * zstd's seekable format says where each frame starts, in the file and
 * in the stream, but a reader cannot start parsing records at a frame:
 * frames are cut at a fixed size, not between records, and apitrace's
 * format defines each signature once, at its first use.  So the writer
 * adds a skippable frame of its own just before the seek table:
 *
 *     "TKIX", version (1)                              uint
 *     points: count, then per point the increase of   uint each
 *             pos, call, frame and defs over the last
 *     the log of definitions: its length, then it      uint
 *             compressed, one zstd frame
 *     CRC-32 (zlib's) of everything before             4 bytes, LE
 *
 * A point is a stream offset where no call is between its enter and its
 * leave, with the next call's number (which is also how many records
 * came before), the next record's frame, and how much of the log came
 * before: each entry of the log is a signature's kind (binformat.h's
 * sig_kind), its id and its definition's bytes as the stream has them.
 * All integers are apitrace's variable-length unsigned ones.
 *
 * A zstd reader passes over the frame; a seekable-format reader finds
 * the table from the file's end and the frames from its start, so it
 * never looks between them.
 *
 * The log is most of an index (Vulkan's enums name every value), so a
 * stream too short to be worth skipping in gets none: reading 16 MiB of
 * stream takes about a tenth of a second here.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define SEEKTABLE_MAGIC 0x8F92EAB1u
#define SKIPPABLE_SEEKTABLE 0x184D2A5Eu
#define INDEX_VERSION 1
/* More than any index a writer makes (64 KiB of stream a point). */
#define INDEX_MAX (256u << 20)

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

void trace_seekindex_encode(tbuf *out, const trace_sync *syncs, size_t n, const void *defs,
			    size_t ndefs)
{
	out->len = 0;
	tbuf_add(out, "TKIX", 4);
	tbuf_add_uint(out, INDEX_VERSION);
	tbuf_add_uint(out, n);
	trace_sync last = {0};
	for (size_t i = 0; i < n; i++) {
		tbuf_add_uint(out, syncs[i].pos - last.pos);
		tbuf_add_uint(out, syncs[i].call - last.call);
		tbuf_add_uint(out, syncs[i].frame - last.frame);
		tbuf_add_uint(out, syncs[i].defs - last.defs);
		last = syncs[i];
	}
	/* what comes after the last point's share is never read */
	if (n && ndefs > last.defs)
		ndefs = last.defs;
	tbuf_add_uint(out, ndefs);
	size_t bound = ZSTD_compressBound(ndefs);
	tbuf_grow(out, bound);
	size_t z = ZSTD_compress(out->data + out->len, bound, defs, ndefs, 3);
	if (ZSTD_isError(z))
		abort();  /* a bound-sized buffer: only a bug gets here */
	out->len += z;
	uint8_t crc[4];
	put_le32(crc, (uint32_t)crc32(0, (const Bytef *)out->data, (uInt)out->len));
	tbuf_add(out, crc, 4);
}

/* ------------------------------------------------------------------ */

static int bad(trace_error *err, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(trace_error *err, const char *name, const char *fmt, ...)
{
	trace_error_clear(err);
	snprintf(err->file, sizeof(err->file), "%s", name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int read_at(int fd, void *dst, size_t n, uint64_t at)
{
	uint8_t *d = dst;
	while (n) {
		ssize_t r = pread(fd, d, n, (off_t)at);
		if (r <= 0)
			return -1;
		d += r;
		n -= (size_t)r;
		at += (uint64_t)r;
	}
	return 0;
}

typedef struct cursor {
	const uint8_t *p, *end;
	uint64_t at;   /* file offset of the content's first byte */
	const uint8_t *start;
} cursor;

static bool get_uint(cursor *c, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;
		if (shift >= 64 || (shift == 63 && (b & 0x7f) > 1))
			return false;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static uint64_t here(const cursor *c)
{
	return c->at + (uint64_t)(c->p - c->start);
}

/* The index's content, checked whole: the points grow, stay inside the
 * stream (TOTAL bytes) and the log. */
static int parse(trace_seekindex *ix, cursor *c, uint64_t total, const char *name,
		 trace_error *err)
{
	size_t len = (size_t)(c->end - c->p);
	if (len < 8 || memcmp(c->p, "TKIX", 4))
		return bad(err, name, "seek index at file byte %llu: not tracekit's (no \"TKIX\")",
			   (unsigned long long)here(c));
	uint32_t want = get_le32(c->end - 4);
	uint32_t got = (uint32_t)crc32(0, c->p, (uInt)(len - 4));
	if (want != got)
		return bad(err, name, "seek index at file byte %llu: its CRC-32 is 0x%08x, its "
			   "bytes give 0x%08x", (unsigned long long)here(c), want, got);
	c->end -= 4;
	c->p += 4;
	uint64_t v, n;
	if (!get_uint(c, &v) || v != INDEX_VERSION)
		return bad(err, name, "seek index at file byte %llu: version %llu, where this "
			   "reads %d", (unsigned long long)here(c), (unsigned long long)v,
			   INDEX_VERSION);
	uint64_t at = here(c);
	/* each point takes 4 bytes at least */
	if (!get_uint(c, &n) || n > (uint64_t)(c->end - c->p) / 4)
		return bad(err, name, "seek index at file byte %llu: %llu points do not fit "
			   "its %zu bytes", (unsigned long long)at, (unsigned long long)n, len);
	ix->syncs = trace_xcalloc(n ? n : 1, sizeof(*ix->syncs));
	ix->nsyncs = n;
	trace_sync last = {0};
	for (uint64_t i = 0; i < n; i++) {
		uint64_t d[4];
		at = here(c);
		for (int k = 0; k < 4; k++)
			if (!get_uint(c, &d[k]))
				return bad(err, name, "seek index at file byte %llu: point %llu is "
					   "cut short", (unsigned long long)at,
					   (unsigned long long)i);
		trace_sync y = {last.pos + d[0], last.call + d[1], last.frame + d[2],
				last.defs + d[3]};
		if ((i && !d[0]) || y.pos < last.pos || y.call < last.call ||
		    y.frame < last.frame || y.defs < last.defs || y.pos >= total)
			return bad(err, name, "seek index at file byte %llu: point %llu (stream "
				   "byte %llu) does not follow the one before inside the stream "
				   "of %llu bytes", (unsigned long long)at,
				   (unsigned long long)i, (unsigned long long)y.pos,
				   (unsigned long long)total);
		ix->syncs[i] = last = y;
	}
	at = here(c);
	if (!get_uint(c, &v) || v > INDEX_MAX || v < last.defs)
		return bad(err, name, "seek index at file byte %llu: a log of %llu bytes, where "
			   "its points need %llu and an index holds %u at most",
			   (unsigned long long)at, (unsigned long long)v,
			   (unsigned long long)last.defs, INDEX_MAX);
	ix->defs_at = here(c);
	ix->ndefs = (size_t)v;
	ix->defs = trace_xmalloc(ix->ndefs ? ix->ndefs : 1);
	size_t size = ZSTD_decompress(ix->defs, ix->ndefs, c->p, (size_t)(c->end - c->p));
	if (ZSTD_isError(size) || size != ix->ndefs)
		return bad(err, name, "seek index at file byte %llu: its log does not decompress "
			   "to its %zu bytes (%s)", (unsigned long long)ix->defs_at, ix->ndefs,
			   ZSTD_isError(size) ? ZSTD_getErrorName(size) : "another size");
	return 0;
}

int trace_seekindex_load(int fd, const char *name, trace_seekindex *ix, trace_error *err)
{
	memset(ix, 0, sizeof(*ix));
	struct stat st;
	uint8_t foot[9], head[8];
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 17)
		return 0;
	uint64_t size = (uint64_t)st.st_size;
	if (read_at(fd, foot, 9, size - 9) < 0 || get_le32(foot + 5) != SEEKTABLE_MAGIC)
		return 0;
	uint64_t nframes = get_le32(foot);
	if (foot[4] & 0x7c)
		return bad(err, name, "seek table descriptor 0x%02x at file byte %llu has "
			   "reserved bits set", foot[4], (unsigned long long)(size - 5));
	uint64_t esize = foot[4] & 0x80 ? 12 : 8;
	uint64_t table = nframes * esize + 9;
	if (table + 8 > size)
		return bad(err, name, "seek table footer at file byte %llu: %llu frames, more "
			   "than the file's %llu bytes hold", (unsigned long long)(size - 9),
			   (unsigned long long)nframes, (unsigned long long)size);
	uint64_t ts = size - table - 8;
	uint8_t *t = trace_xmalloc(table + 8);
	int rc = -1;
	if (read_at(fd, t, table + 8, ts) < 0) {
		bad(err, name, "cannot read the seek table at file byte %llu",
		    (unsigned long long)ts);
		goto out;
	}
	if (get_le32(t) != SKIPPABLE_SEEKTABLE || get_le32(t + 4) != table) {
		bad(err, name, "seek table footer at file byte %llu: no seek table at file byte "
		    "%llu, where it puts one", (unsigned long long)(size - 9), (unsigned long long)ts);
		goto out;
	}
	ix->nframes = (size_t)nframes;
	ix->in = trace_xmalloc((ix->nframes + 1) * sizeof(*ix->in));
	ix->out = trace_xmalloc((ix->nframes + 1) * sizeof(*ix->out));
	ix->in[0] = ix->out[0] = 0;
	for (size_t i = 0; i < ix->nframes; i++) {
		uint32_t cs = get_le32(t + 8 + i * esize), ds = get_le32(t + 12 + i * esize);
		if (ds > TRACE_ZSTD_FRAME_MAX || ix->in[i] + cs > ts) {
			bad(err, name, "seek table entry %zu (file byte %llu): a frame of %u bytes "
			    "holding %u, which %s", i, (unsigned long long)(ts + 8 + i * esize),
			    cs, ds, ds > TRACE_ZSTD_FRAME_MAX ? "is more than any frame a trace "
			    "writer makes" : "runs past the seek table");
			goto out;
		}
		ix->in[i + 1] = ix->in[i] + cs;
		ix->out[i + 1] = ix->out[i] + ds;
	}
	uint64_t at = ix->in[ix->nframes];
	/* no index, or a frame that is not ours: read from the start */
	rc = 0;
	if (ts - at < 8 || read_at(fd, head, 8, at) < 0 ||
	    get_le32(head) != TRACE_SEEKINDEX_MAGIC)
		goto out;
	rc = -1;
	uint64_t len = get_le32(head + 4);
	if (len != ts - at - 8 || len > INDEX_MAX) {
		bad(err, name, "seek index at file byte %llu: %llu bytes, where %llu lie before "
		    "the seek table", (unsigned long long)at, (unsigned long long)len,
		    (unsigned long long)(ts - at - 8));
		goto out;
	}
	uint8_t *content = trace_xmalloc(len ? len : 1);
	if (read_at(fd, content, len, at + 8) < 0) {
		bad(err, name, "cannot read the seek index at file byte %llu",
		    (unsigned long long)at);
	} else {
		cursor c = {content, content + len, at + 8, content};
		rc = parse(ix, &c, ix->out[ix->nframes], name, err) < 0 ? -1 : 1;
	}
	free(content);
out:
	free(t);
	if (rc <= 0)
		trace_seekindex_free(ix);
	return rc;
}

void trace_seekindex_free(trace_seekindex *ix)
{
	free(ix->in);
	free(ix->out);
	free(ix->syncs);
	free(ix->defs);
	memset(ix, 0, sizeof(*ix));
}
