/*
 * The harness the unit programs share: check() counts a pass, or prints
 * a failure with the line it stands on; unit_done() prints the tally and
 * gives main its exit status (non-zero on a failure).
 */
#ifndef TRACEKIT_UNIT_H
#define TRACEKIT_UNIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int passed, failed;

#define check(ok, ...) unit_check((ok), __FILE__, __LINE__, __VA_ARGS__)

__attribute__((format(printf, 4, 5)))
static void unit_check(bool ok, const char *file, int line, const char *fmt, ...)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	/* a broken table fails thousands of checks alike: 40 say enough */
	if (failed > 40)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%d: FAIL: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int unit_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, passed, failed);
	return failed != 0;
}

#endif
