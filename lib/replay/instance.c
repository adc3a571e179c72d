/*
 * Instances and devices: what the device lacks of what the trace enabled,
 * left out or refused; the replay's own command buffer; the teardown of
 * what a trace leaves alive.
 */
#include "replay_internal.h"

static bool platform_surface(const char *ext)
{
	size_t n = strlen(ext);
	return (n > 8 && !strcmp(ext + n - 8, "_surface") && strcmp(ext, "VK_KHR_surface")) ||
	       !strcmp(ext, "VK_KHR_xlib_surface") || !strcmp(ext, "VK_EXT_acquire_xlib_display");
}

/* Presentation extensions: kept where the device has them, else dropped
 * quietly (the replay presents nothing). */
static bool presentation_ext(const char *ext)
{
	return platform_surface(ext) || strstr(ext, "surface") || strstr(ext, "swapchain") ||
	       strstr(ext, "present") || strstr(ext, "display") || strstr(ext, "VK_KHR_display");
}

static bool in_props(const VkExtensionProperties *p, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(p[i].extensionName, name))
			return true;
	return false;
}

/* Extension X of the trace, kept where the implementation (HAVE) has it;
 * else dropped quietly if it is for presentation, or named in MISSING. */
static bool ext_kept(const VkExtensionProperties *have, uint32_t n, const char *x, char *missing,
		     size_t cap)
{
	if (in_props(have, n, x))
		return true;
	if (!presentation_ext(x)) {
		size_t k = strlen(missing);
		snprintf(missing + k, cap - k, "%s%s", k ? ", " : "", x);
	}
	return false;
}

/* The instance made on replay whose live instance, or live physical
 * device where PHYSICAL, is LIVE; or NULL. */
static vkd_device *instance_of(vkr *r, uint64_t live, bool physical)
{
	for (size_t i = 0; live && i < r->ninsts; i++) {
		vkd_device *d = &r->insts[i];
		uint64_t h = physical ? (uint64_t)(uintptr_t)d->physical
				      : (uint64_t)(uintptr_t)d->instance;
		if (h == live)
			return d;
	}
	return NULL;
}

/* With no device, none.vk is the first instance's: the instance-level
 * calls go through it. */
static void none_follows(vkr *r)
{
	vkr_device *n = &r->none;
	VkInstance was = n->vk.instance;
	if (r->ninsts)
		n->vk = r->insts[0];
	else
		memset(&n->vk, 0, sizeof(n->vk));
	if (n->vk.instance != was && n->fn_done)
		memset(n->fn_done, 0, vk_ncommands);
}

/* Physical device CAP_PHYSICAL of instance CAP_INSTANCE (capture values)
 * is, on replay, the one --gpu picked on that instance. */
void vkr_map_physical(vkr *r, uint64_t cap_instance, uint64_t cap_physical)
{
	uint64_t live = 0;
	vkd_device *d = vkr_map_get(r, r->h_instance, cap_instance, &live) ?
		instance_of(r, live, false) : NULL;
	if (!d)
		d = &r->insts[0];
	vkr_map_put(r, r->h_physical, cap_physical, (uint64_t)(uintptr_t)d->physical);
}

void vkr_create_instance(vkr *r, vk_args_vkCreateInstance *a)
{
	const VkInstanceCreateInfo *ci = a->pCreateInfo;
	uint32_t n = 0;
	vkEnumerateInstanceExtensionProperties(NULL, &n, NULL);
	VkExtensionProperties *have = trace_xcalloc(n, sizeof(*have));
	vkEnumerateInstanceExtensionProperties(NULL, &n, have);
	const char **exts = trace_xcalloc(ci ? ci->enabledExtensionCount + 1 : 1, sizeof(*exts));
	uint32_t nexts = 0;
	char missing[1024] = "";
	bool portability = false;
	for (uint32_t i = 0; ci && i < ci->enabledExtensionCount; i++) {
		const char *x = ci->ppEnabledExtensionNames[i];
		if (!x || platform_surface(x) || !ext_kept(have, n, x, missing, sizeof(missing)))
			continue;
		if (!strcmp(x, "VK_KHR_portability_enumeration"))
			portability = true;
		exts[nexts++] = x;
	}
	free(have);
	if (missing[0]) {
		if (!r->opt->remove_unsupported)
			vkr_fatal(r, "the instance lacks extensions the trace used: %s "
				  "(--remove-unsupported goes on without them)", missing);
		vkr_warn(r, "instance extensions left out (--remove-unsupported): %s", missing);
	}
	vkd_instance_request req = {
		.app = ci ? ci->pApplicationInfo : NULL,
		.flags = ci ? ci->flags : 0,
		.extensions = exts,
		.nextensions = nexts,
	};
	if (!portability)
		req.flags &= ~(VkInstanceCreateFlags)VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
	vkd_device inst;
	int k = vkd_open_instance(&inst, &r->dopt, &req, &r->err);
	free(exts);
	if (k == -2)
		trace_cli_usage_error("%s", r->err.msg);
	if (k < 0)
		vkr_fatal(r, "%s", r->err.msg);
	r->insts = trace_xrealloc(r->insts, (r->ninsts + 1) * sizeof(*r->insts));
	r->insts[r->ninsts++] = inst;
	r->have_instance = true;
	none_follows(r);
	vkr_map_put(r, r->h_instance, a->pInstance ? (uint64_t)(uintptr_t)*a->pInstance : 0,
		    (uint64_t)(uintptr_t)inst.instance);
	r->calls++;
}

/* Closes instance D, with the devices made on it that the trace left. */
static void close_instance(vkr *r, vkd_device *d)
{
	for (size_t i = r->ndevs; i-- > 0;)
		if (r->devs[i]->vk.instance == d->instance)
			vkr_end_device(r, r->devs[i]);
	vkd_close(d);
	*d = r->insts[--r->ninsts];
	none_follows(r);
	r->have_instance = r->ninsts > 0;
}

void vkr_destroy_instance(vkr *r, vk_args_vkDestroyInstance *a)
{
	uint64_t cap = (uint64_t)(uintptr_t)a->instance, live = 0;
	vkd_device *d = vkr_map_get(r, r->h_instance, cap, &live) ? instance_of(r, live, false) : NULL;
	if (!d)
		vkr_fatal(r, "instance: VkInstance 0x%llx was never made (or failed to replay)",
			  (unsigned long long)cap);
	close_instance(r, d);
	vkr_map_del(r, r->h_instance, cap);
	if (!r->have_instance)
		tmap_free(&r->handles);
}

/* At the end of the run: every device and instance the trace left. */
void vkr_close_all(vkr *r)
{
	while (r->ndevs)
		vkr_end_device(r, r->devs[r->ndevs - 1]);
	while (r->ninsts)
		close_instance(r, &r->insts[r->ninsts - 1]);
	free(r->insts);
	r->insts = NULL;
	free(r->devs);
	r->devs = NULL;
	tmap_free(&r->owners);
}

/* At the end of the run (replay's or --check's): what outlives devices. */
void vkr_free_devices_state(vkr *r)
{
	vkr_held_free(r);
	free(r->none.fns);
	free(r->none.fn_done);
	r->none.fns = NULL;
	r->none.fn_done = NULL;
	for (size_t i = 0; i < r->cap_mems.cap; i++)
		if (tmap_used(&r->cap_mems, i))
			free((void *)(uintptr_t)r->cap_mems.vals[i]);
	tmap_free(&r->cap_mems);
	tmap_free(&r->owners);
	tmap_free(&r->renamed_views);
}

/* ------------------------------------------------------------------ */
/* The devices alive, and which one a record runs on. */

vkr_device *vkr_device_by_cap(vkr *r, uint64_t cap)
{
	for (size_t i = 0; i < r->ndevs; i++)
		if (r->devs[i]->cap == cap)
			return r->devs[i];
	return NULL;
}

vkr_device *vkr_device_add(vkr *r, uint64_t cap, uint64_t cap_physical)
{
	vkr_device *d = trace_xcalloc(1, sizeof(*d));
	d->cap = cap;
	d->cap_physical = cap_physical;
	d->fns = trace_xcalloc(vk_ncommands, sizeof(*d->fns));
	d->fn_done = trace_xcalloc(vk_ncommands, 1);
	/* a second device: what the first made is the first's from now on */
	if (r->ndevs == 1) {
		for (size_t i = 0; i < r->handles.cap; i++) {
			if (!tmap_used(&r->handles, i))
				continue;
			const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)r->handles.kinds[i];
			if (h != r->h_device && h != r->h_instance && h != r->h_physical &&
			    h != r->h_surface)
				tmap_set(&r->owners, r->handles.keys[i], r->handles.kinds[i],
					 (uint64_t)(uintptr_t)r->devs[0]);
		}
	}
	r->devs = trace_xrealloc(r->devs, (r->ndevs + 1) * sizeof(*r->devs));
	r->devs[r->ndevs++] = d;
	r->d = d;
	return d;
}

void vkr_select_device_of(vkr *r, const vk_command_info *cmd, const void *args)
{
	const vk_field *f = &cmd->params[0];
	if (f->base != VK_B_HANDLE || f->ptr)
		return;
	uint64_t cap;
	memcpy(&cap, (const uint8_t *)args + f->offset, 8);
	vkr_device *d = NULL;
	if (f->ref == r->h_device) {
		d = vkr_device_by_cap(r, cap);
	} else {
		uint64_t *o = tmap_at(&r->owners, cap, (uintptr_t)f->ref);
		d = o ? (vkr_device *)(uintptr_t)*o : NULL;
	}
	/* unknown: its remap says so */
	if (d)
		r->d = d;
}

void vkr_owner_put(vkr *r, const vk_handle_info *h, uint64_t cap)
{
	if (r->ndevs > 1 && cap)
		tmap_set(&r->owners, cap, (uintptr_t)h, (uint64_t)(uintptr_t)r->d);
}

bool vkr_owned_by(vkr *r, const vk_handle_info *h, uint64_t cap, const vkr_device *d)
{
	if (r->ndevs <= 1)
		return true;
	uint64_t *o = tmap_at(&r->owners, cap, (uintptr_t)h);
	return o && *o == (uint64_t)(uintptr_t)d;
}

void vkr_device_remove(vkr *r, vkr_device *d)
{
	size_t i = 0;
	while (i < r->ndevs && r->devs[i] != d)
		i++;
	if (i == r->ndevs)
		return;
	r->d = d;
	vkr_fold_free(r);
	r->devs[i] = r->devs[--r->ndevs];
	if (!r->stats_props.deviceName[0]) {
		r->stats_props = d->vk.props;
		r->stats_memory = d->vk.memory;
	}
	for (uint32_t h = 0; h < VK_MAX_MEMORY_HEAPS; h++)
		if (d->vk.heap_stats[h].memory_peak > r->stats_peak[h])
			r->stats_peak[h] = d->vk.heap_stats[h].memory_peak;
	if (r->ndevs <= 1) {
		tmap_free(&r->owners);
	} else {
		for (size_t k = 0; k < r->owners.cap; k++)
			if (tmap_used(&r->owners, k) && r->owners.vals[k] == (uint64_t)(uintptr_t)d) {
				tmap_del(&r->owners, r->owners.keys[k], r->owners.kinds[k], NULL);
				k--;  /* the slot now holds what moved back into it */
			}
	}
	tmap_free(&d->queues);
	free(d->fns);
	free(d->fn_done);
	free(d);
	r->d = r->ndevs ? r->devs[0] : &r->none;
}

const VkPhysicalDeviceMemoryProperties *vkr_cap_mem(vkr *r)
{
	uint64_t *p = r->d->cap_physical ? tmap_at(&r->cap_mems, r->d->cap_physical, TAG_CAPMEM)
					 : NULL;
	if (p)
		return (const VkPhysicalDeviceMemoryProperties *)(uintptr_t)*p;
	return r->have_cap_mem ? &r->cap_mem : NULL;
}

void vkr_note_cap_mem(vkr *r, uint64_t cap_physical, const VkPhysicalDeviceMemoryProperties *p)
{
	r->cap_mem = *p;
	r->have_cap_mem = true;
	if (!cap_physical)
		return;
	uint64_t *e = tmap_at(&r->cap_mems, cap_physical, TAG_CAPMEM);
	VkPhysicalDeviceMemoryProperties *m = e ? (void *)(uintptr_t)*e : trace_xcalloc(1, sizeof(*m));
	*m = *p;
	tmap_set(&r->cap_mems, cap_physical, TAG_CAPMEM, (uint64_t)(uintptr_t)m);
}

void vkr_wait_all(vkr *r)
{
	for (size_t i = 0; i < r->ndevs; i++)
		if (r->devs[i]->vk.device)
			vkDeviceWaitIdle(r->devs[i]->vk.device);
}

/* Compares the VkBool32 members of WANT with HAVE (one struct, nested
 * structs followed); lists what the device lacks, cleared if asked. */
static void compare_features(vkr *r, const vk_struct_info *s, uint8_t *want, const uint8_t *have,
			     char *missing, size_t cap)
{
	for (uint32_t i = 0; i < s->nfields; i++) {
		const vk_field *f = &s->fields[i];
		if (f->ptr || f->count || (f->flags & (VK_F_PNEXT | VK_F_STYPE)))
			continue;
		if (f->base == VK_B_STRUCT) {
			compare_features(r, f->ref, want + f->offset, have + f->offset, missing, cap);
			continue;
		}
		if (f->base != VK_B_BOOL32)
			continue;
		uint32_t w, h;
		memcpy(&w, want + f->offset, 4);
		memcpy(&h, have + f->offset, 4);
		if (w && !h) {
			size_t k = strlen(missing);
			snprintf(missing + k, cap - k, "%s%s.%s", k ? ", " : "", s->sig.name, f->name);
			if (r->opt->remove_unsupported)
				memset(want + f->offset, 0, 4);
		}
	}
}

static void check_features(vkr *r, VkDeviceCreateInfo *ci, char *missing, size_t cap)
{
	if (ci->pEnabledFeatures) {
		VkPhysicalDeviceFeatures have;
		vkGetPhysicalDeviceFeatures(r->d->vk.physical, &have);
		compare_features(r, vk_struct_lookup("VkPhysicalDeviceFeatures"),
				 (uint8_t *)ci->pEnabledFeatures, (const uint8_t *)&have, missing, cap);
	}
	PFN_vkGetPhysicalDeviceFeatures2 get2 = (PFN_vkGetPhysicalDeviceFeatures2)
		vkGetInstanceProcAddr(r->d->vk.instance, "vkGetPhysicalDeviceFeatures2");
	if (!get2)
		get2 = (PFN_vkGetPhysicalDeviceFeatures2)
			vkGetInstanceProcAddr(r->d->vk.instance, "vkGetPhysicalDeviceFeatures2KHR");
	/* the chain: drop links that carry function pointers of the capture */
	base_out **pp = (base_out **)&ci->pNext;
	while (*pp) {
		base_out *b = *pp;
		const vk_struct_info *s = vk_struct_by_stype(b->sType);
		bool drop = false;
		for (uint32_t i = 0; s && !s->blob && i < s->nfields; i++)
			if (s->fields[i].base == VK_B_PTRVAL && !strncmp(s->fields[i].type, "PFN_", 4))
				drop = true;
		if (drop) {
			*pp = b->pNext;
			continue;
		}
		if (s && get2 && strstr(s->sig.name, "Features") &&
		    !strncmp(s->sig.name, "VkPhysicalDevice", 16)) {
			uint8_t *q = trace_xcalloc(1, s->size);
			((base_out *)q)->sType = b->sType;
			VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
			if (b->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2) {
				get2(r->d->vk.physical, (VkPhysicalDeviceFeatures2 *)q);
			} else {
				f2.pNext = q;
				get2(r->d->vk.physical, &f2);
			}
			compare_features(r, s, (uint8_t *)b, q, missing, cap);
			free(q);
		}
		pp = &b->pNext;
	}
}

void vkr_create_device(vkr *r, vk_args_vkCreateDevice *a)
{
	if (!r->have_instance)
		vkr_fatal(r, "vkCreateDevice before vkCreateInstance");
	/* the device's instance: the one whose physical device it names
	 * (the first where the trace has no record of that: a cut stream) */
	uint64_t live = 0, cap_physical = (uint64_t)(uintptr_t)a->physicalDevice;
	vkd_device *inst = vkr_map_get(r, r->h_physical, cap_physical, &live) ?
		instance_of(r, live, true) : NULL;
	vkr_device *d = vkr_device_add(r, a->pDevice ? (uint64_t)(uintptr_t)*a->pDevice : 0,
				       cap_physical);
	d->vk = inst ? *inst : r->insts[0];
	VkDeviceCreateInfo *ci = (VkDeviceCreateInfo *)a->pCreateInfo;
	if (!ci)
		vkr_fatal(r, "vkCreateDevice without pCreateInfo");
	/* a device group names the capture's physical devices: replay makes
	 * the device on the one it picked, a group of one (vulkaninfo makes
	 * such a device; the loader crashed on the capture's handles) */
	for (VkBaseOutStructure *b = (VkBaseOutStructure *)ci->pNext; b; b = b->pNext)
		if (b->sType == VK_STRUCTURE_TYPE_DEVICE_GROUP_DEVICE_CREATE_INFO) {
			VkDeviceGroupDeviceCreateInfo *g = (VkDeviceGroupDeviceCreateInfo *)b;
			if (g->physicalDeviceCount > 1)
				vkr_warn(r, "a device group of %u physical devices made on one",
					 g->physicalDeviceCount);
			if (g->physicalDeviceCount) {
				g->physicalDeviceCount = 1;
				g->pPhysicalDevices = &d->vk.physical;
			}
		}
	uint32_t n = 0;
	vkEnumerateDeviceExtensionProperties(d->vk.physical, NULL, &n, NULL);
	VkExtensionProperties *have = trace_xcalloc(n, sizeof(*have));
	vkEnumerateDeviceExtensionProperties(d->vk.physical, NULL, &n, have);
	const char **exts = trace_arena_alloc(&r->arena, sizeof(char *) * (ci->enabledExtensionCount + 2));
	uint32_t nexts = 0;
	char missing[2048] = "";
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++) {
		const char *x = ci->ppEnabledExtensionNames[i];
		if (x && ext_kept(have, n, x, missing, sizeof(missing)))
			exts[nexts++] = x;
	}
	if (in_props(have, n, "VK_KHR_portability_subset")) {
		bool there = false;
		for (uint32_t i = 0; i < nexts; i++)
			there |= !strcmp(exts[i], "VK_KHR_portability_subset");
		if (!there)
			exts[nexts++] = "VK_KHR_portability_subset";
	}
	free(have);
	if (missing[0]) {
		if (!r->opt->remove_unsupported)
			vkr_fatal(r, "%s lacks extensions the trace used: %s (--remove-unsupported goes "
				  "on without them)", d->vk.props.deviceName, missing);
		vkr_warn(r, "device extensions left out (--remove-unsupported): %s", missing);
	}
	ci->enabledExtensionCount = nexts;
	ci->ppEnabledExtensionNames = exts;
	ci->enabledLayerCount = 0;
	ci->ppEnabledLayerNames = NULL;
	missing[0] = 0;
	check_features(r, ci, missing, sizeof(missing));
	if (missing[0]) {
		if (!r->opt->remove_unsupported)
			vkr_fatal(r, "%s lacks features the trace enabled: %s (--remove-unsupported goes "
				  "on without them)", d->vk.props.deviceName, missing);
		vkr_warn(r, "features left out (--remove-unsupported): %s", missing);
	}
	/* queue families: as captured where the device has them */
	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(d->vk.physical, &nq, NULL);
	VkQueueFamilyProperties *qf = trace_xcalloc(nq, sizeof(*qf));
	vkGetPhysicalDeviceQueueFamilyProperties(d->vk.physical, &nq, qf);
	uint32_t family = UINT32_MAX;
	for (uint32_t i = 0; i < ci->queueCreateInfoCount; i++) {
		VkDeviceQueueCreateInfo *q = (VkDeviceQueueCreateInfo *)&ci->pQueueCreateInfos[i];
		if (q->queueFamilyIndex >= nq)
			vkr_fatal(r, "queue family %u: %s has %u", q->queueFamilyIndex,
				  d->vk.props.deviceName, nq);
		if (q->queueCount > qf[q->queueFamilyIndex].queueCount) {
			vkr_warn(r, "queue family %u: %u queues asked, %u there", q->queueFamilyIndex,
				 q->queueCount, qf[q->queueFamilyIndex].queueCount);
			q->queueCount = qf[q->queueFamilyIndex].queueCount;
		}
		if (family == UINT32_MAX || ((qf[q->queueFamilyIndex].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
					     !(qf[family].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
			family = q->queueFamilyIndex;
	}
	free(qf);
	if (family == UINT32_MAX)
		vkr_fatal(r, "vkCreateDevice with no queue");
	VkDevice dev;
	VkResult res = vkCreateDevice(d->vk.physical, ci, NULL, &dev);
	r->calls++;
	if (res != VK_SUCCESS)
		vkr_fatal(r, "vkCreateDevice on %s failed: %s (%d)", d->vk.props.deviceName,
			  vkr_result_name(res), res);
	VkQueue queue;
	vkGetDeviceQueue(dev, family, 0, &queue);
	vkd_attach_device(&d->vk, dev, family, queue);
	vkr_queues_made(r, ci);
	if (r->opt->stats) {
		d->nfamilies = nq;
		d->timers = trace_xcalloc(nq, sizeof(*d->timers));
	}
	vkr_map_put(r, r->h_device, a->pDevice ? (uint64_t)(uintptr_t)*a->pDevice : 0,
		    (uint64_t)(uintptr_t)dev);
	if (vkd_own_commands(dev, family, &d->pool, &d->cb, &d->fence) != VK_SUCCESS)
		vkr_fatal(r, "cannot make the replay's own command buffer");
	vk_iface_set_max_viewports(r->iface, d->vk.props.limits.maxViewports);
	if (d->vk.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
		vkr_watchdog_cpu_device(r);
	vkr_warm_start(r, d);
}

/* The vkDestroyX(device, handle, pAllocator) of handle type H, or NULL. */
const vk_command_info *vkr_destroyer(vkr *r, const vk_handle_info *h)
{
	for (uint32_t i = 0; i < vk_ncommands; i++) {
		const vk_command_info *c = vk_commands[i];
		if (c->action == VK_ACTION_DESTROY && c->object == h && c->nparams == 3 &&
		    !c->alias_of && !strcmp(c->params[0].type, "VkDevice") &&
		    c->params[1].base == VK_B_HANDLE && !c->params[1].ptr &&
		    c->params[2].ref == r->s_allocator)
			return c;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* What a device ends with it: each value of a map that is the device's,
 * out of the map, then ended. */

static void end_of_device(vkr *r, tmap *m, uint64_t kind, vkr_device *d,
			  vkr_device *(*dev_of)(uint64_t), void (*end)(vkr *, uint64_t))
{
	for (size_t i = 0; i < m->cap; i++)
		if (tmap_used(m, i) && dev_of(m->vals[i]) == d) {
			uint64_t v = m->vals[i];
			tmap_del(m, m->keys[i], kind, NULL);
			i--;  /* the slot now holds what moved back into it */
			end(r, v);
		}
}

static vkr_device *swapchain_dev(uint64_t v) { return ((swapchain *)(uintptr_t)v)->dev; }
static vkr_device *obj_dev(uint64_t v) { return ((obj *)(uintptr_t)v)->dev; }
static vkr_device *mem_dev(uint64_t v) { return ((memobj *)(uintptr_t)v)->dev; }

static void end_swapchain(vkr *r, uint64_t v)
{
	vkr_destroy_swapchain(r, (swapchain *)(uintptr_t)v);
}

static void end_obj(vkr *r, uint64_t v)
{
	vkr_release_obj(r, (obj *)(uintptr_t)v);
	free((obj *)(uintptr_t)v);
}

static void end_mem(vkr *r, uint64_t v)
{
	(void)r;
	free((memobj *)(uintptr_t)v);
}

void vkr_forget_swapchains(vkr *r, vkr_device *d)
{
	end_of_device(r, &r->swapchains, TAG_SWAPCHAIN, d, swapchain_dev, end_swapchain);
}

void vkr_forget_objects(vkr *r, vkr_device *d, void (*end)(vkr *r, uint64_t o))
{
	end_of_device(r, &r->objects, TAG_OBJ, d, obj_dev, end);
	end_of_device(r, &r->mems, TAG_MEM, d, mem_dev, end_mem);
}

/*
 * Frees what the replay made for device D, and what the trace left alive
 * of it (a stream cut by --frames or trace-trim): before vkDestroyDevice.
 * Command buffers and descriptor sets go with their pools.
 */
void vkr_device_teardown(vkr *r, vkr_device *d)
{
	vkr_send_held(r);
	if (!d->vk.device)
		return;
	r->d = d;
	vkDeviceWaitIdle(d->vk.device);
	vkr_ahead_free(r, d);
	vkr_uniforms_free(d);
	vkr_timelines_free(r, d);
	vkr_gpu_poll(r, true);
	vkr_gpu_timers_free(r);
	vkr_forget_swapchains(r, d);
	typedef void (VKAPI_PTR *destroy_fn)(VkDevice, uint64_t, const VkAllocationCallbacks *);
	const vk_handle_info *last = NULL;
	destroy_fn fn = NULL;
	for (size_t i = 0; i < r->handles.cap; i++) {
		uint64_t *live = &r->handles.vals[i];
		if (!tmap_used(&r->handles, i) || !*live)
			continue;
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)r->handles.kinds[i];
		if (h->dispatchable || h == r->h_swapchain || h == r->h_surface ||
		    !vkr_owned_by(r, h, r->handles.keys[i], d))
			continue;
		if (h != last) {
			const vk_command_info *c = vkr_destroyer(r, h);
			fn = c ? (destroy_fn)vkGetDeviceProcAddr(d->vk.device, c->sig.name) : NULL;
			last = h;
		}
		if (fn) {
			fn(d->vk.device, *live, NULL);
			*live = 0;
		}
	}
	vkr_forget_objects(r, d, end_obj);
	if (r->ndevs <= 1)
		vkr_free_templates(r);
	vkr_fold_free(r);
	vkd_own_commands_free(d->vk.device, &d->pool, &d->cb, &d->fence);
}

void vkr_end_device(vkr *r, vkr_device *d)
{
	vkr_warm_stop(r, d);
	vkr_device_teardown(r, d);
	if (r->dump)
		vkr_dump_end_device(r);
	vkd_close_device(&d->vk);
	vkr_device_remove(r, d);
}
