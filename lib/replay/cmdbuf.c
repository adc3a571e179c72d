/*
 * Command buffers: whether one is recording, and inside a render pass
 * instance, as far as a record could break it.  A vkCmd* the registry
 * lets be recorded only inside a render pass instance (a draw,
 * vkCmdEndRenderPass) or only outside one (a copy, a dispatch,
 * vkCmdBeginRenderPass), recorded where it may not be, a command into a
 * command buffer that is not recording, or a recording ended inside a
 * render pass, stops the replay naming the command buffer: llvmpipe
 * crashed at a vkCmdEndRenderPass whose begin was cut out.  So does a
 * draw with no graphics pipeline bound since the recording began, an
 * indexed one with no index buffer, a dispatch with no compute pipeline
 * (llvmpipe divided by zero at a vkCmdDrawIndexed moved before its
 * vkCmdBindIndexBuffer); the registry does not say what a command needs
 * bound, so that is by name.  Primary command buffers only: a secondary
 * one may continue a render pass its vkBeginCommandBuffer names, and is
 * not followed; nor is what is bound after vkCmdExecuteCommands.
 *
 * And in any command buffer, what a command addresses of its pipeline
 * layout (as vkiface.c keeps it): the sets a bind or a push names past
 * the layout's set layouts, push constants past its ranges' end
 * (llvmpipe crashed drawing after a vkCmdBindDescriptorSets whose
 * firstSet was 4294967295).  And a pipeline layout past the device's
 * descriptor limits.
 */
#include "replay_internal.h"

/* the state: one of these, and the bits below */
enum { CB_IDLE = 1, CB_OUTSIDE, CB_INSIDE, CB_WHERE = 3 };
enum {
	CB_GRAPHICS = 1 << 2,   /* a graphics pipeline (or shader objects) bound */
	CB_COMPUTE = 1 << 3,
	CB_INDEX = 1 << 4,      /* an index buffer bound */
	CB_UNKNOWN = 1 << 5,    /* vkCmdExecuteCommands: what is bound is not followed */
};

/* What a command is to the checks below: found once a command, from its
 * name (vkr_cmdbuf_entry), so that a record compares no strings */
enum cb_kind {
	CK_NONE,
	CK_DISPATCH,        /* vkCmdDispatch: its groups checked */
	CK_DISPATCH_BASE,   /* vkCmdDispatchBase{,KHR}: its groups checked */
	CK_DISPATCH_OTHER,  /* any other vkCmdDispatch*: a compute pipeline needed */
	CK_DRAW,            /* vkCmdDraw* not indexed */
	CK_DRAW_INDEXED,    /* vkCmdDrawIndexed: its indices checked */
	CK_DRAW_INDEXED_OTHER,
	CK_BIND_PIPELINE,
	CK_BIND_SHADERS,
	CK_BIND_INDEX,      /* vkCmdBindIndexBuffer: what it binds followed */
	CK_BIND_INDEX_OTHER,
	CK_EXECUTE,
	CK_BIND_SETS,
	CK_PUSH_SET,
	CK_PUSH_TEMPLATE,
	CK_PUSH_CONSTANTS,
	CK_BEGIN_RENDER,    /* vkCmdBeginRender{Pass,Pass2,ing}* */
	CK_END_RENDER,
	CK_CREATE_QPOOL,
	CK_DESTROY_QPOOL,
	CK_CREATE_LAYOUT,
};

static enum cb_kind kind_of(const char *n)
{
	static const vk_named exact[] = {
		{"vkCmdDispatch", CK_DISPATCH},
		{"vkCmdDispatchBase", CK_DISPATCH_BASE},
		{"vkCmdDispatchBaseKHR", CK_DISPATCH_BASE},
		{"vkCmdDrawIndexed", CK_DRAW_INDEXED},
		{"vkCmdBindPipeline", CK_BIND_PIPELINE},
		{"vkCmdBindShadersEXT", CK_BIND_SHADERS},
		{"vkCmdBindIndexBuffer", CK_BIND_INDEX},
		{"vkCmdExecuteCommands", CK_EXECUTE},
		{"vkCmdBindDescriptorSets", CK_BIND_SETS},
		{"vkCmdPushDescriptorSetKHR", CK_PUSH_SET},
		{"vkCmdPushDescriptorSet", CK_PUSH_SET},
		{"vkCmdPushDescriptorSetWithTemplateKHR", CK_PUSH_TEMPLATE},
		{"vkCmdPushDescriptorSetWithTemplate", CK_PUSH_TEMPLATE},
		{"vkCmdPushConstants", CK_PUSH_CONSTANTS},
		{"vkCreateQueryPool", CK_CREATE_QPOOL},
		{"vkCreatePipelineLayout", CK_CREATE_LAYOUT},
		{"vkDestroyQueryPool", CK_DESTROY_QPOOL},
	};
	int k = VK_BY_NAME(exact, n, CK_NONE);
	if (k != CK_NONE)
		return (enum cb_kind)k;
	if (!strncmp(n, "vkCmdDispatch", 13))
		return CK_DISPATCH_OTHER;
	if (!strncmp(n, "vkCmdDrawIndexed", 16) || !strncmp(n, "vkCmdDrawMultiIndexed", 21))
		return CK_DRAW_INDEXED_OTHER;
	if (!strncmp(n, "vkCmdDraw", 9))
		return CK_DRAW;
	if (!strncmp(n, "vkCmdBindIndexBuffer", 20))
		return CK_BIND_INDEX_OTHER;
	if (!strncmp(n, "vkCmdBeginRender", 16))
		return CK_BEGIN_RENDER;
	if (!strncmp(n, "vkCmdEndRender", 14))
		return CK_END_RENDER;
	return CK_NONE;
}

/* The queries a command names of its queryPool, by the registry's
 * parameter names: query, or firstQuery and queryCount. */
static int16_t param_named(const vk_command_info *cmd, const char *a, const char *b)
{
	for (uint32_t i = 0; i < cmd->nparams; i++)
		if (!cmd->params[i].ptr && (!strcmp(cmd->params[i].name, a) ||
					    (b && !strcmp(cmd->params[i].name, b))))
			return (int16_t)i;
	return -1;
}

void vkr_cmdbuf_entry(cmd_entry *e)
{
	e->cb = (uint8_t)kind_of(e->cmd->sig.name);
	e->qpool = param_named(e->cmd, "queryPool", NULL);
	e->qfirst = param_named(e->cmd, "firstQuery", "query");
	e->qcount = param_named(e->cmd, "queryCount", NULL);
}

/* What a command of kind K needs bound (CB_* bits), and what its absence
 * is called. */
static uint64_t needs(enum cb_kind k, const char **what, const char **bind)
{
	*bind = "vkCmdBindPipeline";
	switch (k) {
	case CK_DISPATCH:
	case CK_DISPATCH_BASE:
	case CK_DISPATCH_OTHER:
		*what = "compute pipeline";
		return CB_COMPUTE;
	case CK_DRAW_INDEXED:
	case CK_DRAW_INDEXED_OTHER:
		*what = "index buffer";
		*bind = "vkCmdBindIndexBuffer";
		return CB_GRAPHICS | CB_INDEX;
	case CK_DRAW:
		*what = "graphics pipeline";
		return CB_GRAPHICS;
	default:
		return 0;
	}
}

/* What a vkCmdBind* of kind K (ARGS) binds. */
static uint64_t binds(enum cb_kind k, void *args)
{
	switch (k) {
	case CK_BIND_PIPELINE: {
		VkPipelineBindPoint p = ((vk_args_vkCmdBindPipeline *)args)->pipelineBindPoint;
		return p == VK_PIPELINE_BIND_POINT_GRAPHICS ? CB_GRAPHICS
			: p == VK_PIPELINE_BIND_POINT_COMPUTE ? CB_COMPUTE : 0;
	}
	case CK_BIND_SHADERS:
		return CB_GRAPHICS | CB_COMPUTE;
	case CK_BIND_INDEX:
	case CK_BIND_INDEX_OTHER:
		return CB_INDEX;
	case CK_EXECUTE:
		return CB_UNKNOWN;
	default:
		return 0;
	}
}

/* Sets FIRST to FIRST + N - 1 (FIELD, COUNT: their names) of LAYOUT. */
static void sets_within(vkr *r, uint64_t layout, const char *field, uint32_t first,
			const char *count, uint32_t n)
{
	uint32_t have;
	uint64_t end;
	if (!vk_iface_layout(r->iface, layout, &have, &end) || (first < have && n <= have - first))
		return;
	if (count)
		vkr_fatal(r, "%s: %u, %s %u, but VkPipelineLayout 0x%llx has %u set layouts", field,
			  first, count, n, (unsigned long long)layout, have);
	vkr_fatal(r, "%s: %u, but VkPipelineLayout 0x%llx has %u set layouts", field, first,
		  (unsigned long long)layout, have);
}

/* A dispatch's work groups within the replay device's limits (a
 * groupCountZ edited to 4294967295 kept llvmpipe busy for ever); --check
 * has no device to ask. */
static void groups_within(vkr *r, enum cb_kind k, void *args)
{
	const uint32_t *max = r->d->vk.props.limits.maxComputeWorkGroupCount;
	uint32_t base[3] = {0, 0, 0}, count[3];
	if (k == CK_DISPATCH) {
		vk_args_vkCmdDispatch *a = args;
		count[0] = a->groupCountX, count[1] = a->groupCountY, count[2] = a->groupCountZ;
	} else {
		vk_args_vkCmdDispatchBase *a = args;
		base[0] = a->baseGroupX, base[1] = a->baseGroupY, base[2] = a->baseGroupZ;
		count[0] = a->groupCountX, count[1] = a->groupCountY, count[2] = a->groupCountZ;
	}
	for (int i = 0; i < 3 && max[i]; i++)
		if ((uint64_t)base[i] + count[i] > max[i])
			vkr_fatal(r, "groupCount%c: %u from %u, but %s runs %u work groups at most",
				  "XYZ"[i], count[i], base[i], r->d->vk.props.deviceName, max[i]);
}

/* The index buffer a command buffer binds (vkCmdBindIndexBuffer): its
 * indices from OFFSET, and an indexed draw's within them (an indexCount
 * edited to 4294967295 kept llvmpipe busy for ever); buffers made by
 * vkCreateBuffer, by their create size. */
static void index_bound(vkr *r, vk_args_vkCmdBindIndexBuffer *a)
{
	uint64_t cb = (uint64_t)(uintptr_t)a->commandBuffer;
	uint32_t size = a->indexType == VK_INDEX_TYPE_UINT32 ? 4
		: a->indexType == VK_INDEX_TYPE_UINT8_EXT ? 1 : 2;
	tmap_set(&r->cbs, cb, TAG_IBUF, (uint64_t)(uintptr_t)a->buffer);
	tmap_set(&r->cbs, cb, TAG_IOFF, a->offset);
	tmap_set(&r->cbs, cb, TAG_ISIZE, size);
}

static void indices_within(vkr *r, uint64_t cb, uint32_t first, uint32_t count)
{
	uint64_t *buf = tmap_at(&r->cbs, cb, TAG_IBUF), *off = tmap_at(&r->cbs, cb, TAG_IOFF),
		*size = tmap_at(&r->cbs, cb, TAG_ISIZE);
	obj *o = buf && off && size ? vkr_obj_get(r, *buf) : NULL;
	if (!o || o->image || !o->create_size || *off > o->create_size)
		return;
	uint64_t have = (o->create_size - *off) / *size;
	if ((uint64_t)first + count > have)
		vkr_fatal(r, "indexCount: %u from firstIndex %u, but VkBuffer 0x%llx holds %llu "
			  "indices from offset %llu", count, first, (unsigned long long)*buf,
			  (unsigned long long)have, (unsigned long long)*off);
}

/* A pipeline layout's descriptors of each kind within the replay
 * device's limits for a pipeline layout (VUID-VkPipelineLayoutCreateInfo-
 * descriptorType-03028 to -03036: vkcube's set layout with a
 * descriptorCount edited to 4294967295 crashed llvmpipe drawing); --check
 * has no device to ask. */
static void layout_within_limits(vkr *r, vk_args_vkCreatePipelineLayout *a, VkResult capres)
{
	uint64_t c[11];
	if (r->checking || vkr_failed(capres) || !a->pPipelineLayout ||
	    !vk_iface_layout_descriptors(r->iface, (uint64_t)(uintptr_t)*a->pPipelineLayout, c))
		return;
	const VkPhysicalDeviceLimits *l = &r->d->vk.props.limits;
	const struct {
		const char *what, *limit;
		uint64_t have;
		uint32_t max;
	} k[] = {
		{"samplers", "maxDescriptorSetSamplers",
		 c[VK_DESCRIPTOR_TYPE_SAMPLER] + c[VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER],
		 l->maxDescriptorSetSamplers},
		{"uniform buffers", "maxDescriptorSetUniformBuffers",
		 c[VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER] + c[VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC],
		 l->maxDescriptorSetUniformBuffers},
		{"dynamic uniform buffers", "maxDescriptorSetUniformBuffersDynamic",
		 c[VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC], l->maxDescriptorSetUniformBuffersDynamic},
		{"storage buffers", "maxDescriptorSetStorageBuffers",
		 c[VK_DESCRIPTOR_TYPE_STORAGE_BUFFER] + c[VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC],
		 l->maxDescriptorSetStorageBuffers},
		{"dynamic storage buffers", "maxDescriptorSetStorageBuffersDynamic",
		 c[VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC], l->maxDescriptorSetStorageBuffersDynamic},
		{"sampled images", "maxDescriptorSetSampledImages",
		 c[VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE] + c[VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER] +
		 c[VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER], l->maxDescriptorSetSampledImages},
		{"storage images", "maxDescriptorSetStorageImages",
		 c[VK_DESCRIPTOR_TYPE_STORAGE_IMAGE] + c[VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER],
		 l->maxDescriptorSetStorageImages},
		{"input attachments", "maxDescriptorSetInputAttachments",
		 c[VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT], l->maxDescriptorSetInputAttachments},
	};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i].have > k[i].max)
			vkr_fatal(r, "pCreateInfo.pSetLayouts: %llu %s in all, but %s takes %u in a "
				  "pipeline layout (%s)", (unsigned long long)k[i].have, k[i].what,
				  r->d->vk.props.deviceName, k[i].max, k[i].limit);
}

/* The queries a command names of its queryPool (vkr_cmdbuf_entry)
 * within the pool's (a vkGetQueryPoolResults of 65536 queries of a pool
 * of 2 had llvmpipe read past it). */
static void queries_within(vkr *r, const cmd_entry *e, void *args)
{
	if (e->qpool < 0 || e->qfirst < 0)
		return;
	const vk_field *first = &e->cmd->params[e->qfirst];
	uint64_t p = vkr_handle_at(args, &e->cmd->params[e->qpool]);
	uint64_t *have = p ? tmap_at(&r->cbs, p, TAG_QPOOL) : NULL;
	uint32_t a, n = 1;
	memcpy(&a, (uint8_t *)args + first->offset, 4);
	if (e->qcount >= 0)
		memcpy(&n, (uint8_t *)args + e->cmd->params[e->qcount].offset, 4);
	if (!have || (uint64_t)a + n <= *have)
		return;
	if (e->qcount >= 0)
		vkr_queries_past(r, p, a, n, *have);
	vkr_fatal(r, "%s: %u, but VkQueryPool 0x%llx has %llu queries", first->name, a,
		  (unsigned long long)p, (unsigned long long)*have);
}

noreturn void vkr_queries_past(vkr *r, uint64_t pool, uint32_t first, uint32_t count, uint64_t have)
{
	vkr_fatal(r, "queryCount: %u from firstQuery %u, but VkQueryPool 0x%llx has %llu queries",
		  count, first, (unsigned long long)pool, (unsigned long long)have);
}

/* What a vkCmd* of kind K (ARGS) addresses of its pipeline layout, its
 * index buffer, the device's limits. */
static void layout_used(vkr *r, enum cb_kind k, void *args)
{
	switch (k) {
	case CK_BIND_INDEX:
		index_bound(r, args);
		return;
	case CK_DRAW_INDEXED: {
		vk_args_vkCmdDrawIndexed *a = args;
		indices_within(r, (uint64_t)(uintptr_t)a->commandBuffer, a->firstIndex, a->indexCount);
		return;
	}
	case CK_DISPATCH:
	case CK_DISPATCH_BASE:
		groups_within(r, k, args);
		return;
	case CK_BIND_SETS: {
		vk_args_vkCmdBindDescriptorSets *a = args;
		sets_within(r, (uint64_t)(uintptr_t)a->layout, "firstSet", a->firstSet,
			    "descriptorSetCount", a->descriptorSetCount);
		return;
	}
	case CK_PUSH_SET: {
		vk_args_vkCmdPushDescriptorSetKHR *a = args;
		sets_within(r, (uint64_t)(uintptr_t)a->layout, "set", a->set, NULL, 1);
		return;
	}
	case CK_PUSH_TEMPLATE: {
		vk_args_vkCmdPushDescriptorSetWithTemplateKHR *a = args;
		sets_within(r, (uint64_t)(uintptr_t)a->layout, "set", a->set, NULL, 1);
		return;
	}
	case CK_PUSH_CONSTANTS: {
		vk_args_vkCmdPushConstants *a = args;
		uint64_t layout = (uint64_t)(uintptr_t)a->layout;
		uint32_t sets;
		uint64_t end;
		if (vk_iface_layout(r->iface, layout, &sets, &end) &&
		    (uint64_t)a->offset + a->size > end)
			vkr_fatal(r, "offset: %u, size %u, but VkPipelineLayout 0x%llx has push "
				  "constants to byte %llu", a->offset, a->size,
				  (unsigned long long)layout, (unsigned long long)end);
		return;
	}
	default:
		return;
	}
}

static uint64_t *state_of(vkr *r, uint64_t cb)
{
	return cb ? tmap_at(&r->cbs, cb, TAG_CBSTATE) : NULL;
}

/* A vkCmd* of E into CB in state *S. */
static void cmd_recorded(vkr *r, const cmd_entry *e, void *args, uint64_t cb, uint64_t *s)
{
	const char *n = e->cmd->sig.name;
	uint8_t where = e->cmd->renderpass;
	uint64_t at = *s & CB_WHERE;
	if (at == CB_IDLE)
		vkr_fatal(r, "commandBuffer: VkCommandBuffer 0x%llx is not recording (its "
			  "vkBeginCommandBuffer cut out?)", (unsigned long long)cb);
	if (where == VK_RENDERPASS_INSIDE && at != CB_INSIDE)
		vkr_fatal(r, "commandBuffer: VkCommandBuffer 0x%llx: %s is recorded inside a render "
			  "pass only, and none is begun (its vkCmdBeginRenderPass cut out?)",
			  (unsigned long long)cb, n);
	if (where == VK_RENDERPASS_OUTSIDE && at == CB_INSIDE)
		vkr_fatal(r, "commandBuffer: VkCommandBuffer 0x%llx: %s is recorded outside a render "
			  "pass only, and one is begun (its vkCmdEndRenderPass cut out?)",
			  (unsigned long long)cb, n);
	const char *what, *bind;
	enum cb_kind k = (enum cb_kind)e->cb;
	uint64_t need = needs(k, &what, &bind);
	if (need && !(*s & CB_UNKNOWN) && (*s & need) != need)
		vkr_fatal(r, "commandBuffer: VkCommandBuffer 0x%llx: %s with no %s bound since "
			  "vkBeginCommandBuffer (its %s cut out or moved?)", (unsigned long long)cb,
			  n, what, bind);
	*s |= binds(k, args);
	if (k == CK_BEGIN_RENDER)
		*s = (*s & ~(uint64_t)CB_WHERE) | CB_INSIDE;
	else if (k == CK_END_RENDER)
		*s = (*s & ~(uint64_t)CB_WHERE) | CB_OUTSIDE;
}

void vkr_cmdbuf_note(vkr *r, const cmd_entry *e, void *args, VkResult capres)
{
	const vk_command_info *cmd = e->cmd;
	uint64_t *s;
	queries_within(r, e, args);
	switch ((enum loop_kind)e->loop) {
	case LK_RECORD:
		layout_used(r, (enum cb_kind)e->cb, args);
		if ((s = state_of(r, vkr_handle_at(args, &cmd->params[0]))))
			cmd_recorded(r, e, args, vkr_handle_at(args, &cmd->params[0]), s);
		return;
	case LK_ALLOC_CBS: {
		vk_args_vkAllocateCommandBuffers *a = args;
		if (!a->pAllocateInfo || !a->pCommandBuffers || vkr_failed(capres))
			return;
		bool primary = a->pAllocateInfo->level == VK_COMMAND_BUFFER_LEVEL_PRIMARY;
		for (uint32_t i = 0; i < a->pAllocateInfo->commandBufferCount; i++) {
			uint64_t cb = (uint64_t)(uintptr_t)a->pCommandBuffers[i];
			if (primary && cb)
				tmap_set(&r->cbs, cb, TAG_CBSTATE, CB_IDLE);
			else if (cb)
				tmap_del(&r->cbs, cb, TAG_CBSTATE, NULL);
		}
		return;
	}
	case LK_FREE_CBS: {
		vk_args_vkFreeCommandBuffers *a = args;
		for (uint32_t i = 0; a->pCommandBuffers && i < a->commandBufferCount; i++)
			tmap_del(&r->cbs, (uint64_t)(uintptr_t)a->pCommandBuffers[i], TAG_CBSTATE, NULL);
		return;
	}
	case LK_BEGIN_CB:
		tmap_del(&r->cbs, vkr_handle_at(args, &cmd->params[0]), TAG_IBUF, NULL);
		if ((s = state_of(r, vkr_handle_at(args, &cmd->params[0]))) && !vkr_failed(capres))
			*s = CB_OUTSIDE;
		return;
	case LK_END_CB: {
		uint64_t cb = vkr_handle_at(args, &cmd->params[0]);
		if (!(s = state_of(r, cb)))
			return;
		if ((*s & CB_WHERE) == CB_INSIDE)
			vkr_fatal(r, "commandBuffer: VkCommandBuffer 0x%llx: ended inside a render pass "
				  "(its vkCmdEndRenderPass cut out?)", (unsigned long long)cb);
		*s = CB_IDLE;
		return;
	}
	case LK_RESET_CB:
		if ((s = state_of(r, vkr_handle_at(args, &cmd->params[0]))))
			*s = CB_IDLE;
		return;
	default:
		break;
	}
	switch ((enum cb_kind)e->cb) {
	case CK_CREATE_LAYOUT:
		layout_within_limits(r, args, capres);
		return;
	case CK_CREATE_QPOOL: {
		vk_args_vkCreateQueryPool *a = args;
		if (a->pCreateInfo && a->pQueryPool && *a->pQueryPool && !vkr_failed(capres))
			tmap_set(&r->cbs, (uint64_t)(uintptr_t)*a->pQueryPool, TAG_QPOOL,
				 a->pCreateInfo->queryCount);
		return;
	}
	case CK_DESTROY_QPOOL:
		tmap_del(&r->cbs, vkr_handle_at(args, &cmd->params[1]), TAG_QPOOL, NULL);
		return;
	default:
		return;
	}
}
