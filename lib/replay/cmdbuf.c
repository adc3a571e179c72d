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

/* What command N needs bound (CB_* bits), and what its absence is called. */
static uint64_t needs(const char *n, const char **what, const char **bind)
{
	if (!strncmp(n, "vkCmdDispatch", 13)) {
		*what = "compute pipeline";
		*bind = "vkCmdBindPipeline";
		return CB_COMPUTE;
	}
	if (strncmp(n, "vkCmdDraw", 9))
		return 0;
	if (!strncmp(n, "vkCmdDrawIndexed", 16) || !strncmp(n, "vkCmdDrawMultiIndexed", 21)) {
		*what = "index buffer";
		*bind = "vkCmdBindIndexBuffer";
		return CB_GRAPHICS | CB_INDEX;
	}
	*what = "graphics pipeline";
	*bind = "vkCmdBindPipeline";
	return CB_GRAPHICS;
}

/* What vkCmdBind* of E (ARGS) binds. */
static uint64_t binds(const char *n, void *args)
{
	if (!strcmp(n, "vkCmdBindPipeline")) {
		VkPipelineBindPoint p = ((vk_args_vkCmdBindPipeline *)args)->pipelineBindPoint;
		return p == VK_PIPELINE_BIND_POINT_GRAPHICS ? CB_GRAPHICS
			: p == VK_PIPELINE_BIND_POINT_COMPUTE ? CB_COMPUTE : 0;
	}
	if (!strcmp(n, "vkCmdBindShadersEXT"))
		return CB_GRAPHICS | CB_COMPUTE;
	if (!strncmp(n, "vkCmdBindIndexBuffer", 20))
		return CB_INDEX;
	if (!strcmp(n, "vkCmdExecuteCommands"))
		return CB_UNKNOWN;
	return 0;
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
	uint64_t need = needs(n, &what, &bind);
	if (need && !(*s & CB_UNKNOWN) && (*s & need) != need)
		vkr_fatal(r, "commandBuffer: VkCommandBuffer 0x%llx: %s with no %s bound since "
			  "vkBeginCommandBuffer (its %s cut out or moved?)", (unsigned long long)cb,
			  n, what, bind);
	*s |= binds(n, args);
	if (!strncmp(n, "vkCmdBeginRender", 16))
		*s = (*s & ~(uint64_t)CB_WHERE) | CB_INSIDE;
	else if (!strncmp(n, "vkCmdEndRender", 14))
		*s = (*s & ~(uint64_t)CB_WHERE) | CB_OUTSIDE;
}

void vkr_cmdbuf_note(vkr *r, const cmd_entry *e, void *args, VkResult capres)
{
	const vk_command_info *cmd = e->cmd;
	uint64_t *s;
	switch ((enum loop_kind)e->loop) {
	case LK_RECORD:
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
		return;
	}
}
