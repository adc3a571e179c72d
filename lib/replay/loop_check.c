/*
 * --loop, before the range: loop_check() reads the range as a pass would
 * replay it and refuses what a second pass could not replay (loop.c
 * holds the passes).
 */
#include "replay_internal.h"

/* A timeline semaphore made before the range: the values the range uses. */
typedef struct tl_use {
	uint64_t sem, base;          /* its value as the range began */
	uint64_t lo, hi;             /* of the values shifted */
	uint64_t max_signal, max_wait, wait_call;
} tl_use;

typedef struct check {
	vkr *r;
	tl_use *tl;
	size_t ntl, captl;
	tmap tl_index;   /* (semaphore, TAG_SHIFT) -> its index in tl + 1 */
	tmap resets;     /* (descriptor pool made before the range, TAG_RESET) -> the index
			  * of the first kept record resetting it */
	tmap new_sets;   /* check_resets: (set, its type) allocated in the range so far */
	size_t at;
} check;

/* What the range does to command buffer CB, where CB was begun before it. */
static void touch(vkr *r, uint64_t cb, uint8_t how)
{
	loop_state *l = r->loop;
	cblog *g = vkr_cblog_of(l, cb);
	if (!g || vkr_born_has(l, cb, l->h_cb))
		return;
	if (!g->first)
		g->first = how;
	if (how != T_SUBMIT || g->one_time)
		g->changed = true;
}

static void touch_pool(vkr *r, uint64_t pool)
{
	loop_state *l = r->loop;
	for (size_t i = 0; i < l->logs.cap; i++)
		if (tmap_used(&l->logs, i) && ((cblog *)(uintptr_t)l->logs.vals[i])->pool == pool)
			touch(r, l->logs.keys[i], T_RESET);
}

/* vk_sync_walk: the timeline values a call waits for or signals. */
static void timeline_use(void *ctx, const vk_sync_use *su)
{
	check *k = ctx;
	if (su->fence || !su->value)
		return;
	uint64_t sem = su->handle, value = *su->value;
	bool wait = su->op == VK_SYNC_WAIT;
	loop_state *l = k->r->loop;
	uint64_t *s = sem ? tmap_at(&l->start, sem, TAG_TIMELINE) : NULL;
	if (!s || vkr_born_has(l, sem, k->r->h_semaphore) || (wait && value <= *s))
		return;
	uint64_t *x = tmap_at(&k->tl_index, sem, TAG_SHIFT);
	tl_use *u;
	if (x) {
		u = &k->tl[*x - 1];
	} else {
		if (k->ntl == k->captl) {
			k->captl = k->captl ? k->captl * 2 : 16;
			k->tl = trace_xrealloc(k->tl, k->captl * sizeof(*k->tl));
		}
		u = &k->tl[k->ntl++];
		*u = (tl_use){.sem = sem, .base = *s, .lo = value, .hi = value};
		tmap_set(&k->tl_index, sem, TAG_SHIFT, k->ntl);
	}
	if (value < u->lo)
		u->lo = value;
	if (value > u->hi)
		u->hi = value;
	if (!wait && value > u->max_signal)
		u->max_signal = value;
	if (wait && value > u->max_wait) {
		u->max_wait = value;
		u->wait_call = k->r->call->no;
	}
}

/* A record's command buffers and timeline values, before life_step. */
static void check_call(check *k, const cmd_entry *e, void *args)
{
	vkr *r = k->r;
	loop_state *l = r->loop;
	const vk_command_info *cmd = e->cmd;
	VkResult capres = vkr_cap_result(r->call);
	switch ((enum loop_kind)e->loop) {
	case LK_RESET_CPOOL:
	case LK_DESTROY_CPOOL:
		touch_pool(r, vkr_handle_at(args, &cmd->params[1]));
		return;
	case LK_FREE_CBS: {
		vk_args_vkFreeCommandBuffers *a = args;
		for (uint32_t i = 0; a->pCommandBuffers && i < a->commandBufferCount; i++)
			touch(r, (uint64_t)(uintptr_t)a->pCommandBuffers[i], T_RESET);
		return;
	}
	case LK_RESET_DPOOL: {
		uint64_t pool = vkr_handle_at(args, &cmd->params[1]);
		if (!vkr_born_has(l, pool, l->h_dpool) && !tmap_at(&k->resets, pool, TAG_RESET))
			tmap_set(&k->resets, pool, TAG_RESET, k->at);
		return;
	}
	default:
		break;
	}
	switch ((enum special)e->special) {
	case SP_SUBMIT: {
		vk_args_vkQueueSubmit *a = args;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo *si = &a->pSubmits[i];
			for (uint32_t j = 0; si->pCommandBuffers && j < si->commandBufferCount; j++)
				touch(r, (uint64_t)(uintptr_t)si->pCommandBuffers[j], T_SUBMIT);
		}
		break;
	}
	case SP_SUBMIT2: {
		vk_args_vkQueueSubmit2 *a = args;
		for (uint32_t i = 0; a->pSubmits && i < a->submitCount; i++) {
			const VkSubmitInfo2 *si = &a->pSubmits[i];
			for (uint32_t j = 0; si->pCommandBufferInfos && j < si->commandBufferInfoCount; j++)
				touch(r, (uint64_t)(uintptr_t)si->pCommandBufferInfos[j].commandBuffer, T_SUBMIT);
		}
		break;
	}
	default:
		break;
	}
	vk_sync_walk(e->sync, args, capres, timeline_use, k);
}

/* What the pass leaves alive must be ended between passes. */
static void check_leftovers(vkr *r)
{
	loop_state *l = r->loop;
	for (size_t i = 0; i < l->born.cap; i++) {
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)l->born.kinds[i];
		uint64_t cap = l->born.keys[i], pool = l->born.vals[i] - 1;
		if (!h || h == l->h_cb || h == r->h_memory || h == r->h_swapchain || h == r->h_surface ||
		    h == l->h_messenger || h == l->h_report || h == r->h_device || h == r->h_instance)
			continue;
		if (h == l->h_set) {
			if (!vkr_born_has(l, pool, l->h_dpool))
				vkr_need_free_bit(r, pool, cap);
			continue;
		}
		if (!vkr_destroyer(r, h))
			vkr_loop_refuse(r, "make objects they do not end, which the replay cannot end "
					"between passes", "a range that ends them", "%s 0x%llx", h->name,
					(unsigned long long)cap);
	}
}

static void set_used(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		     const vk_field *f)
{
	(void)top;
	(void)f;
	check *k = ctx;
	vkr *r = k->r;
	loop_state *l = r->loop;
	if (h != l->h_set || !*value || tmap_at(&k->new_sets, *value, (uintptr_t)h))
		return;
	uint64_t *s = tmap_at(&l->sets, *value, (uintptr_t)h);
	uint64_t *x = s ? tmap_at(&k->resets, *s, TAG_RESET) : NULL;
	if (x && k->at < *x)
		vkr_loop_refuse(r, "reset a descriptor pool made before them, freeing descriptor sets "
				"they use", "a range that uses no descriptor set made before it from a "
			    "pool it resets", "VkDescriptorPool 0x%llx at call %llu, VkDescriptorSet "
			    "0x%llx at call %llu", (unsigned long long)*s,
			    (unsigned long long)r->kept[*x].call.no, (unsigned long long)*value,
			    (unsigned long long)r->call->no);
}

/* A range that resets a descriptor pool made before it: the sets of that
 * pool made before the range are gone for the next pass, so it must not
 * use them (before the reset; after it, it could not at capture). */
static void check_resets(check *k)
{
	vkr *r = k->r;
	loop_state *l = r->loop;
	for (k->at = 0; k->at < r->nkept; k->at++) {
		const trace_call *c = &r->kept[k->at].call;
		cmd_entry *e = strncmp(c->sig->name, "tracekit.", 9) ? vkr_entry_of(r, c) : NULL;
		if (!e || e->special == SP_SKIP)
			continue;
		r->call = c;
		void *args = trace_arena_alloc(&r->arena, e->cmd->args_size);
		trace_error_clear(&r->err);
		if (vk_decode_args(e->cmd, c, &r->arena, args, &r->err) < 0)
			vkr_fatal(r, "malformed record: %s", r->err.msg);
		vk_walk_handles(e->cmd, args, false, set_used, k);
		if (e->loop == LK_ALLOC_SETS) {
			born_ctx b = {&k->new_sets, l->h_set, 0};
			vk_walk_handles(e->cmd, args, true, vkr_born_note, &b);
		}
		trace_arena_reset(&r->arena);
	}
	r->call = NULL;
}

/* D for each timeline semaphore made before the range: more than the
 * spread of the values the range uses, so that every pass's are above
 * the last's. */
static void check_timelines(check *k)
{
	vkr *r = k->r;
	loop_state *l = r->loop;
	uint64_t more = r->opt->loop - 1;
	for (size_t i = 0; i < k->ntl; i++) {
		tl_use *u = &k->tl[i];
		uint64_t top = u->max_signal > u->base ? u->max_signal : u->base;
		if (u->max_wait > top)
			vkr_loop_refuse(r, "wait for timeline semaphore values that only records after "
					"them signal", "a range that signals the values it waits for",
					"VkSemaphore 0x%llx, value %llu at call %llu",
					(unsigned long long)u->sem, (unsigned long long)u->max_wait,
					(unsigned long long)u->wait_call);
		uint64_t d = u->hi - u->lo + 1;
		if (!d || d > (UINT64_MAX - u->hi) / more)
			vkr_loop_refuse(r, "use timeline semaphore values too high to go up with each "
					"pass", "a range with lower values", "VkSemaphore 0x%llx, value %llu",
					(unsigned long long)u->sem, (unsigned long long)u->hi);
		tmap_set(&l->shift, u->sem, TAG_SHIFT, d);
		tmap_set(&l->shift, u->sem, TAG_BASE, u->base);
	}
}

/*
 * Reads the range as a pass would replay it: exit 1, with a message,
 * where a pass cannot begin as the range began (what cannot be parked,
 * ended between passes or put back); else the timeline shifts and the
 * command pools to record again between passes.
 */
void vkr_loop_check(vkr *r)
{
	loop_state *l = r->loop;
	check k = {.r = r};
	tmap_copy(&l->start, &l->sync);
	for (k.at = 0; k.at < r->nkept; k.at++) {
		const trace_call *c = &r->kept[k.at].call;
		r->call = c;
		if (!strncmp(c->sig->name, "tracekit.", 9))
			continue;
		cmd_entry *e = vkr_entry_of(r, c);
		if (!e)
			vkr_fatal(r, "unknown function");
		/* most records: the command buffer is their first argument */
		if (e->loop == LK_RECORD || e->loop == LK_END_CB) {
			touch(r, vkr_first_handle(c), T_CONTENT);
			continue;
		}
		if (e->loop == LK_BEGIN_CB || e->loop == LK_RESET_CB) {
			touch(r, vkr_first_handle(c), T_RESET);
			continue;
		}
		uint8_t action = e->cmd->action, sp = e->special;
		if (sp == SP_SKIP || (action != VK_ACTION_CREATE && action != VK_ACTION_ALLOCATE &&
				      action != VK_ACTION_DESTROY && action != VK_ACTION_FREE &&
				      !e->loop && !e->sync))
			continue;
		void *args = trace_arena_alloc(&r->arena, e->cmd->args_size);
		trace_error_clear(&r->err);
		if (vk_decode_args(e->cmd, c, &r->arena, args, &r->err) < 0)
			vkr_fatal(r, "malformed record: %s", r->err.msg);
		check_call(&k, e, args);
		vkr_life_step(r, LIFE_CHECK, e, args);
		trace_arena_reset(&r->arena);
	}
	r->call = NULL;
	check_leftovers(r);
	if (k.resets.n)
		check_resets(&k);
	check_timelines(&k);
	for (size_t i = 0; i < l->logs.cap; i++) {
		cblog *g = tmap_used(&l->logs, i) ? (cblog *)(uintptr_t)l->logs.vals[i] : NULL;
		if (g && (g->first == T_CONTENT || g->first == T_SUBMIT) && g->changed)
			tmap_set(&l->restore, g->pool, TAG_RESTORE, 1);
	}
	tmap_free(&l->born);
	free(k.tl);
	tmap_free(&k.tl_index);
	tmap_free(&k.resets);
	tmap_free(&k.new_sets);
}
