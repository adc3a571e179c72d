/*
 * Command buffers: whether one is recording, and inside a render pass
 * instance, as far as a record could break it.  A vkCmd* the registry
 * lets be recorded only inside a render pass instance (a draw,
 * vkCmdEndRenderPass) or only outside one (a copy, a dispatch,
 * vkCmdBeginRenderPass), recorded where it may not be, a command into a
 * command buffer that is not recording, or a recording ended inside a
 * render pass, stops the replay naming the command buffer: llvmpipe
 * crashed at a vkCmdEndRenderPass whose begin was cut out.  Primary
 * command buffers only: a secondary one may continue a render pass its
 * vkBeginCommandBuffer names, and is not followed.
 */
#include "replay_internal.h"

enum { CB_IDLE = 1, CB_OUTSIDE, CB_INSIDE };

static uint64_t *state_of(vkr *r, uint64_t cb)
{
	return cb ? tmap_at(&r->cbs, cb, TAG_CBSTATE) : NULL;
}

/* A vkCmd* of E into CB in state *S. */
static void cmd_recorded(vkr *r, const cmd_entry *e, uint64_t cb, uint64_t *s)
{
	const char *n = e->cmd->sig.name;
	uint8_t where = e->cmd->renderpass;
	if (*s == CB_IDLE)
		vkr_fatal(r, "commandBuffer: VkCommandBuffer 0x%llx is not recording (its "
			  "vkBeginCommandBuffer cut out?)", (unsigned long long)cb);
	if (where == VK_RENDERPASS_INSIDE && *s != CB_INSIDE)
		vkr_fatal(r, "commandBuffer: VkCommandBuffer 0x%llx: %s is recorded inside a render "
			  "pass only, and none is begun (its vkCmdBeginRenderPass cut out?)",
			  (unsigned long long)cb, n);
	if (where == VK_RENDERPASS_OUTSIDE && *s == CB_INSIDE)
		vkr_fatal(r, "commandBuffer: VkCommandBuffer 0x%llx: %s is recorded outside a render "
			  "pass only, and one is begun (its vkCmdEndRenderPass cut out?)",
			  (unsigned long long)cb, n);
	if (!strncmp(n, "vkCmdBeginRender", 16))
		*s = CB_INSIDE;
	else if (!strncmp(n, "vkCmdEndRender", 14))
		*s = CB_OUTSIDE;
}

void vkr_cmdbuf_note(vkr *r, const cmd_entry *e, void *args, VkResult capres)
{
	const vk_command_info *cmd = e->cmd;
	uint64_t *s;
	switch ((enum loop_kind)e->loop) {
	case LK_RECORD:
		if ((s = state_of(r, vkr_handle_at(args, &cmd->params[0]))))
			cmd_recorded(r, e, vkr_handle_at(args, &cmd->params[0]), s);
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
		if (*s == CB_INSIDE)
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
