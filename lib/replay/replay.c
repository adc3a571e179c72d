/*
 * The Vulkan replayer; see vkreplay.h and trace-replay(1).
 *
 * One record at a time, in record order, on one thread: decode the
 * arguments into the vk_args_NAME struct of the command (an arena per
 * record), map every handle in them from its capture value to the live
 * one, call the command through its generated thunk, and map the handles
 * it made.  What differs from a plain call is in a file of its own, by
 * Vulkan concept (replay_internal.h lists them); this one holds the
 * dispatch, the handle map and the run (messages.c: what it says, and
 * how it stops).
 */
#include "replay_internal.h"


/* ------------------------------------------------------------------ */
/* Handles. */

/*
 * Whether the call being replayed reads what a buffer or image holds:
 * recording a command, writing a descriptor, making a view, copying on
 * the host.  Binding it, asking for its requirements, naming it and
 * destroying it do not, and may come before it has memory.
 */
static bool reads_contents(const char *fn)
{
	return !strncmp(fn, "vkCmd", 5) || !strncmp(fn, "vkUpdateDescriptorSet", 21) ||
	       !strncmp(fn, "vkCreateBufferView", 18) || !strncmp(fn, "vkCreateImageView", 17) ||
	       !strncmp(fn, "vkCopy", 6) || !strncmp(fn, "vkTransitionImageLayout", 23);
}

/* A buffer or image the call reads must be bound: one with no memory
 * crashes the driver when the device reads it. */
static void need_bound(vkr *r, const vk_handle_info *h, uint64_t cap, const vk_field *f)
{
	if (h != r->h_buffer && h != r->h_image)
		return;
	obj *o = vkr_obj_get(r, cap);
	if (o && !o->group && !o->bound && !o->sparse && reads_contents(r->call->sig->name))
		vkr_fatal(r, "%s: %s 0x%llx has no memory: no earlier record bound it", f->name,
			  h->name, (unsigned long long)cap);
}

/* A null handle the driver would use: a parameter or a struct member the
 * registry neither calls optional nor leaves to the prose (noautovalidity:
 * a null descriptor, a pipeline without a render pass; a null render pass
 * to vkCmdBeginRenderPass crashed llvmpipe), or an item of a struct
 * member's array of handles (a null signal semaphore crashed llvmpipe at a
 * submit, a null attachment at a vkCmdBeginRenderPass), but for the
 * arrays the specification lets hold null, which the registry cannot say
 * (NULL_OK: set layouts of pipeline libraries, the attachments of an
 * imageless framebuffer, null descriptors, present fences); the
 * descriptor writes' and the framebuffer's are checked by vkiface.c.  A
 * parameter's array of handles that the registry leaves to the prose may
 * hold null: vkFreeCommandBuffers', vkFreeDescriptorSets', and transform
 * feedback's counter buffers (Godot 3 through zink begins it with
 * pCounterBuffers [null]): an array, not optional, whose items the
 * registry leaves to the prose (noautovalidity). */
static const struct { const char *s, *member; } null_ok[] = {
	{"VkPipelineLayoutCreateInfo", "pSetLayouts"},
	{"VkFramebufferCreateInfo", "pAttachments"},
	{"VkWriteDescriptorSet", "pTexelBufferView"},
	{"VkWriteDescriptorSetAccelerationStructureKHR", "pAccelerationStructures"},
	{"VkSwapchainPresentFenceInfoEXT", "pFences"},
	{"VkShaderCreateInfoEXT", "pSetLayouts"},
};

static void null_ok_init(vkr *r)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(null_ok) / sizeof(null_ok[0]); i++) {
		const vk_struct_info *s = vk_struct_lookup(null_ok[i].s);
		for (uint32_t k = 0; s && k < s->nfields; k++)
			if (!strcmp(s->fields[k].name, null_ok[i].member) &&
			    n < sizeof(r->null_ok) / sizeof(r->null_ok[0]))
				r->null_ok[n++] = &s->fields[k];
	}
}

static bool null_refused(vkr *r, const vk_handle_info *h, bool top, const vk_field *f)
{
	(void)h;
	if (top)
		return !(f->flags & VK_F_OPTIONAL);
	if (!f->ptr && !f->count && f->base == VK_B_HANDLE)
		return !(f->flags & (VK_F_OPTIONAL | VK_F_NOAUTO));
	if (f->ptr != 1)
		return false;
	if ((f->flags & (VK_F_NOAUTO | VK_F_OPTIONAL)) == VK_F_NOAUTO)
		return false;
	for (size_t i = 0; i < sizeof(r->null_ok) / sizeof(r->null_ok[0]) && r->null_ok[i]; i++)
		if (r->null_ok[i] == f)
			return false;
	return true;
}

/* A handle of the inputs with its checks: a null one, one no record
 * made, a buffer or image the call reads unbound.  (Apart from
 * vkr_remap_in's usual case, which then saves no registers for them.) */
static __attribute__((noinline)) void remap_checked(vkr *r, const vk_handle_info *h,
						    uint64_t *value, bool top, const vk_field *f)
{
	uint64_t live;
	if (!*value && null_refused(r, h, top, f))
		vkr_fatal(r, "%s: a null %s where the call needs one", f->name, h->name);
	if (vkr_map_get(r, h, *value, &live)) {
		if (live)
			need_bound(r, h, *value, f);
		*value = live;
		return;
	}
	/* No earlier record made it (a create cut out, a handle edited), or
	 * it is destroyed, or its create failed here: never the capture's
	 * value to the driver, and no null or skipped call in its place
	 * either (a draw with no pipeline bound crashes a driver). */
	(void)top;
	vkr_fatal(r, "%s: %s 0x%llx: no earlier record made it, or it is destroyed%s", f->name,
		  h->name, (unsigned long long)*value, r->errors ? " (or its create failed here)" : "");
}

/* vk_walk_handles over the inputs: capture values into live ones.  The
 * usual handle, made live before and neither a buffer nor an image, goes
 * through with none of the checks, nor the registers their calls need
 * saved (mpv's replay: 54 instructions a handle, 64 with them inline). */
void vkr_remap_in(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		  const vk_field *f)
{
	vkr *r = ctx;
	const uint64_t *live;
	if (*value && h != r->h_buffer && h != r->h_image &&
	    (live = tmap_at(&r->handles, *value, (uintptr_t)h)) && *live) {
		*value = *live;
		return;
	}
	remap_checked(r, h, value, top, f);
}

/* The handles a call makes, in walk order: in the struct up to COLLECT_IN
 * (a create or allocate of a few), beyond that on the heap. */
#define COLLECT_IN 16

typedef struct collect_room {
	uint64_t vals[COLLECT_IN];
	const vk_handle_info *types[COLLECT_IN];
} collect_room;

typedef struct collect {
	uint64_t *vals;
	const vk_handle_info **types;
	size_t n, cap;
	collect_room *in;  /* not zeroed: 256 bytes a call (its first use fills it) */
	bool live;   /* second pass: pair with the first */
	bool owned;  /* a device call's: what it made is the device's */
	vkr *r;
	size_t at;
} collect;

static void collect_out(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
			const vk_field *f)
{
	(void)top;
	(void)f;
	collect *c = ctx;
	if (c->live) {
		if (c->at < c->n && c->types[c->at] == h) {
			vkr_map_put(c->r, h, c->vals[c->at], *value);
			if (c->owned)
				vkr_owner_put(c->r, h, c->vals[c->at]);
		}
		c->at++;
		return;
	}
	if (c->n == c->cap) {
		if (!c->cap) {
			c->cap = COLLECT_IN;
			c->vals = c->in->vals;
			c->types = c->in->types;
		} else {
			bool in = c->vals == c->in->vals;
			c->cap *= 2;
			c->vals = trace_xrealloc(in ? NULL : c->vals, c->cap * sizeof(*c->vals));
			c->types = trace_xrealloc(in ? NULL : c->types, c->cap * sizeof(*c->types));
			if (in) {
				memcpy(c->vals, c->in->vals, sizeof(c->in->vals));
				memcpy(c->types, c->in->types, sizeof(c->in->types));
			}
		}
	}
	c->vals[c->n] = *value;
	c->types[c->n++] = h;
}

typedef struct destroyed {
	const vk_handle_info *h;
	uint64_t vals[8];
	size_t n;
	uint64_t *more;
	size_t nmore, capmore;
} destroyed;

/* ------------------------------------------------------------------ */
/* Dispatch. */

static PFN_vkVoidFunction lookup_fn(vkr *r, const cmd_entry *e)
{
	int32_t i = e->index;
	if (r->d->fn_done[i])
		return r->d->fns[i];
	const vk_command_info *cmd = e->cmd;
	PFN_vkVoidFunction fn = NULL;
	for (int k = 0; k < 2 && !fn; k++) {
		const char *name = k ? cmd->alias_of : cmd->sig.name;
		if (!name)
			continue;
		if (cmd->level == VK_LEVEL_DEVICE && r->d->vk.device)
			fn = vkGetDeviceProcAddr(r->d->vk.device, name);
		if (!fn)
			fn = vkGetInstanceProcAddr(cmd->level == VK_LEVEL_GLOBAL ? NULL
						   : r->d->vk.instance, name);
	}
	r->d->fns[i] = fn;
	r->d->fn_done[i] = 1;
	return fn;
}

/* Compares the result with the capture's; a change of success is reported. */
void vkr_check_result(vkr *r, const cmd_entry *e, bool have_cap, VkResult cap, VkResult now)
{
	(void)e;
	if (!have_cap || vkr_failed(cap) == vkr_failed(now))
		return;
	/* a question about the device (a format's properties) answered no
	 * here: the program's answer is in the trace, and what it went on
	 * to make is checked as it comes (an image's format: formats.c) */
	if (vkr_failed(now) && !strncmp(r->call->sig->name, "vkGetPhysicalDevice", 19)) {
		/* said once for each function (zink asks before each image) */
		size_t i = 0, n = sizeof(r->query_said) / sizeof(r->query_said[0]);
		while (i < n && r->query_said[i] && r->query_said[i] != r->call->sig)
			i++;
		if (i < n && r->query_said[i]) {
			r->query_more++;
			return;
		}
		if (i < n)
			r->query_said[i] = r->call->sig;
		vkr_warn(r, "%s: %s here, %s at capture: this device lacks what the capture's had",
			 r->call->sig->name, vkr_result_name(now), vkr_result_name(cap));
		return;
	}
	if (vkr_failed(now)) {
		r->errors++;
		trace_cli_progress_done();
		fprintf(stderr, "%s: %s: call %llu: %s failed: %s (%d); it returned %s at capture\n",
			trace_cli_self.prog, r->opt->input, (unsigned long long)r->call->no,
			r->call->sig->name, vkr_result_name(now), now, vkr_result_name(cap));
	} else {
		vkr_warn(r, "%s succeeded (%s) where it failed at capture (%s)", r->call->sig->name,
			 vkr_result_name(now), vkr_result_name(cap));
	}
}

/* The handles of the inputs made live (one no earlier record made stops
 * the replay: vkr_remap_in). */
void vkr_remap_args(vkr *r, const vk_command_info *cmd, void *args)
{
	vk_walk_handles(cmd, args, false, vkr_remap_in, r);
}

/* Calls the command with its inputs live, compares the result with the
 * capture's and maps the handles it made. */
VkResult vkr_invoke(vkr *r, const cmd_entry *e, void *args)
{
	const vk_command_info *cmd = e->cmd;
	VkResult cap = VK_SUCCESS, now = VK_SUCCESS;
	bool has_ret = e->result && r->call->ret;
	if (has_ret)
		memcpy(&cap, (uint8_t *)args + cmd->ret->offset, sizeof(cap));
	if (e->allocator >= 0)
		memset((uint8_t *)args + cmd->params[e->allocator].offset, 0, sizeof(void *));
	collect_room room;
	collect col = {.r = r, .owned = cmd->level == VK_LEVEL_DEVICE, .in = &room};
	if (r->checking) {
		/* --check: what it makes known by its capture values, as a
		 * replay that succeeds makes it (one that failed at capture
		 * may succeed here: a warning) */
		if (e->out_handles)
			vk_walk_handles(cmd, args, true, col.owned ? vkr_check_made_owned
								 : vkr_check_made, r);
		r->calls++;
		return VK_SUCCESS;  /* what a replay that goes on gets */
	}
	if (e->out_handles)
		vk_walk_handles(cmd, args, true, collect_out, &col);
	PFN_vkVoidFunction fn = lookup_fn(r, e);
	if (!fn)
		vkr_fatal(r, "%s is not available on %s (an extension the replay did not enable?)",
			  cmd->sig.name, r->d->vk.props.deviceName[0] ? r->d->vk.props.deviceName : "this device");
	if (r->timing) {
		uint64_t t = vkr_ticks();
		vk_calls[e->index](fn, args);
		r->driver_ticks += vkr_ticks() - t;
	} else {
		vk_calls[e->index](fn, args);
	}
	r->calls++;
	if (has_ret) {
		memcpy(&now, (uint8_t *)args + cmd->ret->offset, sizeof(now));
		vkr_check_result(r, e, true, cap, now);
	}
	if (e->out_handles && !vkr_failed(now)) {
		col.live = true;
		vk_walk_handles(cmd, args, true, collect_out, &col);
	}
	if (col.cap > COLLECT_IN) {
		free(col.vals);
		free(col.types);
	}
	return now;
}

/* The generic path: remap, call, map what it made, forget what it ended. */
VkResult vkr_call_generic(vkr *r, const cmd_entry *e, void *args)
{
	const vk_command_info *cmd = e->cmd;
	/* what a destroy or free ends: its capture values */
	destroyed d = {0};
	if (cmd->action == VK_ACTION_DESTROY || cmd->action == VK_ACTION_FREE) {
		for (uint32_t i = 0; i < cmd->nparams; i++) {
			const vk_field *f = &cmd->params[i];
			if (f->base != VK_B_HANDLE || f->ref != cmd->object || (f->flags & VK_F_OUT))
				continue;
			uint8_t *fp = (uint8_t *)args + f->offset;
			if (f->ptr == 0) {
				memcpy(&d.vals[0], fp, 8);
				d.n = 1;
			} else {
				const uint64_t *arr;
				memcpy(&arr, fp, sizeof(arr));
				/* the count is the parameter before it */
				uint32_t count = 0;
				if (i > 0 && cmd->params[i - 1].base == VK_B_UINT && !cmd->params[i - 1].ptr)
					memcpy(&count, (uint8_t *)args + cmd->params[i - 1].offset, 4);
				if (arr && count) {
					/* in the arena: a refusal of --check jumps past the end */
					d.more = trace_arena_alloc(&r->arena, (size_t)count * 8);
					memcpy(d.more, arr, (size_t)count * 8);
					d.nmore = count;
				}
			}
		}
		d.h = cmd->object;
	}
	vkr_remap_args(r, cmd, args);
	VkResult now = vkr_invoke(r, e, args);
	if (d.h) {
		for (size_t i = 0; i < d.n; i++)
			vkr_map_del(r, d.h, d.vals[i]);
		for (size_t i = 0; i < d.nmore; i++)
			vkr_map_del(r, d.h, d.more[i]);
	}
	return now;
}

/* ------------------------------------------------------------------ */
/* One record. */

/* (looked up once: a vkGetDeviceProcAddr by name for each timeline
 * semaphore mpv makes was 1.6% of its replay's time on an H100) */
PFN_vkVoidFunction vkr_device_fn(vkr *r, const char *a, const char *b)
{
	vkr_device *d = r->d;
	for (uint32_t i = 0; i < d->nnamed; i++)
		if (d->named[i].name == a)
			return d->named[i].fn;
	PFN_vkVoidFunction f = vkGetDeviceProcAddr(d->vk.device, a);
	if (!f)
		f = vkGetDeviceProcAddr(d->vk.device, b);
	if (d->nnamed < sizeof(d->named) / sizeof(d->named[0])) {
		d->named[d->nnamed].name = a;
		d->named[d->nnamed++].fn = f;
	}
	return f;
}

static void replay_call(vkr *r, const trace_call *c, cmd_entry *e, void *args);
static void replay_special(vkr *r, cmd_entry *e, void *args, VkResult capres);

void vkr_replay_decoded(vkr *r, const trace_call *c, cmd_entry *e, void *args)
{
	if (!r->checking)
		vkr_watchdog_note(c);
	/* the records of the frames the statistics count: with --frames 1-,
	 * a frame's own work, not the program's start */
	if (!r->opt->stats || r->frame < r->opt->first_frame) {
		replay_call(r, c, e, args);
		r->ahead_lazy_ticks = 0;
		return;
	}
	uint64_t t = vkr_ticks();
	r->timing = true;
	replay_call(r, c, e, args);
	r->timing = false;
	vkr_time_note(r, c->sig, vkr_ticks() - t);
}


/* E and ARGS: the record's entry and arguments decoded before (--preload),
 * else NULL. */
static void replay_call(vkr *r, const trace_call *c, cmd_entry *e, void *args)
{
	const char *name = c->sig->name;
	if (args)
		goto decoded;
	if (name[0] == 't' && !strncmp(name, "tracekit.", 9)) {
		/* (memory written, a frame marked; running ahead, an update
		 * after a skipped wait for submits held is staged behind them:
		 * stage.c) */
		if (!vk_is_update(name) || !vkr_ahead_held_waited(r))
			vkr_send_held(r);
		if (vk_is_update(name))
			vkr_update(r, c);
		return;
	}
	e = vkr_entry_of(r, c);
	if (!e)
		vkr_fatal(r, "unknown function");
	if (e->special == SP_SKIP)
		return;
	/* (r->err is not cleared first: 800 bytes a record; a failure fills
	 * the message, the one thing fatal() prints) */
	if (!(args = vkr_decoded_args(c, e)) &&
	    vk_decode_args(e->cmd, c, &r->arena,
			   (args = trace_arena_alloc(&r->arena, e->cmd->args_size)), &r->err) < 0)
		vkr_fatal(r, "malformed record: %s", r->err.msg);
decoded:;
	const vk_command_info *cmd = e->cmd;
	if (e->special != SP_CREATE_INSTANCE && !r->have_instance)
		vkr_fatal(r, "a call before vkCreateInstance");
	/* a timestamp's write or reset left out sends no submits held and
	 * pays no wait put off (stamps.c) */
	enum stamp_use stamp = e->stamp ? vkr_stamps_note(r, e, args, vkr_cap_result(c))
					: STAMP_AS_CAPTURED;
	if (stamp != STAMP_LEFT_OUT && vkr_merge_breaks(r, e, args))
		vkr_send_held(r);
	bool dev_needed = cmd->level == VK_LEVEL_DEVICE;
	vkr_select_device(r, cmd, args);
	if (dev_needed && !vkr_have_device(r) && e->special != SP_DESTROY_DEVICE)
		vkr_fatal(r, "a device call before vkCreateDevice");
	if (e->subres)
		vkr_subres_check(r, e, args);
	if (e->iface && vk_iface_note(r->iface, cmd, args, vkr_failed(vkr_cap_result(c)), &r->err) < 0)
		vkr_fatal(r, "%s", r->err.msg);
	if (!r->loop) {  /* --loop follows them itself, pass by pass */
		vkr_binary_note(r, e, args, vkr_cap_result(c));
		vkr_cmdbuf_note(r, e, args, vkr_cap_result(c));
	}
	if (r->loop && !vkr_loop_call(r, e, args))
		return;
	if (r->dump)
		vkr_dump_note(r, e, args);
	VkResult capres = vkr_cap_result(c);
	if (r->checking && vkr_check_special(r, e, args, capres))
		return;
	if (stamp == STAMP_LEFT_OUT)
		return;
	/* a sparse bind's batches may wait on a present's semaphore or an
	 * acquire's: what folding holds goes first as a batch of its own */
	if (e->sync == VK_SYNC_BIND_SPARSE && vkr_fold_pending(r))
		vkr_fold_flush(r);
	vkr_timeline_shift(r, e, args);
	if (e->special == SP_WAIT_EVENTS)
		vkr_watchdog_event_wait();
	if (r->ahead_on && !vkr_ahead_record(r, e, args, capres))
		return;
	if (stamp == STAMP_COPY_WRITTEN) {
		if (!r->checking)
			vkr_stamps_copy(r, e, args);
		return;
	}
	if (e->attachments && !r->checking)
		vkr_attachment_formats(r->d->vk.physical, e->attachments, args);
	if (e->uniform == UK_BIND_SETS)
		vkr_uniforms_dynamic(r, args);
	else if (e->uniform == UK_PUSH)
		vkr_uniforms_push(r, args);
	if (e->uniform && r->d->uniforms) {
		vkr_uniforms_before(r, e, args);
		replay_special(r, e, args, capres);
		vkr_uniforms_after(r, e, args);
		return;
	}
	replay_special(r, e, args, capres);
}

/* The call of a record past replay_call's checks, by e->special. */
static void replay_special(vkr *r, cmd_entry *e, void *args, VkResult capres)
{
	const vk_command_info *cmd = e->cmd;
	const char *name = cmd->sig.name;
	switch ((enum special)e->special) {
	case SP_NONE:
	case SP_WAIT_EVENTS:
		vkr_call_generic(r, e, args);
		return;
	case SP_UPDATE_SETS:
		if (!vkr_uniforms_update(r, e, args))
			vkr_call_generic(r, e, args);
		return;
	case SP_SKIP:
		return;
	case SP_UNSUPPORTED:
		vkr_warn(r, "%s: not supported yet (left out)", name);
		return;
	case SP_CREATE_INSTANCE:
		vkr_create_instance(r, args);
		return;
	case SP_DESTROY_INSTANCE:
		vkr_destroy_instance(r, args);
		return;
	case SP_ENUM_PHYSICAL: {
		vk_args_vkEnumeratePhysicalDevices *a = args;
		if (a->pPhysicalDevices && a->pPhysicalDeviceCount)
			for (uint32_t i = 0; i < *a->pPhysicalDeviceCount; i++)
				vkr_map_physical(r, (uint64_t)(uintptr_t)a->instance,
						 (uint64_t)(uintptr_t)a->pPhysicalDevices[i]);
		return;
	}
	case SP_ENUM_GROUPS: {
		vk_args_vkEnumeratePhysicalDeviceGroups *a = args;
		if (a->pPhysicalDeviceGroupProperties && a->pPhysicalDeviceGroupCount)
			for (uint32_t i = 0; i < *a->pPhysicalDeviceGroupCount; i++) {
				VkPhysicalDeviceGroupProperties *g = &a->pPhysicalDeviceGroupProperties[i];
				for (uint32_t j = 0; j < g->physicalDeviceCount && j < VK_MAX_DEVICE_GROUP_SIZE; j++)
					vkr_map_physical(r, (uint64_t)(uintptr_t)a->instance,
							 (uint64_t)(uintptr_t)g->physicalDevices[j]);
			}
		return;
	}
	case SP_CREATE_DEVICE:
		if (vkr_failed(capres))
			return;
		vkr_create_device(r, args);
		return;
	case SP_DESTROY_DEVICE: {
		vkr_device *d = vkr_device_by_cap(r, (uint64_t)(uintptr_t)((vk_args_vkDestroyDevice *)args)->device);
		if (d)
			vkr_end_device(r, d);
		return;
	}
	case SP_ALLOC_MEMORY:
		vkr_alloc_memory(r, args);
		return;
	case SP_FREE_MEMORY:
		vkr_free_memory(r, (uint64_t)(uintptr_t)((vk_args_vkFreeMemory *)args)->memory);
		return;
	case SP_CREATE_BUFFER: {
		vk_args_vkCreateBuffer *a = args;
		uint64_t cap = a->pBuffer ? (uint64_t)(uintptr_t)*a->pBuffer : 0;
		VkDeviceSize size = a->pCreateInfo ? a->pCreateInfo->size : 0;
		bool address = a->pCreateInfo &&
			(a->pCreateInfo->usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);
		/* a uniform buffer's bytes may be copied to a slot of ours
		 * (uniform.c), where a descriptor's offset is one this device
		 * refuses */
		if (a->pCreateInfo && (a->pCreateInfo->usage & VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT))
			((VkBufferCreateInfo *)a->pCreateInfo)->usage |= VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
		if (vkr_call_generic(r, e, args) == VK_SUCCESS && cap && a->pBuffer) {
			obj *o = vkr_new_obj(r, cap, (uint64_t)(uintptr_t)*a->pBuffer, false, true, size);
			o->address = address;
			o->sparse = a->pCreateInfo->flags & VK_BUFFER_CREATE_SPARSE_BINDING_BIT;
		}
		return;
	}
	case SP_CREATE_IMAGE: {
		vk_args_vkCreateImage *a = args;
		uint64_t cap = a->pImage ? (uint64_t)(uintptr_t)*a->pImage : 0;
		bool linear = a->pCreateInfo && a->pCreateInfo->tiling == VK_IMAGE_TILING_LINEAR;
		int32_t from = a->pCreateInfo ? vkr_image_format(r, (VkImageCreateInfo *)a->pCreateInfo) : 0;
		if (vkr_call_generic(r, e, args) == VK_SUCCESS && cap && a->pImage) {
			obj *o = vkr_new_obj(r, cap, (uint64_t)(uintptr_t)*a->pImage, true, linear, 0);
			if (from)
				vkr_image_renamed(r, o, from, a->pCreateInfo);
			o->sparse = a->pCreateInfo->flags & VK_IMAGE_CREATE_SPARSE_BINDING_BIT;
			o->three_d = a->pCreateInfo->imageType == VK_IMAGE_TYPE_3D;
			o->mips = a->pCreateInfo->mipLevels;
			o->layers = a->pCreateInfo->arrayLayers;
		}
		return;
	}
	case SP_DESTROY_BUFFER:
	case SP_DESTROY_IMAGE: {
		uint64_t cap;
		memcpy(&cap, (uint8_t *)args + cmd->params[1].offset, 8);
		vkr_call_generic(r, e, args);
		uint64_t v;
		if (cap && tmap_del(&r->objects, cap, TAG_OBJ, &v)) {
			vkr_release_obj(r, (obj *)(uintptr_t)v);
			free((obj *)(uintptr_t)v);
		}
		return;
	}
	case SP_BIND_BUFFER:
	case SP_BIND_IMAGE: {
		/* vkBind{Buffer,Image}Memory(device, object, memory, memoryOffset) */
		uint64_t p[3];
		for (int i = 0; i < 3; i++)
			memcpy(&p[i], (uint8_t *)args + cmd->params[i + 1].offset, 8);
		vkr_bind_obj(r, p[0], p[1], p[2], e->special == SP_BIND_IMAGE, capres);
		return;
	}
	case SP_BIND_BUFFER2: {
		const VkBindBufferMemoryInfo *b = ((vk_args_vkBindBufferMemory2 *)args)->pBindInfos;
		for (uint32_t i = 0; b && i < ((vk_args_vkBindBufferMemory2 *)args)->bindInfoCount; i++)
			vkr_bind_obj(r, H(b[i].buffer), H(b[i].memory), b[i].memoryOffset, false, capres);
		return;
	}
	case SP_BIND_IMAGE2: {
		const VkBindImageMemoryInfo *b = ((vk_args_vkBindImageMemory2 *)args)->pBindInfos;
		for (uint32_t i = 0; b && i < ((vk_args_vkBindImageMemory2 *)args)->bindInfoCount; i++)
			vkr_bind_obj(r, H(b[i].image), H(b[i].memory), b[i].memoryOffset, true, capres);
		return;
	}
	case SP_BUFFER_REQS:
	case SP_IMAGE_REQS:
	case SP_BUFFER_REQS2:
	case SP_IMAGE_REQS2: {
		/* vkGet{Buffer,Image}MemoryRequirements[2](device, object or
		 * pInfo, pMemoryRequirements): the size the capture's device
		 * gave the object, for placing it in its memory */
		bool image = e->special == SP_IMAGE_REQS || e->special == SP_IMAGE_REQS2;
		bool two = e->special == SP_BUFFER_REQS2 || e->special == SP_IMAGE_REQS2;
		uint64_t cap = 0;
		const void *in, *out;
		memcpy(&in, (uint8_t *)args + cmd->params[1].offset, sizeof(in));
		memcpy(&out, (uint8_t *)args + cmd->params[2].offset, sizeof(out));
		if (!two)
			cap = H(in);
		else if (in)
			cap = image ? H(((const VkImageMemoryRequirementsInfo2 *)in)->image)
				    : H(((const VkBufferMemoryRequirementsInfo2 *)in)->buffer);
		obj *o = cap ? vkr_obj_get(r, cap) : NULL;
		if (o && out)
			o->cap_req = two ? ((const VkMemoryRequirements2 *)out)->memoryRequirements.size
					 : ((const VkMemoryRequirements *)out)->size;
		return;
	}
	case SP_MEMORY_PROPS: {
		vk_args_vkGetPhysicalDeviceMemoryProperties *a = args;
		if (a->pMemoryProperties)
			vkr_note_cap_mem(r, (uint64_t)(uintptr_t)a->physicalDevice, a->pMemoryProperties);
		return;
	}
	case SP_MEMORY_PROPS2: {
		vk_args_vkGetPhysicalDeviceMemoryProperties2 *a = args;
		if (a->pMemoryProperties)
			vkr_note_cap_mem(r, (uint64_t)(uintptr_t)a->physicalDevice,
					 &a->pMemoryProperties->memoryProperties);
		return;
	}
	case SP_WAIT_FENCES: {
		/* a wait that succeeded at capture succeeds here: no timeout */
		vk_args_vkWaitForFences *a = args;
		if (capres == VK_TIMEOUT)
			return;
		/* an acquire's fence is not waited for (vkr_acquire): for any
		 * one, the wait is over; for all, the others are left */
		if (a->pFences && a->fenceCount) {
			VkFence *left = trace_arena_alloc(&r->arena, sizeof(VkFence) * a->fenceCount);
			uint32_t n = 0;
			for (uint32_t i = 0; i < a->fenceCount; i++) {
				if (!vkr_acquired_fence(r, (uint64_t)(uintptr_t)a->pFences[i]))
					left[n++] = a->pFences[i];
				else if (!a->waitAll)
					return;
			}
			if (!n)
				return;
			a->fenceCount = n;
			a->pFences = left;
		}
		a->timeout = vkr_wait_ns(r);
		vkr_bounded(r, vkr_call_generic(r, e, args), "pFences");
		return;
	}
	case SP_WAIT_SEMAPHORES:
		if (capres == VK_TIMEOUT)
			return;
		((vk_args_vkWaitSemaphores *)args)->timeout = vkr_wait_ns(r);
		vkr_bounded(r, vkr_call_generic(r, e, args), "pWaitInfo");
		return;
	case SP_FENCE_STATUS: {
		if (capres != VK_SUCCESS)
			return;  /* not ready at capture: nothing to wait for */
		vk_args_vkGetFenceStatus *a = args;
		if (vkr_acquired_fence(r, (uint64_t)(uintptr_t)a->fence))
			return;  /* an acquire's: vkr_acquire */
		VkFence f = (VkFence)(uintptr_t)vkr_need(r, r->h_fence, (uint64_t)(uintptr_t)a->fence);
		VkResult res = vkWaitForFences(r->d->vk.device, 1, &f, VK_TRUE, vkr_wait_ns(r));
		r->calls++;
		vkr_bounded(r, res, "fence");
		vkr_check_result(r, e, true, capres, res);
		return;
	}
	case SP_SEMAPHORE_VALUE: {
		vk_args_vkGetSemaphoreCounterValue *a = args;
		if (capres != VK_SUCCESS || !a->pValue)
			return;
		VkSemaphore s = (VkSemaphore)(uintptr_t)vkr_need(r, r->h_semaphore,
							      (uint64_t)(uintptr_t)a->semaphore);
		PFN_vkWaitSemaphores wait = (PFN_vkWaitSemaphores)vkr_device_fn(r, "vkWaitSemaphores",
									     "vkWaitSemaphoresKHR");
		if (!wait)
			return;
		VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
					  .semaphoreCount = 1, .pSemaphores = &s, .pValues = a->pValue};
		VkResult res = wait(r->d->vk.device, &wi, vkr_wait_ns(r));
		r->calls++;
		vkr_bounded(r, res, "semaphore");
		vkr_check_result(r, e, true, capres, res);
		return;
	}
	case SP_QUERY_RESULTS:
		/* not asked: nothing replayed reads the results (what the
		 * program did with them is in the records after), and a query
		 * is no synchronisation.  Asked without waiting, llvmpipe still
		 * drained its queue at each read (mpv reads its timers four
		 * times a frame: 214 us a read, 0.5 s of a 0.8 s replay) */
		return;
	case SP_CREATE_SURFACE:
	case SP_FAKE_CREATE: {
		/* the last output handle: a made-up value that nothing calls */
		for (uint32_t i = cmd->nparams; i-- > 0;) {
			const vk_field *f = &cmd->params[i];
			if (f->base == VK_B_HANDLE && (f->flags & VK_F_OUT)) {
				uint64_t *p;
				memcpy(&p, (uint8_t *)args + f->offset, sizeof(p));
				if (p && *p)
					vkr_map_put(r, f->ref, *p, *p);
				break;
			}
		}
		return;
	}
	case SP_DESTROY_SURFACE:
	case SP_FAKE_DESTROY:
		return;
	case SP_CREATE_SWAPCHAIN:
		if (!vkr_failed(capres))
			vkr_create_swapchain(r, args);
		return;
	case SP_DESTROY_SWAPCHAIN: {
		uint64_t cap = (uint64_t)(uintptr_t)((vk_args_vkDestroySwapchainKHR *)args)->swapchain;
		uint64_t v;
		if (cap && tmap_del(&r->swapchains, cap, TAG_SWAPCHAIN, &v)) {
			vkDeviceWaitIdle(r->d->vk.device);
			vkr_destroy_swapchain(r, (swapchain *)(uintptr_t)v);
		}
		return;
	}
	case SP_SWAPCHAIN_IMAGES:
		if (!vkr_failed(capres))
			vkr_swapchain_images(r, args);
		return;
	case SP_ACQUIRE: {
		vk_args_vkAcquireNextImageKHR *a = args;
		vkr_acquire(r, (uint64_t)(uintptr_t)a->swapchain, a->pImageIndex ? *a->pImageIndex : 0,
			    (uint64_t)(uintptr_t)a->semaphore, (uint64_t)(uintptr_t)a->fence, capres);
		return;
	}
	case SP_ACQUIRE2: {
		vk_args_vkAcquireNextImage2KHR *a = args;
		if (!a->pAcquireInfo)
			vkr_fatal(r, "vkAcquireNextImage2KHR without pAcquireInfo");
		vkr_acquire(r, (uint64_t)(uintptr_t)a->pAcquireInfo->swapchain,
			    a->pImageIndex ? *a->pImageIndex : 0,
			    (uint64_t)(uintptr_t)a->pAcquireInfo->semaphore,
			    (uint64_t)(uintptr_t)a->pAcquireInfo->fence, capres);
		return;
	}
	case SP_PRESENT:
		vkr_present(r, args);
		return;
	case SP_GRAPHICS_PIPELINES:
	case SP_COMPUTE_PIPELINES: {
		/* the pipelines made ahead (warm.c), taken, or else made from
		 * the cache they went into (both commands are (device,
		 * pipelineCache, createInfoCount, pCreateInfos, pAllocator,
		 * pPipelines)) */
		VkPipelineCache cache = vkr_warm_cache(r);
		if (!cache) {
			vkr_call_generic(r, e, args);
			return;
		}
		vk_args_vkCreateGraphicsPipelines *a = args;
		VkPipeline *made = trace_arena_alloc(&r->arena, sizeof(VkPipeline) * (a->createInfoCount + 1));
		if (capres == VK_SUCCESS && a->pPipelines &&
		    vkr_warm_take(r, r->call->no, a->createInfoCount, made)) {
			for (uint32_t i = 0; i < a->createInfoCount; i++) {
				uint64_t cap = (uint64_t)(uintptr_t)a->pPipelines[i];
				vkr_map_put(r, cmd->object, cap, (uint64_t)(uintptr_t)made[i]);
				vkr_owner_put(r, cmd->object, cap);
			}
			r->calls++;
			return;
		}
		vkr_remap_args(r, cmd, args);
		if (e->special == SP_GRAPHICS_PIPELINES)
			((vk_args_vkCreateGraphicsPipelines *)args)->pipelineCache = cache;
		else
			((vk_args_vkCreateComputePipelines *)args)->pipelineCache = cache;
		vkr_invoke(r, e, args);
		return;
	}
	case SP_CREATE_FRAMEBUFFER:
		if (((vk_args_vkCreateFramebuffer *)args)->pCreateInfo)
			vkr_framebuffer_limits(r, ((vk_args_vkCreateFramebuffer *)args)->pCreateInfo);
		vkr_call_generic(r, e, args);
		return;
	case SP_CREATE_VIEW:
	case SP_BUFFER_IMAGE:
	case SP_IMAGE_IMAGE:
		if (!r->renamed || !vkr_format_note(r, e, args))
			vkr_call_generic(r, e, args);
		return;
	case SP_DESTROY_SEMAPHORE: {
		uint64_t cap = (uint64_t)(uintptr_t)((vk_args_vkDestroySemaphore *)args)->semaphore;
		vkr_present_release(r, cap);
		if (!vkr_timeline_destroy(r, cap) && !vkr_ahead_defer_destroy(r, e, args))
			vkr_call_generic(r, e, args);
		return;
	}
	case SP_CREATE_SEMAPHORE: {
		vk_args_vkCreateSemaphore *a = args;
		uint64_t cap = a->pSemaphore ? (uint64_t)(uintptr_t)*a->pSemaphore : 0;
		if (!vkr_timeline_create(r, a->pCreateInfo, cap, capres) &&
		    vkr_call_generic(r, e, args) == VK_SUCCESS)
			vkr_timeline_made(r, a->pCreateInfo, cap);
		return;
	}
	case SP_CREATE_TEMPLATE:
		vkr_create_template(r, e, args);
		return;
	case SP_DESTROY_TEMPLATE:
		vkr_destroy_template(r, e, args);
		return;
	case SP_TEMPLATE_DATA:
		vkr_template_data(r, e, args);
		return;
	case SP_GET_QUEUE: {
		vk_args_vkGetDeviceQueue *a = args;
		vkr_queue_check(r, a->queueFamilyIndex, a->queueIndex);
		vkr_call_generic(r, e, args);
		if (a->pQueue && *a->pQueue)
			tmap_set(&r->d->queues, (uint64_t)(uintptr_t)*a->pQueue, TAG_QUEUE, a->queueFamilyIndex);
		return;
	}
	case SP_GET_QUEUE2: {
		vk_args_vkGetDeviceQueue2 *a = args;
		if (a->pQueueInfo)
			vkr_queue_check(r, a->pQueueInfo->queueFamilyIndex, a->pQueueInfo->queueIndex);
		vkr_call_generic(r, e, args);
		if (a->pQueue && *a->pQueue && a->pQueueInfo)
			tmap_set(&r->d->queues, (uint64_t)(uintptr_t)*a->pQueue, TAG_QUEUE,
			     a->pQueueInfo->queueFamilyIndex);
		return;
	}
	case SP_SUBMIT:
		vkr_submit(r, e, args);
		return;
	case SP_SUBMIT2:
		vkr_submit2(r, e, args);
		return;
	/* the draws are in the record one after the other, whatever stride
	 * the application laid them out with (zink: 12 bytes): read with the
	 * captured stride they would be read past their end */
	case SP_DRAW_MULTI:
		((vk_args_vkCmdDrawMultiEXT *)args)->stride = sizeof(VkMultiDrawInfoEXT);
		vkr_call_generic(r, e, args);
		return;
	case SP_DRAW_MULTI_INDEXED:
		((vk_args_vkCmdDrawMultiIndexedEXT *)args)->stride = sizeof(VkMultiDrawIndexedInfoEXT);
		vkr_call_generic(r, e, args);
		return;
	case SP_MADE_AHEAD: {
		/* a descriptor pool or a pipeline cache the workers made ahead
		 * (warm.c), taken; their last parameter is the object */
		uint64_t live, *out;
		memcpy(&out, (uint8_t *)args + cmd->params[cmd->nparams - 1].offset, sizeof(out));
		if (capres == VK_SUCCESS && out && *out && vkr_warm_take_object(r, r->call->no, &live)) {
			vkr_map_put(r, cmd->object, *out, live);
			vkr_owner_put(r, cmd->object, *out);
			r->calls++;
			return;
		}
		vkr_call_generic(r, e, args);
		return;
	}
	}
}

/* ------------------------------------------------------------------ */
/* The run. */

/* What a validation message is about: the call being replayed. */
static void about_call(void *ctx, char *out, size_t cap)
{
	const vkr *r = ctx;
	if (r->call)
		snprintf(out, cap, "call %llu %s", (unsigned long long)r->call->no, r->call->sig->name);
}

/* What replay and --check both begin with: the handle types and structs
 * they follow. */
void vkr_init_common(vkr *r, const vkr_options *opt)
{
	r->opt = opt;
	r->d = &r->none;
	trace_arena_init(&r->arena);
	r->h_buffer = vk_handle_lookup("VkBuffer");
	r->h_image = vk_handle_lookup("VkImage");
	r->h_descriptor_set = vk_handle_lookup("VkDescriptorSet");
	r->h_memory = vk_handle_lookup("VkDeviceMemory");
	r->h_physical = vk_handle_lookup("VkPhysicalDevice");
	r->h_surface = vk_handle_lookup("VkSurfaceKHR");
	r->h_swapchain = vk_handle_lookup("VkSwapchainKHR");
	r->h_semaphore = vk_handle_lookup("VkSemaphore");
	r->h_fence = vk_handle_lookup("VkFence");
	r->h_queue = vk_handle_lookup("VkQueue");
	r->h_device = vk_handle_lookup("VkDevice");
	r->h_instance = vk_handle_lookup("VkInstance");
	r->h_command_buffer = vk_handle_lookup("VkCommandBuffer");
	r->h_command_pool = vk_handle_lookup("VkCommandPool");
	r->s_allocator = vk_struct_lookup("VkAllocationCallbacks");
	r->s_range = vk_struct_lookup("VkImageSubresourceRange");
	r->s_layers = vk_struct_lookup("VkImageSubresourceLayers");
	r->s_one = vk_struct_lookup("VkImageSubresource");
	r->iface = vk_iface_new();
	null_ok_init(r);
}

int vkr_run(trace_reader *in, const vkr_options *opt)
{
	static vkr rs;
	vkr *r = &rs;
	vkr_init_common(r, opt);
	r->dopt = opt->dev;
	r->msgs = (vkd_messages){.prog = opt->dev.prog, .quiet = opt->dev.quiet_validation,
				 .about = about_call, .ctx = r, .ignore = vkr_warm_thread};
	r->dopt.messages = &r->msgs;
	r->none.fns = trace_xcalloc(vk_ncommands, sizeof(*r->none.fns));
	r->none.fn_done = trace_xcalloc(vk_ncommands, 1);
	if (vk_ncalls != vk_ncommands) {
		fprintf(stderr, "trace-replay: the generated thunks do not match the schema\n");
		return 1;
	}
	vkr_parse_header_memory(r, trace_reader_header(in));
	trace_frames_init(&r->frames);
	r->in = in;
	r->t_start = r->t_last_frame = vkr_now_s();
	r->ticks_start = vkr_ticks();
	trace_call *c;
	int k = 0;
	uint64_t records = 0;
	/* --loop: the records before the range replay as they come, the
	 * range's are kept, then replayed opt->loop times */
	bool looping = opt->loop > 1;
	if (looping)
		vkr_loop_init(r);
	if (opt->dump || opt->ndump_handles)
		vkr_dump_init(r);
	trace_arena_init(&r->held.arena);
	r->merge = !opt->submits_as_captured && !looping && !r->dump;
	r->ahead_on = !opt->waits_as_captured && !looping && !r->dump;
	/* (the environment's for measuring: queue.c's MERGE_FRAMES) */
	const char *mf = getenv("TRACE_REPLAY_MERGE_FRAMES");
	r->merge_frames = mf && *mf ? (uint32_t)strtoul(mf, NULL, 10) : MERGE_FRAMES;
	if (r->merge_frames < 1 || r->merge_frames > 64)
		r->merge_frames = MERGE_FRAMES;
	const char *end = getenv("TRACE_REPLAY_AHEAD_END");
	r->ahead_end_at = end && *end ? strtoull(end, NULL, 10) + 1 : 0;
	const char *poison = getenv("TRACE_REPLAY_POISON");
	r->poison = poison && *poison && strcmp(poison, "0");
	vkr_watchdog_start(r);
	uint64_t last_whole = 0;
	bool preload = opt->preload && !looping && !r->dump;
	/* (--loop and --preload keep copies, without what the hook made) */
	r->decode_ahead = trace_reader_decode_ahead(in, looping || preload ? NULL : vkr_decode_hook,
						    NULL);
	while (!r->stop && (k = trace_reader_next(in, &c, &r->err)) > 0) {
		if (trace_call_out_of_place(c, &last_whole))
			continue;
		r->call = c;
		int64_t f = trace_frames_next(&r->frames, c, &r->err);
		if (f < 0)
			vkr_fatal(r, "%s", r->err.msg);
		trace_cli_progress(in, ++records);
		if (looping && f >= opt->first_frame) {
			vkr_keep(r, c, f, r->frames.ended);
			if (r->frames.ended && opt->last_frame >= 0 && f >= opt->last_frame)
				break;
			continue;
		}
		if (preload && f >= opt->first_frame) {
			preload = false;
			if ((k = vkr_preload(r, in, c, f, &last_whole, &records)) <= 0)
				break;
			continue;
		}
		r->frame = f;
		vkr_replay_call(r, c);
		if (r->dump)
			vkr_dump_after(r, c);
		trace_arena_reset(&r->arena);
		if (r->frames.ended)
			vkr_frame_ended(r, f);
	}
	trace_cli_progress_done();
	vkr_send_held(r);
	r->call = NULL;
	if (!r->stop && k < 0) {
		trace_error_print(&r->err, trace_cli_self.prog, stderr);
		vkr_exit_failed(r);
	}
	if (looping) {
		vkr_loop_check(r);
		r->t_last_frame = vkr_now_s();
		vkr_loop_run(r);
		vkr_loop_free(r);
	}
	vkr_watchdog_phase("the replay's end, waiting for the device");
	for (size_t i = 0; i < r->ndevs; i++) {
		r->d = r->devs[i];
		vkDeviceWaitIdle(r->d->vk.device);
		vkr_gpu_poll(r, true);
	}
	double total = vkr_now_s() - r->t_start;
	/* frames per second end at the last frame's present, not after the
	 * records that follow it (the program's teardown: vkDestroyDevice and
	 * vkDestroyInstance alone took 57 ms on an NVIDIA H200, 19 frames'
	 * worth of a 300-frame vkcube); --loop's passes end here */
	if (r->frames_done && looping)
		r->t_last_frame = vkr_now_s();
	if (r->next_shot < opt->nscreenshots)
		vkr_warn(r, "frame %llu: never presented, no screenshot",
			 (unsigned long long)opt->screenshots[r->next_shot]);
	if (opt->stats) {
		trace_reader_ahead_waits(in, &r->decode_waits);
		vkr_print_stats(r, total);
	}
	bool dumped = !r->dump || vkr_dump_finish(r);
	fflush(stdout);
	/* a stream that ends early (trace-trim, --frames) leaves the device */
	vkr_close_all(r);
	vkr_watchdog_stop();
	vkr_warnings_done(r);
	vkr_free_devices_state(r);
	tmap_free(&r->handles);
	tmap_free(&r->cbs);
	vk_iface_free(r->iface);
	for (size_t i = 0; i < r->sigs.cap; i++)
		if (tmap_used(&r->sigs, i))
			free((cmd_entry *)(uintptr_t)r->sigs.vals[i]);
	tmap_free(&r->sigs);
	free(r->frame_times);
	free(r->frame_gpu);
	vkr_times_free(r);
	trace_arena_free(&r->arena);
	int status = dumped ? 0 : 1;
	vkd_messages_end(&r->msgs);
	if (r->msgs.errors) {
		fprintf(stderr, "%s: %s: %llu validation error%s\n", trace_cli_self.prog, opt->input,
			(unsigned long long)r->msgs.errors, r->msgs.errors == 1 ? "" : "s");
		status = 1;
	}
	if (r->errors) {
		fprintf(stderr, "%s: %s: %llu call%s failed that succeeded at capture\n",
			trace_cli_self.prog, opt->input, (unsigned long long)r->errors,
			r->errors == 1 ? "" : "s");
		status = 1;
	}
	return status;
}
