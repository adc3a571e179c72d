/*
 * TRACEKIT_SCREENSHOT: the presented image of chosen frames, saved as PNG
 * (for checking a replay against the capture).
 *
 * Frames are counted from 0, one per vkQueuePresentKHR, as in the trace:
 * in the order the presents' records go into it, which is the order they
 * returned.  Where threads present at once (a window each), a present the
 * layer copies out returns after one called later, so while screenshots
 * are asked for, presents take one lock from their number to their
 * record (tk_queued_vkQueuePresentKHR): they run one at a time.
 * When screenshots are asked for, swapchains are made with
 * VK_IMAGE_USAGE_TRANSFER_SRC_BIT added (where the surface allows it; the
 * trace records the application's usage).  At the present of a chosen
 * frame, before calling down, the layer submits on the present's queue a
 * command buffer of its own that waits the present's wait semaphores,
 * moves each presented image PRESENT_SRC -> TRANSFER_SRC, copies it to a
 * host-visible buffer and moves it back, with a fence; it waits for the
 * fence and then presents with no wait semaphores: what the application's
 * semaphores guarded has finished, on the host's word.  The layer's
 * objects and commands go straight to the next layer: they are not in the
 * trace and the memory tracking never sees them.
 */
#include "layer.h"
#include "png.h"
#include "vktexel.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct tk_swapchain {
	VkSwapchainKHR handle;
	VkFormat format;
	VkExtent2D extent;
	bool readable;          /* made with TRANSFER_SRC usage */
	uint32_t nimages;
	VkImage *images;
};

/* ------------------------------------------------------------------ */
/* The frames asked for: TRACEKIT_SCREENSHOT=0,30,59 or 10-12,40. */

typedef struct range {
	uint64_t lo, hi;
} range;

static range *ranges;
static size_t nranges;
static pthread_once_t parse_once = PTHREAD_ONCE_INIT;
static atomic_ullong frame_no;
/* held from a present's number to its record, while screenshots are asked for */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local bool ordering;
static atomic_flag said_usage, said_format, said_queue, said_write;

static void say_once(atomic_flag *said, const char *msg)
{
	if (!atomic_flag_test_and_set(said))
		fprintf(stderr, "tracekit: %s\n", msg);
}

static void parse(void)
{
	const char *env = getenv("TRACEKIT_SCREENSHOT");
	if (!env || !*env)
		return;
	const char *p = env;
	while (*p) {
		char *end;
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		if (*p < '0' || *p > '9')
			goto bad;
		uint64_t lo = strtoull(p, &end, 10), hi = lo;
		p = end;
		while (*p == ' ')
			p++;
		if (*p == '-') {
			p++;
			while (*p == ' ')
				p++;
			if (*p < '0' || *p > '9')
				goto bad;
			hi = strtoull(p, &end, 10);
			p = end;
			if (hi < lo)
				goto bad;
		}
		while (*p == ' ')
			p++;
		if (*p && *p != ',')
			goto bad;
		ranges = realloc(ranges, sizeof(*ranges) * (nranges + 1));
		ranges[nranges++] = (range){ lo, hi };
	}
	/* the folder made as trace-replay --screenshot-dir makes it */
	const char *dir = getenv("TRACEKIT_SCREENSHOT_DIR");
	if (nranges && dir && *dir && mkdir(dir, 0777) != 0 && errno != EEXIST)
		fprintf(stderr, "tracekit: TRACEKIT_SCREENSHOT_DIR=%s: %s\n", dir, strerror(errno));
	return;
bad:
	fprintf(stderr, "tracekit: TRACEKIT_SCREENSHOT=%s: expected frame numbers and ranges "
		"such as 0,30,59 or 10-12; no screenshots\n", env);
	free(ranges);
	ranges = NULL;
	nranges = 0;
}

static bool wanted_any(void)
{
	pthread_once(&parse_once, parse);
	return nranges > 0;
}

static bool wanted(uint64_t frame)
{
	for (size_t i = 0; i < nranges; i++)
		if (ranges[i].lo <= frame && frame <= ranges[i].hi)
			return true;
	return false;
}

/* <TRACEKIT_OUTPUT less .trace>.frame-N.png, or in TRACEKIT_SCREENSHOT_DIR;
 * a present of several swapchains: .frame-N-I.png for the I-th after the
 * first. */
static void png_path(char *buf, size_t len, uint64_t frame, uint32_t nth)
{
	const char *trace = tk_output_path();
	char base[PATH_MAX];
	snprintf(base, sizeof(base), "%s", trace && *trace ? trace : "vulkan");
	size_t n = strlen(base);
	if (n > 6 && !strcmp(base + n - 6, ".trace"))
		base[n - 6] = 0;
	const char *dir = getenv("TRACEKIT_SCREENSHOT_DIR");
	const char *name = base;
	if (dir && *dir) {
		const char *slash = strrchr(base, '/');
		name = slash ? slash + 1 : base;
	}
	char suffix[64];
	if (nth)
		snprintf(suffix, sizeof(suffix), ".frame-%llu-%u.png", (unsigned long long)frame, nth);
	else
		snprintf(suffix, sizeof(suffix), ".frame-%llu.png", (unsigned long long)frame);
	if (dir && *dir)
		snprintf(buf, len, "%s/%s%s", dir, name, suffix);
	else
		snprintf(buf, len, "%s%s", name, suffix);
}

/* ------------------------------------------------------------------ */

void tk_screenshot_init(tk_device *dev, const VkDeviceCreateInfo *info)
{
	pthread_mutex_init(&dev->shot_lock, NULL);
	for (const VkLayerDeviceCreateInfo *l = info->pNext; l; l = (const VkLayerDeviceCreateInfo *)l->pNext)
		if (l->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
		    l->function == VK_LOADER_DATA_CALLBACK) {
			dev->set_loader_data = l->u.pfnSetDeviceLoaderData;
			break;
		}
}

static void swapchain_free(tk_swapchain *sc)
{
	if (sc) {
		free(sc->images);
		free(sc);
	}
}

void tk_screenshot_fini(tk_device *dev)
{
	for (uint32_t i = 0; i < dev->npools; i++)
		if (dev->pools[i])
			dev->disp.vkDestroyCommandPool(dev->handle, dev->pools[i], NULL);
	free(dev->pools);
	for (size_t i = 0; i < dev->swapchains.cap; i++)
		swapchain_free(dev->swapchains.vals[i]);
	tk_map_free(&dev->swapchains);
	tk_map_free(&dev->queues);
	pthread_mutex_destroy(&dev->shot_lock);
}

void tk_post_vkGetDeviceQueue(tk_device *dev, vk_args_vkGetDeviceQueue *a)
{
	if (!a->pQueue || !*a->pQueue)
		return;
	pthread_mutex_lock(&dev->shot_lock);
	tk_map_put(&dev->queues, (uint64_t)*a->pQueue, (void *)(uintptr_t)(a->queueFamilyIndex + 1));
	pthread_mutex_unlock(&dev->shot_lock);
}

void tk_post_vkGetDeviceQueue2(tk_device *dev, vk_args_vkGetDeviceQueue2 *a)
{
	if (!a->pQueue || !*a->pQueue || !a->pQueueInfo)
		return;
	pthread_mutex_lock(&dev->shot_lock);
	tk_map_put(&dev->queues, (uint64_t)*a->pQueue,
		   (void *)(uintptr_t)(a->pQueueInfo->queueFamilyIndex + 1));
	pthread_mutex_unlock(&dev->shot_lock);
}

VkResult tk_down_vkCreateSwapchainKHR(tk_device *dev, vk_args_vkCreateSwapchainKHR *a)
{
	if (!wanted_any())
		return dev->disp.vkCreateSwapchainKHR(a->device, a->pCreateInfo, a->pAllocator,
						      a->pSwapchain);
	VkSwapchainCreateInfoKHR ci = *a->pCreateInfo;
	bool readable = ci.imageUsage & VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
	if (!readable) {
		VkSurfaceCapabilitiesKHR caps;
		PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR get =
			dev->inst->disp.vkGetPhysicalDeviceSurfaceCapabilitiesKHR;
		if (get && get(dev->physical, ci.surface, &caps) == VK_SUCCESS &&
		    (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT)) {
			ci.imageUsage |= VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
			readable = true;
		} else {
			say_once(&said_usage, "TRACEKIT_SCREENSHOT: the surface does not allow "
				 "VK_IMAGE_USAGE_TRANSFER_SRC_BIT on swapchain images: no screenshots");
		}
	}
	VkResult r = dev->disp.vkCreateSwapchainKHR(a->device, &ci, a->pAllocator, a->pSwapchain);
	if (r != VK_SUCCESS)
		return r;
	tk_swapchain *sc = calloc(1, sizeof(*sc));
	sc->handle = *a->pSwapchain;
	sc->format = ci.imageFormat;
	sc->extent = ci.imageExtent;
	sc->readable = readable;
	uint32_t n = 0;
	if (dev->disp.vkGetSwapchainImagesKHR(a->device, sc->handle, &n, NULL) == VK_SUCCESS && n) {
		sc->images = calloc(n, sizeof(VkImage));
		if (dev->disp.vkGetSwapchainImagesKHR(a->device, sc->handle, &n, sc->images) >= 0)
			sc->nimages = n;
	}
	pthread_mutex_lock(&dev->shot_lock);
	swapchain_free(tk_map_del(&dev->swapchains, (uint64_t)sc->handle));
	tk_map_put(&dev->swapchains, (uint64_t)sc->handle, sc);
	pthread_mutex_unlock(&dev->shot_lock);
	return r;
}

void tk_pre_vkDestroySwapchainKHR(tk_device *dev, vk_args_vkDestroySwapchainKHR *a)
{
	if (!a->swapchain)
		return;
	pthread_mutex_lock(&dev->shot_lock);
	swapchain_free(tk_map_del(&dev->swapchains, (uint64_t)a->swapchain));
	pthread_mutex_unlock(&dev->shot_lock);
}

/* ------------------------------------------------------------------ */
/* Taking the pictures. */

typedef struct shot {
	tk_swapchain *sc;
	VkImage image;
	VkBuffer buffer;
	VkDeviceMemory memory;
	VkDeviceSize size;
	bool coherent;
	void *data;
	uint32_t nth;
} shot;

static int32_t memory_type(const tk_device *dev, uint32_t bits)
{
	/* host-visible, cached first (the host reads it) */
	static const VkMemoryPropertyFlags prefs[] = {
		VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
		VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
	};
	for (size_t p = 0; p < 2; p++)
		for (uint32_t i = 0; i < dev->memprops.memoryTypeCount; i++)
			if ((bits & (1u << i)) &&
			    (dev->memprops.memoryTypes[i].propertyFlags & prefs[p]) == prefs[p])
				return (int32_t)i;
	return -1;
}

static bool shot_buffer(tk_device *dev, shot *s)
{
	VkDevice d = dev->handle;
	s->size = (VkDeviceSize)s->sc->extent.width * s->sc->extent.height * 4;
	VkBufferCreateInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = s->size,
		.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	if (dev->disp.vkCreateBuffer(d, &bi, NULL, &s->buffer) != VK_SUCCESS)
		return false;
	VkMemoryRequirements req;
	dev->disp.vkGetBufferMemoryRequirements(d, s->buffer, &req);
	int32_t type = memory_type(dev, req.memoryTypeBits);
	if (type < 0)
		return false;
	s->coherent = dev->memprops.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	/* at least 1 MiB: below that, a whole allocation for one buffer is
	 * what the validation layer's best practices warn about */
	VkMemoryAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size > (1u << 20) ? req.size : (1u << 20),
		.memoryTypeIndex = (uint32_t)type,
	};
	if (dev->disp.vkAllocateMemory(d, &ai, NULL, &s->memory) != VK_SUCCESS)
		return false;
	if (dev->disp.vkBindBufferMemory(d, s->buffer, s->memory, 0) != VK_SUCCESS)
		return false;
	return dev->disp.vkMapMemory(d, s->memory, 0, VK_WHOLE_SIZE, 0, &s->data) == VK_SUCCESS;
}

static void shot_free(tk_device *dev, shot *s)
{
	if (s->data)
		dev->disp.vkUnmapMemory(dev->handle, s->memory);
	if (s->buffer)
		dev->disp.vkDestroyBuffer(dev->handle, s->buffer, NULL);
	if (s->memory)
		dev->disp.vkFreeMemory(dev->handle, s->memory, NULL);
}

static void shot_write(tk_device *dev, shot *s, uint64_t frame)
{
	if (!s->coherent) {
		VkMappedMemoryRange r = {
			.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
			.memory = s->memory,
			.size = VK_WHOLE_SIZE,
		};
		dev->disp.vkInvalidateMappedMemoryRanges(dev->handle, 1, &r);
	}
	uint32_t w = s->sc->extent.width, h = s->sc->extent.height;
	uint8_t *rgb = malloc((size_t)w * h * 4 + 1);
	char path[PATH_MAX + 64];
	png_path(path, sizeof(path), frame, s->nth);
	if (rgb) {
		vk_texels_to_rgba(s->sc->format, s->data, rgb, (size_t)w * h, false);
		if (png_write_rgba(path, rgb, w, h) == 0) {
			free(rgb);
			return;
		}
	}
	int e = errno;
	free(rgb);
	if (!atomic_flag_test_and_set(&said_write))
		fprintf(stderr, "tracekit: TRACEKIT_SCREENSHOT: cannot write %s: %s\n", path,
			strerror(e));
}

/* The command pool of FAMILY, made on first use; under shot_lock. */
static VkCommandPool pool_of(tk_device *dev, uint32_t family)
{
	if (family >= dev->npools) {
		dev->pools = realloc(dev->pools, sizeof(VkCommandPool) * (family + 1));
		memset(dev->pools + dev->npools, 0, sizeof(VkCommandPool) * (family + 1 - dev->npools));
		dev->npools = family + 1;
	}
	if (!dev->pools[family]) {
		VkCommandPoolCreateInfo ci = {
			.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
			.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
			.queueFamilyIndex = family,
		};
		if (dev->disp.vkCreateCommandPool(dev->handle, &ci, NULL, &dev->pools[family]) != VK_SUCCESS)
			dev->pools[family] = VK_NULL_HANDLE;
	}
	return dev->pools[family];
}

static VkQueueFlags family_flags(tk_device *dev, uint32_t family)
{
	uint32_t n = 0;
	dev->inst->disp.vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &n, NULL);
	if (family >= n)
		return 0;
	VkQueueFamilyProperties *p = calloc(n, sizeof(*p));
	dev->inst->disp.vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &n, p);
	VkQueueFlags flags = family < n ? p[family].queueFlags : 0;
	free(p);
	return flags;
}

/*
 * Copies the presented images of P into buffers on QUEUE, waiting P's
 * semaphores.  NOT_SUBMITTED: nothing went to the queue; SUBMITTED: the
 * semaphores are consumed but the copies did not finish (device lost);
 * DONE: the copies are in the buffers and the images back in
 * PRESENT_SRC.  Under shot_lock.
 */
enum { NOT_SUBMITTED, SUBMITTED, DONE };

static int copy_out(tk_device *dev, VkQueue queue, const VkPresentInfoKHR *p, shot *shots,
		     uint32_t nshots)
{
	VkDevice d = dev->handle;
	uintptr_t fam = (uintptr_t)tk_map_get(&dev->queues, (uint64_t)queue);
	VkQueueFlags flags = fam ? family_flags(dev, (uint32_t)(fam - 1)) : 0;
	if (!(flags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT)) ||
	    !dev->set_loader_data) {
		say_once(&said_queue, "TRACEKIT_SCREENSHOT: cannot copy on the present's queue: "
			 "no screenshots");
		return NOT_SUBMITTED;
	}
	VkCommandPool pool = pool_of(dev, (uint32_t)(fam - 1));
	if (!pool)
		return NOT_SUBMITTED;
	for (uint32_t i = 0; i < nshots; i++)
		if (!shot_buffer(dev, &shots[i]))
			return NOT_SUBMITTED;

	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkCommandBuffer cb;
	if (dev->disp.vkAllocateCommandBuffers(d, &ai, &cb) != VK_SUCCESS)
		return NOT_SUBMITTED;
	int ok = NOT_SUBMITTED;
	VkFence fence = VK_NULL_HANDLE;
	VkPipelineStageFlags *stages = NULL;
	if (dev->set_loader_data(d, cb) != VK_SUCCESS)
		goto out;
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	if (dev->disp.vkBeginCommandBuffer(cb, &bi) != VK_SUCCESS)
		goto out;
	/* After the semaphore wait (at TRANSFER), or, for a present without
	 * semaphores, after the drawing and copying before on the queue.
	 * The memory dependency is the semaphore's (or the host wait the
	 * application made instead): a barrier out of PRESENT_SRC has no
	 * access to make available. */
	VkPipelineStageFlags after = VK_PIPELINE_STAGE_TRANSFER_BIT;
	if (flags & VK_QUEUE_GRAPHICS_BIT)
		after |= VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
	for (uint32_t pass = 0; pass < 2; pass++) {
		/* pass 0: PRESENT_SRC -> TRANSFER_SRC; pass 1: back, after
		 * the copies */
		for (uint32_t i = 0; i < nshots; i++) {
			VkImageMemoryBarrier b = {
				.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
				.srcAccessMask = 0,
				.dstAccessMask = pass ? 0 : VK_ACCESS_TRANSFER_READ_BIT,
				.oldLayout = pass ? VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL
						  : VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
				.newLayout = pass ? VK_IMAGE_LAYOUT_PRESENT_SRC_KHR
						  : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
				.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
				.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
				.image = shots[i].image,
				.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 },
			};
			dev->disp.vkCmdPipelineBarrier(cb,
				pass ? VK_PIPELINE_STAGE_TRANSFER_BIT : after,
				pass ? VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT : VK_PIPELINE_STAGE_TRANSFER_BIT,
				0, 0, NULL, 0, NULL, 1, &b);
		}
		if (pass)
			break;
		for (uint32_t i = 0; i < nshots; i++) {
			VkBufferImageCopy r = {
				.imageSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
				.imageExtent = { shots[i].sc->extent.width, shots[i].sc->extent.height, 1 },
			};
			dev->disp.vkCmdCopyImageToBuffer(cb, shots[i].image,
							 VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
							 shots[i].buffer, 1, &r);
		}
		/* the host reads the buffers after the fence */
		VkMemoryBarrier m = {
			.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_HOST_READ_BIT,
		};
		dev->disp.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
					       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &m, 0, NULL, 0, NULL);
	}
	if (dev->disp.vkEndCommandBuffer(cb) != VK_SUCCESS)
		goto out;
	VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	if (dev->disp.vkCreateFence(d, &fi, NULL, &fence) != VK_SUCCESS) {
		fence = VK_NULL_HANDLE;
		goto out;
	}
	stages = calloc(p->waitSemaphoreCount + 1, sizeof(*stages));
	for (uint32_t i = 0; i < p->waitSemaphoreCount; i++)
		stages[i] = VK_PIPELINE_STAGE_TRANSFER_BIT;
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.waitSemaphoreCount = p->waitSemaphoreCount,
		.pWaitSemaphores = p->pWaitSemaphores,
		.pWaitDstStageMask = stages,
		.commandBufferCount = 1,
		.pCommandBuffers = &cb,
	};
	if (dev->disp.vkQueueSubmit(queue, 1, &si, fence) != VK_SUCCESS)
		goto out;
	ok = dev->disp.vkWaitForFences(d, 1, &fence, VK_TRUE, UINT64_MAX) == VK_SUCCESS ? DONE
											   : SUBMITTED;
out:
	free(stages);
	if (fence)
		dev->disp.vkDestroyFence(d, fence, NULL);
	dev->disp.vkFreeCommandBuffers(d, pool, 1, &cb);
	return ok;
}

VkResult tk_down_vkQueuePresentKHR(tk_device *dev, vk_args_vkQueuePresentKHR *a)
{
	if (wanted_any()) {
		pthread_mutex_lock(&order_lock);
		ordering = true;
	}
	uint64_t frame = atomic_fetch_add(&frame_no, 1);
	const VkPresentInfoKHR *p = a->pPresentInfo;
	if (!wanted_any() || !wanted(frame) || !p)
		return dev->disp.vkQueuePresentKHR(a->queue, p);

	shot *shots = calloc(p->swapchainCount + 1, sizeof(*shots));
	uint32_t nshots = 0;
	pthread_mutex_lock(&dev->shot_lock);
	for (uint32_t i = 0; i < p->swapchainCount; i++) {
		tk_swapchain *sc = tk_map_get(&dev->swapchains, (uint64_t)p->pSwapchains[i]);
		if (!sc || !sc->readable || p->pImageIndices[i] >= sc->nimages)
			continue;
		if (!vk_texels_known(sc->format)) {
			say_once(&said_format, "TRACEKIT_SCREENSHOT: the swapchain's format is not one "
				 "the layer converts (8-bit RGBA or BGRA, 10-bit A2RGB or A2BGR): "
				 "no screenshots of it");
			continue;
		}
		shots[nshots].sc = sc;
		shots[nshots].image = sc->images[p->pImageIndices[i]];
		shots[nshots].nth = i;
		nshots++;
	}
	int copied = nshots ? copy_out(dev, a->queue, p, shots, nshots) : NOT_SUBMITTED;
	VkResult r;
	if (copied != NOT_SUBMITTED) {
		/* the wait semaphores are consumed and what they guarded is done */
		VkPresentInfoKHR q = *p;
		q.waitSemaphoreCount = 0;
		q.pWaitSemaphores = NULL;
		r = dev->disp.vkQueuePresentKHR(a->queue, &q);
		for (uint32_t i = 0; copied == DONE && i < nshots; i++)
			shot_write(dev, &shots[i], frame);
	} else {
		r = dev->disp.vkQueuePresentKHR(a->queue, p);
	}
	for (uint32_t i = 0; i < nshots; i++)
		shot_free(dev, &shots[i]);
	pthread_mutex_unlock(&dev->shot_lock);
	free(shots);
	return r;
}

/* The present's record is queued: the next may take its number. */
void tk_queued_vkQueuePresentKHR(tk_device *dev)
{
	(void)dev;
	if (ordering) {
		ordering = false;
		pthread_mutex_unlock(&order_lock);
	}
}
