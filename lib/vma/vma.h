/*
 * Vulkan Memory Allocator call recordings (VMA's CSV "Calls recording",
 * format 1,0 to 1,8) and the tracekit stream that carries them.
 *
 * What vma-import, vma-export and the replayer share: the table of the
 * functions VMA recorded with their typed parameters, the two ways a
 * recording spells pointers, the pseudo-calls and header properties of a
 * VMA stream, the CSV reader (records out of a recording) and the CSV
 * writer (a recording out of records).  The mapping is the contract in
 * vma-import(1).
 */
#ifndef TRACE_VMA_H
#define TRACE_VMA_H

#include "trace.h"

/* The first line of every recording. */
#define VMA_MAGIC_LINE "Vulkan Memory Allocator,Calls recording"
/* Format versions read and written: 1,0 to 1,8. */
#define VMA_VERSION_MAJOR 1
#define VMA_VERSION_MINOR_MAX 8
/* From 1,3 on, a Config,Begin ... Config,End section follows the version. */
#define VMA_VERSION_MINOR_CONFIG 3

/* Pseudo-calls (the reserved prefix marks records that are not API calls). */
#define VMA_CALL_FRAME "tracekit.frame" /* one argument: index (uint) */
#define VMA_CALL_TIME "tracekit.time"   /* one argument: seconds */
#define VMA_PSEUDO_PREFIX "tracekit."

/* Header properties of a VMA stream. */
#define VMA_PROP_VERSION "vma.version"        /* "1,8", the version line */
#define VMA_PROP_POINTERS "vma.pointers"      /* vma_pointer_style_name() */
#define VMA_PROP_CONFIG_LINES "vma.config.lines" /* count, iff a Config section */
#define VMA_PROP_CONFIG_PREFIX "vma.config."  /* + 0, 1, ...: each line as read */

/* ------------------------------------------------------------------ */
/* The functions and their parameters, in CSV column order. */

typedef enum vma_type {
	VMA_UINT32,
	VMA_UINT64,
	VMA_BOOL,         /* 0 or 1; a TRACE_BOOL */
	VMA_POINTER,      /* a TRACE_POINTER (a null one is 0) */
	VMA_POINTER_LIST, /* space-separated pointers; a TRACE_ARRAY of them */
	VMA_STRING,       /* the rest of the line, commas included; always last */
} vma_type;

typedef struct vma_param {
	const char *name;  /* as the recording document names it */
	uint8_t type;      /* vma_type */
	bool output;       /* a handle the call created (pool, allocation, ...) */
} vma_param;

typedef struct vma_function {
	const char *name;
	uint8_t namelen;
	uint8_t nparams;
	const vma_param *params;
} vma_function;

/* Every function a recorder wrote, and how many. */
const vma_function *vma_functions(size_t *n);
/* The function of that name, or NULL. */
const vma_function *vma_function_lookup(const char *name, size_t len);
const char *vma_type_name(vma_type t);

/* What vma_record_kind() answers besides a function's index in the table
 * (each above any index). */
enum { VMA_RECORD_BAD = -1, VMA_RECORD_FRAME = 1 << 8, VMA_RECORD_TIME, VMA_RECORD_SKIP };
/*
 * What a record of signature SIG is in a VMA stream: the index of its
 * function in vma_functions() with the table's arguments, a frame or time
 * pseudo-call with its one argument, or another pseudo-call (skipped).
 * VMA_RECORD_BAD otherwise, with the sentence in why (cap bytes); HOLDER
 * names what the reader holds ("stream", "recording").
 */
int vma_record_kind(const trace_func_sig *sig, const char *holder, char *why, size_t cap);

/* ------------------------------------------------------------------ */
/* Pointers: printed with C's %p, so spelled the way the recording's C
 * library spells them.  A file uses one spelling throughout. */

typedef enum vma_pointer_style {
	VMA_PTR_UNKNOWN = 0,
	VMA_PTR_WINDOWS,   /* 000001D85B8B1A80, null 0000000000000000 */
	VMA_PTR_WINDOWS32, /* 5B8B1A80, null 00000000 (a 32-bit program) */
	VMA_PTR_GLIBC,     /* 0x55d0a1b2c3d0, null (nil) */
} vma_pointer_style;

const char *vma_pointer_style_name(vma_pointer_style s);
/* The style of that name (as in the vma.pointers property), or UNKNOWN. */
vma_pointer_style vma_pointer_style_parse(const char *name);
/* Parses one pointer; returns its style, or UNKNOWN if it is not one. */
vma_pointer_style vma_pointer_parse(const char *s, size_t n, uint64_t *value);
/* Writes v in style s (UNKNOWN writes Windows'); returns the length.
 * out needs 20 bytes. */
size_t vma_pointer_format(char *out, uint64_t v, vma_pointer_style s);

/* ------------------------------------------------------------------ */
/* Reading a recording. */

typedef struct vma_reader vma_reader;

/*
 * Opens a recording at PATH ("-" or NULL for stdin), reads its header and
 * Config section, and looks ahead for the first pointer to learn the
 * spelling, so that the header it returns is the whole header.  NULL and
 * err filled (file, line, column, byte offset) on failure.
 */
vma_reader *vma_reader_open(const char *path, trace_error *err);
vma_reader *vma_reader_open_file(FILE *f, const char *name, trace_error *err);
/* Over bytes in memory (fuzzing, tests); they must outlive the reader. */
vma_reader *vma_reader_open_memory(const void *data, size_t size, const char *name,
				   trace_error *err);
const trace_header *vma_reader_header(vma_reader *r);
/*
 * The next record: the API call of the next line, preceded by a
 * tracekit.frame record when its frame index differs from the previous
 * line's (or it is the first line) and by a tracekit.time record when its
 * time does.  1 and *call set, 0 at the end, -1 on error.  The record
 * stays valid until the next call.
 */
int vma_reader_next(vma_reader *r, trace_call **call, trace_error *err);
/* Bytes of the recording consumed so far (for progress lines). */
uint64_t vma_reader_position(const vma_reader *r);
void vma_reader_close(vma_reader *r);

/* ------------------------------------------------------------------ */
/* Writing a recording. */

typedef struct vma_writer vma_writer;

/* Writes to PATH ("-" or NULL for stdout); a file appears only whole. */
vma_writer *vma_writer_open(const char *path, trace_error *err);
vma_writer *vma_writer_open_file(FILE *f, const char *name, trace_error *err);
/* The header, Config section and pointer spelling from h; -1 if h is not
 * the header of a VMA stream. */
int vma_writer_header(vma_writer *w, const trace_header *h, trace_error *err);
/* One record: a VMA call becomes one line; tracekit.frame and
 * tracekit.time set the columns of the lines after them; other tracekit.*
 * pseudo-calls are skipped; anything else is an error. */
int vma_writer_call(vma_writer *w, const trace_call *c, trace_error *err);
int vma_writer_close(vma_writer *w, trace_error *err);
void vma_writer_abort(vma_writer *w);

#endif
