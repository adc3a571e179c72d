/*
 * libFuzzer target: the record check of trace-replay --check
 * (lib/replay/check.c): the input read as a trace, each record through
 * replay's own checks, without a device.  A refusal is an answer; a
 * crash, a sanitizer report, a leak or a hang is a finding.
 */
#include "vkreplay.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const vkr_options opt = {.input = "fuzz", .quiet = true, .last_frame = -1};
	static unsigned turn;
	setenv("TRACE_DECODE_AHEAD", turn % 3 ? "1" : "0", 1);
	setenv("TRACE_DECODE_HOOK_THREAD", turn % 3 == 2 ? "1" : "0", 1);
	turn++;
	trace_error err;
	trace_error_clear(&err);
	trace_reader *in = trace_reader_open_memory(data, size, "fuzz", &err);
	if (!in)
		return 0;
	vkr_check(in, &opt, &err);
	trace_reader_close(in);
	return 0;
}
