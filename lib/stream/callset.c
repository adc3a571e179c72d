/*
 * Call sets (see callset.h for the grammar).  A set is a sorted array of
 * ranges, each knowing the furthest any range up to it reaches, so a
 * lookup is a binary search and a short walk back, however many ranges
 * an '@FILE' brought in.
 */
#include "callset.h"
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

typedef struct parser {
	const char *p, *end;
	const char *source; /* "'SPEC'" or "in file 'NAME'", for messages */
	trace_callset *set;
	trace_error *err;
} parser;

void trace_callset_init(trace_callset *s)
{
	memset(s, 0, sizeof(*s));
}

void trace_callset_free(trace_callset *s)
{
	free(s->ranges);
	memset(s, 0, sizeof(*s));
}

bool trace_callset_empty(const trace_callset *s)
{
	return s->n == 0;
}

uint64_t trace_callset_last(const trace_callset *s)
{
	return s->n ? s->ranges[s->n - 1].reach : 0;
}

uint64_t trace_callset_next(const trace_callset *s, uint64_t from)
{
	uint64_t best = UINT64_MAX;
	for (size_t i = 0; i < s->n; i++) {
		const trace_callset_range *r = &s->ranges[i];
		if (r->stop < from)
			continue;
		uint64_t c = r->start;
		if (from > r->start) {
			uint64_t k = (from - r->start + r->step - 1) / r->step;
			if (k > (UINT64_MAX - r->start) / r->step)
				continue;
			c = r->start + k * r->step;
		}
		if (c <= r->stop && c < best)
			best = c;
	}
	return best;
}

/* How much of p to quote: the rest of its line, at most max bytes. */
static size_t quote_len(const char *p, const char *end, size_t max)
{
	size_t n = 0;
	while (p + n < end && n < max && p[n] != '\n' && p[n] != '\r')
		n++;
	return n;
}

/* "expected a number, found 'x-3'": the rest of the element, shortened. */
static int fail(parser *ps, const char *expected)
{
	if (ps->p >= ps->end)
		trace_error_set(ps->err, "bad call set %s: expected %s at the end", ps->source,
				expected);
	else
		trace_error_set(ps->err, "bad call set %s: expected %s, found '%.*s'", ps->source,
				expected, (int)quote_len(ps->p, ps->end, 20), ps->p);
	return -1;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool skip_blanks(parser *ps)
{
	const char *start = ps->p;
	while (ps->p < ps->end && is_blank(*ps->p))
		ps->p++;
	return ps->p != start;
}

static bool at(parser *ps, char c)
{
	return ps->p < ps->end && *ps->p == c;
}

static bool at_digit(parser *ps)
{
	return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

static bool at_lower(parser *ps)
{
	return ps->p < ps->end && *ps->p >= 'a' && *ps->p <= 'z';
}

static int number(parser *ps, uint64_t *out)
{
	if (!at_digit(ps))
		return fail(ps, "a number");
	uint64_t v = 0;
	const char *start = ps->p;
	while (at_digit(ps)) {
		unsigned d = (unsigned)(*ps->p - '0');
		if (v > (UINT64_MAX - d) / 10) {
			while (at_digit(ps))
				ps->p++;
			trace_error_set(ps->err, "bad call set %s: %.*s is too large", ps->source,
					(int)(ps->p - start), start);
			return -1;
		}
		v = v * 10 + d;
		ps->p++;
	}
	skip_blanks(ps);
	*out = v;
	return 0;
}

/* A frequency word; only "frame" can be told from the stream alone. */
static int frequency(parser *ps, uint32_t *freq)
{
	const char *w = ps->p;
	while (at_lower(ps))
		ps->p++;
	size_t n = (size_t)(ps->p - w);
	if (n == 5 && !memcmp(w, "frame", 5)) {
		*freq = TRACE_CALLSET_END_FRAME;
		skip_blanks(ps);
		return 0;
	}
	static const char *const unsupported[] = {"draw", "render", "fbo", "rendertarget"};
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
		if (strlen(unsupported[i]) == n && !memcmp(w, unsupported[i], n)) {
			trace_error_set(ps->err,
					"bad call set %s: frequency '%.*s' is not supported "
					"(only 'frame': a stream does not say which calls draw)",
					ps->source, (int)n, w);
			return -1;
		}
	trace_error_set(ps->err, "bad call set %s: unknown frequency '%.*s' (only 'frame')",
			ps->source, (int)n, w);
	return -1;
}

static void add(trace_callset *s, const trace_callset_range *r)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->ranges = trace_xrealloc(s->ranges, s->cap * sizeof(*s->ranges));
	}
	s->ranges[s->n++] = *r;
	if (r->freq != TRACE_CALLSET_ANY)
		s->has_freq = true;
}

static int range(parser *ps)
{
	trace_callset_range r = {.start = 0, .stop = UINT64_MAX, .step = 1};
	if (at_lower(ps)) {
		if (frequency(ps, &r.freq) < 0)
			return -1;
		add(ps->set, &r);
		return 0;
	}
	if (at(ps, '*')) {
		ps->p++;
		skip_blanks(ps);
	} else {
		if (!at_digit(ps))
			return fail(ps, "a call number, '*' or 'frame'");
		if (number(ps, &r.start) < 0)
			return -1;
		r.stop = r.start;
		if (at(ps, '-')) {
			ps->p++;
			skip_blanks(ps);
			r.stop = UINT64_MAX;
			if (at_digit(ps) && number(ps, &r.stop) < 0)
				return -1;
		}
	}
	if (at(ps, '/')) {
		ps->p++;
		skip_blanks(ps);
		if (at_digit(ps)) {
			if (number(ps, &r.step) < 0)
				return -1;
			if (r.step == 0) {
				trace_error_set(ps->err, "bad call set %s: a step must be at least 1",
						ps->source);
				return -1;
			}
		} else if (at_lower(ps)) {
			if (frequency(ps, &r.freq) < 0)
				return -1;
		} else {
			return fail(ps, "a step or 'frame' after '/'");
		}
	}
	if (r.stop < r.start) {
		trace_error_set(ps->err,
				"bad call set %s: range %llu-%llu ends before it starts",
				ps->source, (unsigned long long)r.start, (unsigned long long)r.stop);
		return -1;
	}
	add(ps->set, &r);
	return 0;
}

/* RANGE ( [','] RANGE )*, to the end of the parser's text. */
static int ranges(parser *ps)
{
	skip_blanks(ps);
	if (ps->p >= ps->end) {
		trace_error_set(ps->err, "bad call set %s: no ranges", ps->source);
		return -1;
	}
	while (ps->p < ps->end) {
		if (range(ps) < 0)
			return -1;
		/* a range ends on the blanks after it, and took at least one byte */
		bool blank = is_blank(ps->p[-1]);
		if (ps->p >= ps->end)
			break;
		if (at(ps, ',')) {
			ps->p++;
			skip_blanks(ps);
			if (ps->p >= ps->end || at(ps, ','))
				return fail(ps, "a range after ','");
		} else if (!blank) {
			return fail(ps, "',' between ranges");
		}
	}
	return 0;
}

static int read_file(const char *path, tbuf *b, trace_error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		trace_error_set(err, "cannot read call set file '%s': %s", path, strerror(errno));
		return -1;
	}
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		tbuf_add(b, chunk, n);
	bool bad = ferror(f);
	int e = errno;
	fclose(f);
	if (bad) {
		trace_error_set(err, "cannot read call set file '%s': %s", path, strerror(e));
		return -1;
	}
	return 0;
}

static int parse_file(trace_callset *s, const char *path, trace_error *err)
{
	tbuf b = {0};
	if (read_file(path, &b, err) < 0) {
		tbuf_free(&b);
		return -1;
	}
	char source[300];
	snprintf(source, sizeof(source), "in file '%s'", path);
	parser ps = {.p = b.data, .end = b.data + b.len, .source = source, .set = s,
		     .err = err};
	int rc = ranges(&ps);
	tbuf_free(&b);
	return rc;
}

static int by_start(const void *a, const void *b)
{
	const trace_callset_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int trace_callset_parse(trace_callset *s, const char *spec, trace_error *err)
{
	char source[300];
	snprintf(source, sizeof(source), "'%s'", spec);
	size_t n0 = s->n;
	/* '@FILE' is a whole comma-separated element, as in apitrace */
	const char *p = spec;
	for (;;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		const char *q = p;
		while (q < end && is_blank(*q))
			q++;
		int rc;
		if (q < end && *q == '@') {
			size_t n = (size_t)(end - q - 1);
			while (n && is_blank(q[1 + n - 1]))
				n--;
			char *name = trace_xmalloc(n + 1);
			memcpy(name, q + 1, n);
			name[n] = '\0';
			if (!n) {
				trace_error_set(err, "bad call set %s: '@' needs a file name", source);
				rc = -1;
			} else {
				rc = parse_file(s, name, err);
			}
			free(name);
		} else if (q == end && (comma || p != spec)) {
			trace_error_set(err, "bad call set %s: an empty range next to ','", source);
			rc = -1;
		} else {
			parser ps = {.p = p, .end = end, .source = source, .set = s, .err = err};
			rc = ranges(&ps);
		}
		if (rc < 0) {
			/* all of SPEC or none of it */
			s->n = n0;
			s->has_freq = false;
			for (size_t i = 0; i < s->n; i++)
				s->has_freq |= s->ranges[i].freq != TRACE_CALLSET_ANY;
			return -1;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	qsort(s->ranges, s->n, sizeof(*s->ranges), by_start);
	uint64_t reach = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->ranges[i].stop > reach)
			reach = s->ranges[i].stop;
		s->ranges[i].reach = reach;
	}
	return 0;
}

bool trace_callset_contains(const trace_callset *s, uint64_t no, uint32_t flags)
{
	/* lo = how many ranges start at or before no */
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->ranges[mid].start <= no)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && s->ranges[i].reach >= no;) {
		const trace_callset_range *r = &s->ranges[i];
		if (no <= r->stop && (no - r->start) % r->step == 0 &&
		    (r->freq == TRACE_CALLSET_ANY || (flags & r->freq)))
			return true;
	}
	return false;
}
