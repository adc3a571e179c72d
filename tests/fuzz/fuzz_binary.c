/*
 * libFuzzer target: the binary reader and its containers (Snappy, Brotli,
 * gzip, raw), then the text writer and reader on whatever reads; and the
 * same input read with its records decoded on a thread of their own,
 * which must read alike.
 */
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_check_round_trip(data, size);
	fuzz_check_ahead(data, size);
	return 0;
}
