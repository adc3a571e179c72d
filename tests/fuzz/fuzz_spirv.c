/*
 * libFuzzer target for SPIR-V reflection (lib/vulkan/spirv.c), which
 * replay runs on every shader module's code before a driver sees it.
 * The input is the module's bytes (whole words; a trailing part word is
 * left out).  A module reads or is refused with a message; one that
 * reads must be consistent: each entry point found again by its name and
 * stage, each binding's count and types within what the reader can say.
 * A crash, a sanitizer report, a leak or a hang is a finding.
 */
#include "spirv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "%s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size / 4;
	uint32_t *code = malloc(n ? n * 4 : 4);
	memcpy(code, data, n * 4);
	trace_error err;
	trace_error_clear(&err);
	spv_module *m = spv_reflect(code, n, &err);
	if (!m && !err.msg[0])
		fail("refused without a message");
	for (uint32_t i = 0; m && i < m->nentries; i++) {
		const spv_entry *e = &m->entries[i];
		const spv_entry *again = spv_entry_of(m, e->name, e->stage);
		if (!again || strcmp(again->name, e->name) || again->stage != e->stage)
			fail("an entry point not found by its name and stage");
		for (uint32_t k = 0; k < e->nbindings; k++)
			if (e->bindings[k].types >> 11)
				fail("a descriptor type past the core ones");
	}
	spv_free(m);
	free(code);
	return 0;
}
