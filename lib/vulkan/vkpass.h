/*
 * vkpass: vkCreateRenderPass's create info as vkCreateRenderPass2's, the
 * way Mesa's runtime turns one into the other, so that what reads a render
 * pass (the replayer's --dump, the trimmer's attachments) reads one form.
 * Plain C over the Vulkan types: no libvulkan call.
 */
#ifndef TRACE_VKPASS_H
#define TRACE_VKPASS_H

#include <vulkan/vulkan_core.h>

/*
 * CI in the second form, in one allocation (free() it), or NULL for a
 * NULL CI.  Every array the first form gives comes over, a NULL one as
 * NULL; what the first form chains (multiview, input aspects) does not:
 * the new structs' pNext are NULL, their view masks and aspects 0.
 */
VkRenderPassCreateInfo2 *vk_render_pass2_of(const VkRenderPassCreateInfo *ci);

#endif
