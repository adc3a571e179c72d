/*
 * vkreplay: trace-replay's Vulkan path.  Executes the calls of a Vulkan
 * trace (header property api: "Vulkan") on a real device, headless:
 * arguments decoded by the schema (vk_decode_args), every handle mapped
 * from its capture value to the live one (vk_walk_handles), the call made
 * through a generated thunk (build/gen/vkcall_gen.c); hand-written code
 * only where replay differs from the call: instance and device creation,
 * memory (object-based, lib/replay/vkdevice.c's allocator), surfaces and
 * swapchains (offscreen images), waits, and capture-time queries.  Its
 * files, one a Vulkan concept, are in lib/replay (replay_internal.h maps
 * them).
 *
 * Like vkdevice.c it needs libvulkan, so it is not in libtrace: only
 * trace-replay links it.  See trace-replay(1).
 */
#ifndef TRACE_VKREPLAY_H
#define TRACE_VKREPLAY_H

#include "trace.h"
#include "vkdevice.h"

typedef struct vkr_options {
	vkd_options dev;              /* --gpu, --validate, -q */
	const char *input;            /* for messages */
	bool quiet;
	bool remove_unsupported;      /* drop extensions/features the device lacks */
	int64_t first_frame;          /* --frames A-B: A (0) */
	int64_t last_frame;           /* B, or -1 for the whole trace */
	uint32_t loop;                /* --loop N (0 or 1: once) */
	const uint64_t *screenshots;  /* frames to save, ascending */
	size_t nscreenshots;
	const char *screenshot_out;   /* -o FILE.png (one frame) */
	const char *screenshot_dir;   /* --screenshot-dir DIR: DIR/frame-N.png */
	int stats;                    /* 0, 1 text, 2 json */
	bool no_gpu_time;             /* --no-gpu-time: --stats without timestamps */
	bool submits_as_captured;     /* --submits-as-captured: none merged */
	bool waits_as_captured;       /* --waits-as-captured: the program's waits made */
	bool timestamps_as_captured;  /* --timestamps-as-captured: its timestamps written */
	const struct trace_callset *dump;  /* --dump CALLS, or NULL */
	const uint64_t *dump_handles; /* --dump-resource HANDLE..., capture values */
	size_t ndump_handles;
	const char *dump_dir;         /* --dump-dir DIR (default .) */
	uint64_t wait_ns;             /* --wait-timeout: the longest wait (0: 10 s) */
	int pipeline_jobs;            /* --pipeline-jobs N; -1: by the device */
	bool preload;                 /* --preload: the range read and decoded first */
	uint64_t uniform_align;       /* --uniform-alignment N: at least this (0: the device's) */
} vkr_options;

/* --dump, --dump-resource: 0, or -1 with MSG saying which call of INPUT
 * (a file; a stream is checked as it is replayed) is past its end, or
 * which handle no image or buffer of it has. */
int vkr_dump_check(const char *input, const vkr_options *opt, char *msg, size_t cap);
/* --dump-dir: DIR made where it is not; 0, or -1 with MSG where no file
 * can be made in it. */
int vkr_dump_dir_check(const char *dir, char *msg, size_t cap);

/* Replays the rest of IN; the exit status (0, 1; usage errors exit 2). */
int vkr_run(trace_reader *in, const vkr_options *opt);

/* --check: every check replay makes of each record of IN (decoded by
 * the schema; handles made and not destroyed; objects bound; binary
 * semaphores signalled before a wait; swapchain images), without a
 * device: no instance is made.  0 where replay would take every record,
 * else -1 with ERR the line replay stops with. */
int vkr_check(trace_reader *in, const vkr_options *opt, trace_error *err);

#endif
