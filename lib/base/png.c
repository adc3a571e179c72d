/* PNG writing with zlib only; see png.h. */
#include "png.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static int png_chunk(FILE *f, const char *type, const unsigned char *data, uint32_t len)
{
	unsigned char hdr[8], crc[4];
	uLong c;

	be32(hdr, len);
	memcpy(hdr + 4, type, 4);
	c = crc32(0L, Z_NULL, 0);
	c = crc32(c, hdr + 4, 4);
	if (len)
		c = crc32(c, data, len);
	be32(crc, (uint32_t)c);
	return fwrite(hdr, 1, 8, f) == 8 && (!len || fwrite(data, 1, len, f) == len) &&
	       fwrite(crc, 1, 4, f) == 4;
}

int png_write_rgba_file(FILE *f, const unsigned char *rgba, uint32_t w, uint32_t h)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	size_t row = (size_t)w * 4, rawlen = (row + 1) * h;
	unsigned char *raw = malloc(rawlen ? rawlen : 1), ihdr[13];
	uLongf zlen = compressBound((uLong)rawlen);
	unsigned char *z = malloc(zlen);
	int ok = 0;

	if (!raw || !z) {
		errno = ENOMEM;
		goto out;
	}
	for (uint32_t y = 0; y < h; y++) {
		raw[y * (row + 1)] = 0; /* filter: none */
		memcpy(raw + y * (row + 1) + 1, rgba + y * row, row);
	}
	if (compress2(z, &zlen, raw, (uLong)rawlen, 6) != Z_OK) {
		errno = ENOMEM;
		goto out;
	}
	be32(ihdr, w);
	be32(ihdr + 4, h);
	ihdr[8] = 8;  /* bit depth */
	ihdr[9] = 6;  /* colour type: RGBA */
	ihdr[10] = ihdr[11] = ihdr[12] = 0;
	ok = fwrite(sig, 1, 8, f) == 8 && png_chunk(f, "IHDR", ihdr, 13) &&
	     png_chunk(f, "IDAT", z, (uint32_t)zlen) && png_chunk(f, "IEND", NULL, 0) &&
	     fflush(f) == 0;
out:
	free(raw);
	free(z);
	return ok ? 0 : -1;
}

int png_write_rgba(const char *path, const unsigned char *rgba, uint32_t w, uint32_t h)
{
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
	if (!tmp) {
		errno = ENOMEM;
		return -1;
	}
	snprintf(tmp, plen + 16, "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		free(tmp);
		return -1;
	}
	int ok = png_write_rgba_file(f, rgba, w, h) == 0;
	int e = errno;
	if (fclose(f) != 0)
		ok = 0;
	else
		errno = e;
	if (ok && rename(tmp, path) != 0)
		ok = 0;
	if (!ok) {
		e = errno;
		remove(tmp);
		errno = e;
	}
	free(tmp);
	return ok ? 0 : -1;
}
