/*
 * trim: the entry points of vktrim.h.  Each call is classified once per
 * signature (how it changes the state) and routed: before the range to
 * state.c or vma_trim.c; in the range, its walk here: the objects it
 * names are the roots, and what it does that the setup must know (the
 * buffer bytes it may read, the first uses that discard contents, the
 * bytes the host writes before the GPU sees them).
 */
#include "trim_internal.h"

/* ------------------------------------------------------------------ */
/* Classifying calls: how a function changes the state, once a signature. */

/* Whether function N is BASE, or BASE with a KHR or EXT suffix. */
bool trim_named(const char *n, const char *base)
{
	size_t k = strlen(base);
	return !strncmp(n, base, k) && (!n[k] || !strcmp(n + k, "KHR") || !strcmp(n + k, "EXT"));
}

/* A question whose answer changes nothing and that replay does not use:
 * what the device supports, how big a layout would be.  The application
 * acted on the answers before the range; the setup need not ask again.
 * Memory properties stay (replay maps memory types with them), and so do
 * queries that return handles (displays). */
static bool query(const char *n, const vk_command_info *cmd)
{
	static const char *const asked[] = {
		"vkEnumerateDeviceExtensionProperties", "vkEnumerateDeviceLayerProperties",
		"vkEnumerateInstanceExtensionProperties", "vkEnumerateInstanceLayerProperties",
		"vkEnumerateInstanceVersion", "vkGetDescriptorSetLayoutSupport",
		"vkGetDeviceBufferMemoryRequirements", "vkGetDeviceImageMemoryRequirements",
		"vkGetDeviceImageSparseMemoryRequirements",
	};
	if (cmd->action != VK_ACTION_USE)
		return false;
	for (size_t i = 0; i < sizeof(asked) / sizeof(*asked); i++)
		if (trim_named(n, asked[i]))
			return true;
	return !strncmp(n, "vkGetPhysicalDevice", 19) &&
	       strncmp(n, "vkGetPhysicalDeviceMemoryProperties", 35);
}

static enum kind vk_kind(const char *n, const vk_command_info *cmd)
{
	static const struct {
		const char *name;
		enum kind k;
	} by_name[] = {
		{"vkAcquireNextImage", K_SYNC}, {"vkAcquireNextImage2", K_SYNC},
		{"vkQueuePresent", K_SYNC}, {"vkQueueBindSparse", K_SYNC},
		{"vkWaitForFences", K_DROP}, {"vkGetFenceStatus", K_DROP},
		{"vkWaitSemaphores", K_DROP}, {"vkGetSemaphoreCounterValue", K_DROP},
		{"vkQueueWaitIdle", K_DROP}, {"vkDeviceWaitIdle", K_DROP},
		{"vkGetQueryPoolResults", K_DROP}, {"vkMapMemory", K_DROP}, {"vkMapMemory2", K_DROP},
		{"vkUnmapMemory", K_DROP}, {"vkUnmapMemory2", K_DROP},
		{"vkFlushMappedMemoryRanges", K_DROP}, {"vkInvalidateMappedMemoryRanges", K_DROP},
		{"vkGetEventStatus", K_DROP}, {"vkSetEvent", K_EVENT}, {"vkResetEvent", K_EVENT},
		{"vkGetSwapchainStatusKHR", K_DROP}, {"vkGetDeviceMemoryCommitment", K_DROP},
		{"vkGetInstanceProcAddr", K_DROP}, {"vkGetDeviceProcAddr", K_DROP},
		{"vkQueueSubmit", K_SUBMIT}, {"vkQueueSubmit2", K_SUBMIT2},
		{"vkBeginCommandBuffer", K_BEGIN}, {"vkEndCommandBuffer", K_RECORD},
		{"vkResetCommandBuffer", K_RESET_CB}, {"vkResetCommandPool", K_RESET_CMD_POOL},
		{"vkResetDescriptorPool", K_RESET_DESC_POOL}, {"vkResetFences", K_RESET_FENCES},
		{"vkSignalSemaphore", K_SIGNAL}, {"vkUpdateDescriptorSets", K_UPDATE_SETS},
		/* the physical devices: objects of their instance, that the
		 * devices made on them need (a headless trace lost its
		 * instance where the range did not name it) */
		{"vkEnumeratePhysicalDevices", K_CREATE},
		{"vkEnumeratePhysicalDeviceGroups", K_CREATE},
	};
	/* trim_named() matches a name whole (but for a KHR or EXT suffix):
	 * no two entries match one function */
	for (size_t i = 0; i < sizeof(by_name) / sizeof(*by_name); i++)
		if (trim_named(n, by_name[i].name))
			return by_name[i].k;
	if (query(n, cmd))
		return K_DROP;
	switch (cmd->action) {
	case VK_ACTION_CREATE:
	case VK_ACTION_ALLOCATE:
	case VK_ACTION_GET: return K_CREATE;
	case VK_ACTION_DESTROY:
	case VK_ACTION_FREE: return K_DESTROY;
	case VK_ACTION_RECORD: return K_RECORD;
	default: return K_OTHER;
	}
}

enum kind trim_kind_of(trim *t, const trace_func_sig *sig, const vk_command_info **cmd)
{
	uint64_t v;
	*cmd = NULL;
	if (tmap_get(&t->cmds, sig, &v))
		*cmd = (const vk_command_info *)(uintptr_t)v;
	if (tmap_get(&t->kinds, sig, &v))
		return (enum kind)(v - 1);
	const char *n = sig->name;
	enum kind k = K_UNSEEN;
	if (t->api == TRIM_VMA) {
		k = trim_vma_kind(n);
	} else if (vk_is_update(n)) {
		k = K_UPDATE;
	} else if (!strncmp(n, "tracekit.", 9)) {
		k = K_DROP;
	} else if ((*cmd = trace_vk_command(n))) {
		k = vk_kind(n, *cmd);
		tmap_put(&t->cmds, sig, (uint64_t)(uintptr_t)*cmd);
		/* descriptors in buffers show images no handle names */
		if (strstr(n, "DescriptorBuffer") || trim_named(n, "vkGetDescriptorEXT"))
			t->descriptor_buffers = true;
	}
	tmap_put(&t->kinds, sig, (uint64_t)k + 1);
	return k;
}

/* ------------------------------------------------------------------ */
/* Before the range. */

static void set_where(trace_error *err, const trace_call *c)
{
	err->call = (int64_t)c->no;
	err->offset = c->offset;
}

int trim_before(trim *t, const trace_call *c, trace_error *err)
{
	const vk_command_info *cmd;
	enum kind k = trim_kind_of(t, c->sig, &cmd);
	t->err = err;
	if (k == K_UNSEEN) {
		trace_error_set(err, "%s is not a %s call: trace-trim cuts Vulkan captures and "
				"VMA recordings", c->sig->name,
				t->api == TRIM_VMA ? "VMA" : "Vulkan");
		set_where(err, c);
		return -1;
	}
	int rc = t->api == TRIM_VMA ? trim_vma_before(t, c, k) : trim_vk_before(t, c, k, cmd);
	if (rc < 0)
		set_where(err, c);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The range: what it names, what it may read, what it overwrites first. */

/* O (NULL: none) is a root: the setup makes it and what it needs. */
void range_root(trim *t, obj *o)
{
	if (o && !tmap_get(&t->rooted, o, NULL)) {
		tmap_put(&t->rooted, o, 1);
		vec_push(&t->roots, o);
	}
}

/* A submit of the range: the uses of what its command buffers name are
 * the range's, after those of the submits before it. */
static void range_submit(trim *t, const finds *in)
{
	t->range_submitted = true;
	for (uint32_t i = 0; i < in->n; i++) {
		const vk_handle_info *hcb = trim_types.command_buffer;
		obj *cb = in->v[i].h == hcb ? range_cb_lookup(t, in->v[i].value) : NULL;
		if (!cb)
			continue;
		touch_before(t, cb);
		for (uint32_t k = 0; k < cb->rt.n; k++)
			firsts_then(&cb->rt.v[k].o->range_first, &cb->rt.v[k].f);
	}
}

/* A present shows a swapchain's image as it is: what it held matters,
 * and the setup makes it (vkGetSwapchainImagesKHR) even where nothing
 * else in the range names it (a range that begins at the present). */
static void range_present(trim *t, const vk_args_vkQueuePresentKHR *a)
{
	const VkPresentInfoKHR *pi = a->pPresentInfo;
	for (uint32_t i = 0; pi && pi->pSwapchains && i < pi->swapchainCount; i++) {
		obj *sc = obj_lookup(t, trim_types.swapchain, (uint64_t)pi->pSwapchains[i]);
		int64_t idx = pi->pImageIndices ? (int64_t)pi->pImageIndices[i] : -1;
		for (size_t k = 0; sc && k < t->objs.cap; k++) {
			obj *x = t->objs.slot[k];
			if (!x || x->h != trim_types.image || !vec_has(&x->deps, sc))
				continue;
			if (idx < 0 || x->index < 0 || x->index == idx) {
				use_then(&x->range_first, USE_READ, obj_subs(x));
				range_root(t, x);
			}
		}
	}
}

static void range_update_sets(trim *t, const vk_args_vkUpdateDescriptorSets *a)
{
	bsink k = {NULL, &t->range_reads};
	for (uint32_t i = 0; i < a->descriptorWriteCount; i++)
		write_reads(t, &k, &a->pDescriptorWrites[i]);
	for (uint32_t i = 0; i < a->descriptorCopyCount; i++) {
		const obj *from = obj_lookup(t, trim_types.descriptor_set,
					     (uint64_t)a->pDescriptorCopies[i].srcSet);
		for (uint32_t j = 0; from && j < from->nbd; j++)
			breads_add(&t->range_reads, from->bd[j].r.o, from->bd[j].r.off,
				   from->bd[j].r.end);
	}
}

/* A template the range makes: the entries its writes are read with. */
static void range_template(trim *t, const vk_command_info *cmd, const void *args)
{
	const VkDescriptorUpdateTemplateCreateInfo *ci =
		((const vk_args_vkCreateDescriptorUpdateTemplate *)args)->pCreateInfo;
	finds out = {0};
	vk_walk_handles(cmd, (void *)args, true, finds_add, &out);
	if (out.n && ci) {
		obj *o = trace_xcalloc(1, sizeof(*o));
		obj_template(o, ci);
		vec_push(&t->range_tmpls, o);
		tmap_put(&t->range_tmpl, (void *)(uintptr_t)out.v[0].value, (uint64_t)(uintptr_t)o);
	}
	free(out.v);
}

/* Descriptor sets the range allocates: objects of its own, what each
 * shows followed as for the sets from before (set_slot), so that the
 * range's draws read of one the bindings their shaders read
 * (range_draw_reads), not all that its updates name.  vkd3d allocates
 * and writes its sets each frame: the storage image its clear shaders
 * only write made a one-frame cut of a Direct3D 12 program run every
 * earlier frame again.  A set named by a command other than a bind
 * vk_iface follows (and an update after that, update-after-bind) reads
 * all it shows. */
obj *range_set_of(trim *t, uint64_t handle)
{
	uint64_t x;
	return tmap_get(&t->range_set, (void *)(uintptr_t)handle, &x) ? (obj *)(uintptr_t)x : NULL;
}

/* The range allocated set HANDLE: it shows nothing yet. */
static void range_set_made(trim *t, uint64_t handle)
{
	obj *o = range_set_of(t, handle);
	if (!o) {
		o = trace_xcalloc(1, sizeof(*o));
		o->h = trim_types.descriptor_set;
		o->handle = handle;
		vec_push(&t->range_sets, o);
		tmap_put(&t->range_set, (void *)(uintptr_t)handle, (uint64_t)(uintptr_t)o);
	}
	o->nslots = 0;
	showing_unref(o->now);
	o->now = NULL;
	o->range_use = 0;
}

/* Whether update N (ARGS) writes only sets the range allocated that no
 * command named yet: what it names, the draws that read it read
 * (range_draw_reads), not the update (range_names). */
static bool range_update_deferred(trim *t, const char *n, const void *args)
{
	if (trim_named(n, "vkUpdateDescriptorSets")) {
		const vk_args_vkUpdateDescriptorSets *a = args;
		if (a->descriptorCopyCount || !a->descriptorWriteCount || !a->pDescriptorWrites)
			return false;
		for (uint32_t i = 0; i < a->descriptorWriteCount; i++) {
			const obj *s = range_set_of(t, (uint64_t)a->pDescriptorWrites[i].dstSet);
			if (!s || s->range_use)
				return false;
		}
		return true;
	}
	if (trim_named(n, "vkUpdateDescriptorSetWithTemplate")) {
		const obj *s = range_set_of(t,
			(uint64_t)((const vk_args_vkUpdateDescriptorSetWithTemplate *)args)->descriptorSet);
		return s && !s->range_use;
	}
	return false;
}

/* The sets the range allocated that record K of CMD names (IN, its
 * handles as found): named from now on; read whole but at a bind
 * vk_iface follows (then its draws read what they read). */
static void range_sets_named(trim *t, enum kind k, const vk_command_info *cmd, const finds *in)
{
	if (cmd->action == VK_ACTION_ALLOCATE || cmd->action == VK_ACTION_FREE ||
	    cmd->action == VK_ACTION_DESTROY)
		return;
	bool bind = (k == K_RECORD || k == K_BEGIN) && in->n &&
		    in->v[0].h == trim_types.command_buffer &&
		    !strcmp(cmd->sig.name, "vkCmdBindDescriptorSets");
	for (uint32_t i = 0; i < in->n; i++) {
		obj *s = in->v[i].h == trim_types.descriptor_set ? range_set_of(t, in->v[i].value)
								  : NULL;
		if (!s)
			continue;
		s->range_use = 1;
		if (!bind || !vk_iface_set_bound(t->iface, in->v[0].value, s->handle))
			range_set_named(t, s);
	}
}

/* What the range does that the setup must know: the buffer bytes it may
 * read, the first uses that discard contents, the bytes the host writes
 * before the GPU sees them. */
static void range_effects(trim *t, const trace_call *c, enum kind k, const vk_command_info *cmd,
			  const void *args, const finds *in)
{
	const char *n = cmd->sig.name;
	obj *cb = k == K_BEGIN || k == K_RECORD ? finds_command_buffer(t, in) : NULL;
	buffer_host_use(t, n, in);
	if (cb) {
		if (k == K_BEGIN) {
			cb->rt.n = 0;
			cb->rstate = 2;
		} else {
			touch_before(t, cb);
		}
		t->binds_only = bind_followed(t, n, cb->handle, in);
		touch_cmd(t, cb, &cb->rt, cmd, args, in, true);
		t->binds_only = false;
		if (trim_cmd_class(t, cmd) & TC_SHADERS)
			range_draw_reads(t, cb, n);
		cmd_reads(t, c, cmd, args, in, &t->range_reads);
	} else if (k == K_SUBMIT || k == K_SUBMIT2) {
		range_submit(t, in);
	} else if (trim_named(n, "vkQueuePresentKHR")) {
		range_present(t, args);
	} else if (k == K_UPDATE_SETS) {
		range_update_sets(t, args);
		range_set_update(t, c, cmd, args, in);
	} else if (trim_named(n, "vkUpdateDescriptorSetWithTemplate")) {
		bsink sk = {NULL, &t->range_reads};
		template_reads(t, &sk, c, cmd, args);
		range_set_update(t, c, cmd, args, in);
	} else if (trim_named(n, "vkCreateDescriptorUpdateTemplate")) {
		range_template(t, cmd, args);
	} else if (strstr(n, "Copy") && strncmp(n, "vkCmd", 5)) {
		/* a host copy reads images as they are */
		for (uint32_t i = 0; i < in->n; i++) {
			obj *o = in->v[i].h == trim_types.image
					 ? obj_lookup(t, trim_types.image, in->v[i].value)
					 : NULL;
			if (o)
				use_then(&o->range_first, USE_READ, obj_subs(o));
		}
	}
}

/* The host writes these bytes before the range's first submit: what was
 * there before cannot matter. */
static int range_update(trim *t, const trace_call *c)
{
	vk_update u;
	obj *o;
	if (content_update_read(t, c, &u, &o) < 0)
		return -1;
	range_root(t, o);
	/* a sparse one leaves the bytes between its words as they were */
	if (o && !t->range_submitted && !u.mask)
		spans_add(&o->covered, u.offset, span_upto(u.offset, u.len));
	return 0;
}

int trim_range(trim *t, const trace_call *c, trace_error *err)
{
	const vk_command_info *cmd;
	enum kind k = trim_kind_of(t, c->sig, &cmd);
	t->err = err;
	if (t->api == TRIM_VMA) {
		trim_vma_range(t, c, k);
		return 0;
	}
	if (k == K_UPDATE) {
		if (range_update(t, c) < 0) {
			set_where(err, c);
			return -1;
		}
		return 0;
	}
	if (!cmd) {
		if (k == K_UNSEEN) {
			trace_error_set(err, "%s is not a Vulkan call: trace-trim cuts Vulkan "
					"captures and VMA recordings", c->sig->name);
			set_where(err, c);
			return -1;
		}
		return 0;
	}
	void *args;
	if (trim_decode(&t->scratch, cmd, c, &args, err) < 0 ||
	    trim_known(t, cmd, args, err) < 0) {
		set_where(err, c);
		return -1;
	}
	if (trim_cmd_class(t, cmd) & TC_IFACE) {
		/* what the range binds and draws with (range_draw_reads) */
		trace_error ignored = {0};
		vk_iface_note(t->iface, cmd, args, vk_record_result(c) < 0, &ignored);
	}
	finds in = {0};
	call_handles(t, c, cmd, args, &in);
	bool deferred = range_update_deferred(t, cmd->sig.name, args);
	if (!deferred)
		range_sets_named(t, k, cmd, &in);
	/* a handle the range made names its own object from then on, not
	 * the one it named before: Qt's hellovulkancubes destroys its
	 * swapchain as its window is resized, then makes an image that
	 * comes back with the handle of one of the swapchain's; taken for
	 * that one (its view's create named it), the previous frame's
	 * submit was run again */
	uint32_t kept = 0;
	bool from_made = false;  /* (a get's objects: of something it made) */
	for (uint32_t i = 0; i < in.n; i++) {
		if (!tmap_at(&t->range_made, in.v[i].value, (uint64_t)(uintptr_t)in.v[i].h))
			in.v[kept++] = in.v[i];
		else if (!in.v[i].h->dispatchable)
			from_made = true;
	}
	in.n = kept;
	t->in_range = true;
	for (uint32_t i = 0; i < in.n; i++) {
		if (in.v[i].h == trim_types.command_buffer &&
		    tmap_get(&t->range_cb, (void *)(uintptr_t)in.v[i].value, NULL))
			continue;  /* one of its own (range_cbs) */
		obj *o = obj_lookup(t, in.v[i].h, in.v[i].value);
		range_root(t, o);
		/* a command buffer the range records afresh before it
		 * submits it does not need its recording from before */
		if (o && o->h == trim_types.command_buffer && !o->range_use)
			o->range_use = k == K_BEGIN && i == 0 ? 1 : 2;
	}
	/* what a call of the host names (a view it makes, a set it writes,
	 * one the range made), it may read: its commands' uses tell no more;
	 * a destroy reads nothing of what it ends (Qt's hellovulkancubes
	 * destroys the framebuffers of its swapchain's images as its window
	 * is resized: their last frame's submit was run again) */
	if (k != K_BEGIN && k != K_RECORD && cmd->action != VK_ACTION_DESTROY &&
	    cmd->action != VK_ACTION_FREE && !deferred)
		range_names(t, cmd, args, &in);
	range_effects(t, c, k, cmd, args, &in);
	t->in_range = false;
	free(in.v);
	if (cmd->action == VK_ACTION_CREATE || cmd->action == VK_ACTION_ALLOCATE ||
	    (cmd->action == VK_ACTION_GET && from_made)) {
		finds out = {0};
		vk_walk_handles(cmd, args, true, finds_add, &out);
		for (uint32_t i = 0; i < out.n; i++) {
			if (out.v[i].h == trim_types.descriptor_set && cmd->action == VK_ACTION_ALLOCATE)
				range_set_made(t, out.v[i].value);
			if (out.v[i].h != trim_types.command_buffer) {
				tmap_set(&t->range_made, out.v[i].value,
					 (uint64_t)(uintptr_t)out.v[i].h, 1);
				continue;
			}
			/* a command buffer of its own, for what the range
			 * records into it (Qt frees its command buffers as it
			 * makes the swapchain again, and allocates them anew) */
			obj *o = trace_xcalloc(1, sizeof(*o));
			o->h = trim_types.command_buffer;
			o->handle = out.v[i].value;
			vec_push(&t->range_cbs, o);
			tmap_put(&t->range_cb, (void *)(uintptr_t)o->handle, (uint64_t)(uintptr_t)o);
		}
		free(out.v);
	}
	return 0;
}

unsigned trim_cmd_class(trim *t, const vk_command_info *cmd)
{
	const uint64_t *p = tmap_at(&t->cmd_class, (uint64_t)(uintptr_t)cmd, 0);
	if (p)
		return (unsigned)(*p & 0xff);
	unsigned c = (vk_iface_wants(cmd) ? TC_IFACE : 0) |
		     (vk_iface_runs_shaders(cmd->sig.name) ? TC_SHADERS : 0);
	tmap_set(&t->cmd_class, (uint64_t)(uintptr_t)cmd, 0, c | 0x100);
	return c;
}

/* ------------------------------------------------------------------ */
/* A trim. */

trim *trim_new(trim_api api, trace_sigtab *sigs)
{
	trim *t = trace_xcalloc(1, sizeof(*t));
	trim_types_init();
	t->api = api;
	t->sigs = sigs;
	trace_arena_init(&t->scratch);
	t->iface = vk_iface_new();
	return t;
}

void trim_free(trim *t)
{
	if (!t)
		return;
	/* the roots were looked up, not referenced */
	vec_free(&t->roots);
	tmap_free(&t->rooted);
	tmap_free(&t->pruned);
	vec all = {0};
	for (size_t i = 0; i < t->objs.cap; i++)
		if (t->objs.slot[i])
			vec_push(&all, t->objs.slot[i]);
	/* kill first (dropping writers and recordings), then let go: of what
	 * they name first, for objects name each other (the descriptor sets
	 * one vkUpdateDescriptorSets writes) */
	for (uint32_t i = 0; i < all.n; i++) {
		obj *o = all.v[i];
		o->refs++;
		obj_kill(t, o, NULL);
	}
	for (uint32_t i = 0; i < all.n; i++) {
		obj *o = all.v[i];
		objs_release(&o->deps);
	}
	objs_release(&all);
	obj_graves_free(t);
	free(t->objs.slot);
	recs_release(&t->globals);
	rec_unref(t->last_time);
	breads_free(&t->range_reads);
	for (uint32_t i = 0; i < t->range_tmpls.n; i++) {
		obj *o = t->range_tmpls.v[i];
		free(o->tmpl);
		free(o);
	}
	vec_free(&t->range_tmpls);
	tmap_free(&t->range_tmpl);
	for (uint32_t i = 0; i < t->range_cbs.n; i++) {
		obj *o = t->range_cbs.v[i];
		free(o->rt.v);
		free(o);
	}
	vec_free(&t->range_cbs);
	tmap_free(&t->range_cb);
	for (uint32_t i = 0; i < t->range_sets.n; i++) {
		obj *o = t->range_sets.v[i];
		free(o->slots);
		showing_unref(o->now);
		free(o);
	}
	vec_free(&t->range_sets);
	tmap_free(&t->range_set);
	tmap_free(&t->known);
	tmap_free(&t->range_made);
	tmap_free(&t->kinds);
	tmap_free(&t->cmds);
	trace_arena_free(&t->scratch);
	vk_iface_free(t->iface);
	tmap_free(&t->cmd_class);
	free(t);
}
