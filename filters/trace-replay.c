/*
 * trace-replay: replay a stream on a real Vulkan device, headless.
 *
 * Two kinds of stream replay: a Vulkan trace (header property api:
 * "Vulkan", the capture layer's) goes to the Vulkan replayer (lib/replay,
 * vkr_run); a Vulkan Memory Allocator recording (a stream vma-import made)
 * to the VMA replayer (lib/replay/vma_replay.c, vmar_run).  Other API
 * traces (GL) are refused.  See trace-replay(1).
 */
#include "callset.h"
#include "cli.h"
#include "vkreplay.h"
#include "vma.h"
#include "vma_replay.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
	"usage: trace-replay [--check] [--gpu N] [--validate] [--stats[=json]] [--no-gpu-time] [--frames A-B] "
	"[--screenshot N[,M...]|A-B[,...] (-o FILE.png | --screenshot-dir DIR)] [--remove-unsupported] "
	"[--loop N] [--dump CALLS] [--dump-resource HANDLE] [--dump-dir DIR] [--wait-timeout S] [--pipeline-jobs N] "
	"[--uniform-alignment N] [--submits-as-captured] [--waits-as-captured] [--timestamps-as-captured] [--preload] [--block-size SIZE] "
	"[-q] [TRACE]";

static uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		trace_cli_usage_error("--block-size wants a size such as 64M, not '%s'", s);
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || !v || v > (UINT64_MAX >> shift))
		trace_cli_usage_error("--block-size wants a size such as 64M, not '%s'", s);
	return (uint64_t)v << shift;
}

static const char intro[] =
	"Replays TRACE (default: standard input) on a Vulkan device, headless: a Vulkan\n"
	"trace of the capture layer, or a VMA recording made a stream by vma-import.\n\n";

enum { OPT_GPU = 256, OPT_VALIDATE, OPT_STATS, OPT_BLOCK, OPT_FRAMES, OPT_SHOT, OPT_SHOT_DIR,
       OPT_REMOVE, OPT_LOOP, OPT_NO_GPU_TIME, OPT_DUMP, OPT_DUMP_RESOURCE, OPT_DUMP_DIR,
       OPT_WAIT, OPT_CHECK, OPT_JOBS, OPT_AS_CAPTURED, OPT_WAITS_CAPTURED, OPT_STAMPS_CAPTURED, OPT_PRELOAD,
       OPT_UNIFORM_ALIGN };

/* -o is the screenshot's and --quiet is -q too, so the table names them,
 * with --help and --version, whose lines line up with the others. */
static const trace_cli_option opts[] = {
	{"check", OPT_CHECK, no_argument,
	 "      --check           make every check replay makes of each record, with no\n"
	 "                        device: exit 0 if replay would take them all\n"},
	{"gpu", OPT_GPU, required_argument,
	 "      --gpu N           the device to use (default 0, in Vulkan's order)\n"},
	{"validate", OPT_VALIDATE, no_argument,
	 "      --validate        enable VK_LAYER_KHRONOS_validation; errors make exit 1\n"},
	{"stats", OPT_STATS, optional_argument,
	 "      --stats[=json]    print statistics (text, or one JSON object)\n"},
	{"no-gpu-time", OPT_NO_GPU_TIME, no_argument,
	 "      --no-gpu-time     --stats without GPU timestamps (they cost time)\n"},
	{"frames", OPT_FRAMES, required_argument,
	 "      --frames A-B      stop after frame B (frames from 0; A-: to the end)\n"},
	{"screenshot", OPT_SHOT, required_argument,
	 "      --screenshot N[,M...]  save the image presented at frame N as PNG (ranges: A-B)\n"},
	{"output", 'o', required_argument,
	 "  -o, --output FILE.png where the one screenshot goes\n"},
	{"screenshot-dir", OPT_SHOT_DIR, required_argument,
	 "      --screenshot-dir DIR   DIR/frame-N.png for each screenshot\n"},
	{"remove-unsupported", OPT_REMOVE, no_argument,
	 "      --remove-unsupported   go on without extensions/features the device lacks\n"},
	{"loop", OPT_LOOP, required_argument,
	 "      --loop N          replay the --frames range (default: all) N times\n"},
	{"dump", OPT_DUMP, required_argument,
	 "      --dump CALLS      after each call of CALLS (trace-filter's call set: 1234,\n"
	 "                        100-200, */frame, @FILE), the images and buffers it wrote\n"},
	{"dump-resource", OPT_DUMP_RESOURCE, required_argument,
	 "      --dump-resource HANDLE  dump only this image or buffer (at every call\n"
	 "                        that writes it, without --dump)\n"},
	{"dump-dir", OPT_DUMP_DIR, required_argument,
	 "      --dump-dir DIR    where the dumps go (default .)\n"},
	{"wait-timeout", OPT_WAIT, required_argument,
	 "      --wait-timeout S  the longest a wait may take, in seconds (default 10; 120\n"
	 "                        on a CPU device); a replay that begins no record for\n"
	 "                        S + 5 s stops\n"},
	{"pipeline-jobs", OPT_JOBS, required_argument,
	 "      --pipeline-jobs N  compile the trace's pipelines ahead on N threads (default:\n"
	 "                        the cores but one, up to 8; 0 on a CPU device)\n"},
	{"uniform-alignment", OPT_UNIFORM_ALIGN, required_argument,
	 "      --uniform-alignment N  replay as if the device's minUniformBufferOffsetAlignment\n"
	 "                        were N (a power of two up to 256) where it is smaller: try\n"
	 "                        a trace for a coarser GPU on this one\n"},
	{"submits-as-captured", OPT_AS_CAPTURED, no_argument,
	 "      --submits-as-captured\n"
	 "                        one vkQueueSubmit call for each of the trace's, none\n"
	 "                        merged with the next ones to the same queue\n"},
	{"waits-as-captured", OPT_WAITS_CAPTURED, no_argument,
	 "      --waits-as-captured\n"
	 "                        wait where the program waited, not only where a later\n"
	 "                        record needs the work done\n"},
	{"timestamps-as-captured", OPT_STAMPS_CAPTURED, no_argument,
	 "      --timestamps-as-captured\n"
	 "                        write the program's timestamp queries (default: left\n"
	 "                        out; nothing replayed reads them)\n"},
	{"preload", OPT_PRELOAD, no_argument,
	 "      --preload         read and decode the --frames range (default: all) before\n"
	 "                        it replays: its frames pay for the calls, not the reading\n"},
	{"block-size", OPT_BLOCK, required_argument,
	 "      --block-size SIZE device memory block size for large heaps (256M)\n"},
	{"quiet", 'q', no_argument, "  -q, --quiet           no progress line, no warnings\n"},
	{"help", 'h', no_argument, "  -h, --help            this help\n"},
	{"version", TRACE_CLI_VERSION, no_argument, "      --version         the version\n"},
	{NULL},
};

/* What the options ask for. */
typedef struct args {
	vkd_options opt;
	vkr_options vo;
	int stats; /* 1 text, 2 json */
	bool no_gpu_time, quiet;
	bool vk_only, check;
	uint64_t shots[256], handles[256];
	trace_callset dump;
} args;

/* One option of the command line into O (trace_cli_parse's callback). */
static void option(int c, const char *arg, void *ctx)
{
	args *o = ctx;
	trace_error err;
	switch (c) {
	case OPT_FRAMES: {
		char *end;
		errno = 0;
		unsigned long long a = strtoull(arg, &end, 10), b = 0;
		bool bad = errno || end == arg || *arg == '-';
		if (!bad && *end == '-') {
			const char *q = end + 1;
			if (*q) {
				b = strtoull(q, &end, 10);
				bad = errno || end == q || *end || b < a || *q == '-';
				o->vo.last_frame = (int64_t)b;
			}
		} else if (!bad) {
			bad = *end != 0;
			o->vo.last_frame = (int64_t)a;
		}
		if (bad || a > INT64_MAX || b > INT64_MAX)
			trace_cli_usage_error("--frames wants A-B, A- or N (frames from 0), not '%s'",
					      arg);
		o->vo.first_frame = (int64_t)a;
		o->vk_only = true;
		break;
	}
	case OPT_SHOT: {
		/* as TRACEKIT_SCREENSHOT takes them: 0,30,59 or 10-12,40 */
		const size_t most = sizeof(o->shots) / sizeof(o->shots[0]);
		const char *q = arg;
		while (*q) {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(q, &end, 10), w = v;
			bool bad = errno || end == q || *q == '-';
			if (!bad && *end == '-') {
				const char *r = end + 1;
				w = strtoull(r, &end, 10);
				bad = errno || end == r || *r == '-' || w < v;
			}
			if (bad || (*end && *end != ','))
				trace_cli_usage_error("--screenshot wants frame numbers and ranges "
						      "N[,M...] or A-B[,...], not '%s'", arg);
			if (w - v >= most - o->vo.nscreenshots)
				trace_cli_usage_error("--screenshot: at most %zu frames, not '%s'", most,
						      arg);
			for (unsigned long long f = v; f <= w; f++)
				o->shots[o->vo.nscreenshots++] = f;
			q = *end ? end + 1 : end;
		}
		o->vk_only = true;
		break;
	}
	case 'o': o->vo.screenshot_out = arg; o->vk_only = true; break;
	case OPT_SHOT_DIR: o->vo.screenshot_dir = arg; o->vk_only = true; break;
	case OPT_REMOVE: o->vo.remove_unsupported = true; o->vk_only = true; break;
	case OPT_LOOP: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-' || !v || v > UINT32_MAX)
			trace_cli_usage_error("--loop wants a count, not '%s'", arg);
		o->vo.loop = (uint32_t)v;
		o->vk_only = true;
		break;
	}
	case OPT_WAIT: {
		char *end;
		errno = 0;
		double v = strtod(arg, &end);
		if (errno || end == arg || *end || !(v > 0) || v > 1e9)
			trace_cli_usage_error("--wait-timeout wants seconds, not '%s'", arg);
		o->vo.wait_ns = (uint64_t)(v * 1e9);
		o->vk_only = true;
		break;
	}
	case OPT_JOBS: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-' || v > 64)
			trace_cli_usage_error("--pipeline-jobs wants a count from 0 to 64, not '%s'", arg);
		o->vo.pipeline_jobs = (int)v;
		o->vk_only = true;
		break;
	}
	case OPT_UNIFORM_ALIGN: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-' || !v || v > 256 || (v & (v - 1)))
			trace_cli_usage_error("--uniform-alignment wants a power of two from 1 to 256, "
					      "not '%s'", arg);
		o->vo.uniform_align = v;
		o->vk_only = true;
		break;
	}
	case OPT_DUMP:
		if (trace_callset_parse(&o->dump, arg, &err) < 0)
			trace_cli_usage_error("--dump %s: %s", arg, err.msg);
		o->vo.dump = &o->dump;
		o->vk_only = true;
		break;
	case OPT_DUMP_RESOURCE: {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(arg, &end, 0);
		if (errno || end == arg || *end || *arg == '-' || !v ||
		    o->vo.ndump_handles == sizeof(o->handles) / sizeof(o->handles[0]))
			trace_cli_usage_error("--dump-resource wants a handle of the trace such as "
					      "0x55d0c0a1b2c0, not '%s'", arg);
		o->handles[o->vo.ndump_handles++] = v;
		o->vo.dump_handles = o->handles;
		o->vk_only = true;
		break;
	}
	case OPT_DUMP_DIR: o->vo.dump_dir = arg; o->vk_only = true; break;
	case OPT_CHECK: o->check = o->vk_only = true; break;
	case OPT_GPU: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-' || v > UINT32_MAX)
			trace_cli_usage_error("--gpu wants a device number, not '%s'", arg);
		o->opt.gpu = (uint32_t)v;
		break;
	}
	case OPT_VALIDATE: o->opt.validate = true; break;
	case OPT_STATS:
		if (!arg || !strcmp(arg, "text"))
			o->stats = 1;
		else if (!strcmp(arg, "json"))
			o->stats = 2;
		else
			trace_cli_usage_error("--stats=%s: text or json", arg);
		break;
	case OPT_NO_GPU_TIME: o->no_gpu_time = true; break;
	case OPT_AS_CAPTURED: o->vo.submits_as_captured = true; break;
	case OPT_WAITS_CAPTURED: o->vo.waits_as_captured = true; break;
	case OPT_STAMPS_CAPTURED: o->vo.timestamps_as_captured = true; break;
	case OPT_PRELOAD: o->vo.preload = o->vk_only = true; break;
	case OPT_BLOCK: o->opt.large_heap_block_size = parse_size(arg); break;
	case 'q': o->quiet = trace_cli_self.quiet = true; break;
	}
}

/*
 * Drivers allocate and free the same large blocks every frame (llvmpipe:
 * its vertex and bin buffers), and glibc gives freed memory back to the
 * kernel at once, which the next frame faults in again page by page: on
 * glmark2-zink's capture, half the replay's page faults.  A replayer keeps
 * it instead: the heap grows 16 MiB at a time and is trimmed only past
 * 256 MiB free.  8-12% more frames a second there (medians of 7 to 9
 * replays of one capture, taken in turns with the unchanged replayer);
 * page faults 20,400-22,200 -> 9,500 (perf stat, session 6).  A malloc
 * setting in the environment wins.
 */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
	const char *tunables = getenv("GLIBC_TUNABLES");
	if (tunables && strstr(tunables, "glibc.malloc."))
		return;
	if (!getenv("MALLOC_TOP_PAD_"))
		mallopt(M_TOP_PAD, 16 << 20);
	if (!getenv("MALLOC_TRIM_THRESHOLD_"))
		mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

int main(int argc, char **argv)
{
	static args o = {.opt = {.prog = "trace-replay"},
			 .vo = {.first_frame = 0, .last_frame = -1, .pipeline_jobs = -1}};
	trace_error err;

	trace_cli_init("trace-replay", usage);
	keep_freed_memory();
	const char *input = trace_cli_parse(argc, argv, opts, option, &o, intro, NULL);
	o.opt.quiet_validation = o.quiet;
	if (o.vo.nscreenshots) {
		/* ascending, once each */
		for (size_t i = 1; i < o.vo.nscreenshots; i++)
			for (size_t j = i; j > 0 && o.shots[j - 1] > o.shots[j]; j--) {
				uint64_t t = o.shots[j];
				o.shots[j] = o.shots[j - 1];
				o.shots[j - 1] = t;
			}
		if (o.vo.screenshot_out && o.vo.nscreenshots > 1)
			trace_cli_usage_error("-o takes one screenshot; use --screenshot-dir for %zu",
					      o.vo.nscreenshots);
		if (!o.vo.screenshot_out && !o.vo.screenshot_dir)
			trace_cli_usage_error("--screenshot needs -o FILE.png or --screenshot-dir DIR");
		o.vo.screenshots = o.shots;
	} else if (o.vo.screenshot_out || o.vo.screenshot_dir) {
		trace_cli_usage_error("-o and --screenshot-dir go with --screenshot N");
	}
	if (o.check && (o.vo.nscreenshots || o.vo.loop > 1 || o.vo.dump || o.vo.ndump_handles ||
			o.stats || o.vo.last_frame >= 0))
		trace_cli_usage_error("--check goes without --frames, --screenshot, --loop, --dump* "
				      "and --stats: it replays nothing");
	if (o.vo.screenshot_dir && mkdir(o.vo.screenshot_dir, 0777) != 0 && errno != EEXIST)
		trace_cli_usage_error("--screenshot-dir %s: %s", o.vo.screenshot_dir, strerror(errno));
	char msg[512];
	if (o.vo.dump_dir && !o.vo.dump && !o.vo.ndump_handles)
		trace_cli_usage_error("--dump-dir goes with --dump CALLS or --dump-resource HANDLE");
	if ((o.vo.dump || o.vo.ndump_handles) && o.vo.loop > 1)
		trace_cli_usage_error("--dump and --dump-resource do not go with --loop");
	if (o.vo.preload && (o.check || o.vo.loop > 1 || o.vo.dump || o.vo.ndump_handles))
		trace_cli_usage_error("--preload goes without --check, --loop and --dump*: they read "
				      "the records themselves");
	if ((o.vo.dump || o.vo.ndump_handles) &&
	    (vkr_dump_dir_check(o.vo.dump_dir ? o.vo.dump_dir : ".", msg, sizeof(msg)) < 0 ||
	     vkr_dump_check(input, &o.vo, msg, sizeof(msg)) < 0))
		trace_cli_usage_error("%s", msg);

	trace_error_clear(&err);
	trace_reader *in = trace_reader_open(input, &err);
	if (!in)
		trace_cli_fail(&err);
	const trace_header *h = trace_reader_header(in);
	const char *version = trace_header_get(h, VMA_PROP_VERSION);
	const char *api = trace_header_get(h, "api");
	if (!version && api && !strcmp(api, "Vulkan")) {
		o.vo.dev = o.opt;
		o.vo.input = input;
		o.vo.quiet = o.quiet;
		o.vo.stats = o.stats;
		o.vo.no_gpu_time = o.no_gpu_time;
		if (o.check && vkr_check(in, &o.vo, &err) < 0) {
			trace_reader_close(in);  /* (its threads joined) */
			trace_cli_fail(&err);
		}
		int status = o.check ? 0 : vkr_run(in, &o.vo);
		trace_cli_warn_cut(in);
		trace_reader_close(in);
		return status;
	}
	if (o.vk_only) {
		trace_reader_close(in);
		trace_cli_usage_error("--check, --frames, --screenshot, -o, --screenshot-dir, --loop, "
				      "--dump*, --preload and --remove-unsupported are for Vulkan "
				      "traces");
	}
	if (!version) {
		trace_error_clear(&err);
		snprintf(err.file, sizeof(err.file), "%s", input);
		trace_error_set(&err, "this is %s%s trace: only Vulkan traces (api: Vulkan, "
				"the capture layer's) and VMA recordings (see vma-import) replay",
				api ? "a " : "an API", api ? api : "");
		trace_reader_close(in);
		trace_cli_fail(&err);
	}
	vmar_options mo = {.dev = o.opt, .input = input, .quiet = o.quiet, .stats = o.stats};
	int status = vmar_run(in, &mo);
	trace_cli_warn_cut(in);
	trace_reader_close(in);
	return status;
}
