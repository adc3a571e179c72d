/*
 * What replay needs to know of a command, worked out once for each
 * signature a trace names: its special handling, what --loop does with
 * it, which of its parameters hold handles it makes or subresources, and
 * the like (a cmd_entry).
 */
#include "replay_internal.h"

static enum special special_of(const char *n, const vk_command_info *cmd)
{
	static const vk_named table[] = {
		{"vkCreateInstance", SP_CREATE_INSTANCE},
		{"vkDestroyInstance", SP_DESTROY_INSTANCE},
		{"vkEnumeratePhysicalDevices", SP_ENUM_PHYSICAL},
		{"vkEnumeratePhysicalDeviceGroups", SP_ENUM_GROUPS},
		{"vkEnumeratePhysicalDeviceGroupsKHR", SP_ENUM_GROUPS},
		{"vkCreateDevice", SP_CREATE_DEVICE},
		{"vkDestroyDevice", SP_DESTROY_DEVICE},
		{"vkAllocateMemory", SP_ALLOC_MEMORY},
		{"vkFreeMemory", SP_FREE_MEMORY},
		{"vkMapMemory", SP_SKIP},
		{"vkMapMemory2KHR", SP_SKIP},
		{"vkUnmapMemory", SP_SKIP},
		{"vkUnmapMemory2KHR", SP_SKIP},
		{"vkFlushMappedMemoryRanges", SP_SKIP},
		{"vkInvalidateMappedMemoryRanges", SP_SKIP},
		{"vkGetDeviceMemoryCommitment", SP_SKIP},
		{"vkCreateBuffer", SP_CREATE_BUFFER},
		{"vkCreateImage", SP_CREATE_IMAGE},
		{"vkDestroyBuffer", SP_DESTROY_BUFFER},
		{"vkDestroyImage", SP_DESTROY_IMAGE},
		{"vkBindBufferMemory", SP_BIND_BUFFER},
		{"vkBindImageMemory", SP_BIND_IMAGE},
		{"vkBindBufferMemory2", SP_BIND_BUFFER2},
		{"vkBindBufferMemory2KHR", SP_BIND_BUFFER2},
		{"vkBindImageMemory2", SP_BIND_IMAGE2},
		{"vkBindImageMemory2KHR", SP_BIND_IMAGE2},
		{"vkGetBufferMemoryRequirements", SP_BUFFER_REQS},
		{"vkGetImageMemoryRequirements", SP_IMAGE_REQS},
		{"vkGetBufferMemoryRequirements2", SP_BUFFER_REQS2},
		{"vkGetBufferMemoryRequirements2KHR", SP_BUFFER_REQS2},
		{"vkGetImageMemoryRequirements2", SP_IMAGE_REQS2},
		{"vkGetImageMemoryRequirements2KHR", SP_IMAGE_REQS2},
		{"vkGetPhysicalDeviceMemoryProperties", SP_MEMORY_PROPS},
		{"vkGetPhysicalDeviceMemoryProperties2", SP_MEMORY_PROPS2},
		{"vkGetPhysicalDeviceMemoryProperties2KHR", SP_MEMORY_PROPS2},
		{"vkWaitForFences", SP_WAIT_FENCES},
		{"vkUpdateDescriptorSets", SP_UPDATE_SETS},
		{"vkCmdWaitEvents", SP_WAIT_EVENTS},
		{"vkCmdWaitEvents2", SP_WAIT_EVENTS},
		{"vkCmdWaitEvents2KHR", SP_WAIT_EVENTS},
		{"vkWaitSemaphores", SP_WAIT_SEMAPHORES},
		{"vkWaitSemaphoresKHR", SP_WAIT_SEMAPHORES},
		{"vkGetFenceStatus", SP_FENCE_STATUS},
		{"vkGetSemaphoreCounterValue", SP_SEMAPHORE_VALUE},
		{"vkGetSemaphoreCounterValueKHR", SP_SEMAPHORE_VALUE},
		{"vkGetQueryPoolResults", SP_QUERY_RESULTS},
		{"vkDestroySurfaceKHR", SP_DESTROY_SURFACE},
		{"vkCreateSwapchainKHR", SP_CREATE_SWAPCHAIN},
		{"vkDestroySwapchainKHR", SP_DESTROY_SWAPCHAIN},
		{"vkGetSwapchainImagesKHR", SP_SWAPCHAIN_IMAGES},
		{"vkAcquireNextImageKHR", SP_ACQUIRE},
		{"vkAcquireNextImage2KHR", SP_ACQUIRE2},
		{"vkQueuePresentKHR", SP_PRESENT},
		{"vkCreateGraphicsPipelines", SP_GRAPHICS_PIPELINES},
		{"vkCreateComputePipelines", SP_COMPUTE_PIPELINES},
		{"vkDestroySemaphore", SP_DESTROY_SEMAPHORE},
		{"vkCreateSemaphore", SP_CREATE_SEMAPHORE},
		{"vkCreateFramebuffer", SP_CREATE_FRAMEBUFFER},
		{"vkCreateImageView", SP_CREATE_VIEW},
		{"vkCmdCopyBufferToImage", SP_BUFFER_IMAGE},
		{"vkCmdCopyBufferToImage2", SP_BUFFER_IMAGE},
		{"vkCmdCopyBufferToImage2KHR", SP_BUFFER_IMAGE},
		{"vkCmdCopyImageToBuffer", SP_BUFFER_IMAGE},
		{"vkCmdCopyImageToBuffer2", SP_BUFFER_IMAGE},
		{"vkCmdCopyImageToBuffer2KHR", SP_BUFFER_IMAGE},
		{"vkCmdCopyImage", SP_IMAGE_IMAGE},
		{"vkCmdCopyImage2", SP_IMAGE_IMAGE},
		{"vkCmdCopyImage2KHR", SP_IMAGE_IMAGE},
		{"vkGetSwapchainStatusKHR", SP_SKIP},
		{"vkSetHdrMetadataEXT", SP_SKIP},
		{"vkReleaseSwapchainImagesEXT", SP_SKIP},
		{"vkCreateDebugUtilsMessengerEXT", SP_FAKE_CREATE},
		{"vkDestroyDebugUtilsMessengerEXT", SP_FAKE_DESTROY},
		{"vkCreateDebugReportCallbackEXT", SP_FAKE_CREATE},
		{"vkDestroyDebugReportCallbackEXT", SP_FAKE_DESTROY},
		{"vkSubmitDebugUtilsMessageEXT", SP_SKIP},
		{"vkDebugReportMessageEXT", SP_SKIP},
		{"vkGetInstanceProcAddr", SP_SKIP},
		{"vkGetDeviceProcAddr", SP_SKIP},
		{"vkEnumerateInstanceVersion", SP_SKIP},
		{"vkEnumerateInstanceExtensionProperties", SP_SKIP},
		{"vkEnumerateInstanceLayerProperties", SP_SKIP},
		{"vkEnumerateDeviceLayerProperties", SP_SKIP},
		{"vkCreateDescriptorUpdateTemplate", SP_CREATE_TEMPLATE},
		{"vkCreateDescriptorUpdateTemplateKHR", SP_CREATE_TEMPLATE},
		{"vkDestroyDescriptorUpdateTemplate", SP_DESTROY_TEMPLATE},
		{"vkDestroyDescriptorUpdateTemplateKHR", SP_DESTROY_TEMPLATE},
		{"vkUpdateDescriptorSetWithTemplate", SP_TEMPLATE_DATA},
		{"vkUpdateDescriptorSetWithTemplateKHR", SP_TEMPLATE_DATA},
		{"vkCmdPushDescriptorSetWithTemplateKHR", SP_TEMPLATE_DATA},
		{"vkCmdPushDescriptorSetWithTemplate", SP_TEMPLATE_DATA},
		{"vkGetDeviceQueue", SP_GET_QUEUE},
		{"vkGetDeviceQueue2", SP_GET_QUEUE2},
		{"vkQueueSubmit", SP_SUBMIT},
		{"vkQueueSubmit2", SP_SUBMIT2},
		{"vkQueueSubmit2KHR", SP_SUBMIT2},
		{"vkCmdDrawMultiEXT", SP_DRAW_MULTI},
		{"vkCmdDrawMultiIndexedEXT", SP_DRAW_MULTI_INDEXED},
		{"vkCreateDescriptorPool", SP_MADE_AHEAD},
		{"vkCreatePipelineCache", SP_MADE_AHEAD},
	};
	int sp = VK_BY_NAME(table, n, -1);
	if (sp >= 0)
		return (enum special)sp;
	/* surfaces: made up; what the window system said is in the trace */
	if (!strncmp(n, "vkCreate", 8) && strstr(n, "SurfaceKHR") && cmd->action == VK_ACTION_CREATE)
		return SP_CREATE_SURFACE;
	if (strstr(n, "Surface") || strstr(n, "PresentationSupport") ||
	    strstr(n, "PresentRectangles"))
		return SP_SKIP;
	/* any other command given a window system's object (the registry's
	 * Display*, xcb_connection_t*: vkAcquireXlibDisplayEXT,
	 * vkGetRandROutputDisplayEXT): the capture's address is nothing here,
	 * and a driver that has the extension would follow it */
	for (uint32_t i = 0; i < cmd->nparams; i++)
		if (cmd->params[i].flags & VK_F_ADDRESS)
			return SP_SKIP;
	return SP_NONE;
}

static enum loop_kind loop_kind_of(const char *n, const vk_command_info *cmd)
{
	static const vk_named table[] = {
		{"vkBeginCommandBuffer", LK_BEGIN_CB},
		{"vkEndCommandBuffer", LK_END_CB},
		{"vkResetCommandBuffer", LK_RESET_CB},
		{"vkAllocateCommandBuffers", LK_ALLOC_CBS},
		{"vkFreeCommandBuffers", LK_FREE_CBS},
		{"vkResetCommandPool", LK_RESET_CPOOL},
		{"vkDestroyCommandPool", LK_DESTROY_CPOOL},
		{"vkCreateDescriptorPool", LK_CREATE_DPOOL},
		{"vkAllocateDescriptorSets", LK_ALLOC_SETS},
		{"vkFreeDescriptorSets", LK_FREE_SETS},
		{"vkResetDescriptorPool", LK_RESET_DPOOL},
		{"vkDestroyDescriptorPool", LK_DESTROY_DPOOL},
		{"vkCreateSemaphore", LK_CREATE_SEMAPHORE},
		{"vkCreateFence", LK_CREATE_FENCE},
		{"vkDestroySemaphore", LK_DESTROY_SYNC},
		{"vkDestroyFence", LK_DESTROY_SYNC},
	};
	return (enum loop_kind)VK_BY_NAME(table, n,
					  cmd->action == VK_ACTION_RECORD ? LK_RECORD : LK_NONE);
}

static bool field_wanted(const vk_field *f)
{
	return (f->flags & VK_F_PNEXT) || f->base == VK_B_HANDLE ||
	       (f->base == VK_B_STRUCT && f->ref && ((const vk_struct_info *)f->ref)->handles);
}

cmd_entry *vkr_entry_make(vkr *r, const trace_call *c)
{
	size_t slot = trace_ptr_slot(c->sig, SIG_CACHE_BITS);
	uint64_t *h = tmap_at(&r->sigs, (uint64_t)(uintptr_t)c->sig, TAG_SIG);
	if (h) {
		r->sig_cache.sig[slot] = c->sig;
		return r->sig_cache.e[slot] = (cmd_entry *)(uintptr_t)*h;
	}
	const vk_command_info *cmd = vk_command_lookup(c->sig->name);
	if (!cmd)
		return NULL;
	cmd_entry *e = trace_xcalloc(1, sizeof(*e));
	e->cmd = cmd;
	e->index = vk_command_index(cmd);
	if (e->index < 0 || (uint32_t)e->index >= vk_ncalls) {
		free(e);
		return NULL;
	}
	e->special = (uint8_t)special_of(cmd->sig.name, cmd);
	e->loop = (uint8_t)loop_kind_of(cmd->sig.name, cmd);
	e->sync = (uint8_t)vk_sync_command(cmd);
	e->result = cmd->ret && cmd->ret->base == VK_B_ENUM && !strcmp(cmd->ret->type, "VkResult");
	e->subres = vkr_subres_reads(r, cmd);
	e->iface = vk_iface_wants(cmd);
	e->attachments = (uint8_t)vkr_attachments_kind(cmd);
	vkr_cmdbuf_entry(e);
	vkr_stamps_entry(e);
	vkr_uniforms_entry(e);
	vkr_merge_entry(e);
	vkr_ahead_entry(e);
	e->imports_sync = !strncmp(cmd->sig.name, "vkImportSemaphore", 17) ||
			  !strncmp(cmd->sig.name, "vkImportFence", 13);
	e->allocator = e->tmpl = e->data = -1;
	for (uint32_t i = 0; i < cmd->nparams; i++) {
		const vk_field *f = &cmd->params[i];
		if (!strcmp(f->name, "descriptorUpdateTemplate"))
			e->tmpl = (int16_t)i;
		if (!strcmp(f->name, "pData"))
			e->data = (int16_t)i;
		if ((f->flags & VK_F_OUT) && field_wanted(f))
			e->out_handles = true;
		if (f->base == VK_B_STRUCT && f->ref == r->s_allocator)
			e->allocator = (int16_t)i;
	}
	tmap_set(&r->sigs, (uint64_t)(uintptr_t)c->sig, TAG_SIG, (uint64_t)(uintptr_t)e);
	r->sig_cache.sig[slot] = c->sig;
	return r->sig_cache.e[slot] = e;
}
