/*
 * PNG writing with zlib only (compress2, crc32): 8-bit RGBA, no filter.
 * Shared by trace-replay's screenshots and examples/vkexample.c, which
 * builds it on its own (it needs nothing else of libtrace).
 */
#ifndef TRACE_PNG_H
#define TRACE_PNG_H

#include <stdint.h>
#include <stdio.h>

/*
 * Writes PATH from RGBA (tightly packed rows of 8-bit RGBA, W x H) under a
 * temporary name, renamed into place once whole.  0, or -1 with errno
 * set (ENOMEM where zlib failed).
 */
int png_write_rgba(const char *path, const unsigned char *rgba, uint32_t w, uint32_t h);

/* The same into F, flushed, for a caller that names and places the file
 * itself (trace-replay: trace_output_open).  0, or -1 with errno set. */
int png_write_rgba_file(FILE *f, const unsigned char *rgba, uint32_t w, uint32_t h);

#endif
