/*
 * Pipelines' shaders against their layouts: see vkiface.h.
 *
 * What is checked, by the specification's valid usage for a pipeline
 * (VUID-VkGraphicsPipelineCreateInfo-layout-07988, -07990, -07991 and
 * their compute and ray tracing twins, and pName-00707) for each
 * resource variable a stage's entry point statically uses:
 *  - its set is one of the layout's (a set layout left null, as a
 *    library with independent sets may, is not checked);
 *  - the set layout has its binding, visible to the stage;
 *  - the binding's descriptor type is one the variable's type takes
 *    (types from extensions, such as mutable descriptors and inline
 *    uniform blocks, are taken as fitting);
 *  - the binding has at least as many descriptors as the variable's
 *    array has elements;
 * and that a push constant block used is in a range of the stage.  A
 * pipeline layout keeps copies of its set layouts' bindings: a set
 * layout may be destroyed once the pipeline layout is made.
 *
 * Then, below, what the same state lets be checked of other records:
 * descriptor writes' null handles, framebuffers against their render
 * passes, null set layouts and pipeline layouts outside the modes that
 * allow them (of pipelines, pipeline layouts, update templates).
 */
#include "vkiface_internal.h"


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vk_iface *vk_iface_new(void)
{
	return trace_xcalloc(1, sizeof(vk_iface));
}

static void free_layout(pipe_layout *l)
{
	for (uint32_t i = 0; i < l->nsets; i++)
		free(l->sets[i]);
	free(l->sets);
	free(l->push);
	free(l);
}

static void free_entry(uint64_t kind, uint64_t val)
{
	void *p = (void *)(uintptr_t)val;
	if (kind == K_FRAMEBUFFER || kind == K_VIEW || kind == K_BUFFER || kind == K_NOTE)
		return;
	if (kind == K_SET || kind == K_SET_LAYOUT) {
		set_layout *l = p;
		if (!--l->refs)
			free(l);
		return;
	}
	if (kind == K_MODULE)
		spv_free(p);
	else if (kind == K_PIPELINE)
		free(((pipe_uses *)p)->sb), free(p);
	else if (kind == K_LAYOUT)
		free_layout(p);
	else
		free(p);
}

void vk_iface_free(vk_iface *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->map.cap; i++)
		if (tmap_used(&v->map, i))
			free_entry(v->map.kinds[i], v->map.vals[i]);
	tmap_free(&v->map);
	free(v);
}

void vk_iface_put(vk_iface *v, uint64_t handle, uint64_t kind, void *p)
{
	uint64_t old;
	if (tmap_del(&v->map, handle, kind, &old))
		free_entry(kind, old);
	if (p)
		tmap_set(&v->map, handle, kind, (uint64_t)(uintptr_t)p);
}

void vk_iface_forget(vk_iface *v, uint64_t handle, uint64_t kind)
{
	if (handle)
		vk_iface_put(v, handle, kind, NULL);
}

static set_layout *copy_set(const set_layout *s)
{
	if (!s)
		return NULL;
	size_t size = sizeof(*s) + s->n * (sizeof(s->b[0]) + 1);
	set_layout *c = trace_xmalloc(size);
	memcpy(c, s, size);
	c->refs = 1;
	return c;
}

/* ------------------------------------------------------------------ */
/* Names for messages. */

static const char *enum_name(const char *type, int64_t value)
{
	const trace_enum_sig *s = vk_enum_sig(vk_enum_lookup(type), value);
	return s->nvalues ? s->values[0].name : NULL;
}

static const char *stage_name(uint32_t stage, char *buf, size_t cap)
{
	const char *n = enum_name("VkShaderStageFlagBits", stage);
	if (n)
		return n;
	snprintf(buf, cap, "stage 0x%x", stage);
	return buf;
}

/* FLAGS as "A|B", or "no stage". */
static const char *stages_named(uint32_t flags, char *buf, size_t cap)
{
	size_t at = 0;
	buf[0] = 0;
	for (uint32_t bit = 1; bit && at < cap; bit <<= 1) {
		if (!(flags & bit))
			continue;
		char one[32];
		at += (size_t)snprintf(buf + at, cap - at, "%s%s", at ? "|" : "",
				       stage_name(bit, one, sizeof(one)));
	}
	return flags ? buf : "no stage";
}

static void type_named(uint32_t type, char *buf, size_t cap)
{
	const char *n = enum_name("VkDescriptorType", type);
	if (n)
		snprintf(buf, cap, "%s", n);
	else
		snprintf(buf, cap, "descriptor type %u", type);
}

/* ------------------------------------------------------------------ */
/* What is made. */

static int module_made(vk_iface *v, const VkShaderModuleCreateInfo *ci, const char *where,
		       spv_module **out, trace_error *err)
{
	*out = NULL;
	if (!ci)
		return 0;
	if (ci->codeSize % 4 || !ci->pCode) {
		trace_error_set(err, "%s.codeSize: %zu, not a whole number of SPIR-V words", where,
				(size_t)ci->codeSize);
		return -1;
	}
	(void)v;
	*out = spv_reflect(ci->pCode, ci->codeSize / 4, err);
	if (*out)
		return 0;
	char why[sizeof(err->msg)];
	snprintf(why, sizeof(why), "%s", err->msg);
	trace_error_set(err, "%s.pCode: %s", where, why);
	return -1;
}

static void set_layout_made(vk_iface *v, const vk_args_vkCreateDescriptorSetLayout *a)
{
	const VkDescriptorSetLayoutCreateInfo *ci = a->pCreateInfo;
	uint32_t n = ci->pBindings ? ci->bindingCount : 0;
	set_layout *s = trace_xmalloc(sizeof(*s) + n * (sizeof(s->b[0]) + 1));
	const VkDescriptorSetLayoutBindingFlagsCreateInfo *f = vk_chain_find(ci->pNext,
		VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO);
	const VkDescriptorBindingFlags loose = VK_DESCRIPTOR_BINDING_PARTIALLY_BOUND_BIT |
		VK_DESCRIPTOR_BINDING_UPDATE_AFTER_BIND_BIT;
	s->refs = 1;
	s->n = n;
	s->immutable = false;
	s->after_bind = ci->flags & VK_DESCRIPTOR_SET_LAYOUT_CREATE_UPDATE_AFTER_BIND_POOL_BIT;
	for (uint32_t i = 0; i < n; i++) {
		s->b[i] = ci->pBindings[i];
		s->immutable |= s->b[i].pImmutableSamplers != NULL;
		flags_of(s)[i] = s->b[i].pImmutableSamplers &&
			s->b[i].descriptorType == VK_DESCRIPTOR_TYPE_SAMPLER ? B_NO_WRITE : 0;
		if (f && f->pBindingFlags && i < f->bindingCount && (f->pBindingFlags[i] & loose))
			flags_of(s)[i] |= B_LOOSE;
		s->b[i].pImmutableSamplers = NULL;
	}
	vk_iface_put(v, H(*a->pSetLayout), K_SET_LAYOUT, s);
}

static void layout_made(vk_iface *v, const vk_args_vkCreatePipelineLayout *a)
{
	const VkPipelineLayoutCreateInfo *ci = a->pCreateInfo;
	pipe_layout *l = trace_xcalloc(1, sizeof(*l));
	l->nsets = ci->pSetLayouts ? ci->setLayoutCount : 0;
	l->sets = trace_xcalloc(l->nsets ? l->nsets : 1, sizeof(*l->sets));
	for (uint32_t i = 0; i < l->nsets; i++)
		l->sets[i] = copy_set(vk_iface_get(v, H(ci->pSetLayouts[i]), K_SET_LAYOUT));
	l->npush = ci->pPushConstantRanges ? ci->pushConstantRangeCount : 0;
	l->push = trace_xcalloc(l->npush ? l->npush : 1, sizeof(*l->push));
	if (l->npush)
		memcpy(l->push, ci->pPushConstantRanges, l->npush * sizeof(*l->push));
	vk_iface_put(v, H(*a->pPipelineLayout), K_LAYOUT, l);
}

/* ------------------------------------------------------------------ */
/* A stage against its layout. */

const VkDescriptorSetLayoutBinding *vk_iface_binding_of(const set_layout *s, uint32_t binding)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->b[i].binding == binding)
			return &s->b[i];
	return NULL;
}

/* Entry point E of stage STAGE (WHERE, MODULE: for messages) against the
 * layout L (LAYOUT: its handle). */
static int entry_fits(const spv_entry *e, uint32_t stage, const pipe_layout *l, uint64_t layout,
		      const char *where, trace_error *err)
{
	char buf[64], names[256];
	const char *sn = stage_name(stage, buf, sizeof(buf));
	for (uint32_t i = 0; i < e->nbindings; i++) {
		const spv_binding *u = &e->bindings[i];
		if (u->set >= l->nsets) {
			trace_error_set(err, "%s: the %s shader '%s' uses set %u binding %u, but "
					"VkPipelineLayout 0x%llx has %u set layouts", where, sn, e->name,
					u->set, u->binding, (unsigned long long)layout, l->nsets);
			return -1;
		}
		const set_layout *s = l->sets[u->set];
		if (!s)
			continue;
		const VkDescriptorSetLayoutBinding *b = vk_iface_binding_of(s, u->binding);
		if (!b || !b->descriptorCount) {
			trace_error_set(err, "%s: the %s shader '%s' uses set %u binding %u, which "
					"VkPipelineLayout 0x%llx's set layout %u %s", where, sn, e->name,
					u->set, u->binding, (unsigned long long)layout, u->set,
					b ? "declares with no descriptors" : "does not have");
			return -1;
		}
		if (!(b->stageFlags & stage)) {
			trace_error_set(err, "%s: the %s shader '%s' uses set %u binding %u, which "
					"VkPipelineLayout 0x%llx makes visible to %s only", where, sn,
					e->name, u->set, u->binding, (unsigned long long)layout,
					stages_named(b->stageFlags, names, sizeof(names)));
			return -1;
		}
		if ((unsigned)b->descriptorType > 10)
			continue;  /* an extension's type: not checked */
		if (u->types != SPV_ANY && !(u->types & SPV_DTYPE(b->descriptorType))) {
			char have[64];
			type_named(b->descriptorType, have, sizeof(have));
			trace_error_set(err, "%s: the %s shader '%s' uses set %u binding %u, which "
					"VkPipelineLayout 0x%llx declares a %s: a type the shader's "
					"variable does not take", where, sn, e->name, u->set, u->binding,
					(unsigned long long)layout, have);
			return -1;
		}
		if (u->count > b->descriptorCount) {
			trace_error_set(err, "%s: the %s shader '%s' uses set %u binding %u as an array "
					"of %u, but VkPipelineLayout 0x%llx declares %u descriptors there",
					where, sn, e->name, u->set, u->binding, u->count,
					(unsigned long long)layout, b->descriptorCount);
			return -1;
		}
	}
	if (e->push) {
		uint32_t i = 0;
		while (i < l->npush && !(l->push[i].stageFlags & stage))
			i++;
		if (i == l->npush) {
			trace_error_set(err, "%s: the %s shader '%s' uses push constants, but "
					"VkPipelineLayout 0x%llx has no push constant range for its stage",
					where, sn, e->name, (unsigned long long)layout);
			return -1;
		}
	}
	return 0;
}

/* A stage's shader: MODULE's, or one its pNext chain makes; what it uses
 * added to USES. */
static int stage_fits(vk_iface *v, const VkPipelineShaderStageCreateInfo *st, uint64_t layout,
		      const char *where, pipe_uses *uses, trace_error *err)
{
	const pipe_layout *l = vk_iface_get(v, layout, K_LAYOUT);
	if (!l) {
		uses->partial = true;
		return 0;  /* none, or a library's: nothing to check against */
	}
	const spv_module *m = vk_iface_get(v, H(st->module), K_MODULE);
	spv_module *inline_m = NULL;
	if (!st->module) {
		const void *p = vk_chain_find(st->pNext, VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
		char at[160];
		snprintf(at, sizeof(at), "%s.pNext", where);
		if (p && module_made(v, (const VkShaderModuleCreateInfo *)p, at, &inline_m, err) < 0)
			return -1;
		m = inline_m;
	}
	if (!m) {
		uses->partial = true;
		return 0;  /* a module identifier, or a module not followed */
	}
	char sn[64];
	const spv_entry *e = spv_entry_of(m, st->pName, st->stage);
	int rc = 0;
	if (!e) {
		trace_error_set(err, "%s.pName: '%s', which VkShaderModule 0x%llx has no %s entry "
				"point of", where, st->pName ? st->pName : "(null)",
				(unsigned long long)st->module, stage_name(st->stage, sn, sizeof(sn)));
		rc = -1;
	} else if ((rc = entry_fits(e, st->stage, l, layout, where, err)) == 0) {
		vk_iface_uses_add(uses, e);
	}
	spv_free(inline_m);
	return rc;
}

/* Create info K's stages (N at STAGES; FIELD: "pStages", or "stage" for
 * a compute pipeline's one) against LAYOUT; what they use into USES. */
static int stages_fit(vk_iface *v, uint32_t k, const char *field,
		      const VkPipelineShaderStageCreateInfo *stages, uint32_t n, VkPipelineLayout layout,
		      VkPipelineCreateFlags flags, pipe_uses *uses, trace_error *err)
{
	/* a null layout but in a library (llvmpipe crashed making one) */
	if (!layout && !(flags & VK_PIPELINE_CREATE_LIBRARY_BIT_KHR)) {
		trace_error_set(err, "pCreateInfos[%u].layout: a null VkPipelineLayout in a pipeline "
				"not a library", k);
		return -1;
	}
	for (uint32_t i = 0; stages && i < n; i++) {
		char where[96];
		if (!strcmp(field, "stage"))
			snprintf(where, sizeof(where), "pCreateInfos[%u].stage", k);
		else
			snprintf(where, sizeof(where), "pCreateInfos[%u].%s[%u]", k, field, i);
		if (stage_fits(v, &stages[i], H(layout), where, uses, err) < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Descriptor writes: no null handle where the descriptor's type reads
 * one (a null image view or buffer is a null descriptor only where a
 * device enabled nullDescriptor; a null sampler only where the set's
 * layout has immutable samplers); nor a null set but in a pushed write.  llvmpipe crashed at
 * a vkUpdateDescriptorSets whose set or image view was edited to null. */


static void device_made(vk_iface *v, const vk_args_vkCreateDevice *a)
{
	const VkPhysicalDeviceRobustness2FeaturesEXT *f = a->pCreateInfo
		? vk_chain_find(a->pCreateInfo->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT)
		: NULL;
	if (f && f->nullDescriptor)
		v->null_descriptor = true;
}

static void sets_made(vk_iface *v, const vk_args_vkAllocateDescriptorSets *a)
{
	const VkDescriptorSetAllocateInfo *ai = a->pAllocateInfo;
	if (!ai || !ai->pSetLayouts || !a->pDescriptorSets)
		return;
	for (uint32_t i = 0; i < ai->descriptorSetCount; i++) {
		set_layout *s = vk_iface_get(v, H(ai->pSetLayouts[i]), K_SET_LAYOUT);
		if (!a->pDescriptorSets[i])
			continue;
		if (s)
			s->refs++;
		vk_iface_put(v, H(a->pDescriptorSets[i]), K_SET, s);
		vk_iface_forget(v, H(a->pDescriptorSets[i]), K_WRITTEN);
	}
}

/* What one descriptor of TYPE needs: 's' a sampler, 'v' an image view
 * ('V': even with nullDescriptor), 't' a texel buffer view, 'b' a buffer
 * ('B': even with nullDescriptor); none for the types of extensions. */
static const char *needs(VkDescriptorType type)
{
	switch (type) {
	case VK_DESCRIPTOR_TYPE_SAMPLER: return "s";
	case VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER: return "sv";
	case VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE:
	case VK_DESCRIPTOR_TYPE_STORAGE_IMAGE: return "v";
	case VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT: return "V";
	case VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER:
	case VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER: return "t";
	case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
	case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER: return "b";
	case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
	case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC: return "B";
	default: return "";
	}
}

/* Write K (W) against the layout S of the set it writes: its binding,
 * its type, and its descriptors within the binding and those after it
 * that it runs on into (llvmpipe crashed on a dstBinding, a
 * dstArrayElement edited to 4294967295: mutants.py seed 3760695808). */
static int write_in_layout(uint32_t k, const VkWriteDescriptorSet *w, const set_layout *s,
			   trace_error *err)
{
	const VkDescriptorSetLayoutBinding *b = vk_iface_binding_of(s, w->dstBinding);
	if (!b) {
		trace_error_set(err, "pDescriptorWrites[%u].dstBinding: %u, but the set's layout has "
				"no such binding", k, w->dstBinding);
		return -1;
	}
	if (b->descriptorType != w->descriptorType &&
	    b->descriptorType != VK_DESCRIPTOR_TYPE_MUTABLE_EXT) {
		char have[64], want[64];
		type_named(w->descriptorType, have, sizeof(have));
		type_named(b->descriptorType, want, sizeof(want));
		trace_error_set(err, "pDescriptorWrites[%u].descriptorType: %s, but binding %u of the "
				"set's layout is of %s", k, have, w->dstBinding, want);
		return -1;
	}
	/* what the binding holds from dstArrayElement, then the bindings
	 * after it, in turn (one of none is passed over) */
	uint64_t room = b->descriptorCount > w->dstArrayElement
		? b->descriptorCount - w->dstArrayElement : 0;
	const VkDescriptorSetLayoutBinding *first = b;
	for (uint64_t n = (uint64_t)w->dstBinding + 1; room && room < w->descriptorCount &&
	     n <= UINT32_MAX && (b = vk_iface_binding_of(s, (uint32_t)n)); n++) {
		/* a write runs on only into bindings like its first
		 * (VUID-VkWriteDescriptorSet-descriptorCount-00317, -00318) */
		if (b->descriptorCount && (b->descriptorType != first->descriptorType ||
					   b->stageFlags != first->stageFlags)) {
			char have[64], want[64];
			type_named(b->descriptorType, have, sizeof(have));
			type_named(first->descriptorType, want, sizeof(want));
			trace_error_set(err, "pDescriptorWrites[%u]: descriptorCount %u runs on from "
					"binding %u into binding %u, which is of %s%s, not of %s as "
					"binding %u", k, w->descriptorCount, w->dstBinding,
					b->binding, have, b->descriptorType == first->descriptorType
					? " for other stages" : "", want, w->dstBinding);
			return -1;
		}
		room += b->descriptorCount;
	}
	if (room && room >= w->descriptorCount)
		return 0;
	trace_error_set(err, "pDescriptorWrites[%u]: dstArrayElement %u, descriptorCount %u, but "
			"binding %u of the set's layout and those after it hold %llu from there", k,
			w->dstArrayElement, w->descriptorCount, w->dstBinding,
			(unsigned long long)room);
	return -1;
}

/* Buffer descriptor I of write K (W): its range within its buffer, where
 * a vkCreateBuffer said the size (an offset of 4294967295 had llvmpipe
 * read past a uniform buffer: the same seed). */
static int buffer_in_range(vk_iface *v, uint32_t k, uint32_t i, const VkDescriptorBufferInfo *d,
			   trace_error *err)
{
	uint64_t *n = tmap_at(&v->map, H(d->buffer), K_BUFFER);
	if (!n)
		return 0;
	uint64_t size = *n - 1;
	if (d->offset < size && (d->range == VK_WHOLE_SIZE ||
				 (d->range && d->range <= size - d->offset)))
		return 0;
	trace_error_set(err, "pDescriptorWrites[%u].pBufferInfo[%u]: offset %llu, range %llu, but "
			"VkBuffer 0x%llx holds %llu bytes", k, i, (unsigned long long)d->offset,
			(unsigned long long)d->range, (unsigned long long)H(d->buffer),
			(unsigned long long)size);
	return -1;
}

/* Descriptor writes W (N); PUSHED: into set SET of pipeline layout
 * LAYOUT (vkCmdPushDescriptorSetKHR), not into their dstSet. */
static int writes_fit(vk_iface *v, const VkWriteDescriptorSet *w, uint32_t n, bool pushed,
		      uint64_t layout, uint32_t set_no, trace_error *err)
{
	const pipe_layout *l = pushed ? vk_iface_get(v, layout, K_LAYOUT) : NULL;
	const set_layout *pushed_set = l && set_no < l->nsets ? l->sets[set_no] : NULL;
	for (uint32_t k = 0; w && k < n; k++) {
		if (!pushed && !w[k].dstSet) {
			trace_error_set(err, "pDescriptorWrites[%u].dstSet: a null VkDescriptorSet "
					"(only a pushed write goes without one)", k);
			return -1;
		}
		/* (a write of none left vkcube's uniform buffer unwritten, and
		 * llvmpipe crashed drawing: mutants.py seed 2228589817) */
		if (!w[k].descriptorCount) {
			trace_error_set(err, "pDescriptorWrites[%u].descriptorCount: 0, but a write "
					"writes one descriptor or more", k);
			return -1;
		}
		const char *need = needs(w[k].descriptorType);
		const set_layout *sl = pushed ? pushed_set : vk_iface_get(v, H(w[k].dstSet), K_SET);
		bool immutable = !sl || sl->immutable;
		if (sl && write_in_layout(k, &w[k], sl, err) < 0)
			return -1;
		/* (the type's name, for a message only: not made each write) */
		char type[64];
		for (const char *c = need; *c; c++) {
			const char *array = *c == 's' || *c == 'v' || *c == 'V' ? "pImageInfo"
				: *c == 't' ? "pTexelBufferView" : "pBufferInfo";
			const void *p = *c == 't' ? (const void *)w[k].pTexelBufferView
				: array[1] == 'I' ? (const void *)w[k].pImageInfo
				: (const void *)w[k].pBufferInfo;
			if (!p && w[k].descriptorCount) {
				type_named(w[k].descriptorType, type, sizeof(type));
				trace_error_set(err, "pDescriptorWrites[%u].%s: null, but a %s write "
						"reads %u", k, array, type, w[k].descriptorCount);
				return -1;
			}
			if ((*c == 's' && immutable) ||
			    ((*c == 'v' || *c == 't' || *c == 'b') && v->null_descriptor))
				continue;
			for (uint32_t i = 0; i < w[k].descriptorCount; i++) {
				const char *member = *c == 's' ? "sampler" : *c == 't' ? ""
					: *c == 'b' || *c == 'B' ? "buffer" : "imageView";
				bool null = *c == 's' ? !w[k].pImageInfo[i].sampler
					: *c == 't' ? !w[k].pTexelBufferView[i]
					: *c == 'b' || *c == 'B' ? !w[k].pBufferInfo[i].buffer
					: !w[k].pImageInfo[i].imageView;
				if (!null && (*c == 'b' || *c == 'B') &&
				    buffer_in_range(v, k, i, &w[k].pBufferInfo[i], err) < 0)
					return -1;
				if (null) {
					type_named(w[k].descriptorType, type, sizeof(type));
					trace_error_set(err, "pDescriptorWrites[%u].%s[%u]%s%s: null, "
							"which a %s write needs%s", k, array, i,
							*member ? "." : "", member, type,
							*c == 's' ? " (the set's layout has no "
							"immutable samplers)"
							: *c == 'V' || *c == 'B' ? ""
							: " (no device enabled nullDescriptor)");
					return -1;
				}
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Framebuffers against their render passes: as many attachments (a
 * framebuffer of no attachments for a render pass of two crashed
 * llvmpipe at vkCmdBeginRenderPass), none null but in an imageless one. */

static uint64_t attachments_of(const vk_iface *v, uint64_t handle, uint64_t kind)
{
	uint64_t *n = handle ? tmap_at(&v->map, handle, kind) : NULL;
	if (n && kind == K_RENDER_PASS)
		return ((const uint32_t *)(uintptr_t)*n)[0];
	return n ? *n - 1 : UINT64_MAX;
}

/* A render pass made: its attachments' formats (A's create info, of
 * vkCreateRenderPass, or of vkCreateRenderPass2 when TWO). */
static void render_pass_made(vk_iface *v, const vk_args_vkCreateRenderPass *a, bool two)
{
	uint32_t n = a->pCreateInfo->attachmentCount;
	uint32_t *f = trace_xcalloc((size_t)n + 1, sizeof(*f));
	f[0] = n;
	if (two) {
		const VkRenderPassCreateInfo2 *ci = (const VkRenderPassCreateInfo2 *)a->pCreateInfo;
		for (uint32_t i = 0; ci->pAttachments && i < n; i++)
			f[i + 1] = (uint32_t)ci->pAttachments[i].format;
	} else {
		for (uint32_t i = 0; a->pCreateInfo->pAttachments && i < n; i++)
			f[i + 1] = (uint32_t)a->pCreateInfo->pAttachments[i].format;
	}
	vk_iface_put(v, H(*a->pRenderPass), K_RENDER_PASS, f);
}

/* Attachment I of a framebuffer for render pass RP: the view's format the
 * attachment's (a depth view where the color one belongs crashed
 * llvmpipe drawing). */
static int view_fits(vk_iface *v, uint64_t rp, uint32_t i, VkImageView view, trace_error *err)
{
	uint64_t *f = rp ? tmap_at(&v->map, rp, K_RENDER_PASS) : NULL;
	uint64_t *vf = view ? tmap_at(&v->map, H(view), K_VIEW) : NULL;
	const uint32_t *want = f ? (const uint32_t *)(uintptr_t)*f : NULL;
	if (!want || !vf || i >= want[0] || *vf - 1 == want[i + 1])
		return 0;
	const char *have = enum_name("VkFormat", (int64_t)(*vf - 1)), *need = enum_name("VkFormat", want[i + 1]);
	trace_error_set(err, "pCreateInfo.pAttachments[%u]: VkImageView 0x%llx is of %s, but "
			"attachment %u of VkRenderPass 0x%llx is of %s", i, (unsigned long long)H(view),
			have ? have : "an unknown format", i, (unsigned long long)rp,
			need ? need : "an unknown format");
	return -1;
}

static int framebuffer_fits(vk_iface *v, const vk_args_vkCreateFramebuffer *a, bool failed,
			    trace_error *err)
{
	const VkFramebufferCreateInfo *ci = a->pCreateInfo;
	if (!ci)
		return 0;
	bool imageless = ci->flags & VK_FRAMEBUFFER_CREATE_IMAGELESS_BIT;
	const VkFramebufferAttachmentsCreateInfo *images =
		vk_chain_find(ci->pNext, VK_STRUCTURE_TYPE_FRAMEBUFFER_ATTACHMENTS_CREATE_INFO);
	uint64_t want = attachments_of(v, H(ci->renderPass), K_RENDER_PASS);
	uint32_t have = imageless && images ? images->attachmentImageInfoCount : ci->attachmentCount;
	if (want != UINT64_MAX && (!imageless || images) && have != want) {
		trace_error_set(err, "pCreateInfo.%s: %u, but VkRenderPass 0x%llx has %llu "
				"attachments", imageless ? "pNext.attachmentImageInfoCount"
				: "attachmentCount", have, (unsigned long long)H(ci->renderPass),
				(unsigned long long)want);
		return -1;
	}
	for (uint32_t i = 0; ci->pAttachments && !imageless && i < ci->attachmentCount; i++) {
		if (!ci->pAttachments[i]) {
			trace_error_set(err, "pCreateInfo.pAttachments[%u]: a null VkImageView in a "
					"framebuffer not imageless", i);
			return -1;
		}
		if (view_fits(v, H(ci->renderPass), i, ci->pAttachments[i], err) < 0)
			return -1;
	}
	if (!failed && a->pFramebuffer && *a->pFramebuffer)
		tmap_set(&v->map, H(*a->pFramebuffer), K_FRAMEBUFFER, 1 + (uint64_t)have);
	return 0;
}

/* A render pass begun in a framebuffer of as many attachments. */
static int begin_fits(vk_iface *v, const VkRenderPassBeginInfo *b, trace_error *err)
{
	if (!b)
		return 0;
	uint64_t rp = attachments_of(v, H(b->renderPass), K_RENDER_PASS);
	uint64_t fb = attachments_of(v, H(b->framebuffer), K_FRAMEBUFFER);
	if (rp == UINT64_MAX || fb == UINT64_MAX || rp == fb)
		return 0;
	trace_error_set(err, "pRenderPassBegin: VkFramebuffer 0x%llx has %llu attachments, but "
			"VkRenderPass 0x%llx has %llu", (unsigned long long)H(b->framebuffer),
			(unsigned long long)fb, (unsigned long long)H(b->renderPass),
			(unsigned long long)rp);
	return -1;
}

/* One handler a followed command: what its record makes, forgets or
 * must fit.  A (capture-time) failed create made nothing. */
static int on_update(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	const vk_args_vkUpdateDescriptorSets *a = args;
	(void)n, (void)failed;
	if (writes_fit(v, a->pDescriptorWrites, a->descriptorWriteCount, false, 0, 0, err) < 0)
		return -1;
	for (uint32_t k = 0; a->pDescriptorWrites && k < a->descriptorWriteCount; k++) {
		const VkWriteDescriptorSet *w = &a->pDescriptorWrites[k];
		vk_iface_written(v, H(w->dstSet), w->dstBinding, w->dstArrayElement, w->descriptorCount);
	}
	for (uint32_t k = 0; a->pDescriptorCopies && k < a->descriptorCopyCount; k++) {
		const VkCopyDescriptorSet *c = &a->pDescriptorCopies[k];
		vk_iface_written(v, H(c->dstSet), c->dstBinding, c->dstArrayElement, c->descriptorCount);
	}
	return 0;
}

static int on_push(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	const vk_args_vkCmdPushDescriptorSetKHR *a = args;
	(void)n, (void)failed;
	vk_iface_sets_bound(v, H(a->commandBuffer), a->pipelineBindPoint, a->set, 1, NULL);
	return writes_fit(v, a->pDescriptorWrites, a->descriptorWriteCount, true, H(a->layout),
			  a->set, err);
}

static int on_begin(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	/* (vkCmdBeginRenderPass2's first parameters are the first's) */
	(void)n, (void)failed;
	return begin_fits(v, ((const vk_args_vkCmdBeginRenderPass *)args)->pRenderPassBegin, err);
}

static int on_sets(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	(void)n, (void)err;
	if (!failed)
		sets_made(v, args);
	return 0;
}

static int on_template(vk_iface *v, const char *n, const void *args, bool failed,
		       trace_error *err)
{
	/* the layout its type uses, not null (llvmpipe crashed making a
	 * push descriptor template of a null pipeline layout) */
	const VkDescriptorUpdateTemplateCreateInfo *ci =
		((const vk_args_vkCreateDescriptorUpdateTemplate *)args)->pCreateInfo;
	(void)v, (void)n, (void)failed;
	bool push = ci && ci->templateType == VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR;
	if (!ci || (push ? ci->pipelineLayout != VK_NULL_HANDLE
			 : ci->descriptorSetLayout != VK_NULL_HANDLE))
		return 0;
	const char *type = enum_name("VkDescriptorUpdateTemplateType", ci->templateType);
	trace_error_set(err, "pCreateInfo.%s: a null %s in a template of type %s",
			push ? "pipelineLayout" : "descriptorSetLayout",
			push ? "VkPipelineLayout" : "VkDescriptorSetLayout", type ? type : "unknown");
	return -1;
}

static int on_framebuffer(vk_iface *v, const char *n, const void *args, bool failed,
			  trace_error *err)
{
	(void)n;
	return framebuffer_fits(v, args, failed, err);
}

static int on_render_pass(vk_iface *v, const char *n, const void *args, bool failed,
			  trace_error *err)
{
	/* (the three commands' parameters are alike, and their create
	 * infos up to attachmentCount) */
	const vk_args_vkCreateRenderPass *a = args;
	(void)err;
	if (!failed && a->pCreateInfo && a->pRenderPass && *a->pRenderPass)
		render_pass_made(v, a, n[18] == '2');
	return 0;
}

static int on_view(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	const vk_args_vkCreateImageView *a = args;
	(void)n, (void)err;
	if (!failed && a->pCreateInfo && a->pView && *a->pView)
		tmap_set(&v->map, H(*a->pView), K_VIEW, 1 + (uint64_t)a->pCreateInfo->format);
	return 0;
}

static int on_buffer(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	const vk_args_vkCreateBuffer *a = args;
	(void)n, (void)err;
	if (!failed && a->pCreateInfo && a->pBuffer && *a->pBuffer)
		tmap_set(&v->map, H(*a->pBuffer), K_BUFFER, 1 + a->pCreateInfo->size);
	return 0;
}

static int on_device(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	(void)n, (void)err;
	if (!failed)
		device_made(v, args);
	return 0;
}

static int on_module(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	const vk_args_vkCreateShaderModule *a = args;
	spv_module *m;
	(void)n;
	if (module_made(v, a->pCreateInfo, "pCreateInfo", &m, err) < 0)
		return -1;
	if (!failed && a->pShaderModule && *a->pShaderModule)
		vk_iface_put(v, H(*a->pShaderModule), K_MODULE, m);
	else
		spv_free(m);
	return 0;
}

static int on_set_layout(vk_iface *v, const char *n, const void *args, bool failed,
			 trace_error *err)
{
	const vk_args_vkCreateDescriptorSetLayout *a = args;
	(void)n, (void)err;
	if (!failed && a->pCreateInfo && a->pSetLayout && *a->pSetLayout)
		set_layout_made(v, a);
	return 0;
}

static int on_layout(vk_iface *v, const char *n, const void *args, bool failed, trace_error *err)
{
	const vk_args_vkCreatePipelineLayout *a = args;
	(void)n;
	/* a null set layout but in a library's layout of independent sets
	 * (llvmpipe crashed making one) */
	const VkPipelineLayoutCreateInfo *ci = a->pCreateInfo;
	for (uint32_t i = 0; ci && ci->pSetLayouts && i < ci->setLayoutCount &&
	     !(ci->flags & VK_PIPELINE_LAYOUT_CREATE_INDEPENDENT_SETS_BIT_EXT); i++)
		if (!ci->pSetLayouts[i]) {
			trace_error_set(err, "pCreateInfo.pSetLayouts[%u]: a null "
					"VkDescriptorSetLayout in a layout not of independent sets", i);
			return -1;
		}
	if (!failed && a->pCreateInfo && a->pPipelineLayout && *a->pPipelineLayout)
		layout_made(v, a);
	return 0;
}

static bool dynamic(const VkPipelineDynamicStateCreateInfo *d, VkDynamicState s)
{
	for (uint32_t i = 0; d && d->pDynamicStates && i < d->dynamicStateCount; i++)
		if (d->pDynamicStates[i] == s)
			return true;
	return false;
}

/* The states a complete graphics pipeline K (not a library, nor linked
 * from libraries) must give where it does not make them dynamic: the
 * viewports and scissors its viewport state counts (vkcube's pipeline
 * with dynamicStateCount edited from 2 to 0 had llvmpipe read its null
 * pViewports: mutants.py seed 2717873790), and with a vertex stage its
 * vertex input and input assembly. */
void vk_iface_set_max_viewports(vk_iface *v, uint32_t max)
{
	v->max_viewports = max;
}

/* VUID-VkPipelineViewportStateCreateInfo-viewportCount-01218 and
 * scissorCount-01220: viewportCount edited from 1 to 4294967295, with
 * the viewports dynamic (no array to check it against), crashed
 * llvmpipe's thread making vkcube's pipeline (mutants.py seed
 * 1886620611). */
static int viewports_fit(const vk_iface *v, uint32_t k, const VkGraphicsPipelineCreateInfo *ci,
			 trace_error *err)
{
	const VkPipelineViewportStateCreateInfo *vp = ci->pViewportState;
	if (!vp || !v->max_viewports)
		return 0;
	const char *what = vp->viewportCount > v->max_viewports ? "viewportCount"
			 : vp->scissorCount > v->max_viewports ? "scissorCount" : NULL;
	if (!what)
		return 0;
	trace_error_set(err, "pCreateInfos[%u].pViewportState: %s %u, but the device makes %u "
			"viewports at most", k, what,
			what[0] == 'v' ? vp->viewportCount : vp->scissorCount, v->max_viewports);
	return -1;
}

static int states_fit(uint32_t k, const VkGraphicsPipelineCreateInfo *ci, trace_error *err)
{
	if ((ci->flags & VK_PIPELINE_CREATE_LIBRARY_BIT_KHR) ||
	    vk_chain_find(ci->pNext, VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT) ||
	    vk_chain_find(ci->pNext, VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR))
		return 0;
	const VkPipelineDynamicStateCreateInfo *d = ci->pDynamicState;
	const VkPipelineViewportStateCreateInfo *vp = ci->pViewportState;
	bool discard = ci->pRasterizationState && ci->pRasterizationState->rasterizerDiscardEnable &&
		       !dynamic(d, VK_DYNAMIC_STATE_RASTERIZER_DISCARD_ENABLE);
	const char *missing = NULL, *state = NULL;
	if (vp && !discard && vp->viewportCount && !vp->pViewports &&
	    !dynamic(d, VK_DYNAMIC_STATE_VIEWPORT) && !dynamic(d, VK_DYNAMIC_STATE_VIEWPORT_WITH_COUNT))
		missing = "pViewportState.pViewports", state = "VK_DYNAMIC_STATE_VIEWPORT";
	else if (vp && !discard && vp->scissorCount && !vp->pScissors &&
		 !dynamic(d, VK_DYNAMIC_STATE_SCISSOR) &&
		 !dynamic(d, VK_DYNAMIC_STATE_SCISSOR_WITH_COUNT))
		missing = "pViewportState.pScissors", state = "VK_DYNAMIC_STATE_SCISSOR";
	bool vertex = false, mesh = false;
	for (uint32_t i = 0; ci->pStages && i < ci->stageCount; i++) {
		vertex |= ci->pStages[i].stage == VK_SHADER_STAGE_VERTEX_BIT;
		mesh |= ci->pStages[i].stage == VK_SHADER_STAGE_MESH_BIT_EXT;
	}
	/* a vertex or mesh stage (VUID-VkGraphicsPipelineCreateInfo-stage-02096:
	 * vkcube's pipeline with stageCount edited to 0 crashed llvmpipe
	 * making it: mutants.py seed 743476362) */
	if (!vertex && !mesh) {
		trace_error_set(err, "pCreateInfos[%u].pStages: no VK_SHADER_STAGE_VERTEX_BIT or "
				"VK_SHADER_STAGE_MESH_BIT_EXT stage among its %u, which a complete "
				"graphics pipeline needs", k, ci->pStages ? ci->stageCount : 0);
		return -1;
	}
	if (!missing && vertex && !ci->pVertexInputState &&
	    !dynamic(d, VK_DYNAMIC_STATE_VERTEX_INPUT_EXT))
		missing = "pVertexInputState", state = "VK_DYNAMIC_STATE_VERTEX_INPUT_EXT";
	if (!missing && vertex && !ci->pInputAssemblyState &&
	    !(dynamic(d, VK_DYNAMIC_STATE_PRIMITIVE_TOPOLOGY) &&
	      dynamic(d, VK_DYNAMIC_STATE_PRIMITIVE_RESTART_ENABLE)))
		missing = "pInputAssemblyState", state = "VK_DYNAMIC_STATE_PRIMITIVE_TOPOLOGY";
	if (!missing)
		return 0;
	trace_error_set(err, "pCreateInfos[%u].%s: null, and %s is not a dynamic state of the "
			"pipeline", k, missing, state);
	return -1;
}

/* What the libraries LI links (NULL: none) use, into U. */
static void libraries_used(vk_iface *v, const VkPipelineLibraryCreateInfoKHR *li, pipe_uses *u)
{
	for (uint32_t i = 0; li && i < li->libraryCount; i++) {
		const pipe_uses *l = li->pLibraries ? vk_iface_get(v, H(li->pLibraries[i]), K_PIPELINE)
						    : NULL;
		if (l)
			vk_iface_uses_merge(u, l);
		else
			u->partial = true;
	}
}

/* Graphics, compute and ray tracing pipelines: each create info's
 * stages against its layout; what each pipeline made uses, kept. */
static int on_pipelines(vk_iface *v, const char *n, const void *args, bool failed,
			trace_error *err)
{
	const vk_args_vkCreateGraphicsPipelines *g = args;
	const vk_args_vkCreateComputePipelines *c = args;
	const vk_args_vkCreateRayTracingPipelinesKHR *rt = args;
	char kind = n[8];  /* vkCreate[GCR] */
	uint32_t count = kind == 'G' ? g->createInfoCount
		       : kind == 'C' ? c->createInfoCount : rt->createInfoCount;
	const void *infos = kind == 'G' ? (const void *)g->pCreateInfos
			  : kind == 'C' ? (const void *)c->pCreateInfos : rt->pCreateInfos;
	const VkPipeline *made = kind == 'G' ? g->pPipelines
			       : kind == 'C' ? c->pPipelines : rt->pPipelines;
	for (uint32_t k = 0; infos && k < count; k++) {
		pipe_uses u = {0};
		VkPipelineCreateFlags flags;
		int rc;
		if (kind == 'G') {
			flags = g->pCreateInfos[k].flags;
			rc = states_fit(k, &g->pCreateInfos[k], err) < 0 ||
					     viewports_fit(v, k, &g->pCreateInfos[k], err) < 0
				     ? -1
				     : stages_fit(v, k, "pStages", g->pCreateInfos[k].pStages,
					g->pCreateInfos[k].stageCount, g->pCreateInfos[k].layout,
					flags, &u, err);
		} else if (kind == 'C') {
			flags = c->pCreateInfos[k].flags;
			rc = stages_fit(v, k, "stage", &c->pCreateInfos[k].stage, 1,
					c->pCreateInfos[k].layout, 0, &u, err);
		} else {
			flags = rt->pCreateInfos[k].flags;
			rc = stages_fit(v, k, "pStages", rt->pCreateInfos[k].pStages,
					rt->pCreateInfos[k].stageCount, rt->pCreateInfos[k].layout,
					flags, &u, err);
		}
		libraries_used(v, kind == 'G' ? vk_chain_find(g->pCreateInfos[k].pNext,
			VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR)
			: kind == 'R' ? rt->pCreateInfos[k].pLibraryInfo : NULL, &u);
		/* (descriptor buffers are not sets: nothing to follow) */
		if (rc == 0 && !failed && made && made[k] &&
		    !(flags & VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT)) {
			pipe_uses *keep = trace_xmalloc(sizeof(*keep));
			*keep = u;
			vk_iface_put(v, H(made[k]), K_PIPELINE, keep);
		} else {
			free(u.sb);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The followed commands: what each record makes, checks or, for a
 * destroy, forgets (the kind its handle, the parameter after the
 * device, was kept under) */
static const struct {
	const char *name;
	note_fn *fn;
	uint64_t forgets;
} notes[] = {
	{"vkUpdateDescriptorSets", on_update, 0},
	{"vkCmdPushDescriptorSetKHR", on_push, 0},
	{"vkCmdBeginRenderPass", on_begin, 0},
	{"vkCmdBeginRenderPass2", on_begin, 0},
	{"vkCmdBeginRenderPass2KHR", on_begin, 0},
	{"vkAllocateDescriptorSets", on_sets, 0},
	{"vkCreateDescriptorUpdateTemplate", on_template, 0},
	{"vkCreateDescriptorUpdateTemplateKHR", on_template, 0},
	{"vkCreateFramebuffer", on_framebuffer, 0},
	{"vkCreateRenderPass", on_render_pass, 0},
	{"vkCreateRenderPass2", on_render_pass, 0},
	{"vkCreateRenderPass2KHR", on_render_pass, 0},
	{"vkCreateImageView", on_view, 0},
	{"vkCreateBuffer", on_buffer, 0},
	{"vkCreateDevice", on_device, 0},
	{"vkCreateShaderModule", on_module, 0},
	{"vkCreateDescriptorSetLayout", on_set_layout, 0},
	{"vkCreatePipelineLayout", on_layout, 0},
	{"vkCreateGraphicsPipelines", on_pipelines, 0},
	{"vkCreateComputePipelines", on_pipelines, 0},
	{"vkCreateRayTracingPipelinesKHR", on_pipelines, 0},
	{"vkCmdBindPipeline", vk_iface_on_bind_pipeline, 0},
	{"vkCmdBindDescriptorSets", vk_iface_on_bind_sets, 0},
	{"vkCmdBindShadersEXT", vk_iface_on_bind_shaders, 0},
	{"vkCmdPushDescriptorSetWithTemplateKHR", vk_iface_on_unfollowed, 0},
	{"vkCmdSetDescriptorBufferOffsetsEXT", vk_iface_on_unfollowed, 0},
	{"vkCmdBindDescriptorBufferEmbeddedSamplersEXT", vk_iface_on_unfollowed, 0},
	{"vkBeginCommandBuffer", vk_iface_on_begin_cb, 0},
	{"vkUpdateDescriptorSetWithTemplate", vk_iface_on_template_update, 0},
	{"vkUpdateDescriptorSetWithTemplateKHR", vk_iface_on_template_update, 0},
	{"vkCmdDraw", vk_iface_on_draw, 0},  /* and every command named from there: below */
	{"vkCmdDispatch", vk_iface_on_draw, 0},
	{"vkCmdTraceRays", vk_iface_on_draw, 0},
	{"vkDestroyShaderModule", NULL, K_MODULE},
	{"vkDestroyDescriptorSetLayout", NULL, K_SET_LAYOUT},
	{"vkDestroyPipelineLayout", NULL, K_LAYOUT},
	{"vkDestroyRenderPass", NULL, K_RENDER_PASS},
	{"vkDestroyImageView", NULL, K_VIEW},
	{"vkDestroyBuffer", NULL, K_BUFFER},
	{"vkDestroyPipeline", NULL, K_PIPELINE},
};

static int note_of(const char *name)
{
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (!strcmp(name, notes[i].name) ||
		    (notes[i].fn == vk_iface_on_draw && !strncmp(name, notes[i].name, strlen(notes[i].name))))
			return (int)i;
	return -1;
}

bool vk_iface_layout(const vk_iface *v, uint64_t layout, uint32_t *nsets, uint64_t *push_end)
{
	const pipe_layout *l = vk_iface_get(v, layout, K_LAYOUT);
	if (!l)
		return false;
	*nsets = l->nsets;
	*push_end = 0;
	for (uint32_t i = 0; i < l->npush; i++)
		if ((uint64_t)l->push[i].offset + l->push[i].size > *push_end)
			*push_end = (uint64_t)l->push[i].offset + l->push[i].size;
	return true;
}

bool vk_iface_layout_descriptors(const vk_iface *v, uint64_t layout, uint64_t counts[11])
{
	const pipe_layout *l = vk_iface_get(v, layout, K_LAYOUT);
	if (!l)
		return false;
	memset(counts, 0, 11 * sizeof(*counts));
	for (uint32_t i = 0; i < l->nsets; i++)
		for (uint32_t k = 0; l->sets[i] && !l->sets[i]->after_bind && k < l->sets[i]->n; k++)
			if ((unsigned)l->sets[i]->b[k].descriptorType < 11)
				counts[l->sets[i]->b[k].descriptorType] += l->sets[i]->b[k].descriptorCount;
	return true;
}

bool vk_iface_wants(const vk_command_info *cmd)
{
	return note_of(cmd->sig.name) >= 0;
}

int vk_iface_note(vk_iface *v, const vk_command_info *cmd, const void *args, bool failed,
		  trace_error *err)
{
	/* the table searched once per command, not per record: (command
	 * info, K_NOTE) -> 1 + its row */
	uint64_t *row = tmap_at(&v->map, H(cmd), K_NOTE);
	int i = row ? (int)*row - 1 : note_of(cmd->sig.name);
	if (!row)
		tmap_set(&v->map, H(cmd), K_NOTE, (uint64_t)(i + 1));
	if (i < 0)
		return 0;
	if (notes[i].fn)
		return notes[i].fn(v, cmd->sig.name, args, failed, err);
	if (cmd->nparams >= 2)  /* vkDestroyX(device, handle, pAllocator) */
		vk_iface_forget(v, *(const uint64_t *)((const char *)args + cmd->params[1].offset),
		       notes[i].forgets);
	return 0;
}
