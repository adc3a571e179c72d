/*
 * libFuzzer target: the text reader (libyaml underneath), then the text
 * writer.  Inputs that do not start like text are made to: the binary
 * target covers the rest.
 */
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size || (data[0] != '{' && data[0] != '#'))
		return 0;
	fuzz_check_round_trip(data, size);
	return 0;
}
