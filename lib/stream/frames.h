/*
 * Frames: which frame each record of a stream belongs to, the one
 * definition that trace-filter, trace-trim and trace-replay share.
 *
 * Frames are numbered from 0.  A frame ends after a call that presents:
 * apitrace's END_FRAME functions (glXSwapBuffers, eglSwapBuffers,
 * wglSwapBuffers, CGLFlushDrawable, the Direct3D and DXGI Present
 * methods, ...) and vkQueuePresentKHR.  The pseudo-call tracekit.frame
 * (argument index, an unsigned integer) sets the number of its own frame
 * and of the records after it, for sources that have no presents (VMA
 * recordings).
 */
#ifndef TRACE_FRAMES_H
#define TRACE_FRAMES_H

#include "trace.h"

/* The pseudo-call that numbers frames where the API has no presents. */
#define TRACE_FRAME_MARKER "tracekit.frame"

#define TRACE_FRAMES_CACHE_BITS 8
#define TRACE_FRAMES_CACHE (1 << TRACE_FRAMES_CACHE_BITS)

/*
 * The counter for one stream: feed it every record, in stream order.
 * Function signatures are remembered by pointer, so one counter follows
 * one reader (whose signature table outlives it).
 */
typedef struct trace_frames {
	uint64_t frame;  /* the frame of the next record */
	bool ended;      /* the record last fed ended its frame */
	const trace_func_sig *cache_sig[TRACE_FRAMES_CACHE];
	uint8_t cache_kind[TRACE_FRAMES_CACHE];
} trace_frames;

void trace_frames_init(trace_frames *f);

/*
 * The frame of c, the next record of the stream, or -1 with err (the
 * call and offset filled, not the file) when c is a tracekit.frame
 * without a usable index.
 */
int64_t trace_frames_next(trace_frames *f, const trace_call *c, trace_error *err);

/* Whether a call to the function NAME ends a frame. */
bool trace_frames_is_end(const char *name);

#endif
