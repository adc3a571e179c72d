/*
 * window: vkexample --present's X window (xcb), its surface and its
 * swapchain, and the acquire and present of each frame.  The state is
 * win, one per thread (vkthreads --present: a window each); the Vulkan
 * objects are ex's (common.h).
 */
#ifndef EXAMPLES_WINDOW_H
#define EXAMPLES_WINDOW_H

#include <stdint.h>

#include <xcb/xcb.h>
#include <vulkan/vulkan.h>

/* Per frame slot, the semaphore the acquire signals; per swapchain image,
 * the one the present waits on (an image's present is done with it once
 * the image is acquired again, a frame slot's is not). */
struct ex_window {
	xcb_connection_t *xcb;
	xcb_window_t window;
	VkExtent2D size;	/* the window's */
	VkSurfaceKHR surface;
	VkSwapchainKHR swapchain;
	VkExtent2D extent;	/* the swapchain's */
	uint32_t nimages, nslots;
	VkImage *images;
	VkSemaphore *acquired;	/* per frame slot */
	VkSemaphore *rendered;	/* per swapchain image */
};
extern _Thread_local struct ex_window win;

/* The instance extensions win_create_surface needs, into EXTS (2 at
 * most); returns how many. */
uint32_t win_instance_extensions(const char **exts);
/* A window of SIZE on $DISPLAY, named TITLE; dies naming what is missing. */
void win_open(VkExtent2D size, const char *title);
/* win.surface, on ex.instance (made with the surface extensions). */
void win_create_surface(void);
/* Whether queue FAMILY presents to win.surface; any does without one. */
int win_can_present(uint32_t family);
/* win.swapchain on ex.dev, with its images and semaphores for NSLOTS
 * frame slots; the images take blits from an R8G8B8A8_UNORM image. */
void win_create_swapchain(uint32_t nslots);
void win_destroy_swapchain(void);
/* The index of the next image, acquired on DEV signalling SLOT's semaphore. */
uint32_t win_acquire(VkDevice dev, uint32_t slot);
/* Presents image INDEX on QUEUE once its rendered semaphore signals. */
void win_present(VkQueue queue, uint32_t index);
/* The surface (before ex.instance goes), then the window (after). */
void win_destroy_surface(void);
void win_close(void);

#endif
