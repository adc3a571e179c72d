/*
 * vkexample_options.c: vkexample's command line (the options are in
 * vkexample.c's opening comment and in --help).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "vkexample.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--frames N] [--png-dir DIR] [--dump-frames A,B,...]\n"
		"          [--gpu N] [--validate] [--still] [--present] [--extension NAME]\n"
		"          [--wait-each-frame] [--no-cleanup] [--mips] [--events]\n"
		"          [--carry-event]\n"
		"          [--compute-mips] [--compute-mips-once] [--templates]\n"
		"          [--push-templates] [--copy-sets] [--term-handler] [--discard-pipeline]\n"
		"          [--depth-read-only] [--depth-read-only-rp] [--rewrite-source[=destroy]]\n"
		"          [--submit2] [--staging-image] [--uniform-offset N]\n"
		"          [--uniform-update] [--uniform-dynamic] [--uniform-template]\n"
		"          [--uniform-storage ro|rw]\n"
		"  --frames N          frames to render (default 10)\n"
		"  --png-dir DIR       write DIR/frame-N.png (every frame unless --dump-frames)\n"
		"  --dump-frames LIST  only these frames (comma-separated, from 0)\n"
		"  --gpu N             use physical device N (default 0)\n"
		"  --validate          enable VK_LAYER_KHRONOS_validation\n"
		"  --extension NAME    enable the device extension NAME too, unasked (for\n"
		"                      testing layers)\n"
		"  --still             keep the cube's rotation at frame 0's (the uniform\n"
		"                      buffer is still written every frame); only the\n"
		"                      compute pattern moves\n"
		"  --present           also show each frame in an X window ($DISPLAY):\n"
		"                      a swapchain, one vkQueuePresentKHR per frame\n"
		"  --wait-each-frame   wait for each frame's fence right after its submit,\n"
		"                      as a program with no frame in flight does\n"
		"  --no-cleanup        exit(0) after the last frame, destroying nothing\n"
		"  --mips              a mipmapped texture, its levels blitted from level 0\n"
		"                      after the upload and again every frame, sampled\n"
		"                      minified (a LOD bias of 2)\n"
		"  --events            --mips, whose last layout changes each frame wait\n"
		"                      for an event (vkCmdSetEvent, vkCmdWaitEvents)\n"
		"  --carry-event       each frame sets an event (vkCmdSetEvent) that the\n"
		"                      next frame's command buffer waits for first\n"
		"  --compute-mips      --mips, its levels made by a compute shader each\n"
		"                      frame (after the upload: level 0 alone), level i\n"
		"                      from UNDEFINED, read from a view of level i - 1,\n"
		"                      written through a storage view of level i\n"
		"  --compute-mips-once --compute-mips, its levels made once, at load (a\n"
		"                      submit after the upload's), kept in GENERAL till\n"
		"                      then; the frames only sample them\n"
		"  --templates         the compute mip pass's sets written with\n"
		"                      vkUpdateDescriptorSetWithTemplate\n"
		"  --copy-sets         the compute mip pass's sets written by copying their\n"
		"                      descriptors (VkCopyDescriptorSet) from a set of their own\n"
		"  --push-templates    the compute mip pass's descriptors pushed through a\n"
		"                      template (VK_KHR_push_descriptor), no sets\n"
		"  --staging-image     upload the texture's level 0 into an image of its own\n"
		"                      (transfer usage only), then vkCmdCopyImage it\n"
		"                      into the texture\n"
		"  --term-handler      a SIGTERM handler of the program's, installed before\n"
		"                      the instance: it waits for the device\n"
		"                      (vkDeviceWaitIdle) and exits with status 3, as a\n"
		"                      game's handler shuts its renderer down\n"
		"  --discard-pipeline  also make a pipeline with rasterizer discard, its\n"
		"                      viewport, multisample, depth/stencil and color\n"
		"                      blend states dangling (ignored: not read)\n"
		"  --depth-read-only   draw with dynamic rendering (Vulkan 1.3), then two\n"
		"                      bars, each in a pass whose depth image is read-only\n"
		"                      (loaded, stored, not written): the cube's, and one\n"
		"                      the upload alone writes\n"
		"  --depth-read-only-rp\n"
		"                      --depth-read-only drawn with render passes\n"
		"                      (vkCmdBeginRenderPass; no Vulkan 1.3), the read-only\n"
		"                      depth attachments in DEPTH_STENCIL_READ_ONLY_OPTIMAL\n"
		"                      from initialLayout to finalLayout\n"
		"  --rewrite-source[=destroy]  a patch of the texture copied at load from a\n"
		"                      buffer filled before, after (or destroyed) and each frame\n"
		"  --submit2           submit the frames with vkQueueSubmit2 (Vulkan 1.3's\n"
		"                      synchronization2 enabled)\n"
		"  --strokes N         never clear after frame 0, and after each frame's\n"
		"                      submit, N more, each a triangle whose vertices the\n"
		"                      host writes just before into the next bytes of a ring\n"
		"  --read-pixel        after each frame's submit, one more that copies the\n"
		"                      frame's middle texel into a host buffer, waited for\n"
		"  --timestamps        each frame's GPU time: timestamps at the start and end\n"
		"                      of its command buffer, copied into a buffer there\n"
		"                      (vkCmdCopyQueryPoolResults) and read by the host\n"
		"  --anim-pair         the compute pattern into one of two images by turns,\n"
		"                      each frame's set written again to show the one it\n"
		"                      writes\n"
		"  --anim-unsampled    the compute pattern's image kept from frame to frame\n"
		"                      (no barrier from UNDEFINED), and the cube's shader\n"
		"                      declares it and does not sample it\n"
		"  --secondary         the cube's draw recorded each frame into a secondary\n"
		"                      command buffer executed in the pass, the primary\n"
		"                      begun without ONE_TIME_SUBMIT\n"
		"  --fresh-command-buffers  each frame, its slot's command buffer freed and\n"
		"                      another allocated (Qt's way as it makes its swapchain\n"
		"                      again)\n"
		"  --uniform-offset N  the frame's uniforms at byte N of their slot (a\n"
		"                      multiple of the device's minUniformBufferOffsetAlignment\n"
		"                      up to 128; default 0)\n"
		"  --uniform-update    the frame's uniforms written by vkCmdUpdateBuffer first\n"
		"                      in its command buffer, not through the mapping\n"
		"  --uniform-dynamic   the uniforms a dynamic uniform buffer (dynamic offset 0)\n"
		"  --uniform-template  their descriptors written by an update template\n"
		"  --uniform-storage ro|rw  the uniforms read from a storage buffer the\n"
		"                      shaders declare readonly (ro) or not (rw)\n",
		ex.prog);
}

static unsigned parse_uint(const char *opt, const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (!s || !*s || *s == '-')
		die("%s needs a non-negative number", opt);
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 0x7fffffffUL)
		die("%s: bad number '%s'", opt, s);
	return (unsigned)v;
}

void parse_options(int argc, char **argv, struct options *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->frames = 10;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--frames")) {
			o->frames = parse_uint(a, val);
			i++;
		} else if (!strcmp(a, "--gpu")) {
			o->gpu = parse_uint(a, val);
			i++;
		} else if (!strcmp(a, "--png-dir")) {
			if (!val || !*val)
				die("--png-dir needs a directory");
			o->png_dir = val;
			i++;
		} else if (!strcmp(a, "--dump-frames")) {
			char *copy, *tok, *save = NULL;

			if (!val || !*val)
				die("--dump-frames needs a list of frame numbers");
			copy = strdup(val);
			if (!copy)
				die("out of memory");
			for (tok = strtok_r(copy, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				unsigned *n = realloc(o->dump, (o->ndump + 1) * sizeof(*n));
				if (!n)
					die("out of memory");
				o->dump = n;
				o->dump[o->ndump++] = parse_uint(a, tok);
			}
			free(copy);
			if (!o->ndump)
				die("--dump-frames needs a list of frame numbers");
			i++;
		} else if (!strcmp(a, "--validate")) {
			o->validate = 1;
		} else if (!strcmp(a, "--extension")) {
			if (!val || !*val)
				die("--extension needs an extension name");
			o->extension = val;
			i++;
		} else if (!strcmp(a, "--wait-each-frame")) {
			o->wait_each = 1;
		} else if (!strcmp(a, "--still")) {
			o->still = 1;
		} else if (!strcmp(a, "--present")) {
			o->present = 1;
		} else if (!strcmp(a, "--no-cleanup")) {
			o->no_cleanup = 1;
		} else if (!strcmp(a, "--mips")) {
			o->mips = 1;
		} else if (!strcmp(a, "--carry-event")) {
			o->carry_event = 1;
		} else if (!strcmp(a, "--events")) {
			o->mips = o->events = 1;
		} else if (!strcmp(a, "--compute-mips")) {
			o->mips = o->compute_mips = 1;
		} else if (!strcmp(a, "--compute-mips-once")) {
			o->mips = o->compute_mips = o->mips_once = 1;
		} else if (!strcmp(a, "--templates")) {
			o->templates = 1;
		} else if (!strcmp(a, "--copy-sets")) {
			o->copy_sets = 1;
		} else if (!strcmp(a, "--push-templates")) {
			o->push_templates = 1;
		} else if (!strcmp(a, "--term-handler")) {
			o->term_handler = 1;
		} else if (!strcmp(a, "--discard-pipeline")) {
			o->discard_pipe = 1;
		} else if (!strcmp(a, "--depth-read-only")) {
			o->depth_read_only = 1;
		} else if (!strcmp(a, "--depth-read-only-rp")) {
			o->depth_read_only = o->render_pass = 1;
		} else if (!strcmp(a, "--rewrite-source") || !strcmp(a, "--rewrite-source=destroy")) {
			o->rewrite_source = a[16] ? 2 : 1;
		} else if (!strcmp(a, "--submit2")) {
			o->submit2 = 1;
		} else if (!strcmp(a, "--staging-image")) {
			o->staging_image = 1;
		} else if (!strcmp(a, "--strokes")) {
			o->strokes = parse_uint(a, val);
			i++;
		} else if (!strcmp(a, "--read-pixel")) {
			o->read_pixel = 1;
		} else if (!strcmp(a, "--timestamps")) {
			o->timestamps = 1;
		} else if (!strcmp(a, "--anim-pair")) {
			o->anim_pair = 1;
		} else if (!strcmp(a, "--anim-unsampled")) {
			o->anim_unsampled = 1;
		} else if (!strcmp(a, "--secondary")) {
			o->secondary = 1;
		} else if (!strcmp(a, "--fresh-command-buffers")) {
			o->fresh_cbs = 1;
		} else if (!strcmp(a, "--uniform-offset")) {
			o->ubo_offset = parse_uint(a, val);
			if (o->ubo_offset > 128)
				die("--uniform-offset: at most 128");
			i++;
		} else if (!strcmp(a, "--uniform-update")) {
			o->ubo_update = 1;
		} else if (!strcmp(a, "--uniform-dynamic")) {
			o->ubo_dynamic = 1;
		} else if (!strcmp(a, "--uniform-template")) {
			o->ubo_template = 1;
		} else if (!strcmp(a, "--uniform-storage")) {
			if (!val || (strcmp(val, "ro") && strcmp(val, "rw")))
				die("--uniform-storage: ro or rw");
			o->ubo_storage = strcmp(val, "ro") ? 2 : 1;
			i++;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else {
			usage(stderr);
			die("unknown option '%s'", a);
		}
	}
	if (o->dump && !o->png_dir)
		die("--dump-frames needs --png-dir");
	if (o->secondary && (o->strokes || o->depth_read_only))
		die("--secondary goes without --strokes and --depth-read-only");
	if (o->anim_unsampled && (o->anim_pair || o->ubo_storage))
		die("--anim-unsampled goes without --anim-pair and --uniform-storage");
	if (o->frames == 0)
		die("--frames must be at least 1");
}

int want_dump(const struct options *o, unsigned frame)
{
	size_t i;

	if (!o->png_dir)
		return 0;
	if (!o->dump)
		return 1;
	for (i = 0; i < o->ndump; i++)
		if (o->dump[i] == frame)
			return 1;
	return 0;
}
