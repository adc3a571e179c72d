/*
 * libFuzzer target: the binary reader and its containers (Snappy, Brotli,
 * gzip, raw), then the text writer and reader on whatever reads.
 */
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_check_round_trip(data, size);
	return 0;
}
