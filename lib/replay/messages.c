/*
 * What the replay says and how it stops: warnings (the first
 * WARNINGS_SHOWN), the one line of a failure and its exit, or, under
 * --check, the same line handed back to vkr_check.
 */
#include "replay_internal.h"

#include <setjmp.h>
#include <time.h>
#include <unistd.h>

#define WARNINGS_SHOWN 20

double vkr_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The counter's rate, over the replay so far: its time by the clock
 * against the ticks it took. */
double vkr_ticks_s(const vkr *r, uint64_t ticks)
{
	double s = vkr_now_s() - r->t_start;
	uint64_t n = vkr_ticks() - r->ticks_start;
	return n && s > 0 ? (double)ticks * (s / (double)n) : 0.0;
}

void vkr_warn(vkr *r, const char *fmt, ...)
{
	if (++r->warnings > WARNINGS_SHOWN || r->opt->quiet)
		return;
	trace_cli_progress_done();
	va_list ap;
	/* past the last record (a frame never presented) there is no call */
	if (r->call)
		fprintf(stderr, "%s: %s: call %llu: warning: ", trace_cli_self.prog, r->opt->input,
			(unsigned long long)r->call->no);
	else
		fprintf(stderr, "%s: %s: warning: ", trace_cli_self.prog, r->opt->input);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* At the end: how many warnings were not shown. */
void vkr_warnings_done(vkr *r)
{
	if (r->query_more && !r->opt->quiet)
		fprintf(stderr, "%s: %s: %llu more device queries answered no here, like the ones "
			"shown\n", trace_cli_self.prog, r->opt->input,
			(unsigned long long)r->query_more);
	if (r->warnings > WARNINGS_SHOWN && !r->opt->quiet)
		fprintf(stderr, "%s: %s: %llu more warnings not shown\n", trace_cli_self.prog,
			r->opt->input, (unsigned long long)(r->warnings - WARNINGS_SHOWN));
}

/* A failure that stops the replay, its line said: exit status 1.  The
 * device's own threads may still run what was submitted: let them finish
 * (llvmpipe's queue thread freed memory twice when a trace that stopped
 * reading mid-frame exited at once); a device stuck on a wait that
 * nothing signals never finishes.
 * Then _exit(), not exit(): the device and the instance are alive, and
 * the destructors exit() runs in the drivers' libraries then are not
 * ours to trust (a sanitizer build died of SIGSEGV in _dl_fini after the
 * line, once in 1,025 mutants of the capture). */
noreturn void vkr_exit_failed(vkr *r)
{
	if (!r->stuck) {
		vkr_watchdog_phase(NULL);  /* the line is said: a stuck device ends it silently */
		vkr_warm_stop(r, NULL);
		vkr_wait_all(r);
	}
	fflush(NULL);
	_exit(1);
}

noreturn void vkr_fatal(vkr *r, const char *fmt, ...)
{
	va_list ap;
	if (r->check_jmp) {
		/* --check: the same line, back to vkr_check */
		trace_error *err = r->check_err;
		char msg[sizeof(err->msg)];
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		trace_error_clear(err);
		snprintf(err->file, sizeof(err->file), "%s", r->opt->input);
		if (r->call)
			trace_error_set(err, "call %llu (%s): %s", (unsigned long long)r->call->no,
					r->call->sig->name, msg);
		else
			trace_error_set(err, "%s", msg);
		longjmp(*(jmp_buf *)r->check_jmp, 1);
	}
	trace_cli_progress_done();
	fprintf(stderr, "%s: %s: ", trace_cli_self.prog, r->opt->input);
	if (r->call)
		fprintf(stderr, "call %llu (%s): ", (unsigned long long)r->call->no,
			r->call->sig->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	vkr_exit_failed(r);
}

const char *vkr_result_name(VkResult res)
{
	const vk_enum_info *e = vk_enum_lookup("VkResult");
	const char *n = e ? trace_enum_name(&e->sig, res) : NULL;
	return n ? n : "VkResult";
}
