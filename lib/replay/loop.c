/*
 * --loop: the range's records kept, checked, and replayed N times.
 *
 * Every pass must find what the range found.  In every pass but the
 * last, what the range ends of the objects made before it is parked
 * (taken out of the map, not ended, put back when the pass is over);
 * once the pass is over and the device idle, what it made and left
 * alive is ended, fences and binary semaphores made before the range are
 * put back in the state the range found them in, and command buffers
 * begun before the range that it records into or changes are reset and
 * recorded again from the records before the range (kept, while those
 * replay, for that).  Timeline values only go up: in pass k those of
 * the semaphores made before the range go up by k * D.  What cannot be
 * made so, vkr_loop_check() (loop_check.c) refuses before the range.
 */
#include "replay_internal.h"

void vkr_keep(vkr *r, const trace_call *c, int64_t frame, bool ends)
{
	if (r->nkept == r->capkept) {
		r->capkept = r->capkept ? r->capkept * 2 : 1024;
		r->kept = trace_xrealloc(r->kept, r->capkept * sizeof(*r->kept));
	}
	kept *k = &r->kept[r->nkept++];
	trace_call_init(&k->call);
	trace_call_copy(&k->call, c);
	k->frame = frame;
	k->ends_frame = ends;
}

/* Exit 1 before the range, naming what a second pass could not replay. */
noreturn void vkr_loop_refuse(vkr *r, const char *why, const char *need, const char *fmt, ...)
{
	const vkr_options *o = r->opt;
	char range[64], what[256];
	if (o->last_frame >= 0)
		snprintf(range, sizeof(range), "frames %lld-%lld", (long long)o->first_frame,
			 (long long)o->last_frame);
	else
		snprintf(range, sizeof(range), "frames %lld to the end", (long long)o->first_frame);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	trace_cli_progress_done();
	fprintf(stderr, "%s: %s: --loop %u: %s %s (%s): a second pass cannot replay them; "
		"--loop wants %s\n", trace_cli_self.prog, o->input, o->loop, range, why, what, need);
	vkr_exit_failed(r);
}

uint64_t vkr_handle_at(const void *args, const vk_field *f)
{
	uint64_t v;
	memcpy(&v, (const uint8_t *)args + f->offset, 8);
	return v;
}

/* A record's first argument, where it is a handle (a command buffer). */
uint64_t vkr_first_handle(const trace_call *c)
{
	return c->sig->nargs && c->args[0].kind == TRACE_POINTER ? c->args[0].u : 0;
}

/* The handles a vkDestroy* or vkFree* ends, where ARGS has them: *N at
 * the pointer returned; *COUNT the parameter that counts an array (as
 * call_generic reads it), else NULL. */
static uint64_t *ended_handles(const vk_command_info *cmd, void *args, uint32_t *n,
			       uint32_t **count)
{
	*n = 0;
	*count = NULL;
	for (uint32_t i = 0; i < cmd->nparams; i++) {
		const vk_field *f = &cmd->params[i];
		if (f->base != VK_B_HANDLE || f->ref != cmd->object || (f->flags & VK_F_OUT))
			continue;
		uint8_t *fp = (uint8_t *)args + f->offset;
		if (!f->ptr) {
			*n = 1;
			return (uint64_t *)fp;
		}
		uint64_t *arr;
		memcpy(&arr, fp, sizeof(arr));
		if (arr && i > 0 && cmd->params[i - 1].base == VK_B_UINT && !cmd->params[i - 1].ptr) {
			*count = (uint32_t *)((uint8_t *)args + cmd->params[i - 1].offset);
			*n = **count;
		}
		return arr;
	}
	return NULL;
}

/* ---- command buffers' recordings before the range ---- */

static void cblog_clear(cblog *g)
{
	for (size_t i = 0; i < g->n; i++)
		trace_call_free(&g->calls[i]);
	g->n = 0;
}

static void cblog_free(cblog *g)
{
	cblog_clear(g);
	free(g->calls);
	free(g);
}

static void cblog_add(cblog *g, const trace_call *c)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->calls = trace_xrealloc(g->calls, g->cap * sizeof(*g->calls));
	}
	trace_call_init(&g->calls[g->n]);
	trace_call_copy(&g->calls[g->n++], c);
}

cblog *vkr_cblog_of(loop_state *l, uint64_t cb)
{
	uint64_t *h = cb ? tmap_at(&l->logs, cb, TAG_CBLOG) : NULL;
	return h ? (cblog *)(uintptr_t)*h : NULL;
}

/* POOL's command buffers: their recordings cleared (a reset), or
 * dropped (the pool ended). */
static void cblog_pool(loop_state *l, uint64_t pool, bool drop)
{
	for (size_t i = 0; i < l->logs.cap; i++) {
		cblog *g = tmap_used(&l->logs, i) ? (cblog *)(uintptr_t)l->logs.vals[i] : NULL;
		if (!g || g->pool != pool)
			continue;
		if (!drop) {
			cblog_clear(g);
			continue;
		}
		cblog_free(g);
		tmap_del(&l->logs, l->logs.keys[i], l->logs.kinds[i], NULL);
		i--;  /* the slot now holds what moved back into it */
	}
}

/* POOL's descriptor sets, forgotten (the pool reset or ended). */
static void sets_drop(loop_state *l, uint64_t pool)
{
	for (size_t i = 0; i < l->sets.cap; i++) {
		if (tmap_used(&l->sets, i) && l->sets.vals[i] == pool) {
			tmap_del(&l->sets, l->sets.keys[i], l->sets.kinds[i], NULL);
			i--;
		}
	}
}

/* A record before the range: each command buffer's recording (to record
 * it again between passes), each descriptor set's pool, each descriptor
 * pool's flags. */
static void loop_before(vkr *r, const cmd_entry *e, void *args)
{
	loop_state *l = r->loop;
	const vk_command_info *cmd = e->cmd;
	cblog *g;
	switch ((enum loop_kind)e->loop) {
	case LK_ALLOC_CBS: {
		vk_args_vkAllocateCommandBuffers *a = args;
		if (!a->pAllocateInfo || !a->pCommandBuffers || vkr_failed(vkr_cap_result(r->call)))
			return;
		for (uint32_t i = 0; i < a->pAllocateInfo->commandBufferCount; i++) {
			uint64_t cb = (uint64_t)(uintptr_t)a->pCommandBuffers[i], old;
			if (tmap_del(&l->logs, cb, TAG_CBLOG, &old))
				cblog_free((cblog *)(uintptr_t)old);
			g = trace_xcalloc(1, sizeof(*g));
			g->pool = (uint64_t)(uintptr_t)a->pAllocateInfo->commandPool;
			tmap_set(&l->logs, cb, TAG_CBLOG, (uint64_t)(uintptr_t)g);
		}
		return;
	}
	case LK_BEGIN_CB: {
		vk_args_vkBeginCommandBuffer *a = args;
		if (!(g = vkr_cblog_of(l, (uint64_t)(uintptr_t)a->commandBuffer)))
			return;
		cblog_clear(g);
		g->one_time = a->pBeginInfo &&
			(a->pBeginInfo->flags & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
		cblog_add(g, r->call);
		return;
	}
	case LK_RECORD:
	case LK_END_CB:
		if ((g = vkr_cblog_of(l, vkr_handle_at(args, &cmd->params[0]))) && g->n)
			cblog_add(g, r->call);
		return;
	case LK_RESET_CB:
		if ((g = vkr_cblog_of(l, vkr_handle_at(args, &cmd->params[0]))))
			cblog_clear(g);
		return;
	case LK_RESET_CPOOL:
	case LK_DESTROY_CPOOL:
		cblog_pool(l, vkr_handle_at(args, &cmd->params[1]), e->loop == LK_DESTROY_CPOOL);
		return;
	case LK_FREE_CBS: {
		vk_args_vkFreeCommandBuffers *a = args;
		for (uint32_t i = 0; a->pCommandBuffers && i < a->commandBufferCount; i++) {
			uint64_t old;
			if (tmap_del(&l->logs, (uint64_t)(uintptr_t)a->pCommandBuffers[i], TAG_CBLOG, &old))
				cblog_free((cblog *)(uintptr_t)old);
		}
		return;
	}
	case LK_CREATE_DPOOL: {
		vk_args_vkCreateDescriptorPool *a = args;
		if (a->pCreateInfo && a->pDescriptorPool && *a->pDescriptorPool)
			tmap_set(&l->dpools, (uint64_t)(uintptr_t)*a->pDescriptorPool, TAG_DPOOL,
			     a->pCreateInfo->flags);
		return;
	}
	case LK_ALLOC_SETS: {
		vk_args_vkAllocateDescriptorSets *a = args;
		if (!a->pAllocateInfo || !a->pDescriptorSets || vkr_failed(vkr_cap_result(r->call)))
			return;
		for (uint32_t i = 0; i < a->pAllocateInfo->descriptorSetCount; i++)
			tmap_set(&l->sets, (uint64_t)(uintptr_t)a->pDescriptorSets[i], (uintptr_t)l->h_set,
			     (uint64_t)(uintptr_t)a->pAllocateInfo->descriptorPool);
		return;
	}
	case LK_FREE_SETS: {
		vk_args_vkFreeDescriptorSets *a = args;
		for (uint32_t i = 0; a->pDescriptorSets && i < a->descriptorSetCount; i++)
			tmap_del(&l->sets, (uint64_t)(uintptr_t)a->pDescriptorSets[i], (uintptr_t)l->h_set,
			     NULL);
		return;
	}
	case LK_RESET_DPOOL:
	case LK_DESTROY_DPOOL:
		sets_drop(l, vkr_handle_at(args, &cmd->params[1]));
		if (e->loop == LK_DESTROY_DPOOL)
			tmap_del(&l->dpools, vkr_handle_at(args, &cmd->params[1]), TAG_DPOOL, NULL);
		return;
	default:
		return;
	}
}

/* ---- fences and semaphores, by capture value ---- */

static void sync_set(loop_state *l, uint64_t cap, uintptr_t kind, uint64_t v)
{
	uint64_t *h = cap ? tmap_at(&l->sync, cap, kind) : NULL;
	if (h)
		*h = v;
}

/* A semaphore a batch waits on or signals: a binary one changes state, a
 * timeline one keeps its highest value. */
static void sync_semaphore(loop_state *l, uint64_t cap, bool signal, uint64_t value)
{
	uint64_t *t = cap ? tmap_at(&l->sync, cap, TAG_TIMELINE) : NULL;
	if (t && signal && value > *t)
		*t = value;
	sync_set(l, cap, TAG_BINARY, signal);
}

/* vk_sync_walk: a fence signalled or reset, a semaphore waited on or
 * signalled. */
static void sync_use(void *ctx, const vk_sync_use *u)
{
	loop_state *l = ctx;
	if (!u->fence)
		sync_semaphore(l, u->handle, u->op == VK_SYNC_SIGNAL,
			       u->op == VK_SYNC_SIGNAL && u->value ? *u->value : 0);
	else if (u->op != VK_SYNC_WAIT)
		sync_set(l, u->handle, TAG_FENCE, u->op == VK_SYNC_SIGNAL);
}

/* What a call (its arguments still capture values) does to fences and
 * semaphores. */
static void sync_note(vkr *r, const cmd_entry *e, void *args)
{
	loop_state *l = r->loop;
	VkResult capres = vkr_cap_result(r->call);
	vk_sync_walk(e->sync, args, capres, sync_use, l);
	switch ((enum loop_kind)e->loop) {
	case LK_CREATE_SEMAPHORE: {
		vk_args_vkCreateSemaphore *a = args;
		if (!a->pSemaphore || !*a->pSemaphore || vkr_failed(capres))
			return;
		const VkSemaphoreTypeCreateInfo *t = NULL;
		for (const base_out *b = a->pCreateInfo ? a->pCreateInfo->pNext : NULL; b; b = b->pNext)
			if (b->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO)
				t = (const VkSemaphoreTypeCreateInfo *)b;
		uint64_t cap = (uint64_t)(uintptr_t)*a->pSemaphore;
		if (t && t->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE)
			tmap_set(&l->sync, cap, TAG_TIMELINE, t->initialValue);
		else
			tmap_set(&l->sync, cap, TAG_BINARY, 0);
		return;
	}
	case LK_CREATE_FENCE: {
		vk_args_vkCreateFence *a = args;
		if (a->pFence && *a->pFence && a->pCreateInfo && !vkr_failed(capres))
			tmap_set(&l->sync, (uint64_t)(uintptr_t)*a->pFence, TAG_FENCE,
			     (a->pCreateInfo->flags & VK_FENCE_CREATE_SIGNALED_BIT) != 0);
		return;
	}
	case LK_DESTROY_SYNC: {
		uint64_t cap = vkr_handle_at(args, &e->cmd->params[1]);
		if (e->cmd->object == r->h_fence) {
			tmap_del(&l->sync, cap, TAG_FENCE, NULL);
		} else {
			tmap_del(&l->sync, cap, TAG_BINARY, NULL);
			tmap_del(&l->sync, cap, TAG_TIMELINE, NULL);
		}
		return;
	}
	default:
		return;
	}
}

/* VALUE of timeline semaphore SEM, in the pass in progress: made before
 * the range, k * D higher in pass k, but for a wait for a value it had
 * reached as the range began (reached in every pass). */
static uint64_t shifted(vkr *r, uint64_t sem, uint64_t value, bool wait)
{
	loop_state *l = r->loop;
	uint64_t *d = tmap_at(&l->shift, sem, TAG_SHIFT);
	if (!d || tmap_at(&l->born, sem, (uintptr_t)r->h_semaphore))
		return value;
	if (wait && value <= *tmap_at(&l->shift, sem, TAG_BASE))
		return value;
	return value + (uint64_t)l->pass * *d;
}

static void shift_use(void *ctx, const vk_sync_use *u)
{
	if (!u->fence && u->value)
		*u->value = shifted(ctx, u->handle, *u->value, u->op == VK_SYNC_WAIT);
}

/* The timeline values of a call, in capture values still, for pass k > 0
 * (the decoded arguments are this record's, in the arena: written over;
 * vkGetSemaphoreCounterValue replays as a wait for the value it read). */
static void shift_timelines(vkr *r, const cmd_entry *e, void *args)
{
	vk_sync_walk(e->sync, args, VK_SUCCESS, shift_use, r);
}

/* ---- what a pass makes and ends ---- */

void vkr_born_note(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		   const vk_field *f)
{
	(void)top;
	(void)f;
	born_ctx *b = ctx;
	if (h == b->want && *value)
		tmap_set(b->born, *value, (uintptr_t)h, b->pool + 1);
}

/* With two devices or more: the device that made CAP (of type H) is the
 * one the calls below make on it. */
static void owner_select(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	uint64_t *o = r->ndevs > 1 ? tmap_at(&r->owners, cap, (uintptr_t)h) : NULL;
	if (o)
		r->d = (vkr_device *)(uintptr_t)*o;
}

/* Frees command buffer or descriptor set CAP of POOL now, and forgets it. */
static void free_child(vkr *r, const vk_handle_info *h, uint64_t cap, uint64_t pool)
{
	loop_state *l = r->loop;
	uint64_t live, pool_live;
	bool cb = h == l->h_cb;
	owner_select(r, cb ? l->h_cpool : l->h_dpool, pool);
	if (vkr_map_get(r, h, cap, &live) && live &&
	    vkr_map_get(r, cb ? l->h_cpool : l->h_dpool, pool, &pool_live) && pool_live) {
		if (cb) {
			VkCommandBuffer c = (VkCommandBuffer)(uintptr_t)live;
			vkFreeCommandBuffers(r->d->vk.device, (VkCommandPool)(uintptr_t)pool_live, 1, &c);
		} else {
			VkDescriptorSet s = (VkDescriptorSet)(uintptr_t)live;
			vkFreeDescriptorSets(r->d->vk.device, (VkDescriptorPool)(uintptr_t)pool_live, 1, &s);
		}
	}
	vkr_map_del(r, h, cap);
}

/* A pass leaves descriptor sets in a pool made before the range (or
 * parks the pool with them in it): they are freed one by one, which the
 * pool must allow. */
void vkr_need_free_bit(vkr *r, uint64_t pool, uint64_t set)
{
	uint64_t *f = tmap_at(&r->loop->dpools, pool, TAG_DPOOL);
	if (!f || !(*f & VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT))
		vkr_loop_refuse(r, "allocate descriptor sets from a pool made before them and do not free them",
				"a range that frees them, or a pool made with "
			    "VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT",
			    "VkDescriptorSet 0x%llx of VkDescriptorPool 0x%llx", (unsigned long long)set,
			    (unsigned long long)pool);
}

/* POOL, a command or descriptor pool, ended or reset: its command buffers
 * or descriptor sets in born go.  Where a pass parks the pool instead
 * (POOL_PARKED), they are freed now. */
static void born_pool_ends(vkr *r, const vk_handle_info *pool_type, uint64_t pool,
			   enum life_mode mode, bool pool_parked)
{
	loop_state *l = r->loop;
	const vk_handle_info *h = pool_type == l->h_cpool ? l->h_cb : l->h_set;
	for (size_t i = 0; i < l->born.cap; i++) {
		if (l->born.kinds[i] != (uintptr_t)h || l->born.vals[i] != pool + 1)
			continue;
		uint64_t cap = l->born.keys[i];
		if (pool_parked && mode == LIFE_CHECK && h == l->h_set)
			vkr_need_free_bit(r, pool, cap);
		if (pool_parked && mode == LIFE_PARK)
			free_child(r, h, cap, pool);
		tmap_del(&l->born, cap, (uintptr_t)h, NULL);
		i--;  /* the slot now holds what moved back into it */
	}
}

/* Object CAP of type H, made in the pass, ended: what goes with it goes
 * too.  What the trace leaves alive goes with the device (device_teardown)
 * or the instance; surfaces and messengers outlive the device. */
static void born_ended(vkr *r, const vk_handle_info *h, uint64_t cap, enum life_mode mode)
{
	loop_state *l = r->loop;
	if (h == l->h_cpool || h == l->h_dpool) {
		born_pool_ends(r, h, cap, mode, false);
		return;
	}
	if (h != r->h_device && h != r->h_instance)
		return;
	/* a device's: with two devices or more, those it made (before its
	 * teardown forgets whose they were) */
	const vkr_device *d = h == r->h_device && r->ndevs > 1 ? vkr_device_by_cap(r, cap) : NULL;
	for (size_t i = 0; i < l->born.cap; i++) {
		const vk_handle_info *k = (const vk_handle_info *)(uintptr_t)l->born.kinds[i];
		if (k && k != r->h_instance &&
		    (h == r->h_instance || !k->parent || !strstr(k->parent, "VkInstance")) &&
		    (!d || vkr_owned_by(r, k, l->born.keys[i], d))) {
			tmap_del(&l->born, l->born.keys[i], l->born.kinds[i], NULL);
			i--;
		}
	}
}

/* Object CAP of type H, made before the range, ended by a pass but the
 * last: out of the maps, alive. */
static void park(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	loop_state *l = r->loop;
	if (l->nparked == l->capparked) {
		l->capparked = l->capparked ? l->capparked * 2 : 64;
		l->parked = trace_xrealloc(l->parked, l->capparked * sizeof(*l->parked));
	}
	parked *p = &l->parked[l->nparked++];
	*p = (parked){.h = h, .cap = cap};
	tmap_del(&r->handles, cap, (uintptr_t)h, &p->live);
	if ((h == r->h_buffer || h == r->h_image) && tmap_del(&r->objects, cap, TAG_OBJ, &p->side)) {
		/* as if ended: what is bound where it was does not share its
		 * memory (bind_obj), it keeps its bytes for the next pass */
		p->mem = ((obj *)(uintptr_t)p->side)->mem;
		vkr_park_obj((obj *)(uintptr_t)p->side);
	} else if (h == r->h_memory)
		tmap_del(&r->mems, cap, TAG_MEM, &p->side);
	else if (h == r->h_swapchain) {
		tmap_del(&r->swapchains, cap, TAG_SWAPCHAIN, &p->side);
		memset(&r->swapchain_memo, 0, sizeof(r->swapchain_memo));
	}
	else if (h == l->h_template)
		tmap_del(&r->templates, cap, TAG_TEMPLATE, &p->side);
	else if (h == r->h_fence && tmap_del(&l->sync, cap, TAG_FENCE, &p->sync))
		p->sync_kind = TAG_FENCE;
	else if (h == r->h_semaphore && tmap_del(&l->sync, cap, TAG_BINARY, &p->sync))
		p->sync_kind = TAG_BINARY;
	else if (h == r->h_semaphore && tmap_del(&l->sync, cap, TAG_TIMELINE, &p->sync))
		p->sync_kind = TAG_TIMELINE;
}

/* The parked objects, back in the maps. */
static void unpark(vkr *r)
{
	loop_state *l = r->loop;
	for (size_t i = l->nparked; i-- > 0;) {
		parked *p = &l->parked[i];
		const vk_handle_info *h = p->h;
		if (p->live)
			vkr_map_put(r, h, p->cap, p->live);
		if (p->side && (h == r->h_buffer || h == r->h_image)) {
			obj *o = (obj *)(uintptr_t)p->side;
			tmap_set(&r->objects, p->cap, TAG_OBJ, p->side);
			if (p->mem) {
				o->mem = p->mem;
				o->next_in_mem = p->mem->objs;
				p->mem->objs = o;
			}
		}
		if (p->side && h == r->h_memory)
			tmap_set(&r->mems, p->cap, TAG_MEM, p->side);
		if (p->side && h == l->h_template)
			tmap_set(&r->templates, p->cap, TAG_TEMPLATE, p->side);
		if (p->side && h == r->h_swapchain) {
			swapchain *s = (swapchain *)(uintptr_t)p->side;
			tmap_set(&r->swapchains, p->cap, TAG_SWAPCHAIN, p->side);
			memset(&r->swapchain_memo, 0, sizeof(r->swapchain_memo));
			for (uint32_t k = 0; k < s->n; k++)
				vkr_map_put(r, r->h_image, s->cap_img[k], (uint64_t)(uintptr_t)s->img[k]);
		}
		if (p->sync_kind)
			tmap_set(&l->sync, p->cap, p->sync_kind, p->sync);
	}
	l->nparked = 0;
}

/* A device or instance made before the range, ended: no pass after can
 * make it again. */
static void older_ended(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	if (h == r->h_device || h == r->h_instance)
		vkr_loop_refuse(r, h == r->h_device ? "end the device made before them"
				: "end the instance made before them",
				"a range that ends no device or instance it did not make",
				"%s 0x%llx at call %llu", h->name, (unsigned long long)cap,
				(unsigned long long)r->call->no);
}

/*
 * What a record (its arguments capture values) makes and ends, in born.
 * An end of an object made before the range is checked (LIFE_CHECK),
 * made (LIFE_LAST), or parked and taken out of the call (LIFE_PARK).
 * False: nothing is left for the call to end, it is not made.
 */
bool vkr_life_step(vkr *r, enum life_mode mode, const cmd_entry *e, void *args)
{
	loop_state *l = r->loop;
	const vk_command_info *cmd = e->cmd;
	uint8_t action = cmd->action;
	if (e->loop == LK_RESET_DPOOL) {
		born_pool_ends(r, l->h_dpool, vkr_handle_at(args, &cmd->params[1]), mode, false);
		return true;
	}
	if (!cmd->object)
		return true;
	if (action == VK_ACTION_CREATE || action == VK_ACTION_ALLOCATE) {
		born_ctx b = {&l->born, cmd->object, 0};
		if (e->loop == LK_ALLOC_CBS && ((vk_args_vkAllocateCommandBuffers *)args)->pAllocateInfo)
			b.pool = (uint64_t)(uintptr_t)((vk_args_vkAllocateCommandBuffers *)args)
				->pAllocateInfo->commandPool;
		if (e->loop == LK_ALLOC_SETS && ((vk_args_vkAllocateDescriptorSets *)args)->pAllocateInfo)
			b.pool = (uint64_t)(uintptr_t)((vk_args_vkAllocateDescriptorSets *)args)
				->pAllocateInfo->descriptorPool;
		if (!vkr_failed(vkr_cap_result(r->call)))
			vk_walk_handles(cmd, args, true, vkr_born_note, &b);
		return true;
	}
	if (action != VK_ACTION_DESTROY && action != VK_ACTION_FREE)
		return true;
	uint32_t n, *count, left = 0;
	uint64_t *v = ended_handles(cmd, args, &n, &count);
	bool pool = cmd->object == l->h_cpool || cmd->object == l->h_dpool;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t cap = v[i];
		if (!cap || tmap_del(&l->born, cap, (uintptr_t)cmd->object, NULL)) {
			if (cap)
				born_ended(r, cmd->object, cap, mode);
			v[left++] = cap;
			continue;
		}
		/* made before the range; surfaces and messengers end nothing */
		if (mode == LIFE_CHECK)
			older_ended(r, cmd->object, cap);
		if (pool)
			born_pool_ends(r, cmd->object, cap, mode, mode != LIFE_LAST);
		if (mode != LIFE_PARK || e->special == SP_DESTROY_SURFACE ||
		    e->special == SP_FAKE_DESTROY) {
			v[left++] = cap;
			continue;
		}
		park(r, cmd->object, cap);
	}
	if (count)
		*count = left;
	return n == 0 || left > 0;
}

/* ---- between passes ---- */

bool vkr_born_has(loop_state *l, uint64_t cap, const vk_handle_info *h)
{
	return cap && tmap_at(&l->born, cap, (uintptr_t)h);
}

static bool born_any(loop_state *l, const vk_handle_info *h)
{
	for (size_t i = 0; i < l->born.cap; i++)
		if (l->born.kinds[i] == (uintptr_t)h)
			return true;
	return false;
}

/* Ends object CAP of type H, made by the pass. */
static void end_object(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	typedef void (VKAPI_PTR *destroy_fn)(VkDevice, uint64_t, const VkAllocationCallbacks *);
	loop_state *l = r->loop;
	uint64_t v, live;
	owner_select(r, h, cap);
	if (h == r->h_memory) {
		vkr_free_memory(r, cap);
		return;
	}
	if (h == r->h_swapchain) {
		if (tmap_del(&r->swapchains, cap, TAG_SWAPCHAIN, &v))
			vkr_destroy_swapchain(r, (swapchain *)(uintptr_t)v);
		return;
	}
	/* surfaces and messengers: made up, nothing to end */
	if (vkr_map_get(r, h, cap, &live) && live && h != r->h_surface && h != l->h_messenger &&
	    h != l->h_report) {
		const vk_command_info *c = vkr_destroyer(r, h);
		destroy_fn fn = c ? (destroy_fn)vkGetDeviceProcAddr(r->d->vk.device, c->sig.name) : NULL;
		if (fn)
			fn(r->d->vk.device, live, NULL);
	}
	vkr_map_del(r, h, cap);
	if ((h == r->h_buffer || h == r->h_image) && tmap_del(&r->objects, cap, TAG_OBJ, &v)) {
		vkr_release_obj(r, (obj *)(uintptr_t)v);
		free((obj *)(uintptr_t)v);
	}
	if (h == l->h_template && tmap_del(&r->templates, cap, TAG_TEMPLATE, &v))
		free((tmpl *)(uintptr_t)v);
	if (h == r->h_fence)
		tmap_del(&l->sync, cap, TAG_FENCE, NULL);
	if (h == r->h_semaphore) {
		tmap_del(&l->sync, cap, TAG_BINARY, NULL);
		tmap_del(&l->sync, cap, TAG_TIMELINE, NULL);
	}
}

/* What the pass made and left alive, ended: command buffers and
 * descriptor sets of pools made before the range freed, those of pools
 * the pass made with their pools; a device or instance the pass made
 * with all it holds. */
static void end_born(vkr *r)
{
	loop_state *l = r->loop;
	tmap *b = &l->born;
	if (born_any(l, r->h_instance)) {
		vkr_close_all(r);
		tmap_free(&r->handles);
		tmap_free(b);
		return;
	}
	/* the devices the pass made, each with what it holds */
	for (size_t i = 0; i < b->cap; i++) {
		vkr_device *d = b->kinds[i] == (uintptr_t)r->h_device
			? vkr_device_by_cap(r, b->keys[i]) : NULL;
		if (!d)
			continue;
		uint64_t cap = b->keys[i];
		born_ended(r, r->h_device, cap, LIFE_LAST);
		tmap_del(b, cap, (uintptr_t)r->h_device, NULL);
		vkr_end_device(r, d);
		i = (size_t)-1;  /* the map has moved: from its start again */
	}
	for (size_t i = 0; i < b->cap; i++) {
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)b->kinds[i];
		uint64_t pool = b->vals[i] - 1;
		if ((h == l->h_cb && !vkr_born_has(l, pool, l->h_cpool)) ||
		    (h == l->h_set && !vkr_born_has(l, pool, l->h_dpool)))
			free_child(r, h, b->keys[i], pool);
	}
	for (size_t i = 0; i < b->cap; i++) {
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)b->kinds[i];
		if (h == l->h_cb || h == l->h_set)
			vkr_map_del(r, h, b->keys[i]);
		else if (h)
			end_object(r, h, b->keys[i]);
	}
	tmap_free(b);
}

/* Fences and binary semaphores made before the range, back in the state
 * the range found them in: a fence signalled by an empty batch or reset,
 * a semaphore signalled by an empty batch or waited on by one. */
static void fix_sync(vkr *r)
{
	loop_state *l = r->loop;
	bool submitted = false;
	for (size_t i = 0; i < l->start.cap; i++) {
		uint64_t key = l->start.keys[i], kind = l->start.kinds[i], was = l->start.vals[i];
		if (kind != TAG_FENCE && kind != TAG_BINARY)
			continue;
		uint64_t *now = tmap_at(&l->sync, key, kind);
		uint64_t live;
		bool fence = kind == TAG_FENCE;
		if (!now || *now == was ||
		    !vkr_map_get(r, fence ? r->h_fence : r->h_semaphore, key, &live) || !live)
			continue;
		*now = was;
		/* and as queue.c follows it (a fence: 1 signalled, 0 not) */
		uint64_t *followed = tmap_at(&r->binary, key, kind);
		if (followed)
			*followed = was;
		owner_select(r, fence ? r->h_fence : r->h_semaphore, key);
		VkResult res;
		VkSemaphore sem = (VkSemaphore)(uintptr_t)live;
		VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
		VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
		if (fence && !was) {
			VkFence f = (VkFence)(uintptr_t)live;
			res = vkResetFences(r->d->vk.device, 1, &f);
		} else if (fence) {
			res = vkQueueSubmit(r->d->vk.queue, 0, NULL, (VkFence)(uintptr_t)live);
			submitted = true;
		} else {
			if (was) {
				si.signalSemaphoreCount = 1;
				si.pSignalSemaphores = &sem;
			} else {
				si.waitSemaphoreCount = 1;
				si.pWaitSemaphores = &sem;
				si.pWaitDstStageMask = &stage;
			}
			res = vkQueueSubmit(r->d->vk.queue, 1, &si, VK_NULL_HANDLE);
			submitted = true;
		}
		if (res != VK_SUCCESS)
			vkr_fatal(r, "--loop: cannot put %s 0x%llx back as the range found it: %s",
				  fence ? "VkFence" : "VkSemaphore", (unsigned long long)key,
				  vkr_result_name(res));
	}
	for (size_t i = 0; submitted && i < r->ndevs; i++)
		vkQueueWaitIdle(r->devs[i]->vk.queue);
}

/* Command buffers begun before the range that the range records into or
 * changes: their pools reset, and what the range uses of them recorded
 * again as the records before it left them. */
static void rerecord(vkr *r)
{
	loop_state *l = r->loop;
	for (size_t i = 0; i < l->restore.cap; i++) {
		uint64_t pool;
		if (!tmap_used(&l->restore, i) ||
		    !vkr_map_get(r, l->h_cpool, l->restore.keys[i], &pool) || !pool)
			continue;
		owner_select(r, l->h_cpool, l->restore.keys[i]);
		vkResetCommandPool(r->d->vk.device, (VkCommandPool)(uintptr_t)pool, 0);
	}
	uint64_t calls = r->calls;
	for (size_t i = 0; i < l->logs.cap; i++) {
		cblog *g = tmap_used(&l->logs, i) ? (cblog *)(uintptr_t)l->logs.vals[i] : NULL;
		if (!g || (g->first != T_CONTENT && g->first != T_SUBMIT) ||
		    !tmap_at(&l->restore, g->pool, TAG_RESTORE))
			continue;
		for (size_t j = 0; j < g->n; j++) {
			r->call = &g->calls[j];
			vkr_replay_call(r, r->call);
			trace_arena_reset(&r->arena);
		}
	}
	r->call = NULL;
	r->calls = calls;  /* the trace's calls, not these */
}

/* After a pass but the last: the device idle, the state the range began
 * with again.  The time that takes is not the frames': the frame clock
 * is moved past it. */
static void loop_rewind(vkr *r)
{
	loop_state *l = r->loop;
	r->call = NULL;
	vkr_wait_all(r);
	double t = vkr_now_s();
	l->rewinding = true;
	end_born(r);
	unpark(r);
	if (r->ndevs) {
		fix_sync(r);
		rerecord(r);
	}
	l->rewinding = false;
	double pause = vkr_now_s() - t;
	r->t_last_frame += pause;
	if (r->frames_done)
		r->t_first_frame += pause;
}

/* Before each call while --loop is on (replay_call); false: the call is
 * not made. */
bool vkr_loop_call(vkr *r, const cmd_entry *e, void *args)
{
	loop_state *l = r->loop;
	if (l->rewinding)
		return true;
	if (!l->in_range) {
		loop_before(r, e, args);
		sync_note(r, e, args);
		return true;
	}
	if (l->pass)
		shift_timelines(r, e, args);
	if (!vkr_life_step(r, l->last ? LIFE_LAST : LIFE_PARK, e, args))
		return false;
	sync_note(r, e, args);
	return true;
}

/* ---- the passes ---- */

void vkr_loop_init(vkr *r)
{
	loop_state *l = r->loop = trace_xcalloc(1, sizeof(*l));
	l->h_cb = vk_handle_lookup("VkCommandBuffer");
	l->h_cpool = vk_handle_lookup("VkCommandPool");
	l->h_set = vk_handle_lookup("VkDescriptorSet");
	l->h_dpool = vk_handle_lookup("VkDescriptorPool");
	l->h_template = vk_handle_lookup("VkDescriptorUpdateTemplate");
	l->h_messenger = vk_handle_lookup("VkDebugUtilsMessengerEXT");
	l->h_report = vk_handle_lookup("VkDebugReportCallbackEXT");
}

/* One pass over the kept records. */
static void replay_kept(vkr *r)
{
	for (size_t i = 0; i < r->nkept; i++) {
		kept *k = &r->kept[i];
		r->call = &k->call;
		r->frame = k->frame;
		vkr_replay_call(r, &k->call);
		trace_arena_reset(&r->arena);
		if (k->ends_frame)
			vkr_frame_ended(r, k->frame);
	}
}

void vkr_loop_run(vkr *r)
{
	loop_state *l = r->loop;
	l->in_range = true;
	for (l->pass = 0; l->pass < r->opt->loop; l->pass++) {
		l->last = l->pass + 1 == r->opt->loop;
		replay_kept(r);
		if (!l->last)
			loop_rewind(r);
	}
	r->call = NULL;
}

void vkr_loop_free(vkr *r)
{
	loop_state *l = r->loop;
	for (size_t i = 0; i < r->nkept; i++)
		trace_call_free(&r->kept[i].call);
	free(r->kept);
	r->kept = NULL;
	r->nkept = r->capkept = 0;
	for (size_t i = 0; i < l->logs.cap; i++)
		if (tmap_used(&l->logs, i))
			cblog_free((cblog *)(uintptr_t)l->logs.vals[i]);
	TMAP_FREE(&l->logs, &l->sets, &l->dpools, &l->sync, &l->start, &l->shift, &l->restore,
		  &l->born);
	free(l->parked);
	free(l);
	r->loop = NULL;
}
