/*
 * The VMA CSV reader: a hand-written scanner over the mapped file (or
 * large reads from a pipe): memchr finds a line, the columns are parsed
 * where they lie, and one trace_call per kind of record is reused (its
 * arena reset per line), so a column never costs a malloc.  Recordings run
 * to millions of lines and the figure we answer for is "faster than awk
 * splitting the same file".
 */
#include "vma_columns.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Columns as the reader scans them. */

/*
 * Eight bytes at a time.  The word tricks below read a little-endian
 * load (x86, ARM): the first byte of the text is the low byte.
 */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

static inline uint64_t load8(const char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

/* The end of the column that starts at p: its comma, or e.  Function
 * names run to 26 bytes, so look for the comma a word at a time. */
static inline const char *column_end(const char *p, const char *e)
{
	while (e - p >= 8) {
		uint64_t x = load8(p) ^ (ONES * ',');
		uint64_t zero = (x - ONES) & ~x & HIGHS; /* lowest set byte is exact */
		if (zero)
			return p + (__builtin_ctzll(zero) >> 3);
		p += 8;
	}
	while (p < e && *p != ',')
		p++;
	return p;
}

/*
 * Eight upper-case hex digits (MSVC's %p) to their value, or false: each
 * byte range-checked and converted in the word, then the nibbles packed,
 * first digit highest.
 */
static inline bool hex8_upper(const char *p, uint32_t *out)
{
	uint64_t w = load8(p);
	if (w & HIGHS)
		return false;
	/* bytes below 0x80 plus (0x80 - k) carry into their top bit iff >= k */
	uint64_t ge_0 = (w + ONES * (0x80 - '0')) & HIGHS;
	uint64_t gt_9 = (w + ONES * (0x80 - '9' - 1)) & HIGHS;
	uint64_t ge_a = (w + ONES * (0x80 - 'A')) & HIGHS;
	uint64_t gt_f = (w + ONES * (0x80 - 'F' - 1)) & HIGHS;
	uint64_t digit = ge_0 & ~gt_9, letter = ge_a & ~gt_f;
	if ((digit | letter) != HIGHS)
		return false;
	uint64_t n = (w & (ONES * 0x0f)) + (letter >> 7) * 9;
	n = ((n << 4) | (n >> 8)) & 0x00ff00ff00ff00ffull;
	n = ((n << 8) | (n >> 16)) & 0x0000ffff0000ffffull;
	*out = (uint32_t)((n & 0xffff) << 16 | (n >> 32));
	return true;
}

/*
 * The uint column that starts at p, and its end: what VMA writes goes the
 * fast way, in one pass; anything else gets scan_uint's verdict.
 */
static inline int uint_column(const char *p, const char *e, uint64_t max, uint64_t *v,
			      const char **end)
{
	const char *q = p;
	uint64_t x = 0;
	while (q < e) {
		unsigned d = (unsigned)(unsigned char)*q - '0';
		if (d > 9)
			break;
		x = x * 10 + d;
		q++;
	}
	size_t n = (size_t)(q - p);
	if ((q == e || *q == ',') && n - 1 < 19 && (*p != '0' || n == 1) && x <= max) {
		*v = x;
		*end = q;
		return NUM_OK;
	}
	*end = column_end(q, e);
	return scan_uint(p, *end, max, v);
}

/* At most 12 integer digits, so that milliseconds stay below 2^50 and
 * the double of a time prints back (as %.3f) to the same text. */
#define TIME_INT_DIGITS_MAX 12

/*
 * The time column that starts at p, and its end: true with milliseconds
 * when it is spelled as VMA writes it (%.3f).  ms / 1000.0 is then the
 * double nearest the decimal: both are exact and IEEE division rounds once.
 */
static inline bool time_column(const char *p, const char *e, uint64_t *ms, const char **end)
{
	const char *q = p;
	uint64_t v = 0;
	while (q < e && (unsigned)(unsigned char)*q - '0' <= 9)
		v = v * 10 + (unsigned)(*q++ - '0');
	size_t n = (size_t)(q - p);
	bool ok = n >= 1 && n <= TIME_INT_DIGITS_MAX && (*p != '0' || n == 1) && e - q >= 4 &&
		  q[0] == '.';
	if (ok) {
		for (int i = 1; i <= 3; i++) {
			unsigned d = (unsigned)(unsigned char)q[i] - '0';
			ok = ok && d <= 9;
			v = v * 10 + d;
		}
		q += 4;
		ok = ok && (q == e || *q == ',');
	}
	if (ok) {
		*ms = v;
		*end = q;
		return true;
	}
	*end = column_end(p, e);
	return false;
}

static inline const char *trim_cr(const char *s, const char *e)
{
	while (e > s && e[-1] == '\r')
		e--;
	return e;
}

/* ------------------------------------------------------------------ */
/* Reading. */

#define READ_BLOCK (1u << 20)

struct vma_reader {
	/* the window: data[0..len) are input bytes from offset base on */
	FILE *file;
	bool own_file;
	char *buf;             /* owned storage for file input */
	size_t cap;
	void *map;             /* or the whole file, mapped */
	size_t mapsize;
	const char *data;
	size_t len, pos;       /* pos: the first byte not yet taken */
	uint64_t base;
	bool eof;
	char *name;
	int64_t line;          /* number of the line last taken */
	const char *line_start;
	trace_error *err;
	char msg[2][64];       /* shown() buffers */

	uint8_t slots[64];     /* function index + 1 by fn_hash(), 0 = empty */
	trace_sigtab *sigtab;
	const trace_func_sig *sigs[NFUNCTIONS];
	const trace_func_sig *frame_sig, *time_sig;
	trace_header header;
	trace_arena harena;    /* the header's strings */
	vma_pointer_style style;

	trace_call call, frame, time;
	trace_call *queue[3];
	int nqueue, iqueue;
	uint64_t next_no;
	bool started;
	uint32_t cur_frame;
	tbuf cur_time;         /* the time column of the last line */
};

/* Every line names a function: a hash of three bytes finds it in one or
 * two probes, where the table would take a dozen comparisons. */
static inline unsigned fn_hash(const char *name, size_t len)
{
	return (unsigned)(len * 31 + (unsigned char)name[3] * 7 +
			  (unsigned char)name[len - 1]) & 63;
}

static void build_slots(vma_reader *r)
{
	for (size_t i = 0; i < NFUNCTIONS; i++) {
		unsigned h = fn_hash(vma_function_table[i].name, vma_function_table[i].namelen);
		while (r->slots[h])
			h = (h + 1) & 63;
		r->slots[h] = (uint8_t)(i + 1);
	}
}

/* Short equal-length strings, compared inline: a call to memcmp costs
 * more than the comparison. */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
	for (; n >= 8; n -= 8, a += 8, b += 8)
		if (load8(a) != load8(b))
			return false;
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static inline const vma_function *lookup(const vma_reader *r, const char *name, size_t len)
{
	if (len < 4)
		return NULL;
	for (unsigned h = fn_hash(name, len); r->slots[h]; h = (h + 1) & 63) {
		const vma_function *f = &vma_function_table[r->slots[h] - 1];
		if (f->namelen == len && same_bytes(f->name, name, len))
			return f;
	}
	return NULL;
}

__attribute__((format(printf, 3, 4)))
static int fail_at(vma_reader *r, const char *at, const char *fmt, ...)
{
	trace_error *err = r->err;
	trace_error_clear(err);
	snprintf(err->file, sizeof(err->file), "%s", r->name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (at) {
		err->line = r->line;
		err->column = at - r->line_start + 1;
		err->offset = (int64_t)(r->base + (uint64_t)(at - r->data));
	} else {
		/* at the end of the input, where the next line would be */
		err->line = r->line + 1;
		err->offset = (int64_t)(r->base + r->pos);
	}
	return -1;
}

static const char *show(vma_reader *r, int i, const char *p, const char *e)
{
	return shown(r->msg[i], sizeof(r->msg[i]), p, (size_t)(e - p));
}

/* Reads more input into the window, keeping the bytes from pos on. */
static int fill(vma_reader *r)
{
	if (r->eof)
		return 0;
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->base += r->pos;
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == r->cap) {
		r->cap *= 2;
		r->buf = trace_xrealloc(r->buf, r->cap);
	}
	r->data = r->buf;
	size_t got = fread(r->buf + r->len, 1, r->cap - r->len, r->file);
	r->len += got;
	if (got == 0) {
		if (ferror(r->file)) {
			trace_error_errno(r->err, r->name, "read error");
			return -1;
		}
		r->eof = true;
	}
	return 0;
}

/*
 * Finds the line that starts rel bytes after pos, reading as needed:
 * *eol (also from pos) is its '\n' or the end of the input.  1 if there
 * is such a line, 0 at the end, -1 on a read error.  Offsets from pos
 * survive a fill; pointers into the window do not.
 */
static int find_line(vma_reader *r, size_t rel, size_t *eol)
{
	size_t scan = rel;
	for (;;) {
		size_t have = r->len - r->pos;
		if (scan < have) {
			const char *nl = memchr(r->data + r->pos + scan, '\n', have - scan);
			if (nl) {
				*eol = (size_t)(nl - r->data) - r->pos;
				return 1;
			}
			scan = have;
		}
		if (r->eof) {
			*eol = have;
			return have > rel;
		}
		if (fill(r) < 0)
			return -1;
	}
}

/* Takes the next line: [*s, *e) without its CRs. */
static int take_line(vma_reader *r, const char **s, const char **e)
{
	size_t eol;
	int k = find_line(r, 0, &eol);
	if (k <= 0)
		return k;
	*s = r->data + r->pos;
	*e = trim_cr(*s, *s + eol);
	r->line_start = *s;
	r->line++;
	r->pos += eol < r->len - r->pos ? eol + 1 : eol;
	return 1;
}

/* The spelling of the first pointer in the line, 0 for none, -1 when the
 * line is not one we can look into (the parse will say why). */
static int sniff_line(const char *s, const char *e)
{
	const char *p = s;
	for (int i = 0; i < 3; i++) {
		p = memchr(p, ',', (size_t)(e - p));
		if (!p)
			return -1;
		p++;
	}
	const char *q = memchr(p, ',', (size_t)(e - p));
	const vma_function *f = vma_function_lookup(p, (size_t)((q ? q : e) - p));
	if (!f)
		return -1;
	p = q;
	for (uint32_t i = 0; i < f->nparams; i++) {
		if (!p)
			return -1;
		p++;
		const vma_param *pa = &f->params[i];
		if (pa->type == VMA_STRING)
			return 0;
		q = memchr(p, ',', (size_t)(e - p));
		const char *fe = q ? q : e;
		if (pa->type == VMA_POINTER_LIST && p < fe) {
			const char *sp = memchr(p, ' ', (size_t)(fe - p));
			fe = sp ? sp : fe;
		}
		if ((pa->type == VMA_POINTER || pa->type == VMA_POINTER_LIST) && p < fe) {
			uint64_t v;
			vma_pointer_style st = vma_pointer_parse(p, (size_t)(fe - p), &v);
			return st ? (int)st : -1;
		}
		p = q;
	}
	return 0;
}

/*
 * The header goes out before any record, and says how pointers are
 * spelled: so look ahead, without taking lines, to the first pointer.
 * Recordings name a pool or an allocation within a few lines.
 */
static int sniff_pointers(vma_reader *r)
{
	size_t rel = 0, eol;
	int k;
	while ((k = find_line(r, rel, &eol)) > 0) {
		const char *s = r->data + r->pos + rel;
		const char *e = trim_blanks(s, trim_cr(s, r->data + r->pos + eol));
		rel = eol + 1;
		int st = sniff_line(s, e);
		if (st > 0)
			r->style = (vma_pointer_style)st;
		if (st != 0)
			return 0;
	}
	return k;
}

static void add_prop(vma_reader *r, size_t *n, const char *name, const char *value)
{
	r->header.props[*n].name = name;
	r->header.props[*n].value = value;
	(*n)++;
}

static int read_header(vma_reader *r)
{
	static const char magic[] = VMA_MAGIC_LINE;
	const char *s, *e;
	int k = take_line(r, &s, &e);
	if (k < 0)
		return -1;
	if (k == 0)
		return fail_at(r, NULL, "empty input, not a VMA recording (expected '%s')", magic);
	e = trim_blanks(s, e);
	if ((size_t)(e - s) != sizeof(magic) - 1 || memcmp(s, magic, sizeof(magic) - 1))
		return fail_at(r, s, "not a VMA recording: the first line is '%s', not '%s'",
			       show(r, 0, s, e), magic);

	k = take_line(r, &s, &e);
	if (k < 0)
		return -1;
	if (k == 0)
		return fail_at(r, NULL, "the recording ends before its format version");
	e = trim_blanks(s, e);
	const char *comma = memchr(s, ',', (size_t)(e - s));
	uint64_t major, minor;
	if (!comma || scan_uint(s, comma, UINT32_MAX, &major) ||
	    scan_uint(comma + 1, e, UINT32_MAX, &minor))
		return fail_at(r, s, "bad format version '%s' (expected MAJOR,MINOR, such as 1,8)",
			       show(r, 0, s, e));
	if (major != VMA_VERSION_MAJOR || minor > VMA_VERSION_MINOR_MAX)
		return fail_at(r, s, "unknown format version %s (vma-import reads 1,0 to 1,%d)",
			       show(r, 0, s, e), VMA_VERSION_MINOR_MAX);
	const char *version = trace_arena_strndup(&r->harena, s, (size_t)(e - s));

	char **config = NULL;
	size_t nconfig = 0, cconfig = 0;
	bool has_config = minor >= VMA_VERSION_MINOR_CONFIG;
	if (has_config) {
		k = take_line(r, &s, &e);
		if (k < 0)
			return -1;
		const char *t = k ? trim_blanks(s, e) : NULL;
		if (!k || (size_t)(t - s) != 12 || memcmp(s, "Config,Begin", 12)) {
			if (!k)
				return fail_at(r, NULL, "the recording ends before 'Config,Begin' "
					       "(format 1,3 and later have a Config section)");
			return fail_at(r, s, "expected 'Config,Begin' (format 1,3 and later have a "
				       "Config section), found '%s'", show(r, 0, s, e));
		}
		for (;;) {
			k = take_line(r, &s, &e);
			if (k <= 0) {
				free(config);
				if (k < 0)
					return -1;
				return fail_at(r, NULL, "the Config section has no 'Config,End' line");
			}
			t = trim_blanks(s, e);
			if ((size_t)(t - s) == 10 && !memcmp(s, "Config,End", 10))
				break;
			/* kept as read, blanks and all; it becomes a C string */
			const char *nul = memchr(s, 0, (size_t)(e - s));
			if (nul) {
				free(config);
				return fail_at(r, nul, "a NUL byte in a Config line");
			}
			if (nconfig == cconfig) {
				cconfig = cconfig ? cconfig * 2 : 64;
				config = trace_xrealloc(config, cconfig * sizeof(*config));
			}
			config[nconfig++] = trace_arena_strndup(&r->harena, s, (size_t)(e - s));
		}
	}

	if (sniff_pointers(r) < 0) {
		free(config);
		return -1;
	}

	size_t nprops = 1 + (r->style != VMA_PTR_UNKNOWN) + (has_config ? 1 + nconfig : 0);
	r->header.version = TRACE_FORMAT_VERSION;
	r->header.semantic_version = TRACE_FORMAT_VERSION;
	r->header.props = trace_arena_alloc(&r->harena, nprops * sizeof(trace_property));
	size_t n = 0;
	add_prop(r, &n, VMA_PROP_VERSION, version);
	if (r->style != VMA_PTR_UNKNOWN)
		add_prop(r, &n, VMA_PROP_POINTERS, vma_pointer_style_name(r->style));
	if (has_config) {
		char num[32];
		snprintf(num, sizeof(num), "%zu", nconfig);
		add_prop(r, &n, VMA_PROP_CONFIG_LINES, trace_arena_strndup(&r->harena, num,
									 strlen(num)));
		for (size_t i = 0; i < nconfig; i++) {
			char name[48];
			int len = snprintf(name, sizeof(name), VMA_PROP_CONFIG_PREFIX "%zu", i);
			add_prop(r, &n, trace_arena_strndup(&r->harena, name, (size_t)len),
				 config[i]);
		}
	}
	r->header.nprops = (uint32_t)n;
	free(config);
	return 0;
}

static vma_reader *reader_new(const char *name, trace_error *err)
{
	vma_reader *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->name = trace_xstrdup(name ? name : "-");
	r->err = err;
	r->sigtab = trace_sigtab_new();
	build_slots(r);
	trace_arena_init(&r->harena);
	trace_call_init(&r->call);
	trace_call_init(&r->frame);
	trace_call_init(&r->time);
	static const char *const frame_args[] = {"index"};
	static const char *const time_args[] = {"seconds"};
	r->frame_sig = trace_sigtab_func(r->sigtab, VMA_CALL_FRAME, 1, frame_args);
	r->time_sig = trace_sigtab_func(r->sigtab, VMA_CALL_TIME, 1, time_args);
	return r;
}

static vma_reader *reader_start(vma_reader *r)
{
	if (read_header(r) < 0) {
		vma_reader_close(r);
		return NULL;
	}
	return r;
}

/*
 * A regular file read from its start is mapped rather than read: the
 * copy out of the page cache was a tenth of the import.  Anything else (a
 * pipe, a terminal, a file half read) goes through the window.
 */
static bool map_file(vma_reader *r, FILE *f)
{
	struct stat st;
	int fd = fileno(f);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX || lseek(fd, 0, SEEK_CUR) != 0)
		return false;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return false;
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	r->map = m;
	r->mapsize = (size_t)st.st_size;
	r->data = m;
	r->len = r->mapsize;
	r->eof = true;
	return true;
}

static vma_reader *reader_over_file(vma_reader *r, FILE *f, bool own)
{
	r->file = f;
	r->own_file = own;
	if (!map_file(r, f)) {
		r->cap = READ_BLOCK;
		r->buf = trace_xmalloc(r->cap);
		r->data = r->buf;
	}
	return reader_start(r);
}

vma_reader *vma_reader_open_file(FILE *f, const char *name, trace_error *err)
{
	trace_error_clear(err);
	return reader_over_file(reader_new(name, err), f, false);
}

vma_reader *vma_reader_open(const char *path, trace_error *err)
{
	const char *name;
	FILE *f = trace_open_input(path, &name, err);
	if (!f || f == stdin)
		return f ? vma_reader_open_file(f, name, err) : NULL;
	trace_error_clear(err);
	return reader_over_file(reader_new(name, err), f, true);
}

vma_reader *vma_reader_open_memory(const void *data, size_t size, const char *name,
				   trace_error *err)
{
	trace_error_clear(err);
	vma_reader *r = reader_new(name, err);
	r->data = data ? data : "";
	r->len = data ? size : 0;
	r->eof = true;
	return reader_start(r);
}

const trace_header *vma_reader_header(vma_reader *r)
{
	return &r->header;
}

uint64_t vma_reader_position(const vma_reader *r)
{
	return r->base + r->pos;
}

void vma_reader_close(vma_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->mapsize);
	if (r->own_file)
		fclose(r->file);
	free(r->buf);
	free(r->name);
	trace_call_free(&r->call);
	trace_call_free(&r->frame);
	trace_call_free(&r->time);
	trace_arena_free(&r->harena);
	tbuf_free(&r->cur_time);
	trace_sigtab_free(r->sigtab);
	free(r);
}

/* ------------------------------------------------------------------ */
/* One line of a recording. */

static int bad_number(vma_reader *r, int why, const char *p, const char *e, const char *what,
		      const char *type)
{
	switch (why) {
	case NUM_EMPTY:
		return fail_at(r, p, "expected %s (a %s), found an empty column", what, type);
	case NUM_ZERO:
		return fail_at(r, p, "'%s' is not %s: a %s is written without leading zeros",
			       show(r, 0, p, e), what, type);
	case NUM_RANGE:
		return fail_at(r, p, "'%s' is out of range for %s (a %s)", show(r, 0, p, e),
			       what, type);
	default:
		return fail_at(r, p, "'%s' is not a number (expected %s, a %s)", show(r, 0, p, e),
			       what, type);
	}
}

static int parse_pointer(vma_reader *r, const char *p, const char *e, const vma_param *pa,
			 uint64_t *v)
{
	vma_pointer_style st = vma_pointer_parse(p, (size_t)(e - p), v);
	if (!st)
		return fail_at(r, p, "'%s' is not a pointer (%s), which is spelled like "
			       "000001D85B8B1A80 or 0x55d0a1b2c3d0 or (nil)",
			       show(r, 0, p, e), pa->name);
	if (st != r->style) {
		if (r->style != VMA_PTR_UNKNOWN)
			return fail_at(r, p, "pointer '%s' (%s) is spelled the %s way, but this "
				       "recording spells pointers the %s way", show(r, 0, p, e),
				       pa->name, vma_pointer_style_name(st),
				       vma_pointer_style_name(r->style));
		r->style = st; /* cannot happen: the look-ahead saw it first */
	}
	return 0;
}

/* One parameter column from p (not the final string); *end is where it
 * ends, at its comma or e. */
static int parse_column(vma_reader *r, trace_call *c, trace_value *a, const vma_param *pa,
			const char *p, const char *e, const char **end)
{
	uint64_t v;
	int k;
	const char *fe;
	switch ((vma_type)pa->type) {
	case VMA_UINT32:
	case VMA_UINT64:
		k = uint_column(p, e, pa->type == VMA_UINT32 ? UINT32_MAX : UINT64_MAX, &v, end);
		if (k)
			return bad_number(r, k, p, *end, pa->name, vma_type_name(pa->type));
		a->kind = TRACE_UINT;
		a->u = v;
		return 0;
	case VMA_BOOL:
		*end = fe = column_end(p, e);
		if (fe - p != 1 || (*p != '0' && *p != '1'))
			return fail_at(r, p, "'%s' is not a bool (%s), which is 0 or 1",
				       show(r, 0, p, fe), pa->name);
		a->kind = TRACE_BOOL;
		a->b = *p == '1';
		return 0;
	case VMA_POINTER: {
		/* the common case first: 16 digits, then the comma */
		uint32_t hi, lo;
		if (e - p >= 16 && (e - p == 16 || p[16] == ',') && r->style == VMA_PTR_WINDOWS &&
		    hex8_upper(p, &hi) && hex8_upper(p + 8, &lo)) {
			v = (uint64_t)hi << 32 | lo;
			*end = p + 16;
		} else {
			*end = fe = column_end(p, e);
			if (parse_pointer(r, p, fe, pa, &v) < 0)
				return -1;
		}
		a->kind = TRACE_POINTER;
		a->u = v;
		return 0;
	}
	case VMA_POINTER_LIST: {
		*end = fe = column_end(p, e);
		uint32_t n = 0;
		if (p < fe) {
			n = 1;
			for (const char *q = p; q < fe; q++)
				n += *q == ' ';
		}
		a->kind = TRACE_ARRAY;
		a->len = n;
		a->items = n ? trace_arena_alloc(&c->arena, n * sizeof(trace_value)) : NULL;
		for (uint32_t i = 0; i < n; i++) {
			const char *ie = p;
			while (ie < fe && *ie != ' ')
				ie++;
			if (parse_pointer(r, p, ie, pa, &v) < 0)
				return -1;
			a->items[i].kind = TRACE_POINTER;
			a->items[i].u = v;
			p = ie + 1;
		}
		return 0;
	}
	case VMA_STRING:
		break;
	}
	return fail_at(r, p, "internal: no column type %d", pa->type);
}

static const trace_func_sig *function_sig(vma_reader *r, size_t i)
{
	if (!r->sigs[i]) {
		const vma_function *f = &vma_function_table[i];
		const char *names[32];
		for (uint32_t k = 0; k < f->nparams; k++)
			names[k] = f->params[k].name;
		r->sigs[i] = trace_sigtab_func(r->sigtab, f->name, f->nparams, names);
	}
	return r->sigs[i];
}

static uint32_t count_commas(const char *p, const char *e)
{
	uint32_t n = 0;
	for (; p < e; p++)
		n += *p == ',';
	return n;
}

/*
 * thread,time,frame,function,parameters...  The line has no CR; its
 * trailing blanks belong to a final string column and nowhere else.
 */
static int parse_line(vma_reader *r, const char *s, const char *raw_end)
{
	const char *e = trim_blanks(s, raw_end);
	if (s == e)
		return fail_at(r, s, "an empty line (expected a call: "
			       "thread,time,frame,function,parameters...)");
	/* thread, time, frame, then the function up to the next comma */
	static const char too_few[] = "too few columns for a call (expected "
				      "thread,time,frame,function,parameters...)";
	uint64_t thread, frame, ms = 0;
	const char *p = s, *fe;
	int k = uint_column(p, e, UINT32_MAX, &thread, &fe);
	if (k)
		return bad_number(r, k, p, fe, "the thread id", "uint32");
	if (fe == e)
		return fail_at(r, e, too_few);
	const char *time = fe + 1, *time_end;
	bool canonical_time = time_column(time, e, &ms, &time_end);
	if (!canonical_time && !is_decimal(time, time_end))
		return fail_at(r, time, "'%s' is not a number (expected the time in seconds, "
			       "such as 0.017)", show(r, 0, time, time_end));
	if (time_end == e)
		return fail_at(r, e, too_few);
	p = time_end + 1;
	k = uint_column(p, e, UINT32_MAX, &frame, &fe);
	if (k)
		return bad_number(r, k, p, fe, "the frame index", "uint32");
	if (fe == e)
		return fail_at(r, e, too_few);
	const char *name = fe + 1, *name_end = column_end(name, e);
	const vma_function *f = lookup(r, name, (size_t)(name_end - name));
	if (!f) {
		if (name == name_end)
			return fail_at(r, name, "an empty function name");
		return fail_at(r, name, "unknown function '%s'", show(r, 0, name, name_end));
	}

	trace_call *c = &r->call;
	trace_call_reset(c);
	c->sig = function_sig(r, (size_t)(f - vma_function_table));
	c->thread = (uint32_t)thread;
	c->args = f->nparams ? trace_call_values(c, f->nparams) : NULL;
	p = name_end;
	bool rest_taken = false;
	for (uint32_t i = 0; i < f->nparams; i++) {
		const vma_param *pa = &f->params[i];
		trace_value *a = &c->args[i];
		if (p == e) {
			if (pa->type == VMA_STRING) {
				/* VmaReplay too reads a line without it */
				a->kind = TRACE_MISSING;
				rest_taken = true;
				break;
			}
			return fail_at(r, e, "too few columns: %s records %u parameter%s, this line "
				       "has %u", f->name, f->nparams, f->nparams == 1 ? "" : "s", i);
		}
		p++;
		if (pa->type == VMA_STRING) {
			a->kind = TRACE_STRING;
			a->len = (uint32_t)(raw_end - p);
			a->str = trace_arena_strndup(&c->arena, p, a->len);
			rest_taken = true;
			break;
		}
		if (parse_column(r, c, a, pa, p, e, &p) < 0)
			return -1;
	}
	if (!rest_taken && p != e) {
		uint32_t extra = count_commas(p, e);
		return fail_at(r, p + 1, "too many columns: %s records %u parameter%s, this line "
			       "has %u", f->name, f->nparams, f->nparams == 1 ? "" : "s",
			       f->nparams + extra);
	}

	/* the pseudo-calls that go before it */
	r->nqueue = r->iqueue = 0;
	if (!r->started || frame != r->cur_frame) {
		trace_call *fc = &r->frame;
		trace_call_reset(fc);
		fc->sig = r->frame_sig;
		fc->thread = c->thread;
		fc->args = trace_call_values(fc, 1);
		fc->args[0].kind = TRACE_UINT;
		fc->args[0].u = frame;
		r->cur_frame = (uint32_t)frame;
		r->queue[r->nqueue++] = fc;
	}
	size_t tlen = (size_t)(time_end - time);
	if (!r->started || r->cur_time.len != tlen || !same_bytes(r->cur_time.data, time, tlen)) {
		trace_call *tc = &r->time;
		trace_call_reset(tc);
		tc->sig = r->time_sig;
		tc->thread = c->thread;
		tc->args = trace_call_values(tc, 1);
		if (canonical_time) {
			tc->args[0].kind = TRACE_DOUBLE;
			tc->args[0].d = (double)ms / 1000.0;
		} else {
			/* any other spelling travels as the text it was */
			tc->args[0].kind = TRACE_STRING;
			tc->args[0].len = (uint32_t)tlen;
			tc->args[0].str = trace_arena_strndup(&tc->arena, time, tlen);
		}
		r->cur_time.len = 0;
		tbuf_add(&r->cur_time, time, tlen);
		r->queue[r->nqueue++] = tc;
	}
	r->started = true;
	r->queue[r->nqueue++] = c;
	return 0;
}

int vma_reader_next(vma_reader *r, trace_call **call, trace_error *err)
{
	r->err = err;
	if (r->iqueue == r->nqueue) {
		const char *s, *e;
		int k = take_line(r, &s, &e);
		if (k <= 0)
			return k;
		if (parse_line(r, s, e) < 0) {
			r->nqueue = r->iqueue = 0;
			return -1;
		}
	}
	trace_call *c = r->queue[r->iqueue++];
	c->no = r->next_no++;
	c->offset = (int64_t)(r->base + (uint64_t)(r->line_start - r->data));
	*call = c;
	return 1;
}
