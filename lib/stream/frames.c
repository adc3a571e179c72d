/*
 * The frame counter.  The end-of-frame list is apitrace's (its END_FRAME
 * call flag, trace_parser_flags.cpp), so our frame numbers agree with
 * `apitrace dump` and `apitrace trim --frames`; vkQueuePresentKHR is
 * added because apitrace has no Vulkan and we do.
 */
#include "frames.h"
#include "tmap.h"

#include <stdint.h>
#include <string.h>

enum { KIND_UNKNOWN = 0, KIND_PLAIN, KIND_END, KIND_MARKER };

static const char *const end_names[] = {
	"CGLFlushDrawable",
	"IDirect3DDevice8::Present",
	"IDirect3DDevice9::GetRenderTargetData",
	"IDirect3DDevice9::Present",
	"IDirect3DDevice9Ex::GetRenderTargetData",
	"IDirect3DDevice9Ex::Present",
	"IDirect3DDevice9Ex::PresentEx",
	"IDirect3DSwapChain9::Present",
	"IDirect3DSwapChain9Ex::Present",
	"eglSwapBuffers",
	"eglSwapBuffersWithDamageEXT",
	"eglSwapBuffersWithDamageKHR",
	"glFrameTerminatorGREMEDY",
	"glXSwapBuffers",
	"glXSwapBuffersMscOML",
	"vkQueuePresentKHR",
	"wglSwapBuffers",
	"wglSwapLayerBuffers",
	"wglSwapMultipleBuffers",
};

static bool is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static const char *skip_word(const char *s)
{
	while (is_word(*s))
		s++;
	return s;
}

/* apitrace's ^IDXGI(Decode)?SwapChain\w*::Present\w*$, by hand. */
static bool is_dxgi_present(const char *s)
{
	if (strncmp(s, "IDXGI", 5))
		return false;
	s += 5;
	if (!strncmp(s, "Decode", 6))
		s += 6;
	if (strncmp(s, "SwapChain", 9))
		return false;
	s = skip_word(s + 9);
	if (strncmp(s, "::Present", 9))
		return false;
	return !*skip_word(s + 9);
}

bool trace_frames_is_end(const char *name)
{
	for (size_t i = 0; i < sizeof(end_names) / sizeof(end_names[0]); i++)
		if (!strcmp(name, end_names[i]))
			return true;
	return is_dxgi_present(name);
}

void trace_frames_init(trace_frames *f)
{
	memset(f, 0, sizeof(*f));
}

/* Names are compared once per signature, not once per record. */
static int kind_of(trace_frames *f, const trace_func_sig *sig)
{
	/* (signatures lie at a fixed stride, which a plain modulo folded
	 * onto a few slots, a strcmp per record; two ways a slot: in one way,
	 * mpv's vkQueuePresentKHR and vkEndCommandBuffer took each other's
	 * slot every frame, 20 strcmps each time) */
	size_t slot = 2 * trace_ptr_slot(sig, TRACE_FRAMES_CACHE_BITS - 1);
	if (f->cache_sig[slot] == sig)
		return f->cache_kind[slot];
	if (f->cache_sig[slot + 1] == sig)
		return f->cache_kind[slot + 1];
	int kind = !strcmp(sig->name, TRACE_FRAME_MARKER) ? KIND_MARKER
		   : trace_frames_is_end(sig->name)        ? KIND_END
							   : KIND_PLAIN;
	f->cache_sig[slot + 1] = f->cache_sig[slot];
	f->cache_kind[slot + 1] = f->cache_kind[slot];
	f->cache_sig[slot] = sig;
	f->cache_kind[slot] = (uint8_t)kind;
	return kind;
}

static int bad_marker(const trace_call *c, trace_error *err, const char *what)
{
	err->call = (int64_t)c->no;
	err->offset = c->offset;
	trace_error_set(err, "%s: %s", TRACE_FRAME_MARKER, what);
	return -1;
}

/* The frame a tracekit.frame record names, or -1. */
static int64_t marker_index(const trace_call *c, trace_error *err)
{
	for (uint32_t i = 0; i < c->sig->nargs; i++) {
		if (strcmp(c->sig->arg_names[i], "index"))
			continue;
		const trace_value *v = &c->args[i];
		if (v->kind != TRACE_UINT)
			return bad_marker(c, err, "argument 'index' must be an unsigned integer");
		if (v->u > INT64_MAX)
			return bad_marker(c, err, "argument 'index' is too large");
		return (int64_t)v->u;
	}
	return bad_marker(c, err, "no argument 'index'");
}

int64_t trace_frames_next(trace_frames *f, const trace_call *c, trace_error *err)
{
	int kind = kind_of(f, c->sig);
	f->ended = false;
	if (kind == KIND_MARKER) {
		int64_t index = marker_index(c, err);
		if (index < 0)
			return -1;
		f->frame = (uint64_t)index;
		return index;
	}
	if (f->frame > INT64_MAX) {
		err->call = (int64_t)c->no;
		err->offset = c->offset;
		trace_error_set(err, "more than %lld frames", (long long)INT64_MAX);
		return -1;
	}
	int64_t frame = (int64_t)f->frame;
	if (kind == KIND_END) {
		f->frame++;
		f->ended = true;
	}
	return frame;
}
