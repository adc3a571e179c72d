/*
 * trace-replay --check: each record through replay's own path
 * (vkr_replay_call), with no device.  What a call makes is known by its
 * capture value (the handle map maps each to itself), nothing reaches a
 * driver (vkr_invoke stops short of the call), and a refusal comes back
 * here as the line replay stops with (vkr_fatal jumps to vkr_check), so
 * the two cannot say different things of one record.  The commands
 * whose replay needs a device for more than the call (instances,
 * devices, reads of a fence's status) are followed here instead, with
 * the checks replay makes of them.
 */
#include "replay_internal.h"

#include <setjmp.h>

void vkr_check_made(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		    const vk_field *f)
{
	(void)top;
	(void)f;
	vkr *r = ctx;
	if (*value)
		vkr_map_put(r, h, *value, *value);
}

static size_t instances_left(vkr *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->handles.cap; i++)
		n += tmap_used(&r->handles, i) && r->handles.kinds[i] == (uintptr_t)r->h_instance;
	return n;
}

/* A device call's outputs: known, and its device's. */
void vkr_check_made_owned(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
			  const vk_field *f)
{
	vkr_check_made(ctx, h, value, top, f);
	vkr_owner_put(ctx, h, *value);
}

/* What vkr_device_teardown ends, forgotten: device D's objects, its
 * memory, its swapchains and every handle of it.  (Replay keeps the handles, as
 * null: a later record naming one is refused here, not there.) */
static void end_obj(vkr *r, uint64_t v)
{
	(void)r;
	vkr_unlink_obj((obj *)(uintptr_t)v);
	free((obj *)(uintptr_t)v);
}

static void device_forget(vkr *r, vkr_device *d)
{
	vkr_forget_swapchains(r, d);
	vkr_forget_objects(r, d, end_obj);
	for (size_t i = 0; i < r->handles.cap; i++) {
		const vk_handle_info *h = (const vk_handle_info *)(uintptr_t)r->handles.kinds[i];
		if (!tmap_used(&r->handles, i) || h->dispatchable || h == r->h_surface ||
		    !vkr_owned_by(r, h, r->handles.keys[i], d))
			continue;
		tmap_del(&r->handles, r->handles.keys[i], r->handles.kinds[i], NULL);
		i--;
	}
	vkr_device_remove(r, d);
}

bool vkr_check_special(vkr *r, const cmd_entry *e, void *args, VkResult capres)
{
	switch ((enum special)e->special) {
	case SP_CREATE_INSTANCE:
		/* replay makes its own; a failed one stops it (a driver's
		 * matter: not checked here) */
		r->have_instance = true;
		vkr_invoke(r, e, args);
		return true;
	case SP_DESTROY_INSTANCE: {
		uint64_t cap = (uint64_t)(uintptr_t)((vk_args_vkDestroyInstance *)args)->instance, live;
		if (!vkr_map_get(r, r->h_instance, cap, &live) || !cap)
			vkr_fatal(r, "instance: VkInstance 0x%llx was never made (or failed to replay)",
				  (unsigned long long)cap);
		vkr_map_del(r, r->h_instance, cap);
		if (!instances_left(r)) {
			while (r->ndevs)
				device_forget(r, r->devs[r->ndevs - 1]);
			tmap_free(&r->handles);
			r->have_instance = false;
		}
		return true;
	}
	case SP_ENUM_PHYSICAL:
	case SP_ENUM_GROUPS:
		vkr_invoke(r, e, args);
		return true;
	case SP_CREATE_DEVICE: {
		vk_args_vkCreateDevice *a = args;
		if (vkr_failed(capres))
			return true;
		if (!a->pCreateInfo)
			vkr_fatal(r, "vkCreateDevice without pCreateInfo");
		if (!a->pCreateInfo->queueCreateInfoCount)
			vkr_fatal(r, "vkCreateDevice with no queue");
		vkr_device_add(r, a->pDevice ? (uint64_t)(uintptr_t)*a->pDevice : 0,
			       (uint64_t)(uintptr_t)a->physicalDevice);
		vkr_queues_made(r, a->pCreateInfo);
		vkr_invoke(r, e, args);
		return true;
	}
	case SP_DESTROY_DEVICE: {
		vkr_device *d = vkr_device_by_cap(r,
			(uint64_t)(uintptr_t)((vk_args_vkDestroyDevice *)args)->device);
		if (d)
			device_forget(r, d);
		return true;
	}
	case SP_FENCE_STATUS:
		if (capres == VK_SUCCESS)
			vkr_need(r, r->h_fence,
				 (uint64_t)(uintptr_t)((vk_args_vkGetFenceStatus *)args)->fence);
		return true;
	case SP_SEMAPHORE_VALUE: {
		vk_args_vkGetSemaphoreCounterValue *a = args;
		if (capres == VK_SUCCESS && a->pValue)
			vkr_need(r, r->h_semaphore, (uint64_t)(uintptr_t)a->semaphore);
		return true;
	}
	case SP_DESTROY_SWAPCHAIN: {
		uint64_t cap = (uint64_t)(uintptr_t)((vk_args_vkDestroySwapchainKHR *)args)->swapchain;
		uint64_t v;
		if (cap && tmap_del(&r->swapchains, cap, TAG_SWAPCHAIN, &v))
			vkr_destroy_swapchain(r, (swapchain *)(uintptr_t)v);
		return true;
	}
	default:
		return false;
	}
}

static void check_free(vkr *r)
{
	for (size_t i = 0; i < r->swapchains.cap; i++)
		if (tmap_used(&r->swapchains, i))
			vkr_destroy_swapchain(r, (swapchain *)(uintptr_t)r->swapchains.vals[i]);
	for (size_t i = 0; i < r->objects.cap; i++)
		if (tmap_used(&r->objects, i))
			free((obj *)(uintptr_t)r->objects.vals[i]);
	for (size_t i = 0; i < r->mems.cap; i++)
		if (tmap_used(&r->mems, i))
			free((memobj *)(uintptr_t)r->mems.vals[i]);
	vkr_free_templates(r);
	vk_iface_free(r->iface);
	for (size_t i = 0; i < r->sigs.cap; i++)
		if (tmap_used(&r->sigs, i))
			free((cmd_entry *)(uintptr_t)r->sigs.vals[i]);
	while (r->ndevs)
		vkr_device_remove(r, r->devs[r->ndevs - 1]);
	free(r->devs);
	vkr_fold_free(r);
	vkr_free_devices_state(r);
	TMAP_FREE(&r->handles, &r->objects, &r->sigs, &r->mems, &r->swapchains,
		  &r->binary, &r->cbs);
	trace_arena_free(&r->arena);
	free(r);
}

int vkr_check(trace_reader *in, const vkr_options *opt, trace_error *err)
{
	vkr *r = trace_xcalloc(1, sizeof(*r));
	vkr_init_common(r, opt);
	r->checking = true;
	r->check_err = err;
	vkr_parse_header_memory(r, trace_reader_header(in));
	trace_frames_init(&r->frames);
	jmp_buf back;
	if (setjmp(back)) {
		check_free(r);
		return -1;
	}
	r->check_jmp = &back;
	trace_call *c;
	int k;
	uint64_t last_whole = 0;
	trace_reader_decode_ahead(in, vkr_decode_hook, NULL);
	while ((k = trace_reader_next(in, &c, &r->err)) > 0) {
		if (trace_call_out_of_place(c, &last_whole))
			continue;
		r->call = c;
		if (trace_frames_next(&r->frames, c, &r->err) < 0)
			vkr_fatal(r, "%s", r->err.msg);
		vkr_replay_call(r, c);
		trace_arena_reset(&r->arena);
	}
	if (k < 0)
		*err = r->err;
	check_free(r);
	return k < 0 ? -1 : 0;
}
