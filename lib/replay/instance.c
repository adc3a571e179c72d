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

/* The instance made on replay (r->dev or one of r->others) whose live
 * instance, or live physical device where PHYSICAL, is LIVE; or NULL. */
static vkd_device *instance_of(vkr *r, uint64_t live, bool physical)
{
	for (size_t i = 0; live && i <= r->nothers; i++) {
		vkd_device *d = i ? &r->others[i - 1] : &r->dev;
		uint64_t h = physical ? (uint64_t)(uintptr_t)d->physical
				      : (uint64_t)(uintptr_t)d->instance;
		if (h == live)
			return d;
	}
	return NULL;
}

/* Physical device CAP_PHYSICAL of instance CAP_INSTANCE (capture values)
 * is, on replay, the one --gpu picked on that instance. */
void vkr_map_physical(vkr *r, uint64_t cap_instance, uint64_t cap_physical)
{
	uint64_t live = 0;
	vkd_device *d = vkr_map_get(r, r->h_instance, cap_instance, &live) ?
		instance_of(r, live, false) : NULL;
	if (!d)
		d = &r->dev;
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
	/* the first into r->dev, any other beside it */
	vkd_device *d = &r->dev;
	if (r->dev.instance) {
		r->others = trace_xrealloc(r->others, (r->nothers + 1) * sizeof(*r->others));
		d = &r->others[r->nothers];
	}
	int k = vkd_open_instance(d, &r->dopt, &req, &r->err);
	free(exts);
	if (k == -2)
		trace_cli_usage_error("%s", r->err.msg);
	if (k < 0)
		vkr_fatal(r, "%s", r->err.msg);
	if (d != &r->dev)
		r->nothers++;
	r->have_instance = true;
	vkr_reset_fns(r);
	vkr_map_put(r, r->h_instance, a->pInstance ? (uint64_t)(uintptr_t)*a->pInstance : 0,
		    (uint64_t)(uintptr_t)d->instance);
	r->calls++;
}

/* Another of the trace's instances takes r->dev's place (r->dev has no
 * device): the one a vkCreateDevice names the physical device of. */
static void trade_places(vkr *r, vkd_device *other)
{
	vkd_device t = r->dev;
	r->dev = *other;
	*other = t;
	vkr_reset_fns(r);
}

/* Closes instance D (r->dev's, with its device, or one of r->others);
 * r->dev's place goes to another where there is one. */
static void close_instance(vkr *r, vkd_device *d)
{
	if (d == &r->dev)
		vkr_device_teardown(r);
	vkd_close(d);
	if (d == &r->dev && r->nothers)
		r->dev = r->others[r->nothers - 1], r->nothers--;
	else if (d != &r->dev)
		*d = r->others[--r->nothers];
	vkr_reset_fns(r);
	r->have_instance = r->dev.instance != VK_NULL_HANDLE;
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

/* At the end of the run: every instance the trace left. */
void vkr_close_all(vkr *r)
{
	while (r->have_instance)
		close_instance(r, &r->dev);
	free(r->others);
	r->others = NULL;
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
		vkGetPhysicalDeviceFeatures(r->dev.physical, &have);
		compare_features(r, vk_struct_lookup("VkPhysicalDeviceFeatures"),
				 (uint8_t *)ci->pEnabledFeatures, (const uint8_t *)&have, missing, cap);
	}
	PFN_vkGetPhysicalDeviceFeatures2 get2 = (PFN_vkGetPhysicalDeviceFeatures2)
		vkGetInstanceProcAddr(r->dev.instance, "vkGetPhysicalDeviceFeatures2");
	if (!get2)
		get2 = (PFN_vkGetPhysicalDeviceFeatures2)
			vkGetInstanceProcAddr(r->dev.instance, "vkGetPhysicalDeviceFeatures2KHR");
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
				get2(r->dev.physical, (VkPhysicalDeviceFeatures2 *)q);
			} else {
				f2.pNext = q;
				get2(r->dev.physical, &f2);
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
	 * (r->dev's where the trace has no record of that: a cut stream) */
	uint64_t live = 0;
	vkd_device *inst = vkr_map_get(r, r->h_physical, (uint64_t)(uintptr_t)a->physicalDevice, &live) ?
		instance_of(r, live, true) : NULL;
	if (inst && inst != &r->dev && !r->dev.device)
		trade_places(r, inst);
	else if ((inst && inst != &r->dev) || r->dev.device)
		vkr_fatal(r, "a second device while the first is alive: not supported yet");
	VkDeviceCreateInfo *ci = (VkDeviceCreateInfo *)a->pCreateInfo;
	if (!ci)
		vkr_fatal(r, "vkCreateDevice without pCreateInfo");
	uint32_t n = 0;
	vkEnumerateDeviceExtensionProperties(r->dev.physical, NULL, &n, NULL);
	VkExtensionProperties *have = trace_xcalloc(n, sizeof(*have));
	vkEnumerateDeviceExtensionProperties(r->dev.physical, NULL, &n, have);
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
				  "on without them)", r->dev.props.deviceName, missing);
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
				  "on without them)", r->dev.props.deviceName, missing);
		vkr_warn(r, "features left out (--remove-unsupported): %s", missing);
	}
	/* queue families: as captured where the device has them */
	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(r->dev.physical, &nq, NULL);
	VkQueueFamilyProperties *qf = trace_xcalloc(nq, sizeof(*qf));
	vkGetPhysicalDeviceQueueFamilyProperties(r->dev.physical, &nq, qf);
	uint32_t family = UINT32_MAX;
	for (uint32_t i = 0; i < ci->queueCreateInfoCount; i++) {
		VkDeviceQueueCreateInfo *q = (VkDeviceQueueCreateInfo *)&ci->pQueueCreateInfos[i];
		if (q->queueFamilyIndex >= nq)
			vkr_fatal(r, "queue family %u: %s has %u", q->queueFamilyIndex,
				  r->dev.props.deviceName, nq);
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
	VkResult res = vkCreateDevice(r->dev.physical, ci, NULL, &dev);
	r->calls++;
	if (res != VK_SUCCESS)
		vkr_fatal(r, "vkCreateDevice on %s failed: %s (%d)", r->dev.props.deviceName,
			  vkr_result_name(res), res);
	VkQueue queue;
	vkGetDeviceQueue(dev, family, 0, &queue);
	vkd_attach_device(&r->dev, dev, family, queue);
	vkr_queues_made(r, ci);
	vkr_reset_fns(r);
	if (r->opt->stats) {
		r->nfamilies = nq;
		r->timers = trace_xcalloc(nq, sizeof(*r->timers));
	}
	vkr_map_put(r, r->h_device, a->pDevice ? (uint64_t)(uintptr_t)*a->pDevice : 0,
		    (uint64_t)(uintptr_t)dev);
	if (vkd_own_commands(dev, family, &r->pool, &r->cb, &r->fence) != VK_SUCCESS)
		vkr_fatal(r, "cannot make the replay's own command buffer");
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

/*
 * Frees what the replay made for the device, and what the trace left
 * alive (a stream cut by --frames or trace-trim): before vkDestroyDevice.
 * Command buffers and descriptor sets go with their pools.
 */
void vkr_device_teardown(vkr *r)
{
	if (!r->dev.device)
		return;
	vkDeviceWaitIdle(r->dev.device);
	vkr_gpu_poll(r, true);
	vkr_gpu_timers_free(r);
	tmap_free(&r->queues);
	for (size_t i = 0; i < r->swapchains.cap; i++)
		if (tmap_used(&r->swapchains, i)) {
			vkr_destroy_swapchain(r, (swapchain *)(uintptr_t)r->swapchains.vals[i]);
		}
	tmap_free(&r->swapchains);
	typedef void (VKAPI_PTR *destroy_fn)(VkDevice, uint64_t, const VkAllocationCallbacks *);
	const vk_handle_info *last = NULL;
	destroy_fn fn = NULL;
	for (size_t i = 0; i < r->handles.cap; i++) {
		uint64_t *live = &r->handles.vals[i];
		if (!tmap_used(&r->handles, i) || !*live)
			continue;
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)r->handles.kinds[i];
		if (h->dispatchable || h == r->h_swapchain || h == r->h_surface)
			continue;
		if (h != last) {
			const vk_command_info *c = vkr_destroyer(r, h);
			fn = c ? (destroy_fn)vkGetDeviceProcAddr(r->dev.device, c->sig.name) : NULL;
			last = h;
		}
		if (fn) {
			fn(r->dev.device, *live, NULL);
			*live = 0;
		}
	}
	for (size_t i = 0; i < r->objects.cap; i++)
		if (tmap_used(&r->objects, i)) {
			obj *o = (obj *)(uintptr_t)r->objects.vals[i];
			vkr_release_obj(r, o);
			free(o);
		}
	tmap_free(&r->objects);
	for (size_t i = 0; i < r->mems.cap; i++)
		if (tmap_used(&r->mems, i))
			free((memobj *)(uintptr_t)r->mems.vals[i]);
	tmap_free(&r->mems);
	vkr_free_templates(r);
	vkr_fold_free(r);
	vkd_own_commands_free(r->dev.device, &r->pool, &r->cb, &r->fence);
}

void vkr_end_device(vkr *r)
{
	vkr_device_teardown(r);
	vkd_close_device(&r->dev);
	vkr_reset_fns(r);
}


