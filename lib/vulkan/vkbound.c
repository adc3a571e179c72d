/*
 * What a draw, a dispatch or a trace reads of its descriptor sets
 * (vkiface.h): for each binding the bound pipeline's shaders statically
 * use, a set bound at its number (VUID-vkCmdDraw-None-08600) in which it
 * has been written (-08114), unless the binding is partially bound,
 * updated after bind, or of immutable samplers only.  A binding counts
 * as written once any of its descriptors is.  llvmpipe crashed drawing
 * vkcube's cube once its one vkUpdateDescriptorSets was deleted
 * (mutants.py seed 1414348642).  Command buffers by handle, secondary
 * ones too: nothing bound is inherited.
 */
#include "vkiface_internal.h"

#include <stdlib.h>
#include <string.h>

static void uses_add(pipe_uses *u, uint32_t set, uint32_t binding, bool writes, bool reads)
{
	uint32_t k = 0;
	while (k < u->n && (u->sb[k][0] != set || u->sb[k][1] != binding))
		k++;
	if (k == u->n) {
		if (u->n == u->cap) {
			u->cap = u->cap ? 2 * u->cap : 8;
			u->sb = trace_xrealloc(u->sb, u->cap * sizeof(u->sb[0]));
		}
		u->sb[k][0] = set, u->sb[k][1] = binding, u->sb[k][2] = 0, u->sb[k][3] = 0;
		u->n++;
	}
	u->sb[k][2] |= writes;
	u->sb[k][3] |= reads;
}

void vk_iface_uses_add(pipe_uses *u, const spv_entry *e)
{
	for (uint32_t i = 0; i < e->nbindings; i++)
		uses_add(u, e->bindings[i].set, e->bindings[i].binding, e->bindings[i].writes,
			 e->bindings[i].reads);
}

/* What a library linked into the pipeline uses. */
void vk_iface_uses_merge(pipe_uses *u, const pipe_uses *from)
{
	for (uint32_t k = 0; k < from->n; k++)
		uses_add(u, from->sb[k][0], from->sb[k][1], from->sb[k][2], from->sb[k][3]);
	u->partial |= from->partial;
}

enum { NPOINTS = 3, NSETS = 32 };
#define NOT_FOLLOWED UINT64_MAX  /* a set pushed, null, of a descriptor buffer */

typedef struct cb_bound {  /* (command buffer, K_BOUND) */
	uint64_t pipeline[NPOINTS];
	uint64_t sets[NPOINTS][NSETS];  /* 0: none bound since vkBeginCommandBuffer */
} cb_bound;

static int point_of(VkPipelineBindPoint p)
{
	return p == VK_PIPELINE_BIND_POINT_GRAPHICS ? 0 : p == VK_PIPELINE_BIND_POINT_COMPUTE ? 1
	     : p == VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR ? 2 : -1;
}

static cb_bound *bound_of(vk_iface *v, uint64_t cb)
{
	cb_bound *b = vk_iface_get(v, cb, K_BOUND);
	if (!b && cb)
		vk_iface_put(v, cb, K_BOUND, b = trace_xcalloc(1, sizeof(*b)));
	return b;
}

/* Sets FIRST to FIRST + N - 1 at bind point P of CB: SETS (NULL: not
 * followed). */
void vk_iface_sets_bound(vk_iface *v, uint64_t cb, VkPipelineBindPoint point, uint32_t first,
			 uint32_t n, const VkDescriptorSet *sets)
{
	cb_bound *b = point_of(point) >= 0 ? bound_of(v, cb) : NULL;
	for (uint64_t i = 0; b && i < n && first + i < NSETS; i++)
		b->sets[point_of(point)][first + i] = sets && sets[i] ? H(sets[i]) : NOT_FOLLOWED;
}

/* The bindings of SET from BINDING, element ELEMENT, that COUNT
 * descriptors run on into, marked written; COUNT UINT32_MAX: all. */
void vk_iface_written(vk_iface *v, uint64_t set, uint32_t binding, uint32_t element,
		      uint32_t count)
{
	const set_layout *s = vk_iface_get(v, set, K_SET);
	if (!s)
		return;
	uint64_t *w = vk_iface_get(v, set, K_WRITTEN);
	if (!w)
		vk_iface_put(v, set, K_WRITTEN, w = trace_xcalloc(1 + (s->n + 63) / 64, sizeof(*w)));
	if (count == UINT32_MAX) {
		w[0] = 1;
		return;
	}
	uint64_t left = count;
	const VkDescriptorSetLayoutBinding *b;
	for (uint64_t n = binding; left && n <= UINT32_MAX &&
	     (b = vk_iface_binding_of(s, (uint32_t)n)); n++) {
		size_t i = (size_t)(b - s->b);
		uint64_t room = b->descriptorCount > element ? b->descriptorCount - element : 0;
		if (room)
			w[1 + i / 64] |= 1ull << (i % 64);
		left = left > room ? left - room : 0;
		element = 0;
	}
}

static int draw_fits(vk_iface *v, const char *n, uint64_t cb, int point, trace_error *err)
{
	const cb_bound *b = vk_iface_get(v, cb, K_BOUND);
	const pipe_uses *u = b && b->pipeline[point]
		? vk_iface_get(v, b->pipeline[point], K_PIPELINE) : NULL;
	for (uint32_t k = 0; u && k < u->n; k++) {
		uint32_t set = u->sb[k][0], binding = u->sb[k][1];
		uint64_t h = set < NSETS ? b->sets[point][set] : NOT_FOLLOWED;
		if (!h) {
			trace_error_set(err, "commandBuffer: VkCommandBuffer 0x%llx: %s, and the bound "
					"VkPipeline 0x%llx uses set %u binding %u, but no descriptor "
					"set is bound at set %u since vkBeginCommandBuffer (its "
					"vkCmdBindDescriptorSets cut out?)", (unsigned long long)cb, n,
					(unsigned long long)b->pipeline[point], set, binding, set);
			return -1;
		}
		const set_layout *s = h != NOT_FOLLOWED ? vk_iface_get(v, h, K_SET) : NULL;
		const VkDescriptorSetLayoutBinding *d = s ? vk_iface_binding_of(s, binding) : NULL;
		if (!d || flags_of(s)[d - s->b])
			continue;
		size_t i = (size_t)(d - s->b);
		const uint64_t *w = vk_iface_get(v, h, K_WRITTEN);
		if (w && (w[0] || (w[1 + i / 64] >> (i % 64) & 1)))
			continue;
		trace_error_set(err, "commandBuffer: VkCommandBuffer 0x%llx: %s, and the bound "
				"VkPipeline 0x%llx uses set %u binding %u, but nothing has been "
				"written there in VkDescriptorSet 0x%llx, bound at set %u (its "
				"vkUpdateDescriptorSets cut out?)", (unsigned long long)cb, n,
				(unsigned long long)b->pipeline[point], set, binding,
				(unsigned long long)h, set);
		return -1;
	}
	return 0;
}

/* (each command's first parameter is its command buffer) */
#define CB_OF(args) H(*(const VkCommandBuffer *)(args))

static int shader_point(const char *name);

int vk_iface_on_draw(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	/* vkCmdDraw*, vkCmdDispatch*, vkCmdTraceRays*; an execution
	 * graph's dispatch is not followed */
	int p = shader_point(n);
	(void)failed;
	return p >= 0 ? draw_fits(v, n, CB_OF(args), p, err) : 0;
}

int vk_iface_on_bind_pipeline(vk_iface *v, const char *n, const void *args, bool failed,
			      trace_error *err)
{
	const vk_args_vkCmdBindPipeline *a = args;
	int p = point_of(a->pipelineBindPoint);
	cb_bound *b = p >= 0 ? bound_of(v, CB_OF(args)) : NULL;
	(void)n, (void)failed, (void)err;
	if (b)
		b->pipeline[p] = H(a->pipeline);
	return 0;
}

int vk_iface_on_bind_sets(vk_iface *v, const char *n, const void *args, bool failed,
			  trace_error *err)
{
	const vk_args_vkCmdBindDescriptorSets *a = args;
	(void)n, (void)failed, (void)err;
	vk_iface_sets_bound(v, CB_OF(args), a->pipelineBindPoint, a->firstSet,
			    a->pDescriptorSets ? a->descriptorSetCount : 0, a->pDescriptorSets);
	return 0;
}

/* Sets not followed: a push with a template (whose bind point is the
 * template's), descriptor buffers' sets. */
int vk_iface_on_unfollowed(vk_iface *v, const char *n, const void *args, bool failed,
			   trace_error *err)
{
	static const VkPipelineBindPoint every[NPOINTS] = {
		VK_PIPELINE_BIND_POINT_GRAPHICS, VK_PIPELINE_BIND_POINT_COMPUTE,
		VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR};
	(void)failed, (void)err;
	if (n[6] == 'u') {  /* vkCmdPushDescriptorSetWithTemplate* */
		const vk_args_vkCmdPushDescriptorSetWithTemplateKHR *a = args;
		for (int p = 0; p < NPOINTS; p++)
			vk_iface_sets_bound(v, CB_OF(args), every[p], a->set, 1, NULL);
	} else if (n[5] == 'S') {  /* vkCmdSetDescriptorBufferOffsetsEXT */
		const vk_args_vkCmdSetDescriptorBufferOffsetsEXT *a = args;
		vk_iface_sets_bound(v, CB_OF(args), a->pipelineBindPoint, a->firstSet, a->setCount,
				    NULL);
	} else {  /* vkCmdBindDescriptorBufferEmbeddedSamplersEXT */
		const vk_args_vkCmdBindDescriptorBufferEmbeddedSamplersEXT *a = args;
		vk_iface_sets_bound(v, CB_OF(args), a->pipelineBindPoint, a->set, 1, NULL);
	}
	return 0;
}

int vk_iface_on_begin_cb(vk_iface *v, const char *n, const void *args, bool failed,
			 trace_error *err)
{
	/* (emptied in place: command buffers are begun each frame) */
	cb_bound *b = vk_iface_get(v, CB_OF(args), K_BOUND);
	(void)n, (void)failed, (void)err;
	if (b)
		memset(b, 0, sizeof(*b));
	return 0;
}

int vk_iface_on_template_update(vk_iface *v, const char *n, const void *args, bool failed,
				trace_error *err)
{
	/* what a template writes is not followed: the whole set counts */
	const vk_args_vkUpdateDescriptorSetWithTemplate *a = args;
	(void)n, (void)failed, (void)err;
	vk_iface_written(v, H(a->descriptorSet), 0, 0, UINT32_MAX);
	return 0;
}

/* Shader objects bound: the draws and dispatches that follow run shaders
 * not followed, whatever pipeline was bound. */
int vk_iface_on_bind_shaders(vk_iface *v, const char *n, const void *args, bool failed,
			     trace_error *err)
{
	cb_bound *b = bound_of(v, CB_OF(args));
	(void)n, (void)failed, (void)err;
	if (b)
		b->pipeline[0] = b->pipeline[1] = NOT_FOLLOWED;
	return 0;
}

/* The bind point whose pipeline command NAME runs: -1 where it is not
 * one of the three (device-generated commands, execution graphs,
 * subpass shading), -2 where it runs no shaders. */
static int shader_point(const char *name)
{
	if (strncmp(name, "vkCmd", 5))
		return -2;
	name += 5;
	if (!strncmp(name, "DispatchGraph", 13))
		return -1;
	if (!strncmp(name, "Draw", 4))
		return 0;
	if (!strncmp(name, "Dispatch", 8))
		return 1;
	if (!strncmp(name, "TraceRays", 9))
		return 2;
	if (!strncmp(name, "ExecuteGeneratedCommands", 24) || !strncmp(name, "SubpassShading", 14))
		return -1;
	return -2;
}

bool vk_iface_runs_shaders(const char *name)
{
	return shader_point(name) > -2;
}

/* Each set bound at P in B (all points: P -1) to FN, any binding. */
static void sets_bound(const cb_bound *b, int p, vk_set_write_fn *fn, void *ctx)
{
	for (int q = p < 0 ? 0 : p; q < (p < 0 ? NPOINTS : p + 1); q++)
		for (uint32_t s = 0; s < NSETS; s++)
			if (b->sets[q][s] && b->sets[q][s] != NOT_FOLLOWED)
				fn(ctx, b->sets[q][s], UINT32_MAX);
}

/* The bindings of the sets bound in CB that command NAME's shaders may
 * write (WHICH 2) or read (3), to FN; each set bound at its point, any
 * binding, where the pipeline is not known. */
static void shader_uses(const vk_iface *v, uint64_t cb, const char *name, int which,
			vk_set_write_fn *fn, void *ctx)
{
	int p = shader_point(name);
	const cb_bound *b = p > -2 ? vk_iface_get(v, cb, K_BOUND) : NULL;
	if (!b)
		return;  /* nothing bound since vkBeginCommandBuffer */
	const pipe_uses *u = p >= 0 && b->pipeline[p] && b->pipeline[p] != NOT_FOLLOWED
		? vk_iface_get(v, b->pipeline[p], K_PIPELINE) : NULL;
	if (!u || u->partial) {
		sets_bound(b, p, fn, ctx);
		return;
	}
	for (uint32_t k = 0; k < u->n; k++) {
		uint64_t h = u->sb[k][0] < NSETS ? b->sets[p][u->sb[k][0]] : 0;
		if (u->sb[k][which] && h && h != NOT_FOLLOWED)
			fn(ctx, h, u->sb[k][1]);
	}
}

void vk_iface_shader_writes(const vk_iface *v, uint64_t cb, const char *name,
			    vk_set_write_fn *fn, void *ctx)
{
	shader_uses(v, cb, name, 2, fn, ctx);
}

void vk_iface_shader_reads(const vk_iface *v, uint64_t cb, const char *name,
			   vk_set_write_fn *fn, void *ctx)
{
	shader_uses(v, cb, name, 3, fn, ctx);
}

bool vk_iface_set_bound(const vk_iface *v, uint64_t cb, uint64_t set)
{
	const cb_bound *b = vk_iface_get(v, cb, K_BOUND);
	for (int p = 0; b && p < NPOINTS; p++)
		for (uint32_t s = 0; s < NSETS; s++)
			if (b->sets[p][s] == set)
				return true;
	return false;
}

uint32_t vk_iface_binding_at(const vk_iface *v, uint64_t set, uint32_t binding, uint32_t element)
{
	const set_layout *s = vk_iface_get(v, set, K_SET);
	const VkDescriptorSetLayoutBinding *b;
	for (uint64_t n = binding; s && n <= UINT32_MAX && (b = vk_iface_binding_of(s, (uint32_t)n));
	     n++) {
		if (element < b->descriptorCount)
			return (uint32_t)n;
		element -= b->descriptorCount;
	}
	return UINT32_MAX;
}
