/*
 * events: the state of each VkEvent as the range begins.  A
 * vkCmdSetEvent or vkCmdResetEvent (or its 2 form) changes an event when
 * a submit runs the recording that holds it, in the recording's order,
 * a secondary's commands where vkCmdExecuteCommands runs them;
 * vkSetEvent and vkResetEvent change it at once.  The setup runs none of
 * those but in a submit it runs again for its writes, so an event set
 * before the range was unset in the cut, and a vkCmdWaitEvents of the
 * range waited for ever (Chromium's ANGLE sets an event in one frame and
 * waits for it in the next).  setup.c (put_events) sets or resets each
 * such event again as the range found it, the way the capture last did.
 */
#include "trim_internal.h"

static void ev_add(recording *rc, const evop *op)
{
	if (!op->ev)
		return;
	rc->evs = array_grow(rc->evs, rc->nevs, &rc->capevs, sizeof(*rc->evs), 4);
	rc->evs[rc->nevs++] = *op;
}

/* The stages and accesses of dependency info D, all its barriers'
 * together, into OP. */
static void dependency_masks(evop *op, const VkDependencyInfo *d)
{
	for (uint32_t i = 0; d && i < d->memoryBarrierCount; i++) {
		const VkMemoryBarrier2 *b = &d->pMemoryBarriers[i];
		op->stage |= b->srcStageMask, op->dst_stage |= b->dstStageMask;
		op->src_access |= b->srcAccessMask, op->dst_access |= b->dstAccessMask;
	}
	for (uint32_t i = 0; d && i < d->bufferMemoryBarrierCount; i++) {
		const VkBufferMemoryBarrier2 *b = &d->pBufferMemoryBarriers[i];
		op->stage |= b->srcStageMask, op->dst_stage |= b->dstStageMask;
		op->src_access |= b->srcAccessMask, op->dst_access |= b->dstAccessMask;
	}
	for (uint32_t i = 0; d && i < d->imageMemoryBarrierCount; i++) {
		const VkImageMemoryBarrier2 *b = &d->pImageMemoryBarriers[i];
		op->stage |= b->srcStageMask, op->dst_stage |= b->dstStageMask;
		op->src_access |= b->srcAccessMask, op->dst_access |= b->dstAccessMask;
	}
}

/* Command CMD (ARGS) recorded into RC: what it does to events, noted for
 * the submits that run RC. */
void event_record(trim *t, recording *rc, const vk_command_info *cmd, const void *args)
{
	/* each names an event or a command buffer besides its own: a draw
	 * or a state command (most of a recording) is none of them */
	if (cmd->nwalk_in <= 1)
		return;
	const char *n = cmd->sig.name;
	const vk_handle_info *he = trim_types.event;
	evop op = {.cmd = cmd};
	if (!strcmp(n, "vkCmdSetEvent") || !strcmp(n, "vkCmdResetEvent")) {
		/* the same arguments: the command buffer, the event, the stages */
		const vk_args_vkCmdSetEvent *a = args;
		op.ev = obj_lookup(t, he, (uint64_t)a->event);
		op.set = n[5] == 'S';
		op.stage = a->stageMask;
		ev_add(rc, &op);
	} else if (trim_named(n, "vkCmdSetEvent2")) {
		const vk_args_vkCmdSetEvent2 *a = args;
		op.ev = obj_lookup(t, he, (uint64_t)a->event);
		op.set = true;
		dependency_masks(&op, a->pDependencyInfo);
		ev_add(rc, &op);
	} else if (trim_named(n, "vkCmdResetEvent2")) {
		const vk_args_vkCmdResetEvent2 *a = args;
		op.ev = obj_lookup(t, he, (uint64_t)a->event);
		op.stage = a->stageMask;
		ev_add(rc, &op);
	} else if (!strcmp(n, "vkCmdWaitEvents") || trim_named(n, "vkCmdWaitEvents2")) {
		/* the same first arguments: the command buffer, the count, the events */
		const vk_args_vkCmdWaitEvents *a = args;
		op.wait = true;
		for (uint32_t i = 0; i < a->eventCount && a->pEvents; i++) {
			op.ev = obj_lookup(t, he, (uint64_t)a->pEvents[i]);
			ev_add(rc, &op);
		}
	} else if (!strcmp(n, "vkCmdExecuteCommands")) {
		const vk_args_vkCmdExecuteCommands *a = args;
		for (uint32_t i = 0; i < a->commandBufferCount && a->pCommandBuffers; i++) {
			obj *cb = obj_lookup(t, trim_types.command_buffer,
					     (uint64_t)(uintptr_t)a->pCommandBuffers[i]);
			const recording *sec = cb ? cb->cur : NULL;
			for (uint32_t k = 0; sec && sec != rc && k < sec->nevs; k++)
				ev_add(rc, &sec->evs[k]);
		}
	}
}

/* Submit S ran its recordings: their events as they left them; the
 * events they wait for that were set before S and that they do not set
 * first, as they were then (a setup that runs S again sets them first:
 * ANGLE's frame waits for an event its previous frame set). */
void event_submit(submit *s)
{
	uint32_t cap = 0;
	for (uint32_t i = 0; i < s->recordings.n; i++) {
		const recording *rc = s->recordings.v[i];
		for (uint32_t k = 0; k < rc->nevs; k++) {
			obj *e = rc->evs[k].ev;
			if (rc->evs[k].wait) {
				bool here = e->ev_submit == s->r->no;
				for (uint32_t m = 0; !here && m < s->nevwaits; m++)
					here = s->evwaits[m].ev == e;
				if (!here && e->ev_changed && e->ev_last.set) {
					s->evwaits = array_grow(s->evwaits, s->nevwaits, &cap,
								sizeof(*s->evwaits), 2);
					s->evwaits[s->nevwaits] = e->ev_last;
					s->evwaits[s->nevwaits++].ev = e;
				}
				continue;
			}
			e->ev_submit = s->r->no;
			e->ev_changed = true;
			e->ev_last = rc->evs[k];
			e->signal_queue = s->queue ? s->queue->handle : 0;
		}
	}
}

/* vkSetEvent or vkResetEvent (ARGS). */
void event_host(trim *t, const vk_command_info *cmd, const void *args)
{
	const vk_args_vkSetEvent *a = args;  /* either: the device, the event */
	obj *e = obj_lookup(t, trim_types.event, (uint64_t)a->event);
	if (!e)
		return;
	e->ev_changed = true;
	e->ev_last = (evop){.ev = e, .set = trim_named(cmd->sig.name, "vkSetEvent")};
	e->signal_queue = 0;
}
