/*
 * libFuzzer target: tracekit's seek index (seekindex.c) and the jumps it
 * leads to.  The input is a file: it is opened as trace-filter opens one
 * (a regular file, here a memfd), the reader jumps towards a call and a
 * frame the input's last bytes choose, and reads on to the end.  A crash,
 * a leak or a hang is a finding; a damaged index must only be an error.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-seek", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	FILE *f = fdopen(fd, "rb");
	trace_error err;
	trace_reader *r = trace_reader_open_file(f, "fuzz", &err);
	if (r) {
		uint64_t call = size ? data[size - 1] * 16u : 0;
		uint64_t frame = size > 1 ? data[size - 2] % 16u : 0;
		trace_skip_point at;
		trace_call *c;
		int k = trace_reader_skip(r, call, frame, &at, &err);
		while (k >= 0 && (k = trace_reader_next(r, &c, &err)) > 0)
			if (c->no >= call + 64)
				k = trace_reader_skip(r, call + 4096, frame + 4, &at, &err);
		trace_reader_close(r);
	}
	fclose(f);
	return 0;
}
