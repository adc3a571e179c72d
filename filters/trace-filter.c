/*
 * trace-filter: keep the records of a trace that match every criterion
 * given (function name rules, threads, frames, call numbers, handles),
 * or count them per function.  A plain cut: nothing is added to make the
 * result replay, which is trace-trim's job.  See trace-filter(1).
 */
#include "callset.h"
#include "cli.h"
#include "frames.h"

#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: trace-filter [--keep PAT] [--drop PAT] [--thread N] [--frames SET] "
	"[--calls SET] [--handle PTR] [--count [--by-frame]] [-f FORMAT] [-o FILE] "
	"[--quiet] [TRACE]";

/* ------------------------------------------------------------------ */
/* Function signature -> number, for name verdicts and counts. */

typedef struct sigmap {
	const trace_func_sig **keys;
	uint64_t *vals;
	size_t cap, n;
} sigmap;

static size_t sigmap_home(const sigmap *m, const trace_func_sig *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (m->cap - 1);
}

/* The value kept for key, made 0 on first use. */
static uint64_t *sigmap_at(sigmap *m, const trace_func_sig *key)
{
	if (2 * (m->n + 1) > m->cap) {
		sigmap old = *m;
		m->cap = old.cap ? old.cap * 2 : 64;
		m->keys = calloc(m->cap, sizeof(*m->keys));
		m->vals = calloc(m->cap, sizeof(*m->vals));
		if (!m->keys || !m->vals)
			abort();
		for (size_t i = 0; i < old.cap; i++) {
			if (!old.keys[i])
				continue;
			size_t j = sigmap_home(m, old.keys[i]);
			while (m->keys[j])
				j = (j + 1) & (m->cap - 1);
			m->keys[j] = old.keys[i];
			m->vals[j] = old.vals[i];
		}
		free(old.keys);
		free(old.vals);
	}
	size_t i = sigmap_home(m, key);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->n++;
	}
	return &m->vals[i];
}

static void sigmap_clear(sigmap *m)
{
	if (m->cap) {
		memset(m->keys, 0, m->cap * sizeof(*m->keys));
		memset(m->vals, 0, m->cap * sizeof(*m->vals));
	}
	m->n = 0;
}

static void sigmap_free(sigmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* The criteria. */

typedef struct rule {
	const char *pattern;
	bool keep;
} rule;

typedef struct filter {
	rule *rules;
	size_t nrules;
	uint32_t *threads;
	size_t nthreads;
	trace_callset calls, frames;
	uint64_t *handles;
	size_t nhandles;
	sigmap verdicts; /* 1 drop, 2 keep, per function signature */
} filter;

/*
 * The last rule whose pattern matches the name decides.  A name no rule
 * matches gets the opposite of the first rule: "--keep 'glDraw*'" keeps
 * only draws, "--drop 'glGet*'" keeps everything else.
 */
static bool name_kept(filter *f, const trace_func_sig *sig)
{
	if (!f->nrules)
		return true;
	uint64_t *v = sigmap_at(&f->verdicts, sig);
	if (!*v) {
		bool keep = !f->rules[0].keep;
		for (size_t i = f->nrules; i-- > 0;) {
			if (!fnmatch(f->rules[i].pattern, sig->name, 0)) {
				keep = f->rules[i].keep;
				break;
			}
		}
		*v = keep ? 2 : 1;
	}
	return *v == 2;
}

static bool value_names(const filter *f, const trace_value *v)
{
	switch (v->kind) {
	case TRACE_POINTER:
		for (size_t i = 0; i < f->nhandles; i++)
			if (v->u == f->handles[i])
				return true;
		return false;
	case TRACE_ARRAY:
	case TRACE_REPR:
		for (uint32_t i = 0; i < (v->kind == TRACE_REPR ? 2 : v->len); i++)
			if (value_names(f, &v->items[i]))
				return true;
		return false;
	case TRACE_STRUCT:
		for (uint32_t i = 0; i < v->st.sig->nmembers; i++)
			if (value_names(f, &v->st.members[i]))
				return true;
		return false;
	default:
		return false;
	}
}

static bool call_names(const filter *f, const trace_call *c)
{
	for (uint32_t i = 0; i < c->sig->nargs; i++)
		if (value_names(f, &c->args[i]))
			return true;
	return c->ret && value_names(f, c->ret);
}

static void filter_free(filter *f)
{
	sigmap_free(&f->verdicts);
	trace_callset_free(&f->calls);
	trace_callset_free(&f->frames);
	free(f->rules);
	free(f->threads);
	free(f->handles);
}

/* Every criterion given must hold; the cheap ones are asked first. */
static bool selected(filter *f, const trace_call *c, int64_t frame, bool ends_frame)
{
	if (f->nthreads) {
		size_t i = 0;
		while (i < f->nthreads && f->threads[i] != c->thread)
			i++;
		if (i == f->nthreads)
			return false;
	}
	if (!trace_callset_empty(&f->calls) &&
	    !trace_callset_contains(&f->calls, c->no,
				    ends_frame ? TRACE_CALLSET_END_FRAME : TRACE_CALLSET_ANY))
		return false;
	if (!trace_callset_empty(&f->frames) &&
	    !trace_callset_contains(&f->frames, (uint64_t)frame, TRACE_CALLSET_ANY))
		return false;
	if (!name_kept(f, c->sig))
		return false;
	return !f->nhandles || call_names(f, c);
}

/* ------------------------------------------------------------------ */
/* --count: calls per function, overall and (--by-frame) per frame. */

typedef struct tally {
	sigmap counts;
	uint64_t total;
} tally;

typedef struct row {
	const char *name;
	uint64_t count;
} row;

static int by_name(const void *a, const void *b)
{
	return strcmp(((const row *)a)->name, ((const row *)b)->name);
}

static int by_count(const void *a, const void *b)
{
	const row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Rows by count, most first, then by name; a total line; counts right
 * aligned.  Two signatures can share a name (a function recorded with
 * different arguments), so rows are merged by name first.
 */
static void tally_print(FILE *out, const tally *t)
{
	row *rows = calloc(t->counts.n ? t->counts.n : 1, sizeof(*rows));
	if (!rows)
		abort();
	size_t n = 0;
	for (size_t i = 0; i < t->counts.cap; i++)
		if (t->counts.keys[i] && t->counts.vals[i])
			rows[n++] = (row){t->counts.keys[i]->name, t->counts.vals[i]};
	qsort(rows, n, sizeof(*rows), by_name);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(rows[m - 1].name, rows[i].name))
			rows[m - 1].count += rows[i].count;
		else
			rows[m++] = rows[i];
	}
	qsort(rows, m, sizeof(*rows), by_count);
	int width = snprintf(NULL, 0, "%llu", (unsigned long long)t->total);
	for (size_t i = 0; i < m; i++)
		fprintf(out, "%*llu  %s\n", width, (unsigned long long)rows[i].count, rows[i].name);
	fprintf(out, "%*llu  total\n", width, (unsigned long long)t->total);
	free(rows);
}

/* One frame's table, then the tally starts again for the next frame. */
static void frame_print(FILE *out, tally *t, int64_t frame)
{
	if (!t->total)
		return;
	fprintf(out, "frame %lld\n", (long long)frame);
	tally_print(out, t);
	fputc('\n', out);
	sigmap_clear(&t->counts);
	t->total = 0;
}

static void tally_add(tally *t, const trace_func_sig *sig)
{
	(*sigmap_at(&t->counts, sig))++;
	t->total++;
}

/* ------------------------------------------------------------------ */
/* Outputs: a trace, or a count report; neither left half-written. */

typedef struct output {
	const char *path;
	trace_writer *w;
	FILE *report;
	char *tmp;      /* the report's temporary name, for a file */
} output;

static void output_abort(output *o)
{
	if (o->w)
		trace_writer_abort(o->w);
	trace_error ignored;
	if (o->report && o->report != stdout)
		trace_output_close(o->report, o->path, o->tmp, false, &ignored);
	o->w = NULL;
	o->report = NULL;
}

static noreturn void fail(output *o, const trace_error *err)
{
	output_abort(o);
	trace_cli_fail(err);
}

static void report_open(output *o, trace_error *err)
{
	if (!strcmp(o->path, "-")) {
		o->report = stdout;
		return;
	}
	if (!(o->report = trace_output_open(o->path, &o->tmp, err)))
		trace_cli_fail(err);
}

static void report_close(output *o, trace_error *err)
{
	bool ok = fflush(o->report) == 0 && !ferror(o->report);
	if (!ok)
		trace_error_errno(err, o->path, "write error");
	if (o->report != stdout) {
		int r = trace_output_close(o->report, o->path, o->tmp, ok, err);
		o->report = NULL;
		o->tmp = NULL;
		ok = r == 0;
	}
	if (!ok)
		trace_cli_fail(err);
}

/* ------------------------------------------------------------------ */
/* Options. */

enum {
	OPT_KEEP = 256,
	OPT_DROP,
	OPT_THREAD,
	OPT_FRAMES,
	OPT_CALLS,
	OPT_HANDLE,
	OPT_COUNT,
	OPT_BY_FRAME,
	OPT_QUIET,
	OPT_VERSION,
};

static uint32_t parse_thread(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v > UINT32_MAX)
		trace_cli_usage_error("--thread takes a thread number, not '%s'", s);
	return (uint32_t)v;
}

static uint64_t parse_handle(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (*s < '0' || *s > '9' || *end || errno)
		trace_cli_usage_error("--handle takes a pointer such as 0x55d0a1b2c3d0, not '%s'", s);
	if (!v)
		trace_cli_usage_error("--handle 0: a null pointer names no object");
	return v;
}

static void parse_set(trace_callset *set, const char *opt, const char *s)
{
	trace_error err;
	trace_error_clear(&err);
	if (trace_callset_parse(set, s, &err) < 0)
		trace_cli_usage_error("%s: %s", opt, err.msg);
}

static void help(void)
{
	printf("%s\n\n"
	       "Writes the records of TRACE (default: standard input) that match every\n"
	       "criterion given, in the encoding it was read in.  A plain cut: the result\n"
	       "may not replay (trace-trim cuts so that it does).\n\n"
	       "  --keep PAT, --drop PAT  function name globs, in order: the last that\n"
	       "                          matches decides; names no rule matches are\n"
	       "                          dropped if the first rule is --keep, else kept\n"
	       "  --thread N              calls of thread N (repeatable: any of them)\n"
	       "  --frames SET            calls in these frames (0-9, 5, 10-20,30, 7-)\n"
	       "  --calls SET             calls with these numbers (0-100/2, 10-20,30, *,\n"
	       "                          */frame, @FILE)\n"
	       "  --handle PTR            calls with the pointer PTR in any value\n"
	       "                          (repeatable: any of them)\n"
	       "  --count                 print calls per function instead of a trace\n"
	       "  --by-frame              with --count, also a table for each frame\n"
	       "  -f, --format F          write snappy, brotli, none or text\n"
	       "  -o, --output FILE       write to FILE (default: standard output)\n"
	       "      --quiet             no progress line\n"
	       "  -h, --help              this help\n"
	       "      --version           the version\n",
	       usage);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"keep", required_argument, NULL, OPT_KEEP},
		{"drop", required_argument, NULL, OPT_DROP},
		{"thread", required_argument, NULL, OPT_THREAD},
		{"frames", required_argument, NULL, OPT_FRAMES},
		{"calls", required_argument, NULL, OPT_CALLS},
		{"handle", required_argument, NULL, OPT_HANDLE},
		{"count", no_argument, NULL, OPT_COUNT},
		{"by-frame", no_argument, NULL, OPT_BY_FRAME},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, OPT_QUIET},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	filter f = {0};
	trace_format format = TRACE_FMT_AUTO;
	bool count = false, by_frame = false;
	output o = {.path = "-"};
	int c;

	trace_cli_init("trace-filter", usage);
	/* each option names at most one rule, thread or handle */
	f.rules = calloc((size_t)argc, sizeof(*f.rules));
	f.threads = calloc((size_t)argc, sizeof(*f.threads));
	f.handles = calloc((size_t)argc, sizeof(*f.handles));
	if (!f.rules || !f.threads || !f.handles)
		abort();
	trace_callset_init(&f.calls);
	trace_callset_init(&f.frames);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_KEEP:
		case OPT_DROP:
			if (!*optarg)
				trace_cli_usage_error("%s needs a pattern", argv[optind - 1]);
			f.rules[f.nrules++] = (rule){optarg, c == OPT_KEEP};
			break;
		case OPT_THREAD: f.threads[f.nthreads++] = parse_thread(optarg); break;
		case OPT_FRAMES:
			parse_set(&f.frames, "--frames", optarg);
			if (f.frames.has_freq)
				trace_cli_usage_error("--frames takes frame numbers; "
						      "'/frame' belongs to --calls");
			break;
		case OPT_CALLS: parse_set(&f.calls, "--calls", optarg); break;
		case OPT_HANDLE: f.handles[f.nhandles++] = parse_handle(optarg); break;
		case OPT_COUNT: count = true; break;
		case OPT_BY_FRAME: by_frame = true; break;
		case 'f':
			format = trace_cli_format(optarg);
			if (format == TRACE_FMT_AUTO)
				trace_cli_usage_error("unknown format '%s' (snappy, brotli, none, text)",
						      optarg);
			break;
		case 'o': o.path = optarg; break;
		case OPT_QUIET: trace_cli_self.quiet = true; break;
		case 'h':
			help();
			filter_free(&f);
			return 0;
		case OPT_VERSION: trace_cli_version();
		default: trace_cli_bad_option(c, argv);
		}
	}
	if (argc - optind > 1)
		trace_cli_usage_error("one input at a time");
	if (by_frame && !count)
		trace_cli_usage_error("--by-frame goes with --count");
	if (count && format != TRACE_FMT_AUTO)
		trace_cli_usage_error("--count writes a table, not a trace: no -f");

	const char *in = optind < argc ? argv[optind] : "-";
	trace_error err;
	trace_error_clear(&err);
	trace_reader *r = trace_reader_open(in, &err);
	if (!r)
		trace_cli_fail(&err);
	/* the encoding read, but gzip is read-only: Snappy in its place */
	if (format == TRACE_FMT_AUTO)
		format = trace_reader_format(r);
	if (format == TRACE_FMT_GZIP)
		format = TRACE_FMT_SNAPPY;
	if (count) {
		report_open(&o, &err);
	} else {
		trace_writer_options opt = {.format = format, .quality = -1};
		o.w = trace_writer_open(o.path, &opt, &err);
		if (!o.w)
			trace_cli_fail(&err);
		if (trace_writer_header(o.w, trace_reader_header(r), &err) < 0)
			fail(&o, &err);
	}

	trace_frames frames;
	trace_frames_init(&frames);
	uint64_t last_frame = trace_callset_empty(&f.frames) ? UINT64_MAX :
							      trace_callset_last(&f.frames);
	tally all = {0}, one = {0};
	int64_t one_frame = -1;
	uint64_t n = 0;
	trace_call *call;
	int k;
	while ((k = trace_reader_next(r, &call, &err)) > 0) {
		int64_t frame = trace_frames_next(&frames, call, &err);
		if (frame < 0) {
			snprintf(err.file, sizeof(err.file), "%s", in);
			fail(&o, &err);
		}
		trace_cli_progress(r, ++n);
		/* frames only grow: past the last one asked for, nothing more
		 * can be selected, and the rest need not be read */
		if ((uint64_t)frame > last_frame)
			break;
		if (!selected(&f, call, frame, frames.ended)) {
			/* the binary writer numbers the calls it keeps densely;
			 * it need not wait for this one */
			if (!count)
				trace_writer_skip(o.w, call->no);
			continue;
		}
		if (!count) {
			if (trace_writer_call(o.w, call, &err) < 0)
				fail(&o, &err);
			continue;
		}
		tally_add(&all, call->sig);
		if (!by_frame)
			continue;
		if (frame != one_frame)
			frame_print(o.report, &one, one_frame);
		one_frame = frame;
		tally_add(&one, call->sig);
	}
	trace_cli_progress_done();
	if (k < 0)
		fail(&o, &err);

	if (count) {
		if (by_frame) {
			frame_print(o.report, &one, one_frame);
			fprintf(o.report, "all frames\n");
		}
		tally_print(o.report, &all);
		report_close(&o, &err);
	} else if (trace_writer_close(o.w, &err) < 0) {
		trace_cli_fail(&err);
	}
	trace_reader_close(r);
	sigmap_free(&all.counts);
	sigmap_free(&one.counts);
	filter_free(&f);
	return 0;
}
