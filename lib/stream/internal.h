/*
 * libtrace internals shared between its files; not installed.
 */
#ifndef TRACE_INTERNAL_H
#define TRACE_INTERNAL_H

#include "trace.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <snappy-c.h>
#include <string.h>

#define TRACE_UNUSED __attribute__((unused))
#define TRACE_LIKELY(x) __builtin_expect(!!(x), 1)
#define TRACE_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* apitrace's reader keeps one chunk of at most 1 MiB; we write no more. */
#define TRACE_SNAPPY_CHUNK (1u << 20)
/* Uncompressed bytes in one zstd frame we write (a flush ends one early). */
#define TRACE_ZSTD_FRAME (2u << 20)
/* The most one zstd frame may hold when read (apitrace's are ~2 MiB). */
#define TRACE_ZSTD_FRAME_MAX (64u << 20)
/* What we accept when reading a chunk: generous, but bounded. */
#define TRACE_SNAPPY_CHUNK_MAX (64u << 20)
/* Deepest nesting of values we accept (apitrace writes a handful). */
#define TRACE_MAX_DEPTH 64

void *trace_xmalloc(size_t n);
void *trace_xcalloc(size_t n, size_t size);
void *trace_xrealloc(void *p, size_t n);
/* Storage of n bytes on huge pages where n is 2 MiB or more (freed with
 * free). */
void *trace_xmalloc_huge(size_t n);
char *trace_xstrdup(const char *s);
/* A thread of libtrace's own (pthread_create's result): it starts with
 * every signal blocked, so that signals stay with the program's threads. */
#include <pthread.h>
int trace_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* An input by its path: standard input for NULL or "-" (*name "-"), else
 * the file opened for reading (*name PATH); NULL with ERR set if it
 * cannot be opened.  The caller closes what is not stdin. */
FILE *trace_open_input(const char *path, const char **name, trace_error *err);

/* ------------------------------------------------------------------ */
/* Snappy and Brotli, loaded when first needed (codec.c).  Each table is
 * the library's functions in this order; NULL with ERR's message set
 * (the caller gives the location) where the library cannot be loaded. */

typedef struct trace_snappy {
	snappy_status (*compress)(const char *in, size_t n, char *out, size_t *outn);
	snappy_status (*uncompress)(const char *in, size_t n, char *out, size_t *outn);
	snappy_status (*uncompressed_length)(const char *in, size_t n, size_t *result);
	size_t (*max_compressed_length)(size_t n);
} trace_snappy;

typedef struct trace_brotli_enc {
	BrotliEncoderState *(*create)(brotli_alloc_func, brotli_free_func, void *);
	BROTLI_BOOL (*set_parameter)(BrotliEncoderState *, BrotliEncoderParameter, uint32_t);
	BROTLI_BOOL (*compress_stream)(BrotliEncoderState *, BrotliEncoderOperation, size_t *,
				       const uint8_t **, size_t *, uint8_t **, size_t *);
	BROTLI_BOOL (*has_more_output)(BrotliEncoderState *);
	BROTLI_BOOL (*is_finished)(BrotliEncoderState *);
	void (*destroy)(BrotliEncoderState *);
} trace_brotli_enc;

typedef struct trace_brotli_dec {
	BrotliDecoderState *(*create)(brotli_alloc_func, brotli_free_func, void *);
	BrotliDecoderResult (*decompress_stream)(BrotliDecoderState *, size_t *, const uint8_t **,
						 size_t *, uint8_t **, size_t *);
	BrotliDecoderErrorCode (*error_code)(const BrotliDecoderState *);
	const char *(*error_string)(BrotliDecoderErrorCode);
	void (*destroy)(BrotliDecoderState *);
} trace_brotli_dec;

const trace_snappy *trace_snappy_lib(trace_error *err);
const trace_brotli_enc *trace_brotli_enc_lib(trace_error *err);
const trace_brotli_dec *trace_brotli_dec_lib(trace_error *err);
/* Opens SONAME and looks up its N functions NAMES into FNS (the tables'
 * loader, apart for its tests); -1 with ERR's message set. */
int trace_codec_load(const char *soname, const char *const *names, size_t n, void **fns,
		     trace_error *err);

/* ------------------------------------------------------------------ */
/* A growable byte buffer (git's strbuf, in small). */

typedef struct tbuf {
	char *data;
	size_t len, cap;
} tbuf;

void tbuf_grow(tbuf *b, size_t extra);
void tbuf_free(tbuf *b);
static inline void tbuf_add(tbuf *b, const void *p, size_t n)
{
	if (b->cap - b->len < n)
		tbuf_grow(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}
static inline void tbuf_addc(tbuf *b, char c)
{
	if (b->cap == b->len)
		tbuf_grow(b, 1);
	b->data[b->len++] = c;
}
static inline void tbuf_adds(tbuf *b, const char *s) { tbuf_add(b, s, strlen(s)); }
/* Code point CP (up to 0x10FFFF) as UTF-8 into OUT: its length. */
static inline size_t trace_utf8_encode(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* apitrace's variable-length unsigned integer (7 bits a byte, low first)
 * into BUF, 10 bytes at most: its length. */
static inline size_t trace_uint_encode(uint8_t *buf, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		buf[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	return n;
}
static inline void tbuf_add_uint(tbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	tbuf_add(b, tmp, trace_uint_encode(tmp, v));
}
void tbuf_addf(tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ */
/* The map (lib/base/tmap.h). */
#include "tmap.h"

/* ------------------------------------------------------------------ */
/* Input: a window over the decompressed stream. */

typedef struct trace_source trace_source;
struct trace_source {
	const uint8_t *p, *end;  /* unread bytes of the window */
	uint8_t *buf;            /* owned window storage (NULL for memory) */
	size_t cap;
	size_t lead;             /* bytes of buf kept free before the window */
	uint64_t base;           /* stream offset of the window's first byte */
	const uint8_t *win;      /* the window's first byte */
	bool eof;                /* nothing more will come */
	bool cut;                /* the input ends inside a chunk, a compressed
				  * stream or a record: cut off */
	trace_format container;

	/* the compressed input underneath */
	FILE *file;
	bool own_file;
	const uint8_t *mem;
	size_t memsize, mempos;
	uint8_t peek[4];
	size_t npeek;
	uint64_t inpos;          /* compressed bytes consumed */
	int64_t chunk_at;        /* file offset of the current chunk */

	void *codec;             /* Brotli, zlib or zstd state */
	const trace_snappy *snappy;     /* the libraries' functions, when used */
	const trace_brotli_dec *brotli;
	bool zstd_inside;        /* the zstd input so far ends inside a frame */
	uint8_t *inbuf;          /* compressed input buffer */
	size_t inlen, inoff, incap;
	uint8_t *cbuf;           /* one compressed Snappy chunk, or one zstd
				  * frame as it decompresses */
	size_t ccap, clen;

	const char *name;
	int (*fill)(trace_source *s, size_t want, trace_error *err);
	struct readahead *ahead; /* the thread that reads and decompresses
				  * ahead (a compressed regular file), or NULL */
};

/* Opens the container found at the start of the input. */
int trace_source_open(trace_source *s, trace_error *err);
void trace_source_close(trace_source *s);
/* Makes at least n bytes readable at s->p; fewer only at the end. */
int trace_source_need_slow(trace_source *s, size_t n, trace_error *err);
static inline int trace_source_need(trace_source *s, size_t n, trace_error *err)
{
	if (TRACE_LIKELY((size_t)(s->end - s->p) >= n))
		return 0;
	return trace_source_need_slow(s, n, err);
}
static inline uint64_t trace_source_offset(const trace_source *s)
{
	return s->base + (uint64_t)(s->p - s->win);
}
/* Fills err's location from the source (stream offset, chunk). */
void trace_source_locate(const trace_source *s, trace_error *err, uint64_t offset);

/* ------------------------------------------------------------------ */
/* Output: buffered bytes, compressed as the container asks. */

typedef struct trace_sink {
	uint8_t *buf;            /* uncompressed bytes waiting */
	uint8_t *spare;          /* the other block, while the worker has one */
	size_t len, cap;
	trace_format container;
	int quality;
	FILE *file;
	bool own_file;
	char *path, *tmp;        /* final and temporary names, for files */
	const char *name;
	void *codec;
	const trace_snappy *snappy;     /* the libraries' functions, when used */
	const trace_brotli_enc *brotli;
	uint8_t *obuf;           /* compressed output staging */
	size_t ocap;
	bool failed;
	bool closing;            /* in trace_sink_close: a last block is compressed here */
	uint64_t written;        /* uncompressed bytes accepted */
	struct trace_sink_worker *worker; /* compresses Snappy or zstd blocks, or NULL */
	uint32_t *seek;          /* zstd: per frame its compressed, then uncompressed size */
	size_t nseek, capseek;
	tbuf index;              /* zstd: tracekit's seek index, written at the close */
} trace_sink;

/* To PATH (a file, renamed into place on close) or, with PATH NULL or
 * "-", to F (stdout if NULL), called NAME in messages. */
int trace_sink_open(trace_sink *k, const char *path, FILE *f, const char *name,
		    trace_format container, int quality, trace_error *err);
int trace_sink_flush_block(trace_sink *k, trace_error *err);
/* What was accepted so far, whole in the file (trace_writer_flush). */
int trace_sink_flush(trace_sink *k, trace_error *err);
int trace_sink_close(trace_sink *k, trace_error *err);
void trace_sink_abort(trace_sink *k);
int trace_sink_write_slow(trace_sink *k, const void *p, size_t n, trace_error *err);
static inline int trace_sink_write(trace_sink *k, const void *p, size_t n, trace_error *err)
{
	if (TRACE_LIKELY(k->cap - k->len >= n)) {
		memcpy(k->buf + k->len, p, n);
		k->len += n;
		return 0;
	}
	return trace_sink_write_slow(k, p, n, err);
}

/* ------------------------------------------------------------------ */
/* tracekit's seek index (seekindex.c): a skippable zstd frame before the
 * seek table. */

/* A point where no call is open: at stream byte POS, the next enter is
 * call CALL, the next record is in FRAME, and the first DEFS bytes of the
 * log of signature definitions came before. */
/* The skippable frame's magic (zstd's 0x184D2A5?, ours the last but one). */
#define TRACE_SEEKINDEX_MAGIC 0x184D2A5Du

typedef struct trace_sync {
	uint64_t pos, call, frame, defs;
} trace_sync;

typedef struct trace_seekindex {
	uint64_t *in, *out;      /* per zstd frame, and one past the last: its
				  * file offset and its stream offset */
	size_t nframes;
	trace_sync *syncs;
	size_t nsyncs;
	uint8_t *defs;           /* each: kind (binformat's SK_ order), id, bytes */
	size_t ndefs;
	uint64_t defs_at;        /* the log's file offset, for messages */
} trace_seekindex;

/* The skippable frame's content. */
void trace_seekindex_encode(tbuf *out, const trace_sync *syncs, size_t n, const void *defs,
			    size_t ndefs);
/* From the file FD (NAME in messages): 1 loaded, 0 the file has none
 * (not the seekable format, or no index of ours), -1 damaged. */
int trace_seekindex_load(int fd, const char *name, trace_seekindex *ix, trace_error *err);
void trace_seekindex_free(trace_seekindex *ix);
/* Starts reading the zstd frame at file offset IN, stream offset OUT,
 * then passes SKIP bytes of it. */
int trace_source_jump(trace_source *s, uint64_t in, uint64_t out, uint64_t skip,
		      trace_error *err);

/* ------------------------------------------------------------------ */
/* Encodings behind the reader and writer. */

typedef struct trace_binreader trace_binreader;
typedef struct trace_textreader trace_textreader;

trace_binreader *trace_binreader_new(trace_source *s, trace_sigtab *t);
int trace_binreader_header(trace_binreader *b, trace_header *h, trace_arena *a,
			   trace_error *err);
int trace_binreader_next(trace_binreader *b, trace_call **call, trace_error *err);
/* Whether no call is open: the reader may jump. */
bool trace_binreader_settled(const trace_binreader *b);
/* Goes on at a point of the seek index: the next call numbered NEXT_NO,
 * the signatures those LEN bytes of the log define known. */
int trace_binreader_jump(trace_binreader *b, uint64_t next_no, const uint8_t *defs, size_t len,
			 trace_error *err);
/* The call the last trace_binreader_next returned becomes the caller's
 * (the next does not take it back), to be given back with
 * trace_binreader_give_back on the reading thread: decoding ahead. */
trace_call *trace_binreader_keep(trace_binreader *b);
void trace_binreader_give_back(trace_binreader *b, trace_call *c);
void trace_binreader_free(trace_binreader *b);

trace_textreader *trace_textreader_new(trace_source *s, trace_sigtab *t);
int trace_textreader_header(trace_textreader *x, trace_header *h, trace_arena *a,
			    trace_error *err);
int trace_textreader_next(trace_textreader *x, trace_call **call, trace_error *err);
void trace_textreader_free(trace_textreader *x);

/* Appends the property NAME: VALUE to H, its array in A (CAP: its
 * room, 0 at first); the readers build a header with it. */
void trace_header_add(trace_header *h, trace_arena *a, size_t *cap, const char *name,
		      const char *value);

/* Text writing of one record or header into b (no trailing newline). */
void trace_text_header(tbuf *b, const trace_header *h);
typedef struct trace_textcache trace_textcache;
trace_textcache *trace_textcache_new(void);
void trace_textcache_free(trace_textcache *c);
void trace_text_call(tbuf *b, const trace_call *c, trace_textcache *cache);

/* Number formatting shared by the text writer and tests. */
size_t trace_fmt_float(char *out, float f);   /* shortest round-trip */
size_t trace_fmt_double(char *out, double d); /* shortest round-trip */

/* Base64 for blobs in text (YAML's !!binary). */
void trace_base64_encode(tbuf *b, const uint8_t *p, size_t n);

/* textnum.c: the text form's numbers.  Digits alone in BASE (10 or 16);
 * an integer in decimal or 0x-hex,
 * signed or not (bitmasks use all 64 bits); whether S is a real; a real
 * (S NUL-ended; .inf and .nan too), as a double or rounded once to float. */
bool trace_text_u64(const char *s, size_t n, int base, uint64_t *out);
bool trace_text_int(const char *s, size_t n, int64_t *out);
bool trace_text_uint(const char *s, size_t n, uint64_t *out);
bool trace_text_is_float(const char *s, size_t n);
double trace_text_real(const char *s, size_t n);
float trace_text_real_f(const char *s);
/* Decodes into out (at least n*3/4+3 bytes); returns length or -1. */
long trace_base64_decode(uint8_t *out, const char *s, size_t n);

/* Whether the N bytes at P are a function's name: printable ASCII
 * (Vulkan's, GL's, Direct3D's "IDirect3DDevice9::Present", a test's "odd
 * fn"), which every message about its calls then shows as it is, one
 * byte at least.  If not, why into WHY (CAP bytes) and the offset of the
 * byte at fault into *AT (0: the name is empty). */
static inline bool trace_name_ok(const uint8_t *p, size_t n, size_t *at, char *why, size_t cap)
{
	*at = 0;
	if (!n) {
		snprintf(why, cap, "a function name is empty");
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] > 0x7e) {
			*at = i;
			snprintf(why, cap, "a function name holds byte 0x%02x, which no name has", p[i]);
			return false;
		}
	return true;
}

#endif
