/*
 * vkpass: see vkpass.h.
 */
#include "internal.h"
#include "vkpass.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* An attachment description and a dependency of the second form hold the
 * first form's members, in its order, after sType and pNext (viewOffset
 * last, 0 here): the first form copies in whole. */
_Static_assert(offsetof(VkAttachmentDescription2, finalLayout) + sizeof(VkImageLayout) -
	       offsetof(VkAttachmentDescription2, flags) == sizeof(VkAttachmentDescription),
	       "VkAttachmentDescription2 from flags on is VkAttachmentDescription");
_Static_assert(offsetof(VkSubpassDependency2, dependencyFlags) + sizeof(VkDependencyFlags) -
	       offsetof(VkSubpassDependency2, srcSubpass) == sizeof(VkSubpassDependency),
	       "VkSubpassDependency2 from srcSubpass on is VkSubpassDependency");

/* R's N references in the second form, at *NEXT (then moved past them). */
static VkAttachmentReference2 *refs2(VkAttachmentReference2 **next,
				     const VkAttachmentReference *r, uint32_t n)
{
	if (!r)
		return NULL;
	VkAttachmentReference2 *out = *next;
	for (uint32_t i = 0; i < n; i++)
		out[i] = (VkAttachmentReference2){
			.sType = VK_STRUCTURE_TYPE_ATTACHMENT_REFERENCE_2,
			.attachment = r[i].attachment,
			.layout = r[i].layout,
		};
	*next += n;
	return out;
}

VkRenderPassCreateInfo2 *vk_render_pass2_of(const VkRenderPassCreateInfo *ci)
{
	if (!ci)
		return NULL;
	uint32_t na = ci->pAttachments ? ci->attachmentCount : 0;
	uint32_t ns = ci->pSubpasses ? ci->subpassCount : 0;
	uint32_t nd = ci->pDependencies ? ci->dependencyCount : 0;
	size_t nrefs = 0;
	for (uint32_t s = 0; s < ns; s++) {
		const VkSubpassDescription *sp = &ci->pSubpasses[s];
		nrefs += (sp->pInputAttachments ? sp->inputAttachmentCount : 0) +
			 (sp->pColorAttachments ? sp->colorAttachmentCount : 0) +
			 (sp->pResolveAttachments ? sp->colorAttachmentCount : 0) +
			 (sp->pDepthStencilAttachment ? 1 : 0);
	}
	/* one block: the create info, then its arrays (each struct's size a
	 * multiple of 8, so each array aligned) */
	VkRenderPassCreateInfo2 *out;
	out = trace_xcalloc(1, sizeof(*out) + na * sizeof(VkAttachmentDescription2) +
			    ns * sizeof(VkSubpassDescription2) + nd * sizeof(VkSubpassDependency2) +
			    nrefs * sizeof(VkAttachmentReference2));
	VkAttachmentDescription2 *att = (VkAttachmentDescription2 *)(out + 1);
	VkSubpassDescription2 *sub = (VkSubpassDescription2 *)(att + na);
	VkSubpassDependency2 *dep = (VkSubpassDependency2 *)(sub + ns);
	VkAttachmentReference2 *next = (VkAttachmentReference2 *)(dep + nd);
	*out = (VkRenderPassCreateInfo2){
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO_2,
		.flags = ci->flags,
		.attachmentCount = ci->attachmentCount,
		.pAttachments = ci->pAttachments ? att : NULL,
		.subpassCount = ci->subpassCount,
		.pSubpasses = ci->pSubpasses ? sub : NULL,
		.dependencyCount = ci->dependencyCount,
		.pDependencies = ci->pDependencies ? dep : NULL,
	};
	for (uint32_t i = 0; i < na; i++) {
		att[i].sType = VK_STRUCTURE_TYPE_ATTACHMENT_DESCRIPTION_2;
		memcpy(&att[i].flags, &ci->pAttachments[i], sizeof(ci->pAttachments[i]));
	}
	for (uint32_t s = 0; s < ns; s++) {
		const VkSubpassDescription *sp = &ci->pSubpasses[s];
		sub[s] = (VkSubpassDescription2){
			.sType = VK_STRUCTURE_TYPE_SUBPASS_DESCRIPTION_2,
			.flags = sp->flags,
			.pipelineBindPoint = sp->pipelineBindPoint,
			.inputAttachmentCount = sp->inputAttachmentCount,
			.pInputAttachments = refs2(&next, sp->pInputAttachments, sp->inputAttachmentCount),
			.colorAttachmentCount = sp->colorAttachmentCount,
			.pColorAttachments = refs2(&next, sp->pColorAttachments, sp->colorAttachmentCount),
			.pResolveAttachments = refs2(&next, sp->pResolveAttachments,
						     sp->colorAttachmentCount),
			.pDepthStencilAttachment = refs2(&next, sp->pDepthStencilAttachment, 1),
			.preserveAttachmentCount = sp->preserveAttachmentCount,
			.pPreserveAttachments = sp->pPreserveAttachments,
		};
	}
	for (uint32_t i = 0; i < nd; i++) {
		dep[i].sType = VK_STRUCTURE_TYPE_SUBPASS_DEPENDENCY_2;
		memcpy(&dep[i].srcSubpass, &ci->pDependencies[i], sizeof(ci->pDependencies[i]));
	}
	return out;
}
