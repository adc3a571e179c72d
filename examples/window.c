/*
 * window: vkexample --present's window (window.h): an X window through
 * xcb, its surface, a swapchain the frames are blitted into, and the
 * acquire and present of each frame.
 */
#include <stdlib.h>
#include <string.h>

#include <xcb/xcb.h>
#include <vulkan/vulkan.h>
#include <vulkan/vulkan_xcb.h>

#include "common.h"
#include "window.h"

_Thread_local struct ex_window win;

uint32_t win_instance_extensions(const char **exts)
{
	exts[0] = VK_KHR_SURFACE_EXTENSION_NAME;
	exts[1] = VK_KHR_XCB_SURFACE_EXTENSION_NAME;
	return 2;
}

/* Nothing reads the window's events: the program draws a fixed number of
 * frames and quits. */
void win_open(VkExtent2D size, const char *title)
{
	const char *display = getenv("DISPLAY");
	xcb_screen_iterator_t it;
	int screen = 0, i;

	if (!display || !*display)
		die("--present: DISPLAY is not set (an X server is needed)");
	win.xcb = xcb_connect(NULL, &screen);
	if (xcb_connection_has_error(win.xcb))
		die("--present: cannot open the X display '%s'", display);
	it = xcb_setup_roots_iterator(xcb_get_setup(win.xcb));
	for (i = 0; i < screen && it.rem; i++)
		xcb_screen_next(&it);
	if (!it.rem)
		die("--present: the X display has no screen %d", screen);
	win.size = size;
	win.window = xcb_generate_id(win.xcb);
	xcb_create_window(win.xcb, XCB_COPY_FROM_PARENT, win.window, it.data->root, 0, 0,
			  (uint16_t)size.width, (uint16_t)size.height, 0,
			  XCB_WINDOW_CLASS_INPUT_OUTPUT, it.data->root_visual, 0, NULL);
	xcb_change_property(win.xcb, XCB_PROP_MODE_REPLACE, win.window, XCB_ATOM_WM_NAME,
			    XCB_ATOM_STRING, 8, (uint32_t)strlen(title), title);
	xcb_map_window(win.xcb, win.window);
	xcb_flush(win.xcb);
}

void win_create_surface(void)
{
	VkXcbSurfaceCreateInfoKHR ci = {
		.sType = VK_STRUCTURE_TYPE_XCB_SURFACE_CREATE_INFO_KHR,
		.connection = win.xcb,
		.window = win.window,
	};

	VK(vkCreateXcbSurfaceKHR(ex.instance, &ci, NULL, &win.surface));
}

/* headless, any queue family will do: there is nothing to present to */
int win_can_present(uint32_t family)
{
	VkBool32 ok = VK_FALSE;

	if (!win.surface)
		return 1;
	VK(vkGetPhysicalDeviceSurfaceSupportKHR(ex.gpu, family, win.surface, &ok));
	return ok == VK_TRUE;
}

static VkExtent2D clamp_extent(VkExtent2D want, const VkSurfaceCapabilitiesKHR *caps)
{
	if (want.width < caps->minImageExtent.width)
		want.width = caps->minImageExtent.width;
	if (want.width > caps->maxImageExtent.width)
		want.width = caps->maxImageExtent.width;
	if (want.height < caps->minImageExtent.height)
		want.height = caps->minImageExtent.height;
	if (want.height > caps->maxImageExtent.height)
		want.height = caps->maxImageExtent.height;
	return want;
}

/* A swapchain of the window's size in a UNORM format of our colour image's
 * bytes, B and R maybe swapped (the blit swaps them back), so that what is
 * presented is the frame the program renders, pixel for pixel. */
void win_create_swapchain(uint32_t nslots)
{
	VkSurfaceCapabilitiesKHR caps;
	VkSurfaceFormatKHR *formats;
	VkFormatProperties fp;
	VkSemaphoreCreateInfo si = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO };
	VkSwapchainCreateInfoKHR ci = {
		.sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR,
		.surface = win.surface,
		.imageArrayLayers = 1,
		.imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT,
		.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE,
		.presentMode = VK_PRESENT_MODE_FIFO_KHR,	/* the one every driver has */
		.clipped = VK_TRUE,
	};
	uint32_t n = 0, i;

	VK(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(ex.gpu, win.surface, &caps));
	if (!(caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT))
		die("--present: the window's images cannot be transfer destinations");
	/* 0xFFFFFFFF: the window takes the swapchain's size; give it its own */
	ci.imageExtent = caps.currentExtent.width == UINT32_MAX ?
		clamp_extent(win.size, &caps) : caps.currentExtent;
	if (!ci.imageExtent.width || !ci.imageExtent.height)
		die("--present: the window has no area");
	ci.minImageCount = caps.minImageCount + 1;
	if (caps.maxImageCount && ci.minImageCount > caps.maxImageCount)
		ci.minImageCount = caps.maxImageCount;
	ci.preTransform = caps.currentTransform;
	/* opaque if it can be, else the lowest mode offered: our alpha is 1 */
	ci.compositeAlpha = caps.supportedCompositeAlpha & VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR ?
		VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR :
		(VkCompositeAlphaFlagBitsKHR)(caps.supportedCompositeAlpha &
					      -caps.supportedCompositeAlpha);

	VK(vkGetPhysicalDeviceSurfaceFormatsKHR(ex.gpu, win.surface, &n, NULL));
	formats = calloc(n ? n : 1, sizeof(*formats));
	if (!formats)
		die("out of memory");
	VK(vkGetPhysicalDeviceSurfaceFormatsKHR(ex.gpu, win.surface, &n, formats));
	for (i = 0; i < n; i++)
		if (formats[i].format == VK_FORMAT_B8G8R8A8_UNORM ||
		    formats[i].format == VK_FORMAT_R8G8B8A8_UNORM)
			break;
	if (i == n)
		die("--present: the window offers neither B8G8R8A8_UNORM nor R8G8B8A8_UNORM");
	ci.imageFormat = formats[i].format;
	ci.imageColorSpace = formats[i].colorSpace;
	free(formats);
	vkGetPhysicalDeviceFormatProperties(ex.gpu, ci.imageFormat, &fp);
	if (!(fp.optimalTilingFeatures & VK_FORMAT_FEATURE_BLIT_DST_BIT))
		die("--present: the window's format %d cannot be blitted to", ci.imageFormat);
	vkGetPhysicalDeviceFormatProperties(ex.gpu, VK_FORMAT_R8G8B8A8_UNORM, &fp);
	if (!(fp.optimalTilingFeatures & VK_FORMAT_FEATURE_BLIT_SRC_BIT))
		die("--present: R8G8B8A8_UNORM cannot be blitted from");

	logv("vkCreateSwapchainKHR minImageCount=%u imageFormat=%d imageExtent=%ux%u "
	     "imageUsage=0x%x presentMode=%d",
	     ci.minImageCount, ci.imageFormat, ci.imageExtent.width, ci.imageExtent.height,
	     ci.imageUsage, ci.presentMode);
	VK(vkCreateSwapchainKHR(ex.dev, &ci, NULL, &win.swapchain));
	win.extent = ci.imageExtent;
	VK(vkGetSwapchainImagesKHR(ex.dev, win.swapchain, &win.nimages, NULL));
	win.images = calloc(win.nimages, sizeof(*win.images));
	win.rendered = calloc(win.nimages, sizeof(*win.rendered));
	win.nslots = nslots;
	win.acquired = calloc(nslots, sizeof(*win.acquired));
	if (!win.images || !win.rendered || !win.acquired)
		die("out of memory");
	VK(vkGetSwapchainImagesKHR(ex.dev, win.swapchain, &win.nimages, win.images));
	for (i = 0; i < win.nimages; i++)
		VK(vkCreateSemaphore(ex.dev, &si, NULL, &win.rendered[i]));
	for (i = 0; i < nslots; i++)
		VK(vkCreateSemaphore(ex.dev, &si, NULL, &win.acquired[i]));
}

void win_destroy_swapchain(void)
{
	uint32_t i;

	for (i = 0; i < win.nslots; i++)
		vkDestroySemaphore(ex.dev, win.acquired[i], NULL);
	for (i = 0; i < win.nimages; i++)
		vkDestroySemaphore(ex.dev, win.rendered[i], NULL);
	vkDestroySwapchainKHR(ex.dev, win.swapchain, NULL);
	free(win.images);
	free(win.rendered);
	free(win.acquired);
}

/* SUBOPTIMAL still shows the frame right: nothing resizes the window, and
 * the swapchain has its size */
uint32_t win_acquire(VkDevice dev, uint32_t slot)
{
	uint32_t index = 0;
	VkResult r = vkAcquireNextImageKHR(dev, win.swapchain, UINT64_MAX, win.acquired[slot],
					   VK_NULL_HANDLE, &index);

	vk_check(r == VK_SUBOPTIMAL_KHR ? VK_SUCCESS : r, "vkAcquireNextImageKHR", __LINE__);
	return index;
}

void win_present(VkQueue queue, uint32_t index)
{
	VkPresentInfoKHR pi = {
		.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR,
		.waitSemaphoreCount = 1,
		.pWaitSemaphores = &win.rendered[index],
		.swapchainCount = 1,
		.pSwapchains = &win.swapchain,
		.pImageIndices = &index,
	};
	VkResult r = vkQueuePresentKHR(queue, &pi);

	vk_check(r == VK_SUBOPTIMAL_KHR ? VK_SUCCESS : r, "vkQueuePresentKHR", __LINE__);
}

void win_destroy_surface(void)
{
	if (win.surface)
		vkDestroySurfaceKHR(ex.instance, win.surface, NULL);
}

void win_close(void)
{
	if (win.xcb) {
		xcb_destroy_window(win.xcb, win.window);
		xcb_disconnect(win.xcb);
	}
}
