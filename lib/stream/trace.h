/*
 * libtrace: the one canonical record stream of tracekit.
 *
 * A stream is a header (properties) followed by call records.  Two
 * encodings carry it: apitrace's trace binary format (version 6, in a
 * Snappy, Brotli, gzip or raw container) and a text form of one YAML flow
 * mapping per line.  Every program reads any of them through
 * trace_reader and writes one of them through trace_writer; the record
 * model below is what flows between the two.
 *
 * Ownership: signatures (function, struct, enum, bitmask) live as long as
 * the trace_sigtab that interned them; a trace_call and its values live
 * until the next trace_reader_next() on the reader that returned it.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_TOOL_VERSION "0.1.0"

/* The binary format version we write, and the newest we read. */
#define TRACE_FORMAT_VERSION 6

/* ------------------------------------------------------------------ */
/* Errors: one message, naming the file, the call and the byte offset. */

typedef struct trace_error {
	char file[256];      /* input or output name, "-" for stdin */
	char msg[512];       /* what was expected and what was found */
	int64_t call;        /* call number, or -1 when not inside a call */
	int64_t offset;      /* byte offset in the uncompressed stream, or -1 */
	int64_t file_offset; /* file offset of the compressed chunk, or -1 */
	int64_t line;        /* text line (1-based), or -1 */
	int64_t column;      /* text column (1-based), or -1 */
} trace_error;

void trace_error_clear(trace_error *err);
/* Sets the message (printf-style); the location fields are left alone. */
void trace_error_set(trace_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "PROG: FILE: call N, line L column C, byte B (...): MSG\n" */
void trace_error_print(const trace_error *err, const char *prog, FILE *out);
/* The same message for a system failure: "FILE: strerror(errno)". */
void trace_error_errno(trace_error *err, const char *file, const char *what);

/* ------------------------------------------------------------------ */
/* Arenas: per-record bump allocation, reset between records. */

typedef struct trace_arena_chunk trace_arena_chunk;
typedef struct trace_arena {
	trace_arena_chunk *head; /* current chunk, then older ones */
	size_t used;             /* bytes used in head */
	size_t total;            /* bytes held, for bounding growth */
} trace_arena;

void trace_arena_init(trace_arena *a);
void *trace_arena_alloc(trace_arena *a, size_t n); /* 8-byte aligned, zeroed */
/* The same, not cleared: for what is written over whole at once. */
void *trace_arena_take(trace_arena *a, size_t n);
char *trace_arena_strndup(trace_arena *a, const char *s, size_t n);
/* Frees everything but one modest chunk, so memory follows the record. */
void trace_arena_reset(trace_arena *a);
void trace_arena_free(trace_arena *a);
/* Asks the CPU for the first MOST bytes of A's newest chunk ahead of
 * their reading (another thread filled them): A itself is read, the
 * chunk is not (an older chunk would be: a load the asking waits for). */
void trace_arena_prefetch(const trace_arena *a, size_t most);

/* ------------------------------------------------------------------ */
/* Signatures, interned per stream. */

typedef struct trace_func_sig {
	const char *name;
	uint32_t nargs;
	const char **arg_names;
} trace_func_sig;

typedef struct trace_struct_sig {
	const char *name;
	uint32_t nmembers;
	const char **member_names;
} trace_struct_sig;

typedef struct trace_enum_entry {
	const char *name;
	int64_t value;
} trace_enum_entry;

typedef struct trace_enum_sig {
	uint32_t nvalues;
	trace_enum_entry *values;
} trace_enum_sig;

typedef struct trace_bitmask_flag {
	const char *name;
	uint64_t value;
} trace_bitmask_flag;

typedef struct trace_bitmask_sig {
	uint32_t nflags;
	trace_bitmask_flag *flags;
} trace_bitmask_sig;

/* A backtrace frame as apitrace records it; absent details are NULL/-1. */
typedef struct trace_frame {
	const char *module;
	const char *function;
	const char *filename;
	int64_t line;   /* -1 when absent */
	int64_t offset; /* -1 when absent */
} trace_frame;

typedef struct trace_sigtab trace_sigtab;

trace_sigtab *trace_sigtab_new(void);
void trace_sigtab_free(trace_sigtab *t);
/* Each returns the one signature with this content, made on first use. */
const trace_func_sig *trace_sigtab_func(trace_sigtab *t, const char *name,
					uint32_t nargs, const char *const *arg_names);
const trace_struct_sig *trace_sigtab_struct(trace_sigtab *t, const char *name,
					    uint32_t nmembers,
					    const char *const *member_names);
const trace_enum_sig *trace_sigtab_enum(trace_sigtab *t, uint32_t nvalues,
					const trace_enum_entry *values);
const trace_bitmask_sig *trace_sigtab_bitmask(trace_sigtab *t, uint32_t nflags,
					      const trace_bitmask_flag *flags);
const trace_frame *trace_sigtab_frame(trace_sigtab *t, const trace_frame *f);
/* A string that lives as long as the table (interned). */
const char *trace_sigtab_string(trace_sigtab *t, const char *s, size_t n);

/* ------------------------------------------------------------------ */
/* Values. */

typedef enum trace_value_kind {
	TRACE_MISSING = 0, /* an argument the call did not record */
	TRACE_NULL,        /* null pointer */
	TRACE_BOOL,
	TRACE_SINT,        /* written as a negative integer */
	TRACE_UINT,
	TRACE_FLOAT,
	TRACE_DOUBLE,
	TRACE_STRING,
	TRACE_WSTRING,
	TRACE_BLOB,
	TRACE_ENUM,
	TRACE_BITMASK,
	TRACE_ARRAY,
	TRACE_STRUCT,
	TRACE_POINTER,     /* opaque pointer or handle */
	TRACE_REPR,        /* human-readable value and machine value */
} trace_value_kind;

typedef struct trace_value trace_value;
struct trace_value {
	uint8_t kind;     /* trace_value_kind */
	uint32_t len;     /* string/blob bytes, wstring chars, array items */
	union {
		bool b;
		int64_t i;
		uint64_t u;
		float f;
		double d;
		const char *str;        /* NUL-terminated, len bytes */
		const uint32_t *wstr;
		const uint8_t *blob;
		trace_value *items;     /* array, or repr's [human, machine] */
		struct {
			const trace_enum_sig *sig;
			int64_t value;
		} en;
		struct {
			const trace_bitmask_sig *sig;
			uint64_t value;
		} bm;
		struct {
			const trace_struct_sig *sig;
			trace_value *members;
		} st;
	};
};

/* The name an enum value prints as (first match, as apitrace), or NULL. */
const char *trace_enum_name(const trace_enum_sig *sig, int64_t value);
const char *trace_value_kind_name(trace_value_kind k);

/* ------------------------------------------------------------------ */
/* Records. */

enum {
	TRACE_CALL_FAKE = 1u << 0,       /* apitrace's 0x05 detail, bit 0 */
	TRACE_CALL_INCOMPLETE = 1u << 1, /* entered but never left */
};

typedef struct trace_call {
	uint64_t no;         /* call number, from 0 in enter order */
	uint32_t thread;
	const trace_func_sig *sig;
	trace_value *args;   /* sig->nargs values; TRACE_MISSING if absent */
	trace_value *ret;    /* NULL when the call returned nothing */
	uint32_t flags;      /* TRACE_CALL_* */
	uint32_t nframes;
	const trace_frame **backtrace;
	int64_t offset;      /* where the record began in its input */
	trace_arena arena;   /* holds args, ret and their contents */
	void *decoded;       /* what a reader's hook made of it ahead, in its
			      * arena (trace_reader_decode_ahead), or NULL */
} trace_call;

typedef struct trace_property {
	const char *name;
	const char *value;
} trace_property;

typedef struct trace_header {
	uint32_t version;          /* of the input; writers write 6 */
	uint32_t semantic_version;
	uint32_t nprops;
	trace_property *props;     /* in the order read */
} trace_header;

const char *trace_header_get(const trace_header *h, const char *name);

/* ------------------------------------------------------------------ */
/* Encodings and containers. */

typedef enum trace_format {
	TRACE_FMT_AUTO = 0,
	TRACE_FMT_SNAPPY,  /* binary in apitrace's Snappy chunks (default) */
	TRACE_FMT_BROTLI,  /* binary in one Brotli stream */
	TRACE_FMT_GZIP,    /* binary in gzip (read only) */
	TRACE_FMT_RAW,     /* binary uncompressed, after the magic "tr" */
	TRACE_FMT_TEXT,    /* one YAML flow mapping per line */
	TRACE_FMT_ZSTD,    /* binary in zstd frames with a seek table (zstd's seekable format) */
} trace_format;

const char *trace_format_name(trace_format f);
bool trace_format_is_binary(trace_format f);

/*
 * An output file that is whole or absent: trace_output_open writes a
 * regular file under a temporary name beside PATH (*TMP), or a FIFO or
 * device as it is (*TMP = NULL); trace_output_close renames it into place
 * when OK, else removes it, and frees TMP.  trace_output_open returns
 * NULL, and trace_output_close with OK -1, with err filled on failure;
 * trace_output_close without OK returns -1 and leaves err as it was.
 */
FILE *trace_output_open(const char *path, char **tmp, trace_error *err);
int trace_output_close(FILE *f, const char *path, char *tmp, bool ok, trace_error *err);

/* ------------------------------------------------------------------ */
/* Reading. */

typedef struct trace_reader trace_reader;

/*
 * Opens PATH ("-" or NULL for stdin), detects the container and encoding
 * from the first bytes, and reads the header.  Returns NULL and fills err
 * on failure.
 */
trace_reader *trace_reader_open(const char *path, trace_error *err);
/* The same over an open stream; NAME is used in messages. */
trace_reader *trace_reader_open_file(FILE *f, const char *name, trace_error *err);
/* Over bytes in memory (fuzzing, tests); the bytes must outlive the reader. */
trace_reader *trace_reader_open_memory(const void *data, size_t size,
				       const char *name, trace_error *err);
const trace_header *trace_reader_header(trace_reader *r);
trace_format trace_reader_format(trace_reader *r);
trace_sigtab *trace_reader_sigtab(trace_reader *r);
/*
 * The next record: 1 and *call set, 0 at the end, -1 on error (err
 * filled).  The record stays valid until the next call.
 */
int trace_reader_next(trace_reader *r, trace_call **call, trace_error *err);
/*
 * After trace_reader_next returned 0: NULL when the trace ended whole;
 * when it was cut off inside a chunk, a compressed stream or a record (a
 * capture killed, a full disk), the warning to print once, naming the
 * file, the byte where it ends (file_offset) and the last complete call
 * (call, -1 if none).  The records before the cut were read as usual;
 * calls entered and not left by then came last, flagged incomplete.
 */
const trace_error *trace_reader_cut(trace_reader *r);
/*
 * From here on, the records are read and decoded on a thread of their
 * own, up to 256 records (64 MiB) ahead of the caller: for a caller bound
 * by its own CPU (a replay).  1 when it started; 0 where it does not (a
 * text trace, a pipe, a machine of fewer than 4 cores, unless
 * TRACE_DECODE_AHEAD=1; TRACE_DECODE_AHEAD=0), and reading goes on in
 * place.  The thread interns signatures: the caller must not use the
 * reader's trace_sigtab from then on, and trace_reader_skip no longer
 * jumps.  What the caller sees is the same either way.  HOOK, where not
 * NULL, runs on the thread for each record, on no state but CTX and the
 * record: what it returns (allocated in the record's arena) is the
 * record's decoded.
 */
typedef void *(*trace_decode_hook)(void *ctx, trace_call *c);
int trace_reader_decode_ahead(trace_reader *r, trace_decode_hook hook, void *ctx);
/* Which side of decoding ahead waited for the other, so far: the caller
 * finding no record ready (and of those, how often it slept), the thread
 * finding the ring full (slept).  All 0 where it is off. */
typedef struct trace_ahead_waits {
	uint64_t caller, caller_slept, thread, thread_slept;
	double caller_seconds;        /* the caller's waits, in all */
	bool hook_thread;             /* the hook ran on a thread of its own */
	uint64_t hook, hook_slept;    /* its waits for records read */
} trace_ahead_waits;
void trace_reader_ahead_waits(trace_reader *r, trace_ahead_waits *w);
/* Bytes of input consumed so far (for progress lines). */
uint64_t trace_reader_position(trace_reader *r);
/*
 * Skipping ahead with the seek index tracekit writes into a zstd file
 * (trace-format(5)): a jump to the last point of the index that every
 * record selected follows, because each record before it is a call
 * numbered below FIRST_CALL or lies in a frame before FIRST_FRAME (0 for
 * either: no such promise).  1 when it jumped: *AT says the number of the
 * next call (the number of records before the point, too) and the frame
 * of the next record; 0 when it cannot or it would gain nothing (not a
 * regular zstd file with an index, calls still open, the point not far
 * enough ahead); -1 with err set when the index is damaged.
 */
typedef struct trace_skip_point {
	uint64_t call;
	uint64_t frame;
} trace_skip_point;
int trace_reader_skip(trace_reader *r, uint64_t first_call, uint64_t first_frame,
		      trace_skip_point *at, trace_error *err);
void trace_reader_close(trace_reader *r);

/* ------------------------------------------------------------------ */
/* Writing. */

typedef struct trace_writer_options {
	trace_format format;   /* SNAPPY, BROTLI, RAW or TEXT */
	int quality;           /* Brotli quality 0-11, -1 for the default */
	bool end_marker;       /* event-level binary output only: see TRACE_END */
	bool sigs_by_pointer;  /* every signature comes from one table (the
				* capture layer's schema): one id per pointer,
				* none looked up by its content */
} trace_writer_options;

/*
 * A capture can be cut anywhere, even between whole chunks (a kill): with
 * end_marker, the header has the property TRACE_END and close writes a
 * last record, the pseudo-call TRACE_END.  A reader consumes it (no
 * program sees it), and a stream whose header promised it and that ends
 * without it was cut off (trace_reader_cut).  Other writers drop the
 * property from the headers they copy.
 */
#define TRACE_END "tracekit.end"

typedef struct trace_writer trace_writer;

/*
 * Writes to PATH ("-" or NULL for stdout).  A file is written under a
 * temporary name and renamed by trace_writer_close() only when every
 * write succeeded, so a failed run never leaves a file that looks whole.
 */
trace_writer *trace_writer_open(const char *path, const trace_writer_options *opt,
				trace_error *err);
trace_writer *trace_writer_open_file(FILE *f, const char *name,
				     const trace_writer_options *opt,
				     trace_error *err);
int trace_writer_header(trace_writer *w, const trace_header *h, trace_error *err);
int trace_writer_call(trace_writer *w, const trace_call *c, trace_error *err);
/*
 * Event-level writing, for a capture that must record a call before it
 * runs (so a call that crashes the driver is in the trace): enter numbers
 * the call (sets c->no, from 0 in enter order) and writes its arguments;
 * leave writes the arguments the call filled in (every argument of C that
 * is not TRACE_MISSING) and its return value.  Binary output only, and
 * not mixed with trace_writer_call() on one writer; the caller serializes.
 */
int trace_writer_enter(trace_writer *w, trace_call *c, trace_error *err);
int trace_writer_leave(trace_writer *w, const trace_call *c, trace_error *err);
/*
 * Says that call number NO will not come (the program dropped it), so the
 * binary writer need not wait for it before numbering the calls after.
 */
void trace_writer_skip(trace_writer *w, uint64_t no);
/* Says that no call numbered below NO will come (a reader skipped them). */
void trace_writer_skip_to(trace_writer *w, uint64_t no);
/*
 * Puts what was written so far into the output, whole, for a reader of
 * the file or a program that may die next (the capture layer, every
 * quarter second): Snappy ends its chunk, Brotli flushes its stream so
 * that all of it decodes, and the FILE is flushed.  Records held for
 * their order stay held.  0 or -1.
 */
int trace_writer_flush(trace_writer *w, trace_error *err);
/*
 * Flushes and, for a file, renames into place.  0 or -1.  Held records
 * still point at their reader's signatures: close the writer first.
 */
int trace_writer_close(trace_writer *w, trace_error *err);
/* Drops the output: removes the temporary file.  Always succeeds. */
void trace_writer_abort(trace_writer *w);

/* ------------------------------------------------------------------ */
/* Building records by hand (importers, the capture layer, tests). */

void trace_call_init(trace_call *c);
/*
 * Whether C is a call entered and never left (flags: incomplete) that
 * began before a whole call read already (*LAST: the highest number of
 * those, kept up here by the caller, from 0): read after every whole
 * call, its place among them is unknown, and replaying or cutting it
 * where it is read would be wrong.  OpenArena through zink, stopped by
 * SIGTERM, left a present begun in the driver while its main thread
 * destroyed the swapchain, read after the destroy.  One begun after them
 * all (a single-threaded program killed inside its present) is in place.
 */
static inline bool trace_call_out_of_place(const trace_call *c, uint64_t *last)
{
	if (!(c->flags & TRACE_CALL_INCOMPLETE)) {
		if (c->no > *last)
			*last = c->no;
		return false;
	}
	return c->no < *last;
}
void trace_call_reset(trace_call *c);
void trace_call_free(trace_call *c);
trace_value *trace_call_values(trace_call *c, uint32_t n);
/* A deep copy of src into dst (an initialised call), signatures shared. */
void trace_call_copy(trace_call *dst, const trace_call *src);
/* The same into A, which many calls may share (dst's own arena is left
 * as it was, unused). */
void trace_call_copy_into(trace_arena *a, trace_call *dst, const trace_call *src);
/*
 * C's values (its arguments, return value and backtrace) packed into OUT
 * (NULL: only counted): the bytes written.  For holding many records in
 * this process, not for files: signatures stay pointers.
 */
size_t trace_call_pack(const trace_call *c, uint8_t *out);
/* Packed values IN of a call to SIG back into C (reset first; its
 * number, thread and flags are the caller's to set). */
void trace_call_unpack(trace_call *c, const trace_func_sig *sig, const uint8_t *in);

#endif
