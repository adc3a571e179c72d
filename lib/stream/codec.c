/*
 * Snappy and Brotli, opened (dlopen) the first time a trace needs one,
 * not linked: the capture layer writes zstd unless told otherwise, and
 * every program it captured paid for loading both at its start.
 * libsnappy brings libstdc++ with it: the layer loaded in 6.8 ms in a C
 * program, 4.6 ms without them (medians of 15 loads); zstd and zlib
 * stay linked.
 *
 * Each library is opened once a process and its functions kept in a
 * table that does not change after: the only state, and it is a cache.
 */
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* Opens SONAME and looks up its N functions NAMES into FNS; -1 with ERR
 * naming the library (and the function) where one is missing. */
int trace_codec_load(const char *soname, const char *const *names, size_t n, void **fns,
		     trace_error *err)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		trace_error_set(err, "cannot load %s (%s)", soname, why ? why : "not found");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		fns[i] = dlsym(h, names[i]);
		if (!fns[i]) {
			trace_error_set(err, "cannot load %s: it has no %s", soname, names[i]);
			dlclose(h);
			return -1;
		}
	}
	return 0;
}

/* One library of functions: its table, loaded at most once. */
typedef struct codec_lib {
	const char *soname;
	const char *const *names;
	size_t n;
	void **fns;
	bool tried, ok;
	char why[512];  /* why it could not be loaded */
} codec_lib;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* L's table, or false with ERR's message set (its location the caller's). */
static bool codec_get(codec_lib *l, trace_error *err)
{
	pthread_mutex_lock(&load_lock);
	if (!l->tried) {
		trace_error e;
		trace_error_clear(&e);
		l->tried = true;
		l->ok = trace_codec_load(l->soname, l->names, l->n, l->fns, &e) == 0;
		snprintf(l->why, sizeof(l->why), "%s", e.msg);
	}
	bool ok = l->ok;
	pthread_mutex_unlock(&load_lock);
	if (!ok)
		trace_error_set(err, "%s", l->why);
	return ok;
}

/* A table is its library's functions in the order of its names. */
_Static_assert(sizeof(trace_snappy) == 4 * sizeof(void *), "trace_snappy: 4 functions");
_Static_assert(sizeof(trace_brotli_enc) == 6 * sizeof(void *), "trace_brotli_enc: 6 functions");
_Static_assert(sizeof(trace_brotli_dec) == 5 * sizeof(void *), "trace_brotli_dec: 5 functions");

static const char *const snappy_names[] = {
	"snappy_compress", "snappy_uncompress", "snappy_uncompressed_length",
	"snappy_max_compressed_length",
};
static trace_snappy snappy;
static codec_lib snappy_lib = { "libsnappy.so.1", snappy_names, 4,
				(void **)&snappy, false, false, "" };

static const char *const brotlienc_names[] = {
	"BrotliEncoderCreateInstance", "BrotliEncoderSetParameter",
	"BrotliEncoderCompressStream", "BrotliEncoderHasMoreOutput",
	"BrotliEncoderIsFinished", "BrotliEncoderDestroyInstance",
};
static trace_brotli_enc brotlienc;
static codec_lib brotlienc_lib = { "libbrotlienc.so.1", brotlienc_names, 6,
				   (void **)&brotlienc, false, false, "" };

static const char *const brotlidec_names[] = {
	"BrotliDecoderCreateInstance", "BrotliDecoderDecompressStream",
	"BrotliDecoderGetErrorCode", "BrotliDecoderErrorString",
	"BrotliDecoderDestroyInstance",
};
static trace_brotli_dec brotlidec;
static codec_lib brotlidec_lib = { "libbrotlidec.so.1", brotlidec_names, 5,
				   (void **)&brotlidec, false, false, "" };

const trace_snappy *trace_snappy_lib(trace_error *err)
{
	return codec_get(&snappy_lib, err) ? &snappy : NULL;
}

const trace_brotli_enc *trace_brotli_enc_lib(trace_error *err)
{
	return codec_get(&brotlienc_lib, err) ? &brotlienc : NULL;
}

const trace_brotli_dec *trace_brotli_dec_lib(trace_error *err)
{
	return codec_get(&brotlidec_lib, err) ? &brotlidec : NULL;
}
