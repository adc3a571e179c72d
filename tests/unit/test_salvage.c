/*
 * Unit tests of reading a trace cut off: a capture killed, or stopped by a
 * full disk, ends inside a chunk, a compressed stream or a record.  Every
 * cut of a small capture, in every container, reads to its last whole
 * event with one warning naming the byte and the last complete call; a
 * cut inside the header, and damage before the end, stay errors.
 */
#include "internal.h"
#include "unit.h"

#include <stdlib.h>
#include <zlib.h>

/* The events of the capture, as a layer writes them: call 0 (f) enters,
 * call 1 (g) enters and leaves, call 0 leaves with its output, call 2 (h)
 * enters and leaves. */
enum { NEVENTS = 6 };

/* What a reader gives after the first K whole events: the records, then
 * the calls entered and not left, in enter order, flagged incomplete. */
static const char *const after[NEVENTS + 1] = {
	"",
	"{call: 0, thread: 0, fn: f, args: {out: null}, flags: [incomplete]}\n",
	"{call: 0, thread: 0, fn: f, args: {out: null}, flags: [incomplete]}\n"
	"{call: 1, thread: 1, fn: g, flags: [incomplete]}\n",
	"{call: 1, thread: 1, fn: g, ret: 0}\n"
	"{call: 0, thread: 0, fn: f, args: {out: null}, flags: [incomplete]}\n",
	"{call: 1, thread: 1, fn: g, ret: 0}\n"
	"{call: 0, thread: 0, fn: f, args: {out: 0xbeef}}\n",
	"{call: 1, thread: 1, fn: g, ret: 0}\n"
	"{call: 0, thread: 0, fn: f, args: {out: 0xbeef}}\n"
	"{call: 2, thread: 0, fn: h, flags: [incomplete]}\n",
	"{call: 1, thread: 1, fn: g, ret: 0}\n"
	"{call: 0, thread: 0, fn: f, args: {out: 0xbeef}}\n"
	"{call: 2, thread: 0, fn: h}\n",
};
/* The last complete call after K events, as the warning names it. */
static const int last_call[NEVENTS + 1] = {-1, -1, -1, 1, 0, 0, 2};

#define HEADER "{tracekit: 1, semantic_version: 6, properties: {api: \"test\"}}\n"

typedef struct capture {
	char *data;
	size_t len;
	size_t ends[NEVENTS + 1]; /* bytes after the header, after each event */
} capture;

/* The capture in FMT, each event flushed (trace_writer_flush) and where
 * it ends noted; END_MARKER: closed with its TRACE_END record. */
static capture write_capture(trace_format fmt, bool end_marker)
{
	capture cap = {0};
	FILE *f = open_memstream(&cap.data, &cap.len);
	trace_error err;
	trace_writer_options opt = {.format = fmt, .quality = 5, .end_marker = end_marker};
	trace_writer *w = trace_writer_open_file(f, "mem", &opt, &err);
	trace_sigtab *t = trace_sigtab_new();
	trace_property prop = {"api", "test"};
	trace_header h = {6, 6, 1, &prop};
	const char *outs[] = {"out"};
	trace_call c[3];
	for (int i = 0; i < 3; i++)
		trace_call_init(&c[i]);
	c[0].sig = trace_sigtab_func(t, "f", 1, outs);
	c[0].args = trace_call_values(&c[0], 1);
	c[0].args[0].kind = TRACE_NULL;
	c[1].sig = trace_sigtab_func(t, "g", 0, NULL);
	c[1].args = trace_call_values(&c[1], 0);
	c[1].thread = 1;
	c[2].sig = trace_sigtab_func(t, "h", 0, NULL);
	c[2].args = trace_call_values(&c[2], 0);
	int rc = trace_writer_header(w, &h, &err);
	rc |= trace_writer_flush(w, &err);
	cap.ends[0] = cap.len;
	for (int e = 0; e < NEVENTS; e++) {
		switch (e) {
		case 0: rc |= trace_writer_enter(w, &c[0], &err); break;
		case 1: rc |= trace_writer_enter(w, &c[1], &err); break;
		case 2:
			c[1].ret = trace_call_values(&c[1], 1);
			c[1].ret->kind = TRACE_UINT;
			rc |= trace_writer_leave(w, &c[1], &err);
			break;
		case 3:
			c[0].args[0].kind = TRACE_POINTER;
			c[0].args[0].u = 0xbeef;
			rc |= trace_writer_leave(w, &c[0], &err);
			break;
		case 4: rc |= trace_writer_enter(w, &c[2], &err); break;
		case 5: rc |= trace_writer_leave(w, &c[2], &err); break;
		}
		rc |= trace_writer_flush(w, &err);
		cap.ends[e + 1] = cap.len;
	}
	rc |= trace_writer_close(w, &err);
	fclose(f);
	check(rc == 0, "the %s capture is written", trace_format_name(fmt));
	for (int i = 0; i < 3; i++)
		trace_call_free(&c[i]);
	trace_sigtab_free(t);
	return cap;
}

typedef struct result {
	int rc;              /* of the last trace_reader_next, or of the open */
	char *text;          /* the records read, as text, without the header */
	trace_error err;
	bool cut;
	trace_error warning; /* trace_reader_cut's, when cut */
} result;

static result read_all(const void *data, size_t n)
{
	result res = {0};
	trace_error_clear(&res.err);
	tbuf out = {0};
	trace_reader *r = trace_reader_open_memory(data, n, "cut.trace", &res.err);
	if (!r) {
		res.rc = -1;
		return res;
	}
	trace_textcache *cache = trace_textcache_new();
	trace_call *c;
	while ((res.rc = trace_reader_next(r, &c, &res.err)) > 0) {
		trace_text_call(&out, c, cache);
		tbuf_addc(&out, '\n');
	}
	const trace_error *w = trace_reader_cut(r);
	if (w) {
		res.cut = true;
		res.warning = *w;
	}
	trace_textcache_free(cache);
	trace_reader_close(r);
	tbuf_addc(&out, 0);
	res.text = out.data;
	return res;
}

/* The events whole in the first OFF bytes. */
static int events_before(const capture *cap, size_t off)
{
	int k = 0;
	while (k < NEVENTS && cap->ends[k + 1] <= off)
		k++;
	return k;
}

/* A cut of CAP at OFF reads as the events before it, with the warning
 * when bytes were lost; WARN_AT_BOUNDARY: even where the cut falls between
 * events (a Brotli stream not finished is cut wherever it stops). */
static void check_cut(const capture *cap, size_t off, const char *what, bool warn_at_boundary)
{
	result res = read_all(cap->data, off);
	if (off < cap->ends[0]) {
		check(res.rc < 0 && res.err.call < 0, "%s cut at %zu, inside the header, is an "
		      "error naming no call (rc %d, call %lld: %s)", what, off, res.rc,
		      (long long)res.err.call, res.err.msg);
		free(res.text);
		return;
	}
	int k = events_before(cap, off);
	check(res.rc == 0, "%s cut at %zu reads to its end: %s", what, off, res.err.msg);
	check(res.text && !strcmp(res.text, after[k]), "%s cut at %zu reads as its %d whole "
	      "events:\n%s\nnot:\n%s", what, off, k, after[k], res.text ? res.text : "");
	bool lost = off < cap->len && (off > cap->ends[k] || warn_at_boundary);
	check(res.cut == lost, "%s cut at %zu: %s", what, off,
	      lost ? "a warning says bytes were lost" : "no warning: nothing was lost");
	if (res.cut) {
		char want[160];
		if (last_call[k] >= 0)
			snprintf(want, sizeof(want), "trace ends mid-record at byte %zu after call "
				 "%d: the capture was cut off", off, last_call[k]);
		else
			snprintf(want, sizeof(want), "trace ends mid-record at byte %zu before its "
				 "first call: the capture was cut off", off);
		check(!strcmp(res.warning.msg, want) && !strcmp(res.warning.file, "cut.trace") &&
		      res.warning.call == last_call[k] && res.warning.file_offset == (int64_t)off,
		      "%s cut at %zu warns '%s', not '%s'", what, off, want, res.warning.msg);
	}
	free(res.text);
}

static void test_every_cut(trace_format fmt, bool warn_at_boundary)
{
	capture cap = write_capture(fmt, false);
	result whole = read_all(cap.data, cap.len);
	check(whole.rc == 0 && !whole.cut && !strcmp(whole.text, after[NEVENTS]),
	      "the whole %s capture reads whole: %s", trace_format_name(fmt), whole.text);
	free(whole.text);
	for (size_t off = 0; off <= cap.len; off++)
		check_cut(&cap, off, trace_format_name(fmt), warn_at_boundary);
	free(cap.data);
}

/* gzip (apitrace's old container): one deflate stream of the whole
 * capture, so a cut decodes to any prefix: what is read is always the
 * events of some prefix, never fewer for a longer cut. */
static void test_gzip_cuts(void)
{
	capture raw = write_capture(TRACE_FMT_RAW, false);
	uLong bound = compressBound(raw.len) + 64;
	uint8_t *gz = malloc(bound);
	z_stream z = {0};
	deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (uint8_t *)raw.data + 2; /* the stream, after "tr" */
	z.avail_in = (uInt)(raw.len - 2);
	z.next_out = gz;
	z.avail_out = (uInt)bound;
	deflate(&z, Z_FINISH);
	size_t len = z.total_out;
	deflateEnd(&z);
	int last = -1;
	for (size_t off = 3; off <= len; off++) {
		result res = read_all(gz, off);
		if (res.rc < 0) {
			check(last < 0, "gzip cut at %zu fails after a shorter cut read: %s", off,
			      res.err.msg);
			free(res.text);
			continue;
		}
		int k = 0;
		while (k <= NEVENTS && strcmp(res.text, after[k]))
			k++;
		check(k <= NEVENTS && k >= last, "gzip cut at %zu reads whole events, no fewer "
		      "than a shorter cut: %s", off, res.text);
		check(res.cut == (off < len), "gzip cut at %zu %s", off,
		      off < len ? "warns" : "reads whole");
		last = k;
		free(res.text);
	}
	check(last == NEVENTS, "the whole gzip capture reads whole");
	free(gz);
	free(raw.data);
}

/* Damage before the end is not a cut: a chunk that fails to decompress
 * fails the read, followed by more chunks or not. */
static void test_damaged_chunks(void)
{
	capture cap = write_capture(TRACE_FMT_SNAPPY, false);
	for (int e = 2; e <= NEVENTS; e += NEVENTS - 2) {
		char *bad = malloc(cap.len);
		memcpy(bad, cap.data, cap.len);
		/* chunk E's body starts with its uncompressed length: too large */
		size_t at = cap.ends[e - 1] + 4;
		bad[at] = (char)0xff;
		bad[at + 1] = (char)0xff;
		bad[at + 2] = (char)0xff;
		bad[at + 3] = (char)0x7f;
		result res = read_all(bad, cap.len);
		check(res.rc < 0 && strstr(res.err.msg, "corrupt Snappy chunk") &&
		      res.err.file_offset == (int64_t)cap.ends[e - 1],
		      "a corrupt chunk %s fails at its file offset %zu: %s (file byte %lld)",
		      e < NEVENTS ? "followed by more" : "at the end", cap.ends[e - 1],
		      res.err.msg, (long long)res.err.file_offset);
		free(res.text);
		free(bad);
	}
	free(cap.data);
}

/* Text: a last line without its newline that does not read was cut; a
 * bad line anywhere else is an error. */
static void test_text_cuts(void)
{
	const char *full = HEADER
		"{call: 1, thread: 1, fn: g, ret: 0}\n"
		"{call: 0, thread: 0, fn: f, args: {out: 0xbeef}}\n"
		"{call: 2, thread: 0, fn: h}\n";
	size_t len = strlen(full), hlen = strlen(HEADER);
	for (size_t off = 0; off <= len; off++) {
		result res = read_all(full, off);
		if (off < hlen - 1) {
			check(res.rc < 0 && (res.err.line == 1 || !off), "text cut at %zu, in the header line, "
			      "fails at line 1: %s", off, res.err.msg);
			free(res.text);
			continue;
		}
		/* the whole lines, and a last line cut just before its newline
		 * (it still reads) */
		const char *recs = full + hlen;
		size_t body = off > hlen ? off - hlen : 0, lines = body;
		while (lines && recs[lines - 1] != '\n')
			lines--;
		bool newline_only = body > lines && recs[body] == '\n';
		size_t want = newline_only ? body + 1 : lines;
		bool partial = body > lines && !newline_only;
		check(res.rc == 0 && strlen(res.text) == want && !strncmp(res.text, recs, want),
		      "text cut at %zu reads %zu bytes of whole lines: %s %s", off, want,
		      res.text ? res.text : "", res.err.msg);
		check(res.cut == partial, "text cut at %zu %s", off,
		      partial ? "warns of the line it drops" : "reads whole, no warning");
		free(res.text);
	}
	const char *bad_middle = HEADER "{call: 0, fn: f, args: {out: bareword}}\n"
					"{call: 1, fn: g}\n";
	result res = read_all(bad_middle, strlen(bad_middle));
	check(res.rc < 0 && res.err.line == 2 && !res.cut,
	      "a bad line before others fails at line 2: %s", res.err.msg);
	free(res.text);
	const char *bad_last = HEADER "{call: 0, fn: f}\n{call: 1, fn: g, args: {a: bareword}}\n";
	res = read_all(bad_last, strlen(bad_last));
	check(res.rc < 0 && res.err.line == 3 && !res.cut,
	      "a bad last line with its newline fails at line 3: %s", res.err.msg);
	free(res.text);
}

/* A capture that promised its end record: read whole, the record is not
 * seen; cut between whole chunks before it (a kill), a warning. */
static void test_end_marker(void)
{
	capture cap = write_capture(TRACE_FMT_SNAPPY, true);
	result whole = read_all(cap.data, cap.len);
	check(whole.rc == 0 && !whole.cut && !strcmp(whole.text, after[NEVENTS]),
	      "a capture with its end record reads whole, the record unseen: %s", whole.text);
	free(whole.text);
	result cut = read_all(cap.data, cap.ends[NEVENTS]);
	check(cut.rc == 0 && cut.cut && !strcmp(cut.text, after[NEVENTS]) &&
	      cut.warning.call == 2 && cut.warning.file_offset == (int64_t)cap.ends[NEVENTS],
	      "cut between chunks before its end record, a capture reads its calls and warns "
	      "after call 2: %s", cut.warning.msg);
	free(cut.text);
	/* what programs write from it promise nothing: a copy cut short of
	 * its end is whole as far as anyone can tell */
	trace_error err;
	trace_reader *r = trace_reader_open_memory(cap.data, cap.len, "m", &err);
	check(r && trace_header_get(trace_reader_header(r), TRACE_END),
	      "the capture's header promises its end record");
	char *copy = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&copy, &len);
	trace_writer_options opt = {.format = TRACE_FMT_TEXT};
	trace_writer *w = trace_writer_open_file(f, "copy", &opt, &err);
	trace_writer_header(w, trace_reader_header(r), &err);
	trace_writer_close(w, &err);
	fclose(f);
	check(!strstr(copy, TRACE_END), "a copy's header does not: %s", copy);
	free(copy);
	trace_reader_close(r);
	free(cap.data);
}

int main(void)
{
	test_every_cut(TRACE_FMT_RAW, false);
	test_every_cut(TRACE_FMT_SNAPPY, false);
	test_every_cut(TRACE_FMT_BROTLI, true);
	test_every_cut(TRACE_FMT_ZSTD, false);
	test_gzip_cuts();
	test_damaged_chunks();
	test_end_marker();
	test_text_cuts();
	return unit_done("test_salvage");
}
