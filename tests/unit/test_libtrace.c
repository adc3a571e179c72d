/*
 * Unit tests of libtrace: values of every kind through the text and the
 * binary encodings, float formatting at the edges, the writer's call
 * ordering, old format versions, and where errors point.
 */
#include "internal.h"
#include "unit.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

/* ------------------------------------------------------------------ */
/* Streams in memory. */

typedef struct mem {
	char *data;
	size_t len;
	FILE *f;
} mem;

static void mem_open(mem *m)
{
	m->data = NULL;
	m->len = 0;
	m->f = open_memstream(&m->data, &m->len);
}

static void mem_close(mem *m)
{
	fclose(m->f);
	m->f = NULL;
}

static trace_writer *writer_to(mem *m, trace_format fmt)
{
	trace_error err;
	trace_error_clear(&err);
	mem_open(m);
	trace_writer_options opt = {.format = fmt, .quality = 5};
	trace_writer *w = trace_writer_open_file(m->f, "mem", &opt, &err);
	if (!w)
		abort();
	return w;
}

static void finish(trace_writer *w, mem *m)
{
	trace_error err;
	if (trace_writer_close(w, &err) < 0)
		abort();
	mem_close(m);
}

/* What R reads, written in FMT (R closed; its length in *LEN where LEN is
 * not NULL), or NULL with err filled. */
static char *reader_to(trace_reader *r, trace_format fmt, size_t *len, trace_error *err)
{
	mem m;
	trace_writer *w = writer_to(&m, fmt);
	int k = trace_writer_header(w, trace_reader_header(r), err);
	trace_call *c;
	while (k == 0 && (k = trace_reader_next(r, &c, err)) > 0)
		k = trace_writer_call(w, c, err) < 0 ? -1 : 0;
	finish(w, &m);
	trace_reader_close(r);
	if (k < 0) {
		free(m.data);
		return NULL;
	}
	if (len)
		*len = m.len;
	return m.data;
}

/* The whole stream as text, or NULL with err filled. */
static char *to_text(const void *data, size_t size, trace_error *err)
{
	trace_reader *r = trace_reader_open_memory(data, size, "input", err);
	return r ? reader_to(r, TRACE_FMT_TEXT, NULL, err) : NULL;
}

/* Text re-encoded in FMT, then back to text. */
static char *through(const char *text, trace_format fmt)
{
	trace_error err;
	trace_reader *r = trace_reader_open_memory(text, strlen(text), "text", &err);
	if (!r) {
		trace_error_print(&err, "through", stderr);
		return NULL;
	}
	mem m;
	trace_writer *w = writer_to(&m, fmt);
	trace_writer_header(w, trace_reader_header(r), &err);
	trace_call *c;
	int k;
	while ((k = trace_reader_next(r, &c, &err)) > 0)
		trace_writer_call(w, c, &err);
	if (k < 0)
		trace_error_print(&err, "through", stderr);
	finish(w, &m);
	trace_reader_close(r);
	char *out = to_text(m.data, m.len, &err);
	if (!out)
		trace_error_print(&err, "through", stderr);
	free(m.data);
	return out;
}

/* ------------------------------------------------------------------ */

static void test_floats(void)
{
	const float fs[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.1f, 0.5f, 3.65f, 1e10f, 1e-5f,
			    123456789.0f, 16777216.0f, 16777217.0f, FLT_MAX, -FLT_MAX,
			    FLT_MIN, 1.4e-45f, FLT_EPSILON, 3.4028233e38f, 0.3f, 2.5e-8f};
	char buf[64];
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		trace_fmt_float(buf, fs[i]);
		float back = strtof(buf, NULL);
		check(memcmp(&back, &fs[i], 4) == 0, "float %a prints as %s, which reads back "
			"as %a", (double)fs[i], buf, (double)back);
		check(strpbrk(buf, ".") != NULL, "float %s has a decimal point", buf);
	}
	trace_fmt_float(buf, 0.1f);
	check(!strcmp(buf, "0.1"), "0.1f prints shortest as 0.1, not %s", buf);
	trace_fmt_float(buf, 1e10f);
	check(!strcmp(buf, "10000000000.0"), "1e10f prints as 10000000000.0, not %s", buf);
	trace_fmt_float(buf, 1.4e-45f);
	check(!strcmp(buf, "1.0e-45"), "the smallest subnormal prints as 1.0e-45, not %s", buf);
	trace_fmt_float(buf, FLT_MAX);
	check(!strcmp(buf, "3.4028235e+38"), "FLT_MAX prints as 3.4028235e+38, not %s", buf);
	trace_fmt_float(buf, NAN);
	check(!strcmp(buf, ".nan"), "NaN prints as .nan, not %s", buf);
	trace_fmt_float(buf, -NAN);
	check(!strcmp(buf, "-.nan"), "a negative NaN prints as -.nan, not %s", buf);
	trace_fmt_float(buf, -INFINITY);
	check(!strcmp(buf, "-.inf"), "-inf prints as -.inf, not %s", buf);

	const double ds[] = {0.1, 1.0 / 3, DBL_MAX, DBL_MIN, 4.9406564584124654e-324, -2.5,
			     1e300, 123456789012345678.0};
	for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
		trace_fmt_double(buf, ds[i]);
		double back = strtod(buf, NULL);
		check(back == ds[i], "double %a prints as %s, which reads back as %a", ds[i], buf,
		      back);
	}
}

/* Every value kind, with the awkward cases, written by hand as text. */
static const char *const value_lines[] = {
	"{call: 0, thread: 0, fn: ints, args: {a: 0, b: 18446744073709551615, c: -1, "
	"d: -9223372036854775808, e: 0x0, f: 0xffffffffffffffff, g: null, h: true, i: false}, "
	"ret: 7}",
	"{call: 1, thread: 3, fn: floats, args: {a: 0.1, b: -0.0, c: .inf, d: -.inf, "
	"e: .nan, f: -.nan, g: 3.4028235e+38, h: 1.0e-45, i: !double 0.1, "
	"j: !double 4.9406564584124654e-324, k: !double -.nan}}",
	"{call: 2, thread: 0, fn: strings, args: {a: \"\", b: \"plain\", "
	"c: \"quote\\\" back\\\\ tab\\t nl\\n cr\\r nul\\0 bel\\x07 del\\x7f\", "
	"d: \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\", e: \"\\x85 \\u2028 \\u2029 \\ufeff "
	"\\x80\\x9f\", f: !latin1 \"\\xff\\xfe raw\\x80\"}}",
	"{call: 3, thread: 0, fn: wide, args: {a: !wstring \"w\xc3\xa9\\t\", "
	"b: !wstring [55296, 1114112, 65], c: !wstring \"\"}}",
	"{call: 4, thread: 0, fn: blobs, args: {a: !!binary \"\", b: !!binary \"AA==\", "
	"c: !!binary \"AAEC\", d: !!binary \"AAECAw==\"}}",
	"{call: 5, thread: 0, fn: enums, args: {a: !enum GL_TRIANGLES=4, b: !enum -5, "
	"c: !enum NEG=-1, d: !enum [\"odd name=|\", 7], e: !enum [!latin1 \"\\xe9\", 1]}}",
	"{call: 6, thread: 0, fn: bitmasks, args: {a: !bitmask A=0x1|B=0x4|0x10, b: !bitmask 0x0, "
	"c: !bitmask NONE=0x0, d: !bitmask TOP=0x8000000000000000, "
	"e: !bitmask [[\"a b\", 0x1], 0x2], f: !bitmask 0x8000000000000001}}",
	"{call: 7, thread: 0, fn: nested, args: {a: [], b: [1, [2, [3]], \"x\"], "
	"c: !struct:XVisualInfo {visual: 0x1, depth: 24}, d: !struct:odd%20name%2C {\"a b\": 1, "
	"\"\": 2}, e: !latin1struct:%C3%A9 {x: 1}, f: !repr [\"GL_ONE\", 1], "
	"g: [!struct:S {s: !struct:T {t: [0.5]}}]}}",
	"{call: 8, thread: 0, fn: missing, args: {a: !missing ~, b: 1}, ret: !missing ~}",
	"{call: 9, thread: 4294967295, fn: \"odd fn\", args: {\"x y\": 1, !latin1 \"\\xe9\": 2}, "
	"flags: [fake]}",
	"{call: 10, thread: 0, fn: bt, backtrace: [{module: \"libGL.so\", function: \"glFoo\", "
	"file: \"a.c\", line: 12, offset: 0x1f}, {function: \"main\"}, {}]}",
	"{call: 11, thread: 0, fn: dying, args: {a: 1}, flags: [incomplete]}",
};

static char *joined_values(void)
{
	tbuf b = {0};
	tbuf_adds(&b, "{tracekit: 1, semantic_version: 2, properties: {a.b: \"x\", "
		      "!latin1 \"k\\xe9\": !latin1 \"v\\xff\", z: \"\\n\"}}\n");
	for (size_t i = 0; i < sizeof(value_lines) / sizeof(value_lines[0]); i++) {
		tbuf_adds(&b, value_lines[i]);
		tbuf_addc(&b, '\n');
	}
	tbuf_addc(&b, 0);
	return b.data;
}

static void test_values_round_trip(void)
{
	char *text = joined_values();
	trace_error err;
	char *canon = to_text(text, strlen(text), &err);
	check(canon != NULL, "the value lines read");
	if (!canon) {
		trace_error_print(&err, "values", stderr);
		free(text);
		return;
	}
	/* the hand-written lines are not all canonical; their re-print is */
	const trace_format fmts[] = {TRACE_FMT_TEXT, TRACE_FMT_RAW, TRACE_FMT_SNAPPY,
				     TRACE_FMT_BROTLI};
	for (size_t i = 0; i < 4; i++) {
		char *again = through(canon, fmts[i]);
		check(again && !strcmp(again, canon),
		      "text -> %s -> text is byte-identical:\n%s\n---\n%s",
		      trace_format_name(fmts[i]), canon, again ? again : "(null)");
		free(again);
	}
	check(strstr(canon, "c: !bitmask NONE=0x0") != NULL, "a zero bitmask shows its zero flag");
	check(strstr(canon, "d: !bitmask TOP=0x8000000000000000") != NULL, "bit 63 survives");
	check(strstr(canon, "f: -.nan") != NULL, "a negative NaN keeps its sign");
	check(strstr(canon, "e: !latin1struct:%C3%A9 {x: 1}") != NULL,
	      "a struct name that is not UTF-8 prints as !latin1struct:");
	check(strstr(canon, "fn: \"odd fn\"") != NULL, "a function name with a blank is quoted");
	check(strstr(canon, "flags: [incomplete]") != NULL, "the incomplete flag survives");
	free(canon);
	free(text);
}

/* Every value kind packed (trace_call_pack) and unpacked into a call
 * of its own, after the reader's arena went to the next record: written
 * out, the same text; and smaller than a copy of the call. */
static void test_pack_round_trip(void)
{
	char *text = joined_values();
	trace_error err;
	char *canon = to_text(text, strlen(text), &err);
	check(canon != NULL, "the value lines read");
	if (!canon) {
		free(text);
		return;
	}
	trace_reader *r = trace_reader_open_memory(canon, strlen(canon), "canon", &err);
	mem m;
	trace_writer *w = writer_to(&m, TRACE_FMT_TEXT);
	trace_writer_header(w, trace_reader_header(r), &err);
	uint8_t *held[64];
	trace_call kept[64];
	size_t n = 0, packed = 0, copied = 0;
	trace_call *c;
	while (n < 64 && trace_reader_next(r, &c, &err) > 0) {
		held[n] = malloc(trace_call_pack(c, NULL));
		size_t len = trace_call_pack(c, held[n]);
		check(len == trace_call_pack(c, NULL), "call %zu: the count is what is written", n);
		trace_call_init(&kept[n]);
		kept[n].no = c->no;  /* set again after unpacking: the caller's */
		kept[n].thread = c->thread;
		kept[n].flags = c->flags;
		kept[n].sig = c->sig;
		trace_call copy;
		trace_call_init(&copy);
		trace_call_copy(&copy, c);
		packed += len;
		copied += copy.arena.total;
		trace_call_free(&copy);
		n++;
	}
	/* unpacked only now: nothing may point into the reader's records */
	for (size_t i = 0; i < n; i++) {
		trace_call was = kept[i];
		trace_call_unpack(&kept[i], was.sig, held[i]);
		kept[i].no = was.no;
		kept[i].thread = was.thread;
		kept[i].flags = was.flags;
		trace_writer_call(w, &kept[i], &err);
	}
	finish(w, &m);
	check(m.data && !strcmp(m.data, canon), "packed and unpacked, the same text:\n%s\n---\n%s",
	      canon, m.data ? m.data : "(null)");
	check(n == sizeof(value_lines) / sizeof(value_lines[0]), "every line read (%zu)", n);
	check(packed * 4 < copied, "packed in %zu bytes, copies in %zu", packed, copied);
	for (size_t i = 0; i < n; i++) {
		trace_call_free(&kept[i]);
		free(held[i]);
	}
	free(m.data);
	trace_reader_close(r);
	free(canon);
	free(text);
}

/* Names longer than YAML's 1024-character implicit keys (a binary trace
 * may name a property, a function, an argument or a member anything) go
 * as explicit keys where they are keys, and come back whole, through
 * every encoding. */
static void test_long_names(void)
{
	size_t n = 3000;
	char *name = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		name[i] = (char)('a' + i % 26);
	name[n] = 0;
	mem m;
	trace_writer *w = writer_to(&m, TRACE_FMT_RAW);
	trace_error err;
	trace_property prop = {name, "v"};
	trace_header h = {.version = TRACE_FORMAT_VERSION, .semantic_version = TRACE_FORMAT_VERSION,
			  .nprops = 1, .props = &prop};
	check(trace_writer_header(w, &h, &err) == 0, "a header with a long property name writes");
	const char *members[] = {name};
	trace_struct_sig ss = {"S", 1, members};
	trace_value member = {.kind = TRACE_UINT, .u = 7};
	const char *args[] = {"short", name};
	trace_func_sig fs = {name, 2, args}; /* a value (fn: NAME), not a key */
	trace_call c;
	trace_call_init(&c);
	c.sig = &fs;
	c.args = trace_call_values(&c, 2);
	c.args[0].kind = TRACE_SINT;
	c.args[0].i = -1;
	c.args[1].kind = TRACE_STRUCT;
	c.args[1].st.sig = &ss;
	c.args[1].st.members = &member;
	check(trace_writer_call(w, &c, &err) == 0, "a call with a long argument name writes");
	trace_call_free(&c);
	finish(w, &m);
	char *text = to_text(m.data, m.len, &err);
	free(m.data);
	check(text != NULL, "it reads back");
	if (!text) {
		free(name);
		return;
	}
	check(strstr(text, "? ") != NULL, "the long names go as explicit keys");
	const trace_format fmts[] = {TRACE_FMT_TEXT, TRACE_FMT_RAW, TRACE_FMT_SNAPPY};
	for (size_t i = 0; i < 3; i++) {
		char *again = through(text, fmts[i]);
		check(again && !strcmp(again, text), "long names: text -> %s -> text is byte-identical",
		      trace_format_name(fmts[i]));
		free(again);
	}
	size_t count = 0;
	for (const char *p = text; (p = strstr(p, name)); p += n)
		count++;
	check(count == 4, "the property, the function, the argument and the member keep their "
	      "names (%zu)", count);
	free(text);
	free(name);
}

/* Binary records written in leave order with overlap keep their numbers. */
static void test_writer_ordering(void)
{
	const char *text =
		"{tracekit: 1, semantic_version: 6, properties: {}}\n"
		"{call: 1, thread: 1, fn: B}\n"
		"{call: 0, thread: 0, fn: A}\n"
		"{call: 3, thread: 1, fn: D}\n"
		"{call: 2, thread: 0, fn: C}\n"
		"{call: 4, thread: 0, fn: E}\n";
	char *out = through(text, TRACE_FMT_SNAPPY);
	check(out && !strcmp(out, text), "overlapping calls keep their numbers and order:\n%s",
	      out ? out : "(null)");
	free(out);

	/* a gap nobody announced is closed: calls are numbered densely */
	const char *gap = "{tracekit: 1, semantic_version: 6, properties: {}}\n"
			  "{call: 0, thread: 0, fn: A}\n"
			  "{call: 5, thread: 0, fn: B}\n"
			  "{call: 6, thread: 0, fn: C}\n";
	out = through(gap, TRACE_FMT_RAW);
	check(out && strstr(out, "{call: 1, thread: 0, fn: B}\n{call: 2, thread: 0, fn: C}"),
	      "a gap in the numbers is closed in the binary:\n%s", out ? out : "(null)");
	free(out);

	/* announced skips: nothing is held */
	trace_sigtab *t = trace_sigtab_new();
	mem m;
	trace_writer *w = writer_to(&m, TRACE_FMT_RAW);
	trace_error err;
	trace_header h = {6, 6, 0, NULL};
	trace_writer_header(w, &h, &err);
	trace_call c;
	trace_call_init(&c);
	c.sig = trace_sigtab_func(t, "f", 0, NULL);
	c.args = trace_call_values(&c, 0);
	trace_writer_skip(w, 0);
	c.no = 2;
	trace_writer_skip(w, 1);
	trace_writer_call(w, &c, &err);
	c.no = 3;
	trace_writer_call(w, &c, &err);
	finish(w, &m);
	out = to_text(m.data, m.len, &err);
	check(out && strstr(out, "{call: 0, thread: 0, fn: f}\n{call: 1, thread: 0, fn: f}\n"),
	      "skipped numbers are closed up:\n%s", out ? out : "(null)");
	free(out);
	free(m.data);
	trace_call_free(&c);
	trace_sigtab_free(t);
}

/* Two tables' signatures alike: one definition by content (the
 * default), one each by pointer (sigs_by_pointer, the capture layer's);
 * both read back as the same calls. */
static void test_sigs_by_pointer(void)
{
	trace_sigtab *t1 = trace_sigtab_new(), *t2 = trace_sigtab_new();
	const char *args[] = {"someArgument"};
	const trace_func_sig *f1 = trace_sigtab_func(t1, "someFunction", 1, args);
	const trace_func_sig *f2 = trace_sigtab_func(t2, "someFunction", 1, args);
	check(f1 != f2, "two tables, two pointers");
	size_t len[2] = {0, 0};
	char *text[2] = {NULL, NULL};
	for (int by_pointer = 0; by_pointer < 2; by_pointer++) {
		mem m;
		mem_open(&m);
		trace_error err;
		trace_writer_options opt = {.format = TRACE_FMT_RAW, .sigs_by_pointer = by_pointer};
		trace_writer *w = trace_writer_open_file(m.f, "mem", &opt, &err);
		trace_header h = {6, 6, 0, NULL};
		trace_writer_header(w, &h, &err);
		trace_call c;
		trace_call_init(&c);
		for (uint64_t no = 0; no < 2; no++) {
			c.no = no;
			c.sig = no ? f2 : f1;
			c.args = trace_call_values(&c, 1);
			c.args[0].kind = TRACE_UINT;
			c.args[0].u = no;
			trace_writer_call(w, &c, &err);
			trace_call_reset(&c);
		}
		trace_call_free(&c);
		finish(w, &m);
		len[by_pointer] = m.len;
		text[by_pointer] = to_text(m.data, m.len, &err);
		free(m.data);
	}
	/* the second definition: its id, name and argument's name again */
	check(len[1] >= len[0] + strlen("someFunction") + strlen("someArgument"),
	      "by pointer, the second signature is defined again (%zu bytes against %zu)",
	      len[1], len[0]);
	check(text[0] && text[1] && !strcmp(text[0], text[1]),
	      "either way the calls read back the same:\n%s\n%s", text[0] ? text[0] : "(null)",
	      text[1] ? text[1] : "(null)");
	free(text[0]);
	free(text[1]);
	trace_sigtab_free(t1);
	trace_sigtab_free(t2);
}

/* A capture writes enter before the call runs and leave after it. */
static void test_event_writing(void)
{
	trace_sigtab *t = trace_sigtab_new();
	const char *args[] = {"pBuffer"};
	mem m;
	trace_writer *w = writer_to(&m, TRACE_FMT_SNAPPY);
	trace_error err;
	trace_header h = {6, 6, 0, NULL};
	trace_writer_header(w, &h, &err);
	trace_call a, b;
	trace_call_init(&a);
	trace_call_init(&b);
	a.sig = trace_sigtab_func(t, "vkCreateBuffer", 1, args);
	a.args = trace_call_values(&a, 1);
	a.args[0].kind = TRACE_NULL; /* the output, unknown on enter */
	b.sig = trace_sigtab_func(t, "vkQueueSubmit", 0, NULL);
	b.args = trace_call_values(&b, 0);
	b.thread = 1;
	check(trace_writer_enter(w, &a, &err) == 0 && a.no == 0, "enter numbers the first call 0");
	check(trace_writer_enter(w, &b, &err) == 0 && b.no == 1, "enter numbers the next call 1");
	b.ret = trace_call_values(&b, 1);
	b.ret->kind = TRACE_UINT;
	b.ret->u = 0;
	trace_writer_leave(w, &b, &err);
	a.args[0].kind = TRACE_POINTER;
	a.args[0].u = 0xbeef;
	trace_writer_leave(w, &a, &err);
	finish(w, &m);
	char *out = to_text(m.data, m.len, &err);
	check(out && strstr(out, "{call: 1, thread: 1, fn: vkQueueSubmit, ret: 0}\n"
				 "{call: 0, thread: 0, fn: vkCreateBuffer, args: {pBuffer: 0xbeef}}\n"),
	      "leave order and output arguments survive:\n%s", out ? out : "(null)");
	free(out);
	free(m.data);
	mem m2;
	w = writer_to(&m2, TRACE_FMT_TEXT);
	check(trace_writer_enter(w, &a, &err) < 0, "enter events are refused on a text writer");
	finish(w, &m2);
	free(m2.data);
	trace_call_free(&a);
	trace_call_free(&b);
	trace_sigtab_free(t);
}

/* ------------------------------------------------------------------ */
/* Old versions, built byte by byte. */

static void put_uint(tbuf *b, uint64_t v)
{
	while (v >= 0x80) {
		tbuf_addc(b, (char)(v | 0x80));
		v >>= 7;
	}
	tbuf_addc(b, (char)v);
}

static void put_str(tbuf *b, const char *s)
{
	put_uint(b, strlen(s));
	tbuf_adds(b, s);
}

/* "tr" + VERSION + one call f(e) with an enum argument and a return. */
static tbuf old_stream(unsigned version)
{
	tbuf b = {0};
	tbuf_add(&b, "tr", 2);
	put_uint(&b, version);
	if (version >= 6) {
		put_uint(&b, version);
		put_uint(&b, 0);
	}
	tbuf_addc(&b, 0); /* enter */
	if (version >= 4)
		put_uint(&b, 7); /* thread */
	put_uint(&b, 0);         /* sig id */
	put_str(&b, "f");
	put_uint(&b, 1);
	put_str(&b, "e");
	tbuf_addc(&b, 1); /* arg */
	put_uint(&b, 0);
	tbuf_addc(&b, 9); /* enum */
	if (version >= 3) {
		put_uint(&b, 0);
		put_uint(&b, 1);
		put_str(&b, "GL_ONE");
		tbuf_addc(&b, 4);
		put_uint(&b, 1);
		tbuf_addc(&b, 4);
		put_uint(&b, 1);
	} else {
		put_str(&b, "GL_ONE");
		tbuf_addc(&b, 4);
		put_uint(&b, 1);
	}
	tbuf_addc(&b, 0); /* end of enter */
	tbuf_addc(&b, 1); /* leave */
	put_uint(&b, 0);
	tbuf_addc(&b, 2); /* return */
	tbuf_addc(&b, 3);
	put_uint(&b, 5);
	tbuf_addc(&b, 0);
	return b;
}

static void test_old_versions(void)
{
	for (unsigned v = 0; v <= 6; v++) {
		tbuf b = old_stream(v);
		trace_error err;
		char *text = to_text(b.data, b.len, &err);
		char want[160];
		snprintf(want, sizeof(want),
			 "{call: 0, thread: %u, fn: f, args: {e: !enum GL_ONE=1}, ret: -5}\n",
			 v >= 4 ? 7 : 0);
		check(text && strstr(text, want), "version %u reads: %s", v, text ? text : err.msg);
		free(text);
		tbuf_free(&b);
	}
	tbuf b = {0};
	tbuf_add(&b, "tr", 2);
	put_uint(&b, 7);
	trace_error err;
	char *text = to_text(b.data, b.len, &err);
	check(!text && strstr(err.msg, "unsupported trace format version 7"),
	      "version 7 is refused: %s", err.msg);
	free(text);
	tbuf_free(&b);
}

static void test_error_locations(void)
{
	tbuf b = old_stream(6);
	trace_error err;
	/* (a stream cut inside a call reads to the cut: test_salvage.c) */
	/* an unknown value type */
	b.data[b.len - 3] = 0x42;
	char *text = to_text(b.data, b.len, &err);
	check(!text && strstr(err.msg, "unknown value type 0x42") && err.call == 0,
	      "an unknown value type is named with its call: %s", err.msg);
	free(text);
	tbuf_free(&b);

	const char *bad = "{tracekit: 1, semantic_version: 6, properties: {}}\n"
			  "{call: 0, thread: 0, fn: f}\n"
			  "\n"
			  "{call: 1, thread: 0, fn: g, args: {a: bareword}}\n";
	text = to_text(bad, strlen(bad), &err);
	check(!text && err.line == 4 && err.call == 1 && err.column > 30,
	      "a bad text value names line 4, call 1 and its column: line %lld column %lld "
	      "call %lld",
	      (long long)err.line, (long long)err.column, (long long)err.call);
	free(text);

	const char *nohdr = "{call: 0, thread: 0, fn: f}\n";
	text = to_text(nohdr, strlen(nohdr), &err);
	check(!text && err.line == 1, "text without a header line is refused: %s", err.msg);
	free(text);

	/* nesting beyond the limit is refused, not a stack overflow */
	tbuf deep = {0};
	tbuf_adds(&deep, "{tracekit: 1, semantic_version: 6, properties: {}}\n"
			 "{call: 0, thread: 0, fn: f, args: {a: ");
	for (int i = 0; i < 100; i++)
		tbuf_addc(&deep, '[');
	for (int i = 0; i < 100; i++)
		tbuf_addc(&deep, ']');
	tbuf_adds(&deep, "}}\n");
	tbuf_addc(&deep, 0);
	text = to_text(deep.data, strlen(deep.data), &err);
	check(!text && strstr(err.msg, "nested deeper"), "deep nesting is refused: %s", err.msg);
	free(text);
	tbuf_free(&deep);
}

/* Snappy and Brotli are opened when first needed (codec.c): a library
 * or a function that is not there is one message naming it. */
static void test_codec_load(void)
{
	trace_error err;
	void *fns[2];
	const char *const names[] = { "snappy_compress", "tracekit_no_such_function" };
	trace_error_clear(&err);
	check(trace_codec_load("libtracekit-no-such-codec.so.9", names, 1, fns, &err) < 0 &&
		      strstr(err.msg, "cannot load libtracekit-no-such-codec.so.9 ("),
	      "a missing library is named: %s", err.msg);
	trace_error_clear(&err);
	check(trace_codec_load("libsnappy.so.1", names, 2, fns, &err) < 0 &&
		      !strcmp(err.msg, "cannot load libsnappy.so.1: it has no "
				       "tracekit_no_such_function"),
	      "a missing function is named with its library: %s", err.msg);
	check(trace_codec_load("libsnappy.so.1", names, 1, fns, &err) == 0 && fns[0],
	      "a library's functions are found");

	const trace_snappy *sn = trace_snappy_lib(&err);
	const trace_brotli_enc *be = trace_brotli_enc_lib(&err);
	const trace_brotli_dec *bd = trace_brotli_dec_lib(&err);
	check(sn && be && bd && sn == trace_snappy_lib(&err), "the tables load, once each");
	if (!sn || !be || !bd)
		return;
	char in[4096], z[8192], back[4096];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i % 61);
	size_t zn = sizeof(z), bn = sizeof(back);
	check(sn->compress(in, sizeof(in), z, &zn) == SNAPPY_OK && zn < sizeof(in) &&
		      sn->uncompress(z, zn, back, &bn) == SNAPPY_OK && bn == sizeof(in) &&
		      !memcmp(in, back, bn),
	      "Snappy through the table round-trips");
	BrotliEncoderState *es = be->create(NULL, NULL, NULL);
	size_t ain = sizeof(in), aout = sizeof(z);
	const uint8_t *nin = (const uint8_t *)in;
	uint8_t *nout = (uint8_t *)z;
	bool ok = be->compress_stream(es, BROTLI_OPERATION_FINISH, &ain, &nin, &aout, &nout, NULL) &&
		  be->is_finished(es);
	be->destroy(es);
	BrotliDecoderState *ds = bd->create(NULL, NULL, NULL);
	size_t zin = sizeof(z) - aout, bout = sizeof(back);
	const uint8_t *zp = (const uint8_t *)z;
	uint8_t *bp = (uint8_t *)back;
	ok = ok && bd->decompress_stream(ds, &zin, &zp, &bout, &bp, NULL) ==
			   BROTLI_DECODER_RESULT_SUCCESS &&
	     bout == 0 && !memcmp(in, back, sizeof(in));
	bd->destroy(ds);
	check(ok, "Brotli through the tables round-trips");
}

/* ------------------------------------------------------------------ */
/* zstd containers as other writers make them. */

/* The calls, as text, of a stream of about 6.5 MB: small records, and
 * blobs of up to 900 KB that cross the frames' ends. */
static char *zstd_calls(void)
{
	tbuf t = {0}, bin = {0};
	tbuf_adds(&t, "{tracekit: 1, semantic_version: 6, properties: {}}\n");
	uint32_t x = 7;
	for (int i = 0; i < 300; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		size_t n = i % 50 == 3 ? (size_t)(900000 - i) : x % 8000u;
		bin.len = 0;
		for (size_t k = 0; k < n; k++)
			tbuf_addc(&bin, (char)((k * 7 + i) % 251 & (k % 3 ? 0xff : 0x0f)));
		tbuf_addf(&t, "{call: %d, thread: 0, fn: f%d, args: {n: %zu, data: !!binary \"", i,
			    i % 7, n);
		trace_base64_encode(&t, (const uint8_t *)bin.data, bin.len);
		tbuf_adds(&t, "\"}}\n");
	}
	tbuf_addc(&t, 0);
	tbuf_free(&bin);
	return t.data;
}

/* STREAM in zstd frames of the sizes in CUTS (then one of the rest),
 * each with its size stated or not, and a skippable frame after the
 * first, as the seekable format's seek table is. */
static tbuf zstd_container(const char *stream, size_t len, const size_t *cuts, size_t ncuts,
			   bool sized)
{
	tbuf out = {0};
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, sized);
	size_t at = 0;
	for (size_t i = 0; i <= ncuts && at < len; i++) {
		size_t n = i < ncuts && cuts[i] < len - at ? cuts[i] : len - at;
		size_t bound = ZSTD_compressBound(n);
		tbuf_grow(&out, bound);
		ZSTD_inBuffer in = {stream + at, n, 0};
		ZSTD_outBuffer o = {out.data + out.len, bound, 0};
		size_t r = ZSTD_compressStream2(cc, &o, &in, ZSTD_e_end);
		if (r != 0)
			abort();
		out.len += o.pos;
		at += n;
		if (i == 0) {
			const char skip[12] = {0x5e, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
			tbuf_add(&out, skip, sizeof(skip));
		}
	}
	ZSTD_freeCCtx(cc);
	return out;
}

/* Reads DATA as a file (read ahead on a thread or not), or from memory,
 * and writes what it read in the raw container: whether that is RAW. */
static bool reads_as(const tbuf *data, int how, const mem *raw)
{
	trace_error err;
	trace_reader *r;
	if (how == 0) {
		r = trace_reader_open_memory(data->data, data->len, "zstd", &err);
	} else {
		char path[] = "/tmp/test_libtrace.XXXXXX";
		int fd = mkstemp(path);
		if (fd < 0 || write(fd, data->data, data->len) != (ssize_t)data->len)
			abort();
		close(fd);
		setenv("TRACE_READ_AHEAD", how == 2 ? "1" : "0", 1);
		r = trace_reader_open(path, &err);
		unsetenv("TRACE_READ_AHEAD");
		unlink(path);
	}
	size_t len = 0;
	char *out = r ? reader_to(r, TRACE_FMT_RAW, &len, &err) : NULL;
	if (!out)
		trace_error_print(&err, "reads_as", stderr);
	bool same = out && len == raw->len && !memcmp(out, raw->data, len);
	free(out);
	return same;
}

/* Frames of any size, stated or not, with a skippable one among them:
 * the same records from memory, from a file read in place and from one
 * read ahead, whichever way each frame decodes (in one pass where its
 * size is stated and at most 4 MiB, streamed otherwise). */
static void test_zstd_frames(void)
{
	char *text = zstd_calls();
	trace_error err;
	trace_reader *r = trace_reader_open_memory(text, strlen(text), "text", &err);
	mem m = {0};
	m.data = r ? reader_to(r, TRACE_FMT_RAW, &m.len, &err) : NULL;
	check(m.data && m.len > 6000000, "the stream is %zu bytes", m.len);
	if (!m.data) {
		free(text);
		return;
	}
	/* the raw container is "tr" and the stream */
	const size_t cuts[][6] = {
		{100000, 5000000, 1300000, 1, 3000000, 2097152}, /* 5 MB: streamed */
		{2097152, 2097152, 2097152, 2097152, 2097152, 2097152}, /* as ours are */
		{777, 4194304, 65536, 9000, 3500000, 333333},
	};
	const char *hows[] = {"from memory", "from a file read in place", "from a file read ahead"};
	for (size_t i = 0; i < 3; i++) {
		for (int sized = 0; sized < 2; sized++) {
			tbuf z = zstd_container(m.data + 2, m.len - 2, cuts[i], 6, sized);
			for (int how = 0; how < 3; how++)
				check(reads_as(&z, how, &m), "cuts %zu, sizes %s: %s, the same records", i,
				      sized ? "stated" : "not stated", hows[how]);
			tbuf_free(&z);
		}
	}
	free(m.data);
	free(text);
}

/* An arena's big one-off (a memory update's bytes) is fresh memory only
 * the first time: after a reset, the next record's takes the same chunk,
 * and the arena itself holds no more than its one modest chunk. */
static void test_arena_big(void)
{
	trace_arena a;
	trace_arena_init(&a);
	check(!strcmp(trace_arena_strndup(&a, "abc", 3), "abc"), "a small allocation first");
	char *first = trace_arena_alloc(&a, 3 << 20);
	memset(first, 0x5a, 3 << 20);
	trace_arena_reset(&a);
	check(a.total <= (64u << 10), "a reset arena holds %zu bytes", a.total);
	char *again = trace_arena_alloc(&a, 2 << 20);
	check(again == first, "the next big one-off takes the kept chunk");
	check(again[0] == 0 && again[(2 << 20) - 1] == 0, "and it is cleared, as alloc says");
	char *bigger = trace_arena_alloc(&a, 5 << 20);
	check(bigger != first && bigger[(5 << 20) - 1] == 0, "a larger one gets a chunk of its own");
	trace_arena_reset(&a);
	trace_arena_alloc(&a, 300 << 10);
	check(a.total <= (600u + 64u) << 10, "a kept chunk more than twice as large is not taken: "
	      "the arena holds %zu bytes (the layer counts what its records hold)", a.total);
	char *s = trace_arena_strndup(&a, "def", 3);
	check(!strcmp(s, "def"), "small allocations go on as before");
	trace_arena_free(&a);
}

/* Keys come and go by the million in a replay: deletion must keep every
 * other key findable and the map no larger than what it holds. */
static void test_tmap_take(void)
{
	enum { N = 20000 };
	static uint8_t in[N + 1];
	tmap m = {0};
	uint32_t x = 1;
	bool ok = true;
	for (int round = 0; round < 200000 && ok; round++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		uint32_t k = 1 + x % N;
		const void *key = (const void *)(uintptr_t)k;
		uint64_t v = 0;
		if (in[k]) {
			ok = tmap_take(&m, key, &v) && v == k * 3u && !tmap_get(&m, key, &v);
			in[k] = 0;
		} else {
			tmap_put(&m, key, k * 3u);
			in[k] = 1;
		}
	}
	size_t held = 0;
	for (uint32_t k = 1; k <= N && ok; k++) {
		uint64_t v;
		bool there = tmap_get(&m, (const void *)(uintptr_t)k, &v);
		ok = there == (bool)in[k] && (!there || v == k * 3u);
		held += in[k];
	}
	check(ok, "tmap keeps every key findable through puts and takes");
	check(m.n == held, "tmap counts what it holds: %zu against %zu", m.n, held);
	check(!tmap_take(&m, (const void *)(uintptr_t)(N + 5), NULL), "taking an absent key fails");
	tmap_free(&m);
}

/* The replayer keys by (capture value, kind): one value may name a buffer
 * and an image at once, and 0 is a key like any other under a kind. */
static void test_tmap_kinds(void)
{
	tmap m = {0}, c = {0};
	tmap_put(&m, (const void *)(uintptr_t)7, 99);
	for (uint64_t k = 0; k < 1000; k++) {
		tmap_set(&m, k, 1, k);
		tmap_set(&m, k, 2, k + 1000000);
	}
	uint64_t *e = tmap_at(&m, 0, 2);
	check(e && *e == 1000000, "key 0 is stored under a kind");
	check(m.n == 2001, "one key under two kinds is two entries: %zu", m.n);
	uint64_t v = 0;
	check(tmap_del(&m, 5, 1, &v) && v == 5 && !tmap_at(&m, 5, 1) && tmap_at(&m, 5, 2),
	      "deleting one kind of a key leaves the other");
	check(tmap_get(&m, (const void *)(uintptr_t)7, &v) && v == 99 && *tmap_at(&m, 7, 1) == 7,
	      "the one-word form is kind 0");
	check(!tmap_at(&m, 0, 0) && !tmap_del(&m, 0, 0, NULL), "(0, 0) is never found");
	*tmap_at(&m, 9, 2) = 42;
	tmap_copy(&c, &m);
	check(c.n == m.n && *tmap_at(&c, 9, 2) == 42, "a copy holds every entry, as written");
	tmap_free(&m);
	tmap_free(&c);
}

static void test_base64(void)
{
	const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	for (int i = 0; i < 7; i++) {
		tbuf b = {0};
		trace_base64_encode(&b, (const uint8_t *)in[i], strlen(in[i]));
		check(b.len == strlen(out[i]) && (!b.len || !memcmp(b.data, out[i], b.len)),
		      "base64 of '%s'", in[i]);
		uint8_t back[16];
		long n = trace_base64_decode(back, out[i], strlen(out[i]));
		check(n == (long)strlen(in[i]) && !memcmp(back, in[i], (size_t)n),
		      "base64 decodes '%s'", out[i]);
		tbuf_free(&b);
	}
	uint8_t junk[16];
	check(trace_base64_decode(junk, "Zm9v!", 5) < 0, "base64 refuses a bad character");
	check(trace_base64_decode(junk, "Zg=a", 4) < 0, "base64 refuses data after padding");
}

int main(void)
{
	test_floats();
	test_values_round_trip();
	test_pack_round_trip();
	test_long_names();
	test_writer_ordering();
	test_sigs_by_pointer();
	test_event_writing();
	test_old_versions();
	test_error_locations();
	test_base64();
	test_codec_load();
	test_tmap_take();
	test_tmap_kinds();
	test_zstd_frames();
	test_arena_big();
	return unit_done("test_libtrace");
}
