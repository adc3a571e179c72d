/*
 * libFuzzer target for the call set parser (lib/stream/callset.c), the
 * --calls and --frames of trace-filter, trace-trim and trace-replay.
 *
 * The input is the spec; specs with '@' (read a file) are skipped, so
 * that a fuzzer cannot make the target read /dev/zero.  Any spec must
 * parse or fail without a crash or a leak, and:
 *  - a spec that fails leaves the set as it was (the header's promise);
 *  - the ranges are sorted by start, each with step >= 1 and start <=
 *    stop, and reach is the running largest stop; trace_callset_last is
 *    the largest stop;
 *  - trace_callset_contains, a binary search over reach, answers as a
 *    plain scan of the ranges does, at each range's edges and around;
 *  - the ranges written back as a spec parse to a set that contains the
 *    same numbers (what was parsed is what the spec said).
 */
#include "callset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool scan_contains(const trace_callset *s, uint64_t no, uint32_t flags)
{
	for (size_t i = 0; i < s->n; i++) {
		const trace_callset_range *r = &s->ranges[i];
		if (no >= r->start && no <= r->stop && (no - r->start) % r->step == 0 &&
		    (r->freq == TRACE_CALLSET_ANY || (flags & r->freq)))
			return true;
	}
	return false;
}

/* The numbers worth asking about: each range's edges and their
 * neighbours, its second step, 0 and the largest. */
static size_t samples(const trace_callset *s, uint64_t *out, size_t max)
{
	size_t n = 0;
	out[n++] = 0;
	out[n++] = UINT64_MAX;
	for (size_t i = 0; i < s->n && n + 7 <= max; i++) {
		const trace_callset_range *r = &s->ranges[i];
		out[n++] = r->start;
		out[n++] = r->start - 1;
		out[n++] = r->start + 1;
		out[n++] = r->stop;
		out[n++] = r->stop + 1;
		out[n++] = r->stop - 1;
		out[n++] = r->start + r->step;
	}
	return n;
}

/* The set as a spec of the syntax, one range an element. */
static char *spec_of(const trace_callset *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	for (size_t i = 0; i < s->n; i++) {
		const trace_callset_range *r = &s->ranges[i];
		fprintf(f, "%s%llu-", i ? "," : "", (unsigned long long)r->start);
		if (r->stop != UINT64_MAX)
			fprintf(f, "%llu", (unsigned long long)r->stop);
		if (r->freq == TRACE_CALLSET_END_FRAME) {
			if (r->step != 1) {
				fprintf(stderr, "a range with a step and /frame\n");
				abort();
			}
			fputs("/frame", f);
		} else if (r->step != 1) {
			fprintf(f, "/%llu", (unsigned long long)r->step);
		}
	}
	fclose(f);
	return out;
}

static void check_invariants(const trace_callset *s)
{
	uint64_t reach = 0, last = 0;
	for (size_t i = 0; i < s->n; i++) {
		const trace_callset_range *r = &s->ranges[i];
		if (r->step < 1 || r->start > r->stop || (i && r->start < s->ranges[i - 1].start)) {
			fprintf(stderr, "range %zu: %llu-%llu/%llu, out of order or empty\n", i,
				(unsigned long long)r->start, (unsigned long long)r->stop,
				(unsigned long long)r->step);
			abort();
		}
		reach = r->stop > reach ? r->stop : reach;
		last = reach;
		if (r->reach != reach) {
			fprintf(stderr, "range %zu: reach %llu, not %llu\n", i,
				(unsigned long long)r->reach, (unsigned long long)reach);
			abort();
		}
	}
	if (trace_callset_last(s) != last) {
		fprintf(stderr, "last %llu, not %llu\n", (unsigned long long)trace_callset_last(s),
			(unsigned long long)last);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (memchr(data, '@', size))
		return 0;
	char *spec = malloc(size + 1);
	memcpy(spec, data, size);
	spec[size] = 0;

	trace_error err;
	trace_callset s;
	trace_callset_init(&s);
	if (trace_callset_parse(&s, "7", &err) < 0)
		abort();
	if (trace_callset_parse(&s, spec, &err) < 0) {
		if (s.n != 1 || s.ranges[0].start != 7 || s.ranges[0].stop != 7 ||
		    s.ranges[0].step != 1 || s.ranges[0].freq != TRACE_CALLSET_ANY) {
			fprintf(stderr, "a spec that failed changed the set: %s\n", err.msg);
			abort();
		}
		trace_callset_free(&s);
		free(spec);
		return 0;
	}
	check_invariants(&s);

	char *again = spec_of(&s);
	trace_callset t;
	trace_callset_init(&t);
	if (trace_callset_parse(&t, again, &err) < 0) {
		fprintf(stderr, "the set written back, '%s', does not parse: %s\n", again, err.msg);
		abort();
	}
	uint64_t at[256];
	size_t n = samples(&s, at, 256);
	for (size_t i = 0; i < n; i++)
		for (uint32_t flags = 0; flags <= TRACE_CALLSET_END_FRAME; flags++) {
			bool got = trace_callset_contains(&s, at[i], flags);
			if (got != scan_contains(&s, at[i], flags)) {
				fprintf(stderr, "contains(%llu, %u) is %d, the ranges say otherwise\n",
					(unsigned long long)at[i], flags, got);
				abort();
			}
			if (trace_callset_contains(&t, at[i], flags) != got) {
				fprintf(stderr, "'%s' written back as '%s' differs at %llu\n", spec,
					again, (unsigned long long)at[i]);
				abort();
			}
		}
	trace_callset_free(&t);
	trace_callset_free(&s);
	free(again);
	free(spec);
	return 0;
}
