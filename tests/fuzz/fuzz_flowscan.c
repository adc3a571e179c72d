/*
 * libFuzzer target for the text form's own line scanner
 * (lib/stream/flowscan.c): each line of the input that it takes must
 * give the events libyaml gives for that line (type, tag, value, style,
 * column); a line it leaves to libyaml is libyaml's to read or refuse.
 */
#include "../unit/flowscan_agree.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (const char *p = (const char *)data, *end = p + size; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char why[512];
		if (flowscan_agree(p, n, why, sizeof(why)) < 0) {
			fprintf(stderr, "fuzz_flowscan: %.*s\n  %s\n", (int)(n > 200 ? 200 : n), p, why);
			abort();
		}
		p += n + 1;
	}
	return 0;
}
