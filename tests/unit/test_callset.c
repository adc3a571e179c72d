/*
 * Unit tests of the call-set parser (lib/stream/callset.c) and the frame counter
 * (lib/stream/frames.c), by the harness of unit.h.
 */
#include "callset.h"
#include "frames.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

/* Parses spec; on success checks which of 0..limit-1 it contains. */
static void expect_set(const char *spec, const char *members, uint64_t limit)
{
	trace_callset s;
	trace_error err;
	trace_callset_init(&s);
	trace_error_clear(&err);
	if (trace_callset_parse(&s, spec, &err) < 0) {
		check(0, "'%s' did not parse: %s", spec, err.msg);
		trace_callset_free(&s);
		return;
	}
	char got[1024] = "";
	size_t len = 0;
	for (uint64_t i = 0; i < limit; i++)
		if (trace_callset_contains(&s, i, TRACE_CALLSET_ANY))
			len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%llu",
						len ? " " : "", (unsigned long long)i);
	check(!strcmp(got, members), "'%s' holds [%s], expected [%s]", spec, got, members);
	trace_callset_free(&s);
}

/* Parsing spec fails with a message that contains want. */
static void expect_error(const char *spec, const char *want)
{
	trace_callset s;
	trace_error err;
	trace_callset_init(&s);
	trace_error_clear(&err);
	int rc = trace_callset_parse(&s, spec, &err);
	check(rc < 0, "'%s' parsed, expected an error with '%s'", spec, want);
	if (rc < 0)
		check(strstr(err.msg, want) != NULL, "'%s': message '%s' lacks '%s'", spec,
		      err.msg, want);
	trace_callset_free(&s);
}

static bool contains(const char *spec, uint64_t no, uint32_t flags)
{
	trace_callset s;
	trace_error err;
	trace_callset_init(&s);
	trace_error_clear(&err);
	bool in = trace_callset_parse(&s, spec, &err) == 0 &&
		  trace_callset_contains(&s, no, flags);
	trace_callset_free(&s);
	return in;
}

static void test_callset(void)
{
	expect_set("5", "5", 10);
	expect_set("0-3", "0 1 2 3", 10);
	expect_set("2-4,7", "2 3 4 7", 10);
	expect_set("7,2-4", "2 3 4 7", 10);
	expect_set("1 3  5", "1 3 5", 10);
	expect_set(" 1 - 3 , 8 ", "1 2 3 8", 10);
	expect_set("0-9/3", "0 3 6 9", 12);
	expect_set("1-8/3", "1 4 7", 12);
	expect_set("*/4", "0 4 8", 12);
	expect_set("8-", "8 9 10 11", 12);
	expect_set("*", "0 1 2 3 4", 5);
	expect_set("2-2", "2", 5);
	expect_set("0-10,3-4", "0 1 2 3 4 5 6 7 8 9 10", 11);
	/* overlapping ranges, one reaching past the next */
	expect_set("0-100/50,10-12", "0 10 11 12 50 100", 101);

	check(contains("18446744073709551615", UINT64_MAX, 0), "the largest number");
	check(contains("5-", UINT64_MAX, 0), "an open range runs to the end");
	check(!contains("0-9", 10, 0), "a range's end is inclusive, no further");

	/* /frame: only calls that end a frame */
	check(contains("*/frame", 7, TRACE_CALLSET_END_FRAME), "*/frame holds a present");
	check(!contains("*/frame", 7, TRACE_CALLSET_ANY), "*/frame skips other calls");
	check(contains("frame", 3, TRACE_CALLSET_END_FRAME), "bare 'frame' is */frame");
	check(!contains("0-5/frame", 6, TRACE_CALLSET_END_FRAME), "/frame keeps the interval");

	/* many ranges: the lookup finds each and nothing between */
	trace_callset s;
	trace_error err;
	trace_callset_init(&s);
	trace_error_clear(&err);
	for (int i = 999; i >= 0; i--) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%d", i * 10);
		trace_callset_parse(&s, buf, &err);
	}
	bool all = true;
	for (uint64_t i = 0; i < 10000; i++)
		all &= trace_callset_contains(&s, i, 0) == (i % 10 == 0);
	check(all, "a thousand single calls, added out of order");
	check(trace_callset_last(&s) == 9990, "last is %llu",
	      (unsigned long long)trace_callset_last(&s));
	/* a set that fails to parse adds nothing, not even its good part */
	check(trace_callset_parse(&s, "5,20000/frame,x", &err) < 0, "'5,20000/frame,x' fails");
	check(!trace_callset_contains(&s, 20000, TRACE_CALLSET_END_FRAME) && !s.has_freq &&
	      !trace_callset_contains(&s, 5, 0) && trace_callset_contains(&s, 10, 0),
	      "a failed parse leaves the set as it was");
	trace_callset_free(&s);

	expect_error("", "no ranges");
	expect_error("   ", "no ranges");
	expect_error("1,", "an empty range next to ','");
	expect_error("1,,2", "an empty range next to ','");
	expect_error(",1", "an empty range next to ','");
	expect_error(",", "an empty range next to ','");
	expect_error("x", "unknown frequency 'x'");
	expect_error("-3", "expected a call number");
	expect_error("5-2", "ends before it starts");
	expect_error("1-5/0", "at least 1");
	expect_error("1-5/", "expected a step or 'frame' after '/' at the end");
	expect_error("1-5/draw", "frequency 'draw' is not supported");
	expect_error("1-5/fbo", "not supported");
	expect_error("12a", "expected ',' between ranges, found 'a'");
	expect_error("1;2", "expected ',' between ranges, found ';2'");
	expect_error("99999999999999999999", "too large");
	expect_error("0x10", "found 'x10'");
	expect_error("@", "needs a file name");
	expect_error("@/nonexistent/calls.txt", "cannot read call set file");
}

static void test_callset_file(void)
{
	char path[] = "/tmp/test_callset.XXXXXX";
	int fd = mkstemp(path);
	check(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	const char text[] = "1-3\n10, 20\n  30-40/5\n";
	check(write(fd, text, sizeof(text) - 1) == (ssize_t)(sizeof(text) - 1), "write");
	close(fd);
	char spec[256];
	snprintf(spec, sizeof(spec), "@%s,50", path);
	expect_set(spec, "1 2 3 10 20 30 35 40 50", 60);

	fd = open(path, O_WRONLY | O_TRUNC);
	check(write(fd, "1 2\n@x\n3", 8) == 8, "write");
	close(fd);
	snprintf(spec, sizeof(spec), "@%s", path);
	/* the message quotes the rest of the line, not the next ones */
	char want[300];
	snprintf(want, sizeof(want), "in file '%s': expected a call number, '*' or 'frame', found '@x'", path);
	expect_error(spec, want);
	unlink(path);
}

/* ------------------------------------------------------------------ */

typedef struct stream {
	trace_sigtab *sigs;
	trace_call call;
} stream;

/* Feeds a call named NAME (with argument index=INDEX if INDEX >= 0). */
static int64_t feed(trace_frames *f, stream *st, const char *name, long long index,
		    trace_error *err)
{
	static const char *const arg[] = {"index"};
	uint64_t no = st->call.no;
	trace_call_reset(&st->call);
	st->call.no = no + 1;
	bool marker = index != -1;
	st->call.sig = trace_sigtab_func(st->sigs, name, marker ? 1 : 0, marker ? arg : NULL);
	st->call.args = trace_call_values(&st->call, st->call.sig->nargs);
	if (marker) {
		if (index >= 0) {
			st->call.args[0].kind = TRACE_UINT;
			st->call.args[0].u = (uint64_t)index;
		} else {
			st->call.args[0].kind = TRACE_STRING;
			st->call.args[0].str = "five";
			st->call.args[0].len = 4;
		}
	}
	return trace_frames_next(f, &st->call, err);
}

static void test_frames(void)
{
	stream st = {.sigs = trace_sigtab_new()};
	trace_call_init(&st.call);
	trace_frames f;
	trace_error err;
	trace_frames_init(&f);
	trace_error_clear(&err);

	check(feed(&f, &st, "glClear", -1, &err) == 0, "the first frame is 0");
	check(!f.ended, "glClear ends nothing");
	check(feed(&f, &st, "glXSwapBuffers", -1, &err) == 0, "a swap is in its frame");
	check(f.ended, "a swap ends its frame");
	check(feed(&f, &st, "glClear", -1, &err) == 1, "the call after a swap is in frame 1");
	check(feed(&f, &st, "vkQueuePresentKHR", -1, &err) == 1, "a present is in its frame");
	check(feed(&f, &st, "glClear", -1, &err) == 2, "vkQueuePresentKHR ends a frame");
	check(feed(&f, &st, "tracekit.frame", 10, &err) == 10, "the marker is in its frame");
	check(feed(&f, &st, "glClear", -1, &err) == 10, "the marker numbers what follows");
	check(feed(&f, &st, "eglSwapBuffers", -1, &err) == 10, "eglSwapBuffers");
	check(feed(&f, &st, "glClear", -1, &err) == 11, "counting goes on after a marker");
	check(feed(&f, &st, "tracekit.frame", 3, &err) == 3, "a marker may go back");
	check(feed(&f, &st, "glClear", -1, &err) == 3, "and what follows goes with it");

	trace_error_clear(&err);
	check(feed(&f, &st, "tracekit.frame", -2, &err) == -1, "a string index is an error");
	check(strstr(err.msg, "unsigned integer") != NULL, "message: %s", err.msg);
	check(err.call == (int64_t)st.call.no, "the error names the call");
	trace_error_clear(&err);
	check(feed(&f, &st, "tracekit.frame", -1, &err) == -1, "a marker without index");
	check(strstr(err.msg, "no argument 'index'") != NULL, "message: %s", err.msg);

	static const char *const ends[] = {
		"glXSwapBuffers", "glXSwapBuffersMscOML", "eglSwapBuffers",
		"eglSwapBuffersWithDamageEXT", "eglSwapBuffersWithDamageKHR", "wglSwapBuffers",
		"wglSwapLayerBuffers", "wglSwapMultipleBuffers", "CGLFlushDrawable",
		"glFrameTerminatorGREMEDY", "IDirect3DDevice9::Present",
		"IDirect3DDevice9Ex::PresentEx", "IDirect3DSwapChain9::Present",
		"IDXGISwapChain::Present", "IDXGISwapChain1::Present1",
		"IDXGIDecodeSwapChain::PresentBuffer", "vkQueuePresentKHR",
	};
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		check(trace_frames_is_end(ends[i]), "%s ends a frame", ends[i]);
	static const char *const others[] = {
		"glClear", "glXSwapBuffersX", "glSwapBuffers", "IDXGISwapChain::GetBuffer",
		"IDXGISwapChain::Present::x", "IDXGIFactory::Present", "vkQueueSubmit",
		"tracekit.frame", "",
	};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		check(!trace_frames_is_end(others[i]), "'%s' ends no frame", others[i]);

	trace_call_free(&st.call);
	trace_sigtab_free(st.sigs);
}

/* The smallest number a set may hold from a number on: where the seek
 * index may jump to (lib/stream/select.c). */
static void test_callset_next(void)
{
	trace_callset s;
	trace_error err;
	trace_callset_init(&s);
	check(trace_callset_parse(&s, "100-200/7,50,1000-,30-40/frame", &err) == 0, "parses");
	const uint64_t from[] = {0, 31, 41, 51, 100, 101, 107, 108, 199, 200, 500, 1u << 20};
	const uint64_t want[] = {30, 31, 50, 100, 100, 107, 107, 114, 1000, 1000, 1000, 1u << 20};
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++)
		check(trace_callset_next(&s, from[i]) == want[i], "next from %llu is %llu, not %llu",
		      (unsigned long long)from[i], (unsigned long long)want[i],
		      (unsigned long long)trace_callset_next(&s, from[i]));
	trace_callset_free(&s);
	trace_callset_init(&s);
	check(trace_callset_parse(&s, "5-9/2", &err) == 0, "parses");
	check(trace_callset_next(&s, 10) == UINT64_MAX, "none past a set's last");
	check(trace_callset_next(&s, 8) == 9, "a stepped range's next from between steps");
	trace_callset_free(&s);
}

int main(void)
{
	test_callset();
	test_callset_next();
	test_callset_file();
	test_frames();
	return unit_done("test_callset");
}
