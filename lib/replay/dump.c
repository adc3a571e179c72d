/*
 * --dump CALLS, --dump-resource HANDLE, --dump-dir DIR: after a call is
 * replayed and its work is done, the images and buffers it wrote, read
 * back into files (trace-replay(1)).
 *
 * A submit's resources are read by a command buffer of our own, submitted
 * after it on its queue with a fence of our own: a barrier from every
 * earlier command, a copy into a host-visible staging buffer, the image
 * put back in its layout.  A recorded command's are read at the point it
 * was recorded: the same barrier and copies are recorded into the
 * program's command buffer right after it (after the pass's end for a
 * command inside a render pass), and read once its first submit is done.
 * Either way the program's own synchronization stays as it was: ours only
 * adds dependencies.
 */
#include "dump.h"

#include "callset.h"
#include "png.h"
#include "vktexel.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long a dump waits for a submit's work: a batch that waits on a
 * semaphore nothing signals yet would wait for ever. */
#define DUMP_WAIT_NS (60ull * 1000 * 1000 * 1000)


void vkr_dump_init(vkr *r)
{
	r->dump = trace_xcalloc(1, sizeof(*r->dump));
	r->dump->family = UINT32_MAX;
}

bool vkr_dump_wanted(const vkr *r, uint64_t cap)
{
	const vkr_options *o = r->opt;
	if (!o->ndump_handles)
		return true;
	for (size_t i = 0; i < o->ndump_handles; i++)
		if (o->dump_handles[i] == cap)
			return true;
	return false;
}

/* Once per handle: why it is not dumped. */
static void skip(vkr *r, uint64_t cap, const char *what, const char *why)
{
	if (tmap_at(&r->dump->warned, cap, 0))
		return;
	tmap_set(&r->dump->warned, cap, 0, 1);
	vkr_warn(r, "--dump: %s 0x%llx: %s: not dumped", what, (unsigned long long)cap, why);
}

static void items_clear(dump_items *it)
{
	for (size_t i = 0; i < it->n; i++)
		free(it->v[i].copies);
	it->n = 0;
}

/* ------------------------------------------------------------------ */
/* Formats: the bytes of a texel block, per aspect. */

typedef struct fmt {
	uint32_t bytes, bw, bh;
} fmt;

static bool depth_stencil(VkFormat f)
{
	return f >= VK_FORMAT_D16_UNORM && f <= VK_FORMAT_D32_SFLOAT_S8_UINT;
}

static VkImageAspectFlags aspects_of(VkFormat f)
{
	switch (f) {
	case VK_FORMAT_D16_UNORM: case VK_FORMAT_X8_D24_UNORM_PACK32: case VK_FORMAT_D32_SFLOAT:
		return VK_IMAGE_ASPECT_DEPTH_BIT;
	case VK_FORMAT_S8_UINT:
		return VK_IMAGE_ASPECT_STENCIL_BIT;
	case VK_FORMAT_D16_UNORM_S8_UINT: case VK_FORMAT_D24_UNORM_S8_UINT:
	case VK_FORMAT_D32_SFLOAT_S8_UINT:
		return VK_IMAGE_ASPECT_DEPTH_BIT | VK_IMAGE_ASPECT_STENCIL_BIT;
	default:
		return VK_IMAGE_ASPECT_COLOR_BIT;
	}
}

/* What a copy of ASPECT of an image of format F writes per block; false
 * for a format this does not know (multi-planar, most extensions'). */
static bool fmt_of(VkFormat f, VkImageAspectFlags aspect, fmt *out)
{
	static const uint8_t astc[][2] = {{4, 4}, {5, 4}, {5, 5}, {6, 5}, {6, 6}, {8, 5}, {8, 6},
					  {8, 8}, {10, 5}, {10, 6}, {10, 8}, {10, 10}, {12, 10},
					  {12, 12}};
	*out = (fmt){0, 1, 1};
	int v = (int)f;
	if (aspect == VK_IMAGE_ASPECT_STENCIL_BIT && depth_stencil(f))
		return out->bytes = 1, true;
	if (v >= 1 && v <= 184) {
		static const struct { uint8_t last, bytes; } t[] = {
			{1, 1}, {8, 2}, {15, 1}, {22, 2}, {36, 3}, {57, 4}, {69, 4}, {76, 2}, {83, 4},
			{90, 6}, {97, 8}, {100, 4}, {103, 8}, {106, 12}, {109, 16}, {112, 8},
			{115, 16}, {118, 24}, {121, 32}, {123, 4},
			{124, 2}, {125, 4}, {126, 4}, {127, 1}, {128, 2}, {129, 4}, {130, 4},
			{134, 8}, {138, 16}, {140, 8}, {146, 16}, {150, 8}, {152, 16}, {154, 8},
			{156, 16}, {184, 16},
		};
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			if (v <= t[i].last) {
				out->bytes = t[i].bytes;
				break;
			}
		if (v >= 131 && v <= 156)
			out->bw = out->bh = 4;
		else if (v >= 157) {
			out->bw = astc[(v - 157) / 2][0];
			out->bh = astc[(v - 157) / 2][1];
		}
		if (v == 136 || v == 135)
			out->bytes = 16;  /* BC2 */
		return true;
	}
	switch (f) {
	case VK_FORMAT_A4R4G4B4_UNORM_PACK16: case VK_FORMAT_A4B4G4R4_UNORM_PACK16:
		return out->bytes = 2, true;
	default:
		return false;
	}
}

static const char *format_name(int32_t f)
{
	const vk_enum_info *e = vk_enum_lookup("VkFormat");
	const char *n = e ? trace_enum_name(&e->sig, f) : NULL;
	return n ? n : "unknown";
}

/* ------------------------------------------------------------------ */
/* Plans: the copies of a set of items into one staging buffer. */

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static void plan_region(dump_plan *p, const dump_region *g)
{
	p->reg = trace_xrealloc(p->reg, (p->nreg + 1) * sizeof(*p->reg));
	p->reg[p->nreg++] = *g;
}

/* The regions of the items, and the staging buffer they go to; false
 * where nothing is left to read. */
static bool plan_make(vkr *r, dump_plan *p)
{
	dump_state *d = r->dump;
	uint64_t at = 0;
	for (size_t i = 0; i < p->items.n; i++) {
		dump_item *it = &p->items.v[i];
		if (!it->image) {
			obj *o = vkr_obj_get(r, it->cap);
			if (!o || !o->group || !o->create_size) {
				skip(r, it->cap, "VkBuffer", o ? "no memory bound" : "unknown");
				continue;
			}
			at = round_up(at, 16);
			plan_region(p, &(dump_region){.item = i, .at = at, .size = o->create_size});
			at += o->create_size;
			continue;
		}
		dump_image *im = vkr_dump_image(d, it->cap);
		uint64_t live;
		if (!im || !vkr_map_get(r, r->h_image, it->cap, &live) || !live) {
			skip(r, it->cap, "VkImage", "unknown");
			continue;
		}
		if (!(im->usage & VK_IMAGE_USAGE_TRANSFER_SRC_BIT)) {
			skip(r, it->cap, "VkImage", im->usage & VK_IMAGE_USAGE_TRANSIENT_ATTACHMENT_BIT
			     ? "a transient attachment, which the device need not keep"
			     : "the device cannot copy from its format");
			continue;
		}
		if (im->flags & VK_IMAGE_CREATE_PROTECTED_BIT) {
			skip(r, it->cap, "VkImage", "protected memory, which the host cannot read");
			continue;
		}
		if (im->samples != VK_SAMPLE_COUNT_1_BIT) {
			skip(r, it->cap, "VkImage", "multisampled (its resolve is dumped where it has one)");
			continue;
		}
		if (it->layout < 0 || it->layout == VK_IMAGE_LAYOUT_UNDEFINED) {
			skip(r, it->cap, "VkImage", "its layout is not known (nothing wrote it yet)");
			continue;
		}
		VkImageAspectFlags asp = aspects_of(im->live);
		fmt f;
		if (!fmt_of(im->live, VK_IMAGE_ASPECT_COLOR_BIT, &f)) {
			skip(r, it->cap, "VkImage", "its format is not supported yet");
			continue;
		}
		bool three = im->type == VK_IMAGE_TYPE_3D;
		for (uint32_t m = 0; m < im->mips; m++)
			for (uint32_t l = 0; l < (three ? 1 : im->layers); l++)
				for (uint32_t a = 1; a <= VK_IMAGE_ASPECT_STENCIL_BIT; a <<= 1) {
					if (!(asp & a))
						continue;
					fmt_of(im->live, a, &f);
					uint32_t w = im->extent.width >> m, h = im->extent.height >> m,
						 z = three ? im->extent.depth >> m : 1;
					w = w ? w : 1;
					h = h ? h : 1;
					z = z ? z : 1;
					uint64_t pitch = (uint64_t)((w + f.bw - 1) / f.bw) * f.bytes;
					uint64_t size = pitch * ((h + f.bh - 1) / f.bh) * z;
					uint64_t align = 16;
					while (align % f.bytes)
						align += 16;
					at = round_up(at, align);
					plan_region(p, &(dump_region){i, m, l, a, w, h, z, at, size, pitch});
					at += size;
				}
	}
	if (!p->nreg)
		return false;
	p->size = at;
	VkDevice dev = r->d->vk.device;
	VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = at,
				  .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
	VkResult res = vkCreateBuffer(dev, &bci, NULL, &p->staging);
	if (res != VK_SUCCESS)
		vkr_fatal(r, "--dump: cannot make a buffer of %llu bytes: %s", (unsigned long long)at,
			  vkr_result_name(res));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(dev, p->staging, &req);
	uint32_t type;
	if (vkd_find_memory_type(&r->d->vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
				 VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0, 0, &type) < 0)
		vkr_fatal(r, "--dump: no host-visible memory");
	vkd_request rq = {.size = req.size, .alignment = req.alignment, .kind = VKD_KIND_LINEAR,
			  .dedicated = true, .dedicated_buffer = p->staging};
	if ((res = vkd_alloc(&r->d->vk, NULL, type, &rq, &p->mem)) != VK_SUCCESS ||
	    (res = vkBindBufferMemory(dev, p->staging, p->mem.memory, p->mem.offset)) != VK_SUCCESS)
		vkr_fatal(r, "--dump: %s", vkr_result_name(res));
	return true;
}

static void plan_free(vkr *r, dump_plan *p)
{
	if (p->staging) {
		vkDestroyBuffer(r->d->vk.device, p->staging, NULL);
		vkd_free(&r->d->vk, &p->mem);
	}
	items_clear(&p->items);
	free(p->items.v);
	free(p->reg);
	free(p);
}

/* A layout a copy reads the image in without a transition (GENERAL could
 * be too, but the validation layer warns of its cost). */
static bool readable_as_is(int32_t l)
{
	return l == VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL || l == VK_IMAGE_LAYOUT_SHARED_PRESENT_KHR;
}

/* Records into CB: everything before done and visible, each item copied
 * into the staging buffer, each image back in its layout, the staging
 * buffer visible to the host. */
static void plan_record(vkr *r, dump_plan *p, VkCommandBuffer cb)
{
	dump_state *d = r->dump;
	size_t n = p->items.n;
	VkImageMemoryBarrier *ib = trace_xcalloc(n ? n : 1, sizeof(*ib));
	uint32_t nib = 0;
	for (size_t i = 0; i < n; i++) {
		const dump_item *it = &p->items.v[i];
		bool used = false;
		for (size_t k = 0; k < p->nreg && !used; k++)
			used = p->reg[k].item == i;
		if (!it->image || !used || readable_as_is(it->layout))
			continue;
		const dump_image *im = vkr_dump_image(d, it->cap);
		ib[nib++] = (VkImageMemoryBarrier){
			.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
			.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
			.oldLayout = (VkImageLayout)it->layout,
			.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
			.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
			.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
			.image = (VkImage)(uintptr_t)vkr_need(r, r->h_image, it->cap),
			.subresourceRange = {aspects_of(im->live), 0, VK_REMAINING_MIP_LEVELS, 0,
					     VK_REMAINING_ARRAY_LAYERS},
		};
	}
	VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			      .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
			      .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
			     0, 1, &mb, 0, NULL, nib, ib);
	for (size_t k = 0; k < p->nreg; k++) {
		const dump_region *g = &p->reg[k];
		const dump_item *it = &p->items.v[g->item];
		if (!it->image) {
			VkBufferCopy bc = {0, g->at, g->size};
			vkCmdCopyBuffer(cb, (VkBuffer)(uintptr_t)vkr_need(r, r->h_buffer, it->cap),
					p->staging, 1, &bc);
			continue;
		}
		VkBufferImageCopy ic = {
			.bufferOffset = g->at,
			.imageSubresource = {g->aspect, g->mip, g->layer, 1},
			.imageExtent = {g->width, g->height, g->depth},
		};
		vkCmdCopyImageToBuffer(cb, (VkImage)(uintptr_t)vkr_need(r, r->h_image, it->cap),
				       readable_as_is(it->layout) ? (VkImageLayout)it->layout
				       : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, p->staging, 1, &ic);
	}
	for (uint32_t i = 0; i < nib; i++) {
		VkImageLayout l = ib[i].oldLayout;
		ib[i].oldLayout = ib[i].newLayout;
		ib[i].newLayout = l;
		ib[i].srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
		ib[i].dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
	}
	mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
	mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
			     &mb, 0, NULL, 0, NULL);
	if (nib)
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, NULL, 0, NULL, nib, ib);
	free(ib);
}

/* ------------------------------------------------------------------ */
/* Files. */

static const char *role_name(const dump_item *it, char *buf, size_t cap)
{
	static const char *const names[] = {"dst", "color", "depth", "resolve", "storage",
					    "present", "resource"};
	if (it->role == ROLE_COLOR || it->role == ROLE_RESOLVE || it->role == ROLE_PRESENT)
		snprintf(buf, cap, "%s%u", names[it->role], it->index);
	else
		snprintf(buf, cap, "%s", names[it->role]);
	return buf;
}

static FILE *open_out(vkr *r, const char *path, char **tmp)
{
	trace_error err;
	FILE *f = trace_output_open(path, tmp, &err);
	if (!f)
		vkr_fatal(r, "%s: %s", path, err.msg);
	return f;
}

static void close_out(vkr *r, FILE *f, const char *path, char *tmp, bool ok)
{
	trace_error err;
	trace_error_clear(&err);
	if (!ok)
		trace_error_errno(&err, path, "write error");
	if (trace_output_close(f, path, tmp, ok, &err) != 0)
		vkr_fatal(r, "%s: %s", path, err.msg);
	r->dump->files++;
}

static void write_region(vkr *r, const dump_plan *p, const dump_region *g, const uint8_t *bytes)
{
	const vkr_options *o = r->opt;
	const dump_item *it = &p->items.v[g->item];
	const char *dir = o->dump_dir ? o->dump_dir : ".";
	char role[32], base[4200], path[4300];
	snprintf(base, sizeof(base), "%s/call-%llu.%s-0x%llx-%s", dir, (unsigned long long)p->no,
		 it->image ? "image" : "buffer", (unsigned long long)it->cap,
		 role_name(it, role, sizeof(role)));
	char *tmp;
	bool ok;
	FILE *f;
	if (!it->image) {
		snprintf(path, sizeof(path), "%s.bin", base);
		f = open_out(r, path, &tmp);
		ok = fwrite(bytes, 1, g->size, f) == g->size;
		close_out(r, f, path, tmp, ok);
		snprintf(path, sizeof(path), "%s.json", base);
		f = open_out(r, path, &tmp);
		fprintf(f, "{\"call\": %llu, \"buffer\": \"0x%llx\", \"role\": \"%s\", \"size\": %llu, "
			"\"offset\": 0, \"copies\": [", (unsigned long long)p->no,
			(unsigned long long)it->cap, role, (unsigned long long)g->size);
		for (size_t i = 0; i < it->ncopies; i++) {
			const dump_copy *c = &it->copies[i];
			fmt fm = {0, 1, 1};
			bool known = c->format >= 0 && fmt_of((VkFormat)c->format,
							      VK_IMAGE_ASPECT_COLOR_BIT, &fm);
			uint32_t rl = c->row_length ? c->row_length : c->width;
			fprintf(f, "%s{\"offset\": %llu, \"row_length\": %u, \"image_height\": %u, "
				"\"extent\": [%u, %u, %u], \"format\": \"%s\"", i ? ", " : "",
				(unsigned long long)c->offset, c->row_length, c->image_height, c->width,
				c->height, c->depth, format_name(c->format));
			if (known)
				fprintf(f, ", \"row_pitch\": %llu",
					(unsigned long long)((rl + fm.bw - 1) / fm.bw) * fm.bytes);
			fprintf(f, "}");
		}
		fprintf(f, "]}\n");
		close_out(r, f, path, tmp, !ferror(f));
		return;
	}
	const dump_image *im = vkr_dump_image(r->dump, it->cap);
	char sub[96] = "";
	size_t k = 0;
	if (im->mips > 1)
		k += (size_t)snprintf(sub + k, sizeof(sub) - k, ".mip%u", g->mip);
	if (im->layers > 1 && im->type != VK_IMAGE_TYPE_3D)
		k += (size_t)snprintf(sub + k, sizeof(sub) - k, ".layer%u", g->layer);
	if (aspects_of(im->live) == (VK_IMAGE_ASPECT_DEPTH_BIT | VK_IMAGE_ASPECT_STENCIL_BIT))
		snprintf(sub + k, sizeof(sub) - k, ".%s",
			 g->aspect == VK_IMAGE_ASPECT_STENCIL_BIT ? "stencil" : "depth");
	/* PNG for the formats of the screenshots */
	if (g->aspect == VK_IMAGE_ASPECT_COLOR_BIT && g->depth == 1 && vk_texels_known(im->live)) {
		snprintf(path, sizeof(path), "%s%s.png", base, sub);
		uint64_t npx = (uint64_t)g->width * g->height;
		uint8_t *rgba = trace_xcalloc(npx ? npx * 4 : 1, 1);
		vk_texels_to_rgba(im->live, bytes, rgba, npx, !it->opaque);
		f = open_out(r, path, &tmp);
		ok = png_write_rgba_file(f, rgba, g->width, g->height) == 0;
		close_out(r, f, path, tmp, ok);
		free(rgba);
		return;
	}
	snprintf(path, sizeof(path), "%s%s.bin", base, sub);
	f = open_out(r, path, &tmp);
	ok = fwrite(bytes, 1, g->size, f) == g->size;
	close_out(r, f, path, tmp, ok);
	snprintf(path, sizeof(path), "%s%s.json", base, sub);
	f = open_out(r, path, &tmp);
	fprintf(f, "{\"call\": %llu, \"image\": \"0x%llx\", \"role\": \"%s\", \"format\": \"%s\", "
		"\"extent\": [%u, %u, %u], \"mip\": %u, \"layer\": %u, \"aspect\": \"%s\", "
		"\"row_pitch\": %llu, \"size\": %llu}\n", (unsigned long long)p->no,
		(unsigned long long)it->cap, role, format_name(im->live), g->width, g->height,
		g->depth, g->mip, g->layer, g->aspect == VK_IMAGE_ASPECT_STENCIL_BIT ? "stencil"
		: g->aspect == VK_IMAGE_ASPECT_DEPTH_BIT ? "depth" : "color",
		(unsigned long long)g->row_pitch, (unsigned long long)g->size);
	close_out(r, f, path, tmp, !ferror(f));
}

/* The staging buffer's bytes into files, once its copies are done. */
static void plan_write(vkr *r, dump_plan *p)
{
	VkResult res;
	uint8_t *m = vkd_map(&r->d->vk, &p->mem, &res);
	if (!m)
		vkr_fatal(r, "--dump: cannot map: %s", vkr_result_name(res));
	vkd_invalidate(&r->d->vk, &p->mem, 0, VK_WHOLE_SIZE);
	for (size_t k = 0; k < p->nreg; k++)
		write_region(r, p, &p->reg[k], m + p->reg[k].at);
	vkd_unmap(&r->d->vk, &p->mem);
	p->read = true;
}

/* ------------------------------------------------------------------ */
/* Waiting on the call's queue. */

/* Our command pool, buffer and fence, on FAMILY. */
static void own_cb(vkr *r, uint32_t family)
{
	dump_state *d = r->dump;
	VkDevice dev = r->d->vk.device;
	if (d->family == family && d->own_dev == dev)
		return;
	if (d->own_dev != dev)
		vkd_own_commands_free(d->own_dev, &d->pool, &d->cb, &d->fence);
	else if (d->pool)
		vkDestroyCommandPool(dev, d->pool, NULL);
	if (vkd_own_commands(dev, family, &d->pool, &d->cb, &d->fence) != VK_SUCCESS)
		vkr_fatal(r, "--dump: cannot make a command buffer and a fence");
	d->family = family;
	d->own_dev = dev;
}

/* Submits PLAN's copies (or nothing, PLAN NULL) to QUEUE after what it
 * holds, with our fence, and waits for them. */
static void run_on(vkr *r, VkQueue queue, uint32_t family, dump_plan *p)
{
	dump_state *d = r->dump;
	VkDevice dev = r->d->vk.device;
	own_cb(r, family);
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
	if (p) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		vkResetCommandBuffer(d->cb, 0);
		vkBeginCommandBuffer(d->cb, &bi);
		plan_record(r, p, d->cb);
		vkEndCommandBuffer(d->cb);
		si.commandBufferCount = 1;
		si.pCommandBuffers = &d->cb;
	}
	vkResetFences(dev, 1, &d->fence);
	VkResult res = vkQueueSubmit(queue, p ? 1 : 0, p ? &si : NULL, d->fence);
	if (res == VK_SUCCESS)
		res = vkWaitForFences(dev, 1, &d->fence, VK_TRUE, DUMP_WAIT_NS);
	if (res == VK_TIMEOUT)
		vkr_fatal(r, "--dump: the work of the call did not finish in 60 s (it waits on a "
			  "semaphore no call signals yet?)");
	if (res != VK_SUCCESS)
		vkr_fatal(r, "--dump: %s", vkr_result_name(res));
}

/* ------------------------------------------------------------------ */
/* The hooks. */

/* What --dump-resource names, as items at a call that need not write
 * them: WRITTEN says why where it did. */
static void named_items(vkr *r, const dump_items *written, dump_items *out)
{
	const vkr_options *o = r->opt;
	for (size_t i = 0; i < o->ndump_handles; i++) {
		uint64_t cap = o->dump_handles[i];
		dump_item it = {.cap = cap, .role = ROLE_NAMED, .layout = -1};
		for (size_t k = 0; k < written->n; k++)
			if (written->v[k].cap == cap)
				it = written->v[k];
		it.image = vkr_dump_image(r->dump, cap) != NULL;
		vkr_dump_add_item(out, &it);
	}
}

/* The layout of image CAP after what CB recorded so far. */
static int32_t layout_in(vkr *r, const dump_cb *cb, uint64_t cap)
{
	for (size_t i = cb ? cb->n : 0; i-- > 0;)
		if (cb->ev[i].cap == cap && cb->ev[i].kind != EV_WRITE_BUFFER && cb->ev[i].layout >= 0)
			return cb->ev[i].layout;
	const dump_image *im = vkr_dump_image(r->dump, cap);
	return im ? im->layout : -1;
}

void vkr_dump_note(vkr *r, const cmd_entry *e, void *args)
{
	dump_state *d = r->dump;
	const vkr_options *o = r->opt;
	d->dumped = o->dump && trace_callset_contains(o->dump, r->call->no,
						      r->frames.ended ? TRACE_CALLSET_END_FRAME : 0);
	d->last_no = r->call->no;
	d->noted = true;
	items_clear(&d->items);
	d->nreads = 0;
	d->queue = 0;
	bool collect = d->dumped || o->ndump_handles;
	switch ((enum special)e->special) {
	case SP_SUBMIT:
	case SP_SUBMIT2: {
		uint32_t nb;
		if (e->special == SP_SUBMIT) {
			vk_args_vkQueueSubmit *a = args;
			d->queue = H(a->queue);
			nb = a->pSubmits ? a->submitCount : 0;
		} else {
			vk_args_vkQueueSubmit2 *a = args;
			d->queue = H(a->queue);
			nb = a->pSubmits ? a->submitCount : 0;
		}
		for (uint32_t b = 0; b < nb; b++) {
			uint32_t n;
			if (e->special == SP_SUBMIT)
				n = ((vk_args_vkQueueSubmit *)args)->pSubmits[b].commandBufferCount;
			else
				n = ((vk_args_vkQueueSubmit2 *)args)->pSubmits[b].commandBufferInfoCount;
			for (uint32_t i = 0; i < n; i++) {
				uint64_t cap = e->special == SP_SUBMIT
					? H(((vk_args_vkQueueSubmit *)args)->pSubmits[b].pCommandBuffers[i])
					: H(((vk_args_vkQueueSubmit2 *)args)->pSubmits[b]
					    .pCommandBufferInfos[i].commandBuffer);
				uint64_t *h = tmap_at(&d->cbs, cap, 0);
				if (!h)
					continue;
				dump_cb *cb = (dump_cb *)(uintptr_t)*h;
				vkr_dump_apply(r, cb, collect ? &d->items : NULL);
				bool unread = false;
				for (size_t k = 0; k < cb->nplans; k++)
					unread |= !cb->plans[k]->read;
				if (unread) {
					if (d->nreads == d->capreads) {
						d->capreads = d->capreads ? 2 * d->capreads : 8;
						d->reads = trace_xrealloc(d->reads, d->capreads * sizeof(*d->reads));
					}
					d->reads[d->nreads++] = cb;
				}
			}
		}
		for (size_t i = 0; i < d->items.n; i++)
			if (d->items.v[i].image)
				d->items.v[i].layout = layout_in(r, NULL, d->items.v[i].cap);
		return;
	}
	case SP_PRESENT: {
		vk_args_vkQueuePresentKHR *a = args;
		const VkPresentInfoKHR *pi = a->pPresentInfo;
		d->queue = H(a->queue);
		for (uint32_t i = 0; collect && pi && pi->pSwapchains && i < pi->swapchainCount; i++) {
			uint64_t *h = tmap_at(&r->swapchains, H(pi->pSwapchains[i]), TAG_SWAPCHAIN);
			const swapchain *s = h ? (const swapchain *)(uintptr_t)*h : NULL;
			uint32_t idx = pi->pImageIndices ? pi->pImageIndices[i] : 0;
			if (!s || idx >= s->n)
				continue;
			dump_item it = {.cap = s->cap_img[idx], .image = true, .role = ROLE_PRESENT,
					.index = (uint8_t)i, .layout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
					.opaque = s->alpha == VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR};
			vkr_dump_add_item(&d->items, &it);
		}
		return;
	}
	case SP_DESTROY_DEVICE:
		vkr_dump_end_device(r);
		return;
	default:
		vkr_dump_track(r, e, args);
		if (d->dumped && e->cmd->action == VK_ACTION_RECORD) {
			VkCommandBuffer c;
			memcpy(&c, args, sizeof(c));
			dump_cb *cb = vkr_dump_cb(d, H(c));
			if (cb->in_pass && strncmp(r->call->sig->name, "vkCmdBeginRender", 16))
				vkr_warn(r, "--dump: %s is inside a render pass: what it wrote is read at "
					 "the pass's end", r->call->sig->name);
		}
		return;
	}
}

/* A recorded command's read-back, recorded into its command buffer right
 * after it (or after the pass it is in). */
static void record_into(vkr *r, const trace_call *c)
{
	dump_state *d = r->dump;
	uint64_t cap = c->sig->nargs && c->args[0].kind == TRACE_POINTER ? c->args[0].u : 0;
	dump_cb *cb = vkr_dump_cb(d, cap);
	if (!cb)
		return;
	if (d->dumped) {
		if (cb->ndeferred == cb->capdeferred) {
			cb->capdeferred = cb->capdeferred ? 2 * cb->capdeferred : 4;
			cb->deferred = trace_xrealloc(cb->deferred, cb->capdeferred * sizeof(uint64_t));
		}
		cb->deferred[cb->ndeferred++] = c->no;
	}
	if (cb->in_pass || !cb->ndeferred)
		return;
	dump_items written = {0};
	vkr_dump_cmd_items(d, cb, cb->deferred, cb->ndeferred, &written);
	bool ended = !strncmp(c->sig->name, "vkCmdEndRender", 14);
	for (size_t i = cb->pass_first; ended && i < cb->pass_end && i < cb->n; i++) {
		dump_item it = {.cap = cb->ev[i].cap, .image = true, .role = cb->ev[i].role,
				.index = cb->ev[i].index, .layout = -1};
		vkr_dump_add_item(&written, &it);
	}
	dump_plan *p = trace_xcalloc(1, sizeof(*p));
	p->no = cb->deferred[0];
	cb->ndeferred = 0;
	if (r->opt->ndump_handles)
		named_items(r, &written, &p->items);
	else
		for (size_t i = 0; i < written.n; i++)
			vkr_dump_add_item(&p->items, &written.v[i]);
	items_clear(&written);
	free(written.v);
	for (size_t i = 0; i < p->items.n; i++)
		if (p->items.v[i].image)
			p->items.v[i].layout = layout_in(r, cb, p->items.v[i].cap);
	if (!p->items.n)
		vkr_warn(r, "--dump: call %llu wrote no image or buffer", (unsigned long long)p->no);
	uint64_t live;
	if (!p->items.n || !vkr_map_get(r, vk_handle_lookup("VkCommandBuffer"), cap, &live) ||
	    !live || !plan_make(r, p)) {
		plan_free(r, p);
		return;
	}
	plan_record(r, p, (VkCommandBuffer)(uintptr_t)live);
	if (cb->nplans == cb->capplans) {
		cb->capplans = cb->capplans ? 2 * cb->capplans : 4;
		cb->plans = trace_xrealloc(cb->plans, cb->capplans * sizeof(*cb->plans));
	}
	cb->plans[cb->nplans++] = p;
}

void vkr_dump_after(vkr *r, const trace_call *c)
{
	dump_state *d = r->dump;
	cmd_entry *e = strncmp(c->sig->name, "tracekit.", 9) ? vkr_entry_of(r, c) : NULL;
	/* zink's vkGetPhysicalDeviceSurfaceCapabilitiesKHR right after a
	 * present, skipped, dumped the present's image again as its own */
	bool noted = d->noted;
	d->noted = false;
	if (!e || !r->d->vk.device || !noted)
		return;
	if (e->cmd->action == VK_ACTION_RECORD) {
		record_into(r, c);
		return;
	}
	bool queue_call = e->special == SP_SUBMIT || e->special == SP_SUBMIT2 ||
			  e->special == SP_PRESENT;
	dump_plan *p = NULL;
	if (d->dumped || (queue_call && r->opt->ndump_handles && !r->opt->dump)) {
		p = trace_xcalloc(1, sizeof(*p));
		p->no = c->no;
		if (r->opt->ndump_handles && d->dumped) {
			named_items(r, &d->items, &p->items);
		} else {
			for (size_t i = 0; i < d->items.n; i++)
				if (vkr_dump_wanted(r, d->items.v[i].cap))
					vkr_dump_add_item(&p->items, &d->items.v[i]);
		}
		for (size_t i = 0; i < p->items.n; i++)
			if (p->items.v[i].image && p->items.v[i].layout < 0)
				p->items.v[i].layout = layout_in(r, NULL, p->items.v[i].cap);
		if (!p->items.n && d->dumped)
			vkr_warn(r, "--dump: %s wrote no image or buffer", c->sig->name);
		if (!p->items.n || !plan_make(r, p)) {
			plan_free(r, p);
			p = NULL;
		}
	}
	if (!p && !d->nreads)
		return;
	VkQueue queue = r->d->vk.queue;
	uint32_t family = r->d->vk.queue_family;
	uint64_t live;
	if (d->queue && vkr_map_get(r, r->h_queue, d->queue, &live) && live) {
		uint64_t *fam = tmap_at(&r->d->queues, live, TAG_QUEUE);
		if (fam) {
			queue = (VkQueue)(uintptr_t)live;
			family = (uint32_t)*fam;
		}
	}
	/* not a queue call: all work so far; a present submits nothing
	 * (present.c folds it into the next submit), so nothing on its queue
	 * waits for what drew the image: all work so far too */
	if (!d->queue || queue == r->d->vk.queue || e->special == SP_PRESENT)
		vkDeviceWaitIdle(r->d->vk.device);
	run_on(r, queue, family, p);
	for (size_t i = 0; i < d->nreads; i++)
		for (size_t k = 0; k < d->reads[i]->nplans; k++)
			if (!d->reads[i]->plans[k]->read)
				plan_write(r, d->reads[i]->plans[k]);
	if (p) {
		plan_write(r, p);
		plan_free(r, p);
	}
}

/* Before the device (r->d) goes: the read-backs recorded into its
 * command buffers, and our command buffer if it is of it. */
void vkr_dump_end_device(vkr *r)
{
	dump_state *d = r->dump;
	if (!r->d->vk.device)
		return;
	vkDeviceWaitIdle(r->d->vk.device);
	for (size_t i = 0; i < d->cbs.cap; i++)
		if (tmap_used(&d->cbs, i) &&
		    vkr_owned_by(r, r->h_command_buffer, d->cbs.keys[i], r->d)) {
			dump_cb *cb = (dump_cb *)(uintptr_t)d->cbs.vals[i];
			for (size_t k = 0; k < cb->nplans; k++)
				plan_free(r, cb->plans[k]);
			cb->nplans = 0;
		}
	if (d->own_dev != r->d->vk.device)
		return;
	vkd_own_commands_free(r->d->vk.device, &d->pool, &d->cb, &d->fence);
	d->family = UINT32_MAX;
	d->own_dev = VK_NULL_HANDLE;
}

/* At the end: false, with its message, where --dump named a call past the
 * end of a trace that could not be read ahead (a stream). */
bool vkr_dump_finish(vkr *r)
{
	dump_state *d = r->dump;
	const vkr_options *o = r->opt;
	uint64_t last = o->dump ? trace_callset_last(o->dump) : 0;
	bool ok = !(o->dump && last != UINT64_MAX && last > d->last_no && !r->stop);
	if (!ok)
		fprintf(stderr, "%s: %s: --dump: call %llu is past the end of the trace (its last "
			"call is %llu)\n", trace_cli_self.prog, o->input, (unsigned long long)last,
			(unsigned long long)d->last_no);
	for (size_t i = 0; i < r->ndevs; i++) {
		r->d = r->devs[i];
		vkr_dump_end_device(r);
	}
	items_clear(&d->items);
	free(d->items.v);
	free(d->reads);
	vkr_dump_free_tracking(r);
	free(d);
	r->dump = NULL;
	return ok;
}

/* ------------------------------------------------------------------ */
/* Before the replay: the calls and handles named exist. */

/* The handles an output parameter (the last) of C holds. */
static void made_by(const trace_call *c, tmap *made)
{
	if (!c->sig->nargs)
		return;
	const trace_value *v = &c->args[c->sig->nargs - 1];
	if (v->kind == TRACE_POINTER && v->u)
		tmap_set(made, v->u, 0, 1);
	for (uint32_t i = 0; v->kind == TRACE_ARRAY && i < v->len; i++)
		if (v->items[i].kind == TRACE_POINTER && v->items[i].u)
			tmap_set(made, v->items[i].u, 0, 1);
}

int vkr_dump_check(const char *input, const vkr_options *o, char *msg, size_t cap)
{
	struct stat st;
	if (!strcmp(input, "-") || stat(input, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;  /* read once only: checked as it is replayed */
	trace_error err;
	trace_error_clear(&err);
	trace_reader *in = trace_reader_open(input, &err);
	if (!in)
		return 0;  /* the replay says why */
	tmap made = {0};
	uint64_t last = 0;
	bool any = false;
	trace_call *c;
	while (trace_reader_next(in, &c, &err) > 0) {
		last = c->no;
		any = true;
		const char *n = c->sig->name;
		if (o->ndump_handles && (!strcmp(n, "vkCreateImage") || !strcmp(n, "vkCreateBuffer") ||
					 !strcmp(n, "vkGetSwapchainImagesKHR")))
			made_by(c, &made);
	}
	trace_reader_close(in);
	int status = 0;
	uint64_t want = o->dump ? trace_callset_last(o->dump) : 0;
	if (o->dump && want != UINT64_MAX && (!any || want > last)) {
		if (any)
			snprintf(msg, cap, "--dump: call %llu is past the end of %s (its last call is %llu)",
				 (unsigned long long)want, input, (unsigned long long)last);
		else
			snprintf(msg, cap, "--dump: %s has no calls", input);
		status = -1;
	}
	for (size_t i = 0; !status && i < o->ndump_handles; i++)
		if (!tmap_at(&made, o->dump_handles[i], 0)) {
			snprintf(msg, cap, "--dump-resource 0x%llx: no image or buffer of %s has that "
				 "handle", (unsigned long long)o->dump_handles[i], input);
			status = -1;
		}
	tmap_free(&made);
	return status;
}

/* DIR made where it is not, and a file can be made in it. */
int vkr_dump_dir_check(const char *dir, char *msg, size_t cap)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		snprintf(msg, cap, "--dump-dir %s: %s", dir, strerror(errno));
		return -1;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/.trace-replay-XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		snprintf(msg, cap, "--dump-dir %s: %s", dir, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(path);
	return 0;
}
