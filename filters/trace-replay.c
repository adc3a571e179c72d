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
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
	"usage: trace-replay [--check] [--gpu N] [--validate] [--stats[=json]] [--no-gpu-time] [--frames A-B] "
	"[--screenshot N[,M...] (-o FILE.png | --screenshot-dir DIR)] [--remove-unsupported] "
	"[--loop N] [--dump CALLS] [--dump-resource HANDLE] [--dump-dir DIR] [--wait-timeout S] [--block-size SIZE] "
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

static void help(void)
{
	printf("%s\n\n"
	       "Replays TRACE (default: standard input) on a Vulkan device, headless: a Vulkan\n"
	       "trace of the capture layer, or a VMA recording made a stream by vma-import.\n\n"
	       "      --check           make every check replay makes of each record, with no\n"
	       "                        device: exit 0 if replay would take them all\n"
	       "      --gpu N           the device to use (default 0, in Vulkan's order)\n"
	       "      --validate        enable VK_LAYER_KHRONOS_validation; errors make exit 1\n"
	       "      --stats[=json]    print statistics (text, or one JSON object)\n"
	       "      --no-gpu-time     --stats without GPU timestamps (they cost time)\n"
	       "      --frames A-B      stop after frame B (frames from 0; A-: to the end)\n"
	       "      --screenshot N[,M...]  save the image presented at frame N as PNG\n"
	       "  -o, --output FILE.png where the one screenshot goes\n"
	       "      --screenshot-dir DIR   DIR/frame-N.png for each screenshot\n"
	       "      --remove-unsupported   go on without extensions/features the device lacks\n"
	       "      --loop N          replay the --frames range (default: all) N times\n"
	       "      --dump CALLS      after each call of CALLS (trace-filter's call set: 1234,\n"
	       "                        100-200, */frame, @FILE), the images and buffers it wrote\n"
	       "      --dump-resource HANDLE  dump only this image or buffer (at every call\n"
	       "                        that writes it, without --dump)\n"
	       "      --dump-dir DIR    where the dumps go (default .)\n"
	       "      --wait-timeout S  the longest a wait may take, in seconds (default 10)\n"
	       "      --block-size SIZE device memory block size for large heaps (256M)\n"
	       "  -q, --quiet           no progress line, no warnings\n"
	       "  -h, --help            this help\n"
	       "      --version         the version\n",
	       usage);
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
	enum { OPT_GPU = 256, OPT_VALIDATE, OPT_STATS, OPT_BLOCK, OPT_VERSION, OPT_FRAMES,
	       OPT_SHOT, OPT_SHOT_DIR, OPT_REMOVE, OPT_LOOP, OPT_NO_GPU_TIME, OPT_DUMP,
	       OPT_DUMP_RESOURCE, OPT_DUMP_DIR, OPT_WAIT, OPT_CHECK };
	static const struct option longopts[] = {
		{"check", no_argument, NULL, OPT_CHECK},
		{"gpu", required_argument, NULL, OPT_GPU},
		{"frames", required_argument, NULL, OPT_FRAMES},
		{"screenshot", required_argument, NULL, OPT_SHOT},
		{"screenshot-dir", required_argument, NULL, OPT_SHOT_DIR},
		{"output", required_argument, NULL, 'o'},
		{"remove-unsupported", no_argument, NULL, OPT_REMOVE},
		{"loop", required_argument, NULL, OPT_LOOP},
		{"dump", required_argument, NULL, OPT_DUMP},
		{"dump-resource", required_argument, NULL, OPT_DUMP_RESOURCE},
		{"dump-dir", required_argument, NULL, OPT_DUMP_DIR},
		{"wait-timeout", required_argument, NULL, OPT_WAIT},
		{"validate", no_argument, NULL, OPT_VALIDATE},
		{"stats", optional_argument, NULL, OPT_STATS},
		{"no-gpu-time", no_argument, NULL, OPT_NO_GPU_TIME},
		{"block-size", required_argument, NULL, OPT_BLOCK},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	const char *input;
	bool quiet = false;
	trace_error err;
	vkd_options opt = {.prog = "trace-replay"};
	int stats = 0; /* 1 text, 2 json */
	bool no_gpu_time = false;
	int c;
	static vkr_options vo = {.first_frame = 0, .last_frame = -1};
	static uint64_t shots[256], handles[256];
	static trace_callset dump;
	bool vk_only = false, check = false;

	trace_cli_init("trace-replay", usage);
	keep_freed_memory();
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qho:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FRAMES: {
			char *end;
			errno = 0;
			unsigned long long a = strtoull(optarg, &end, 10), b = 0;
			bool bad = errno || end == optarg || *optarg == '-';
			if (!bad && *end == '-') {
				const char *q = end + 1;
				if (*q) {
					b = strtoull(q, &end, 10);
					bad = errno || end == q || *end || b < a || *q == '-';
					vo.last_frame = (int64_t)b;
				}
			} else if (!bad) {
				bad = *end != 0;
				vo.last_frame = (int64_t)a;
			}
			if (bad || a > INT64_MAX || b > INT64_MAX)
				trace_cli_usage_error("--frames wants A-B, A- or N (frames from 0), not '%s'",
						      optarg);
			vo.first_frame = (int64_t)a;
			vk_only = true;
			break;
		}
		case OPT_SHOT: {
			const char *q = optarg;
			while (*q) {
				char *end;
				errno = 0;
				unsigned long long v = strtoull(q, &end, 10);
				if (errno || end == q || *q == '-' || (*end && *end != ',') ||
				    vo.nscreenshots == sizeof(shots) / sizeof(shots[0]))
					trace_cli_usage_error("--screenshot wants frame numbers N[,M...], not '%s'",
							      optarg);
				shots[vo.nscreenshots++] = v;
				q = *end ? end + 1 : end;
			}
			vk_only = true;
			break;
		}
		case 'o': vo.screenshot_out = optarg; vk_only = true; break;
		case OPT_SHOT_DIR: vo.screenshot_dir = optarg; vk_only = true; break;
		case OPT_REMOVE: vo.remove_unsupported = true; vk_only = true; break;
		case OPT_LOOP: {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || !v || v > UINT32_MAX)
				trace_cli_usage_error("--loop wants a count, not '%s'", optarg);
			vo.loop = (uint32_t)v;
			vk_only = true;
			break;
		}
		case OPT_WAIT: {
			char *end;
			errno = 0;
			double v = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(v > 0) || v > 1e9)
				trace_cli_usage_error("--wait-timeout wants seconds, not '%s'", optarg);
			vo.wait_ns = (uint64_t)(v * 1e9);
			vk_only = true;
			break;
		}
		case OPT_DUMP:
			if (trace_callset_parse(&dump, optarg, &err) < 0)
				trace_cli_usage_error("--dump %s: %s", optarg, err.msg);
			vo.dump = &dump;
			vk_only = true;
			break;
		case OPT_DUMP_RESOURCE: {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || *optarg == '-' || !v ||
			    vo.ndump_handles == sizeof(handles) / sizeof(handles[0]))
				trace_cli_usage_error("--dump-resource wants a handle of the trace such as "
						      "0x55d0c0a1b2c0, not '%s'", optarg);
			handles[vo.ndump_handles++] = v;
			vo.dump_handles = handles;
			vk_only = true;
			break;
		}
		case OPT_DUMP_DIR: vo.dump_dir = optarg; vk_only = true; break;
		case OPT_CHECK: check = vk_only = true; break;
		case OPT_GPU: {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || v > UINT32_MAX)
				trace_cli_usage_error("--gpu wants a device number, not '%s'", optarg);
			opt.gpu = (uint32_t)v;
			break;
		}
		case OPT_VALIDATE: opt.validate = true; break;
		case OPT_STATS:
			if (!optarg || !strcmp(optarg, "text"))
				stats = 1;
			else if (!strcmp(optarg, "json"))
				stats = 2;
			else
				trace_cli_usage_error("--stats=%s: text or json", optarg);
			break;
		case OPT_NO_GPU_TIME: no_gpu_time = true; break;
		case OPT_BLOCK: opt.large_heap_block_size = parse_size(optarg); break;
		case 'q': quiet = trace_cli_self.quiet = true; break;
		case 'h': help(); return 0;
		case OPT_VERSION: trace_cli_version();
		default: trace_cli_bad_option(c, argv);
		}
	}
	if (argc - optind > 1)
		trace_cli_usage_error("one input at a time");
	input = optind < argc ? argv[optind] : "-";
	opt.quiet_validation = quiet;
	if (vo.nscreenshots) {
		/* ascending, once each */
		for (size_t i = 1; i < vo.nscreenshots; i++)
			for (size_t j = i; j > 0 && shots[j - 1] > shots[j]; j--) {
				uint64_t t = shots[j];
				shots[j] = shots[j - 1];
				shots[j - 1] = t;
			}
		if (vo.screenshot_out && vo.nscreenshots > 1)
			trace_cli_usage_error("-o takes one screenshot; use --screenshot-dir for %zu",
					      vo.nscreenshots);
		if (!vo.screenshot_out && !vo.screenshot_dir)
			trace_cli_usage_error("--screenshot needs -o FILE.png or --screenshot-dir DIR");
		vo.screenshots = shots;
	} else if (vo.screenshot_out || vo.screenshot_dir) {
		trace_cli_usage_error("-o and --screenshot-dir go with --screenshot N");
	}
	if (check && (vo.nscreenshots || vo.loop > 1 || vo.dump || vo.ndump_handles || stats ||
		      vo.last_frame >= 0))
		trace_cli_usage_error("--check goes without --frames, --screenshot, --loop, --dump* "
				      "and --stats: it replays nothing");
	if (vo.screenshot_dir && mkdir(vo.screenshot_dir, 0777) != 0 && errno != EEXIST)
		trace_cli_usage_error("--screenshot-dir %s: %s", vo.screenshot_dir, strerror(errno));
	char msg[512];
	if (vo.dump_dir && !vo.dump && !vo.ndump_handles)
		trace_cli_usage_error("--dump-dir goes with --dump CALLS or --dump-resource HANDLE");
	if ((vo.dump || vo.ndump_handles) && vo.loop > 1)
		trace_cli_usage_error("--dump and --dump-resource do not go with --loop");
	if ((vo.dump || vo.ndump_handles) &&
	    (vkr_dump_dir_check(vo.dump_dir ? vo.dump_dir : ".", msg, sizeof(msg)) < 0 ||
	     vkr_dump_check(input, &vo, msg, sizeof(msg)) < 0))
		trace_cli_usage_error("%s", msg);

	trace_error_clear(&err);
	trace_reader *in = trace_reader_open(input, &err);
	if (!in)
		trace_cli_fail(&err);
	const trace_header *h = trace_reader_header(in);
	const char *version = trace_header_get(h, VMA_PROP_VERSION);
	const char *api = trace_header_get(h, "api");
	if (!version && api && !strcmp(api, "Vulkan")) {
		vo.dev = opt;
		vo.input = input;
		vo.quiet = quiet;
		vo.stats = stats;
		vo.no_gpu_time = no_gpu_time;
		if (check && vkr_check(in, &vo, &err) < 0)
			trace_cli_fail(&err);
		int status = check ? 0 : vkr_run(in, &vo);
		trace_cli_warn_cut(in);
		trace_reader_close(in);
		return status;
	}
	if (vk_only) {
		trace_reader_close(in);
		trace_cli_usage_error("--check, --frames, --screenshot, -o, --screenshot-dir, --loop, "
				      "--dump* and --remove-unsupported are for Vulkan traces");
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
	vmar_options mo = {.dev = opt, .input = input, .quiet = quiet, .stats = stats};
	int status = vmar_run(in, &mo);
	trace_cli_warn_cut(in);
	trace_reader_close(in);
	return status;
}
