/*
 * The VMA CSV writer: a stream's records back to VMA's call recording, as
 * VMA's recorder spelled each column.
 */
#include "vma_columns.h"

#include <stdarg.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Writing. */

struct vma_writer {
	trace_sink k;
	trace_error *err;
	vma_pointer_style style;
	uint32_t frame;
	tbuf time;           /* the time column to write */
	tbuf line;
	tmap kinds;          /* signature -> function index or VMA_RECORD_*, plus one */
};

__attribute__((format(printf, 3, 4)))
static int wfail(vma_writer *w, const trace_call *c, const char *fmt, ...)
{
	trace_error *err = w->err;
	trace_error_clear(err);
	if (c)
		err->call = (int64_t)c->no;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static void put_u64(tbuf *b, uint64_t v)
{
	if (b->cap - b->len < NUMBER_MAX)
		tbuf_grow(b, NUMBER_MAX);
	b->len = (size_t)(fmt_u64(b->data + b->len, v) - b->data);
}

/* %.3f as VMA wrote it: exact milliseconds take the fast way. */
static void put_seconds(tbuf *b, double d)
{
	if (d < 2e12) {
		uint64_t ms = (uint64_t)(d * 1000.0 + 0.5);
		if ((double)ms / 1000.0 == d) {
			put_u64(b, ms / 1000);
			char frac[4] = {'.', (char)('0' + ms / 100 % 10), (char)('0' + ms / 10 % 10),
					(char)('0' + ms % 10)};
			tbuf_add(b, frac, 4);
			return;
		}
	}
	tbuf_addf(b, "%.3f", d);
}

/* To PATH, or with PATH NULL to F called NAME (trace_sink_open). */
static vma_writer *writer_open(const char *path, FILE *f, const char *name, trace_error *err)
{
	trace_error_clear(err);
	vma_writer *w = trace_xcalloc(1, sizeof(*w));
	tbuf_add(&w->time, "0.000", 5);
	if (trace_sink_open(&w->k, path, f, name, TRACE_FMT_TEXT, -1, err) < 0) {
		tbuf_free(&w->time);
		free(w);
		return NULL;
	}
	return w;
}

vma_writer *vma_writer_open(const char *path, trace_error *err)
{
	return writer_open(path, NULL, NULL, err);
}

vma_writer *vma_writer_open_file(FILE *f, const char *name, trace_error *err)
{
	vma_writer *w = writer_open(NULL, f, name, err);
	if (w && name)
		w->k.name = name;
	return w;
}

/* A line the reader takes back as it is: no line break inside, no CR at
 * the end (that would read as a CRLF ending). */
static const char *unwritable(const char *s, size_t n)
{
	if (memchr(s, '\n', n))
		return "a line break";
	if (n && s[n - 1] == '\r')
		return "a carriage return at its end";
	return NULL;
}

int vma_writer_header(vma_writer *w, const trace_header *h, trace_error *err)
{
	w->err = err;
	const char *version = trace_header_get(h, VMA_PROP_VERSION);
	if (!version)
		return wfail(w, NULL, "not a VMA stream: the header has no %s property "
			     "(vma-export writes streams that vma-import made)", VMA_PROP_VERSION);
	const char *comma = strchr(version, ',');
	uint64_t major, minor;
	if (!comma || scan_uint(version, comma, UINT32_MAX, &major) ||
	    scan_uint(comma + 1, comma + strlen(comma), UINT32_MAX, &minor) ||
	    major != VMA_VERSION_MAJOR || minor > VMA_VERSION_MINOR_MAX)
		return wfail(w, NULL, "header property %s is '%s', not a format version "
			     "vma-export writes (1,0 to 1,%d)", VMA_PROP_VERSION, version,
			     VMA_VERSION_MINOR_MAX);

	const char *style = trace_header_get(h, VMA_PROP_POINTERS);
	w->style = VMA_PTR_WINDOWS;
	if (style && !(w->style = vma_pointer_style_parse(style)))
		return wfail(w, NULL, "header property %s is '%s' (windows, windows32 or glibc)",
			     VMA_PROP_POINTERS, style);

	const char *lines = trace_header_get(h, VMA_PROP_CONFIG_LINES);
	uint64_t nlines = 0;
	bool want_config = minor >= VMA_VERSION_MINOR_CONFIG;
	if (lines && scan_uint(lines, lines + strlen(lines), UINT32_MAX, &nlines))
		return wfail(w, NULL, "header property %s is '%s', not a count",
			     VMA_PROP_CONFIG_LINES, lines);
	if (want_config != !!lines)
		return wfail(w, NULL, want_config ? "format %s has a Config section, but the "
			     "header has no %s property" : "format %s has no Config section, but "
			     "the header has a %s property", version, VMA_PROP_CONFIG_LINES);
	if (nlines > h->nprops)
		return wfail(w, NULL, "header property %s says %llu lines, the header has "
			     "fewer properties", VMA_PROP_CONFIG_LINES, (unsigned long long)nlines);

	/* config lines by number, whatever order the properties came in */
	const char **config = calloc(nlines ? nlines : 1, sizeof(*config));
	if (!config)
		abort();
	const size_t plen = strlen(VMA_PROP_CONFIG_PREFIX);
	for (uint32_t i = 0; i < h->nprops; i++) {
		const char *name = h->props[i].name;
		uint64_t idx;
		if (strncmp(name, VMA_PROP_CONFIG_PREFIX, plen) ||
		    scan_uint(name + plen, name + strlen(name), UINT32_MAX, &idx) || idx >= nlines)
			continue;
		config[idx] = h->props[i].value;
	}
	w->line.len = 0;
	tbuf_adds(&w->line, VMA_MAGIC_LINE "\n");
	tbuf_adds(&w->line, version);
	tbuf_addc(&w->line, '\n');
	if (want_config) {
		tbuf_adds(&w->line, "Config,Begin\n");
		for (uint64_t i = 0; i < nlines; i++) {
			const char *l = config[i];
			if (!l) {
				free(config);
				return wfail(w, NULL, "the header has no %s%llu property (%s says %llu "
					     "lines)", VMA_PROP_CONFIG_PREFIX, (unsigned long long)i,
					     VMA_PROP_CONFIG_LINES, (unsigned long long)nlines);
			}
			size_t n = strlen(l);
			const char *why = unwritable(l, n);
			const char *t = trim_blanks(l, l + n);
			if (!why && t - l == 10 && !memcmp(l, "Config,End", 10))
				why = "the text of the section's end";
			if (why) {
				free(config);
				return wfail(w, NULL, "header property %s%llu holds %s", 
					     VMA_PROP_CONFIG_PREFIX, (unsigned long long)i, why);
			}
			tbuf_add(&w->line, l, n);
			tbuf_addc(&w->line, '\n');
		}
		tbuf_adds(&w->line, "Config,End\n");
	}
	free(config);
	return trace_sink_write(&w->k, w->line.data, w->line.len, err);
}

/* What the record is (a function index or VMA_RECORD_*), checked once per
 * signature: a VMA function's arguments must be the table's. */
static int record_kind(vma_writer *w, const trace_call *c)
{
	uint64_t v;
	if (tmap_get(&w->kinds, c->sig, &v))
		return (int)v - 1;
	char why[sizeof(w->err->msg)];
	int kind = vma_record_kind(c->sig, "stream", why, sizeof(why));
	if (kind == VMA_RECORD_BAD)
		return wfail(w, c, "%s", why);
	tmap_put(&w->kinds, c->sig, (uint64_t)kind + 1);
	return kind;
}

static int bad_arg(vma_writer *w, const trace_call *c, const vma_param *pa,
		   const trace_value *v)
{
	return wfail(w, c, "argument %s of %s is %s %s, not a %s", pa->name, c->sig->name,
		     v->kind == TRACE_ARRAY || v->kind == TRACE_UINT ? "an" : "a",
		     trace_value_kind_name((trace_value_kind)v->kind),
		     vma_type_name((vma_type)pa->type));
}

static inline bool pointer_value(const trace_value *v, uint64_t *out)
{
	switch (v->kind) {
	case TRACE_POINTER:
	case TRACE_UINT:
		*out = v->u;
		return true;
	case TRACE_NULL:
		*out = 0;
		return true;
	}
	return false;
}

/* The longest pointer column (glibc's 0x and 16 digits). */
#define POINTER_MAX 18

/*
 * Whether an argument can be written as its column, and the most bytes
 * it takes: every check happens before a byte of the line is written.
 */
static int check_arg(vma_writer *w, const trace_call *c, const vma_param *pa,
		     const trace_value *v, size_t *size)
{
	uint64_t u;
	switch ((vma_type)pa->type) {
	case VMA_UINT32:
	case VMA_UINT64:
		if (v->kind != TRACE_UINT)
			return bad_arg(w, c, pa, v);
		if (pa->type == VMA_UINT32 && v->u > UINT32_MAX)
			return wfail(w, c, "argument %s of %s is %llu, more than a uint32 holds",
				     pa->name, c->sig->name, (unsigned long long)v->u);
		*size += NUMBER_MAX;
		return 0;
	case VMA_BOOL:
		if (v->kind != TRACE_BOOL && !(v->kind == TRACE_UINT && v->u <= 1))
			return bad_arg(w, c, pa, v);
		*size += 1;
		return 0;
	case VMA_POINTER:
		if (!pointer_value(v, &u))
			return bad_arg(w, c, pa, v);
		*size += POINTER_MAX;
		return 0;
	case VMA_POINTER_LIST:
		if (v->kind != TRACE_ARRAY)
			return bad_arg(w, c, pa, v);
		for (uint32_t i = 0; i < v->len; i++)
			if (!pointer_value(&v->items[i], &u))
				return wfail(w, c, "item %u of %s (%s) is a %s, not a pointer", i,
					     pa->name, c->sig->name,
					     trace_value_kind_name((trace_value_kind)v->items[i].kind));
		*size += (size_t)v->len * (POINTER_MAX + 1);
		return 0;
	case VMA_STRING: {
		if (v->kind != TRACE_STRING)
			return bad_arg(w, c, pa, v);
		const char *why = unwritable(v->str, v->len);
		if (why)
			return wfail(w, c, "argument %s of %s holds %s, which a recording cannot",
				     pa->name, c->sig->name, why);
		*size += v->len;
		return 0;
	}
	}
	return bad_arg(w, c, pa, v);
}

static inline char *fmt_pointer(char *o, uint64_t v, vma_pointer_style style)
{
	if (style == VMA_PTR_WINDOWS) {
		for (int i = 15; i >= 0; i--)
			*o++ = vma_hex_upper[(v >> (4 * i)) & 15];
		return o;
	}
	return o + vma_pointer_format(o, v, style);
}

/* Writes a checked argument's column at o. */
static char *fmt_arg(vma_writer *w, char *o, const vma_param *pa, const trace_value *v)
{
	uint64_t u = 0;
	switch ((vma_type)pa->type) {
	case VMA_UINT32:
	case VMA_UINT64:
		return fmt_u64(o, v->u);
	case VMA_BOOL:
		*o++ = (v->kind == TRACE_BOOL ? v->b : v->u != 0) ? '1' : '0';
		return o;
	case VMA_POINTER:
		pointer_value(v, &u);
		return fmt_pointer(o, u, w->style);
	case VMA_POINTER_LIST:
		for (uint32_t i = 0; i < v->len; i++) {
			if (i)
				*o++ = ' ';
			pointer_value(&v->items[i], &u);
			o = fmt_pointer(o, u, w->style);
		}
		return o;
	case VMA_STRING:
		memcpy(o, v->str, v->len);
		return o + v->len;
	}
	return o;
}

static int set_time(vma_writer *w, const trace_call *c)
{
	const trace_value *v = &c->args[0];
	tbuf *t = &w->time;
	t->len = 0;
	switch (v->kind) {
	case TRACE_DOUBLE:
	case TRACE_FLOAT: {
		double d = v->kind == TRACE_DOUBLE ? v->d : (double)v->f;
		if (!(d >= 0 && d < 1e300))
			return wfail(w, c, "%s: seconds must be a finite number, not negative",
				     VMA_CALL_TIME);
		put_seconds(t, d);
		return 0;
	}
	case TRACE_UINT:
		put_u64(t, v->u);
		tbuf_add(t, ".000", 4);
		return 0;
	case TRACE_STRING:
		if (!is_decimal(v->str, v->str + v->len)) {
			char text[64];
			return wfail(w, c, "%s: seconds '%s' is not a decimal number", VMA_CALL_TIME,
				     shown(text, sizeof(text), v->str, v->len));
		}
		tbuf_add(t, v->str, v->len);
		return 0;
	}
	return wfail(w, c, "%s: seconds is a %s, not a number", VMA_CALL_TIME,
		     trace_value_kind_name((trace_value_kind)v->kind));
}

int vma_writer_call(vma_writer *w, const trace_call *c, trace_error *err)
{
	w->err = err;
	int kind = record_kind(w, c);
	if (kind < 0)
		return -1;
	if (kind == VMA_RECORD_SKIP)
		return 0;
	if (kind == VMA_RECORD_TIME)
		return set_time(w, c);
	if (kind == VMA_RECORD_FRAME) {
		const trace_value *v = &c->args[0];
		if (v->kind != TRACE_UINT || v->u > UINT32_MAX)
			return wfail(w, c, "%s: index must be a uint32", VMA_CALL_FRAME);
		w->frame = (uint32_t)v->u;
		return 0;
	}
	const vma_function *f = &vma_function_table[kind];
	uint32_t nwritten = f->nparams;
	size_t size = 3 * NUMBER_MAX + w->time.len + f->namelen + f->nparams + 1;
	for (uint32_t i = 0; i < f->nparams; i++) {
		const vma_param *pa = &f->params[i];
		if (c->args[i].kind == TRACE_MISSING) {
			/* only a final string may be left out, as the reader allows */
			if (pa->type == VMA_STRING) {
				nwritten = i;
				break;
			}
			return wfail(w, c, "argument %s of %s is missing", pa->name, f->name);
		}
		if (check_arg(w, c, pa, &c->args[i], &size) < 0)
			return -1;
	}

	/* the line goes straight into the output buffer when it fits */
	trace_sink *k = &w->k;
	if (k->cap - k->len < size && trace_sink_flush_block(k, err) < 0)
		return -1;
	bool direct = k->cap - k->len >= size;
	if (!direct) {
		w->line.len = 0;
		tbuf_grow(&w->line, size);
	}
	char *start = direct ? (char *)k->buf + k->len : w->line.data;
	char *o = fmt_u64(start, c->thread);
	*o++ = ',';
	for (size_t i = 0; i < w->time.len; i++)
		*o++ = w->time.data[i];
	*o++ = ',';
	o = fmt_u64(o, w->frame);
	*o++ = ',';
	memcpy(o, f->name, f->namelen);
	o += f->namelen;
	for (uint32_t i = 0; i < nwritten; i++) {
		*o++ = ',';
		o = fmt_arg(w, o, &f->params[i], &c->args[i]);
	}
	*o++ = '\n';
	if (direct) {
		k->len += (size_t)(o - start);
		return 0;
	}
	return trace_sink_write(k, start, (size_t)(o - start), err);
}

static void writer_release(vma_writer *w)
{
	tbuf_free(&w->time);
	tbuf_free(&w->line);
	tmap_free(&w->kinds);
	free(w);
}

int vma_writer_close(vma_writer *w, trace_error *err)
{
	int r = trace_sink_close(&w->k, err);
	writer_release(w);
	return r;
}

void vma_writer_abort(vma_writer *w)
{
	trace_sink_abort(&w->k);
	writer_release(w);
}
