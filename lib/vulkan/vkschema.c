/*
 * The walker over the generated Vulkan schema: live C values into trace
 * values (a deep copy into the call's arena) and trace values back into C
 * (allocated in an arena).  The tables say everything about the types;
 * this file knows only the shapes a registry member can take (a value, a
 * fixed array, a pointer to one or to len elements, a pointer to
 * pointers, a pNext chain).
 */
#include "vkschema_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* the descriptor types and info structs of update templates (types and
 * constants only: libtrace does not link libvulkan) */
#include <vulkan/vulkan_core.h>

/* ------------------------------------------------------------------ */
/* Lookups: the generated tables are sorted by name (strcmp order). */

#define LOOKUP(fn, type, table, count, namefield)                             \
	const type *fn(const char *name)                                      \
	{                                                                     \
		uint32_t lo = 0, hi = count;                                  \
		while (lo < hi) {                                             \
			uint32_t mid = lo + (hi - lo) / 2;                    \
			int c = strcmp(name, table[mid]->namefield);          \
			if (!c)                                               \
				return table[mid];                            \
			if (c < 0)                                            \
				hi = mid;                                     \
			else                                                  \
				lo = mid + 1;                                 \
		}                                                             \
		return NULL;                                                  \
	}

LOOKUP(vk_command_lookup, vk_command_info, vk_commands, vk_ncommands, sig.name)
LOOKUP(vk_struct_lookup, vk_struct_info, vk_structs, vk_nstructs, sig.name)
LOOKUP(vk_enum_lookup, vk_enum_info, vk_enums, vk_nenums, name)

/* Any record's function name: only "vk..." ones are searched for. */
const vk_command_info *trace_vk_command(const char *name)
{
	if (!name || name[0] != 'v' || name[1] != 'k')
		return NULL;
	return vk_command_lookup(name);
}
LOOKUP(vk_bitmask_lookup, vk_bitmask_info, vk_bitmasks, vk_nbitmasks, name)
LOOKUP(vk_handle_lookup, vk_handle_info, vk_handles, vk_nhandles, name)

const vk_struct_info *vk_struct_by_stype(int32_t stype)
{
	uint32_t lo = 0, hi = vk_nstructs_by_stype;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int32_t s = vk_structs_by_stype[mid]->stype;
		if (s == stype)
			return vk_structs_by_stype[mid];
		if (stype < s)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* A value the type does not name: an ENUM that names nothing, as the text
 * form's `!enum 42` reads. */
static const trace_enum_sig no_values = { 0, NULL };

/* The values run 0, 1, 2 ... from the start in most enums: those index
 * their signature; the others (VkResult's negatives, extension values in
 * the billions) are searched for. */
const trace_enum_sig *vk_enum_sig(const vk_enum_info *e, int64_t value)
{
	if (!e)
		return &no_values;
	if (value >= 0 && (uint64_t)value < e->nones && e->ones[value].values[0].value == value)
		return &e->ones[value];
	uint32_t lo = 0, hi = e->nones;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int64_t v = e->ones[mid].values[0].value;
		if (v == value)
			return &e->ones[mid];
		if (value < v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return &no_values;
}

/* A prefix, not the flags the value shows: those would be a signature
 * per combination, made while encoding; prefixes are in the tables. */
static const trace_bitmask_sig no_flags = { 0, NULL };

const trace_bitmask_sig *vk_bitmask_sig(const vk_bitmask_info *b, uint64_t value)
{
	if (!b || !b->prefix)
		return &no_flags;
	uint32_t shown = 0;
	uint64_t rest = value;
	for (uint32_t i = 0; i < b->sig.nflags; i++) {
		const trace_bitmask_flag *f = &b->sig.flags[i];
		if ((f->value && (rest & f->value) == f->value) || (!f->value && !rest)) {
			shown = i + 1;
			rest &= ~f->value;
		}
		if (!rest)
			break;
	}
	return &b->prefix[shown];
}

/* ------------------------------------------------------------------ */
/* Shared helpers. */

static const char *const base_names[] = { "sType", "pNext" };
static const trace_struct_sig base_sig = { "VkBaseInStructure", 2, (const char **)base_names };

uint64_t vk_field_len(const vk_field *fields, const vk_field *f, const void *struct_base)
{
	const uint8_t *base = struct_base;
	if (f->len_op == VK_LEN_NONE)
		return 1;
	if (f->len_op == VK_LEN_CONST)
		return f->len_arg;
	if (f->len < 0)
		return 1;
	const vk_field *s = &fields[f->len];
	const uint8_t *sp = base + s->offset;
	uint64_t n;
	if (f->len_op == VK_LEN_FIELD) {
		const uint8_t *q = read_ptr(sp);
		return q ? read_uint(q + f->len_arg, 4) : 0;
	}
	if (s->ptr) {
		const void *q = read_ptr(sp);
		n = q ? read_uint(q, s->size) : 0;
	} else {
		n = read_uint(sp, s->size);
	}
	if (f->len_op == VK_LEN_DIV4)
		return n / 4;
	if (f->len_op == VK_LEN_SAMPLES)
		return (n + 31) / 32;
	return n;
}

/* ------------------------------------------------------------------ */
/* Encoding: C into trace values. */

static void enc_pnext(trace_arena *a, trace_value *v, const void *p);
static void enc_struct(const vk_struct_info *s, trace_arena *a, trace_value *out, const void *p,
		       bool chained);

static void enc_blob(trace_arena *a, trace_value *v, const void *p, uint64_t n)
{
	uint8_t *b = trace_arena_alloc(a, n ? n : 1);
	memcpy(b, p, n);
	v->kind = TRACE_BLOB;
	v->len = (uint32_t)n;
	v->blob = b;
}

static void enc_string(trace_arena *a, trace_value *v, const char *s, size_t n)
{
	v->kind = TRACE_STRING;
	v->len = (uint32_t)n;
	v->str = trace_arena_strndup(a, s, n);
}

static trace_value *enc_array(trace_arena *a, trace_value *v, uint64_t n)
{
	v->kind = TRACE_ARRAY;
	v->len = (uint32_t)n;
	v->items = trace_arena_alloc(a, sizeof(trace_value) * (n ? n : 1));
	return v->items;
}

/* One element of F's base type at P. */
static void enc_elem(trace_arena *a, trace_value *v, const vk_field *f, const uint8_t *p)
{
	switch ((vk_base)f->base) {
	case VK_B_BOOL32: {
		uint32_t b = (uint32_t)read_uint(p, 4);
		if (b <= 1) {
			v->kind = TRACE_BOOL;
			v->b = b;
		} else {
			v->kind = TRACE_UINT;
			v->u = b;
		}
		return;
	}
	case VK_B_UINT:
	case VK_B_EXTERN:
	case VK_B_CHAR:
		v->kind = TRACE_UINT;
		v->u = read_uint(p, f->size);
		return;
	case VK_B_SINT:
		v->kind = TRACE_SINT;
		v->i = read_sint(p, f->size);
		return;
	case VK_B_FLOAT:
		v->kind = TRACE_FLOAT;
		memcpy(&v->f, p, 4);
		return;
	case VK_B_DOUBLE:
		v->kind = TRACE_DOUBLE;
		memcpy(&v->d, p, 8);
		return;
	case VK_B_ENUM:
		v->kind = TRACE_ENUM;
		v->en.value = read_sint(p, f->size);
		v->en.sig = vk_enum_sig(f->ref, v->en.value);
		return;
	case VK_B_BITMASK:
		v->kind = TRACE_BITMASK;
		v->bm.value = read_uint(p, f->size);
		v->bm.sig = vk_bitmask_sig(f->ref, v->bm.value);
		return;
	case VK_B_HANDLE:
	case VK_B_PTRVAL:
		v->kind = TRACE_POINTER;
		v->u = read_uint(p, 8);
		return;
	case VK_B_STRUCT:
		enc_struct(f->ref, a, v, p, false);
		return;
	case VK_B_UNION:
	case VK_B_OPAQUE:
	case VK_B_VOID:
		enc_blob(a, v, p, f->size);
		return;
	}
}

/* What pointer P (to F's base type) points at: N elements, or one. */
static void enc_pointee(trace_arena *a, trace_value *v, const vk_field *f, const uint8_t *p,
			bool has_len, uint64_t n)
{
	if (f->base == VK_B_CHAR) {
		enc_string(a, v, (const char *)p, has_len ? strnlen((const char *)p, n) : strlen((const char *)p));
		return;
	}
	if (f->base == VK_B_VOID) {
		if (has_len) {
			enc_blob(a, v, p, n);
		} else {
			v->kind = TRACE_POINTER;
			v->u = (uintptr_t)p;
		}
		return;
	}
	if (!has_len)
		n = 1;
	if (f->base == VK_B_OPAQUE) {
		enc_blob(a, v, p, n * f->size);
		return;
	}
	trace_value *items = enc_array(a, v, n);
	for (uint64_t i = 0; i < n; i++)
		enc_elem(a, &items[i], f, p + i * f->size);
}

static void enc_field(trace_arena *a, trace_value *v, const vk_field *fields,
		      const vk_field *f, const uint8_t *base)
{
	const uint8_t *fp = base + f->offset;
	if (f->flags & VK_F_PNEXT) {
		enc_pnext(a, v, read_ptr(fp));
		return;
	}
	if (f->ptr == 0) {
		if (!f->count) {
			enc_elem(a, v, f, fp);
		} else if (f->base == VK_B_CHAR) {
			enc_string(a, v, (const char *)fp, strnlen((const char *)fp, f->count));
		} else if (f->base == VK_B_UINT && f->size == 1) {
			enc_blob(a, v, fp, f->count);
		} else {
			trace_value *items = enc_array(a, v, f->count);
			for (uint32_t i = 0; i < f->count; i++)
				enc_elem(a, &items[i], f, fp + (size_t)i * f->size);
		}
		return;
	}
	const uint8_t *p = read_ptr(fp);
	if (!p) {
		v->kind = TRACE_NULL;
		return;
	}
	if (f->flags & VK_F_ADDRESS) {
		v->kind = TRACE_POINTER;
		v->u = (uintptr_t)p;
		return;
	}
	bool has_len = f->len_op != VK_LEN_NONE;
	uint64_t n = has_len ? vk_field_len(fields, f, base) : 1;
	if (f->ptr == 1) {
		enc_pointee(a, v, f, p, has_len, n);
		return;
	}
	/* T**: an array of n pointers, each to one T (or a string) */
	trace_value *items = enc_array(a, v, n);
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *q = read_ptr(p + i * sizeof(void *));
		if (!q && f->base != VK_B_VOID)
			items[i].kind = TRACE_NULL;
		else
			enc_pointee(a, &items[i], f, q, false, 1);
	}
}

/* The loader's link structs are its own, not the application's. */
static const base_in *skip_loader(const base_in *b)
{
	while (b && (b->sType == STYPE_LOADER_INSTANCE || b->sType == STYPE_LOADER_DEVICE))
		b = b->pNext;
	return b;
}

/*
 * A pNext chain, flattened: one ARRAY of the chained structs in chain
 * order, each with its own pNext written null.  Nesting each link inside
 * the one before would go deeper than readers allow (zink chains some 40
 * feature structs into vkCreateDevice).
 */
static void enc_pnext(trace_arena *a, trace_value *v, const void *p)
{
	uint64_t n = 0;
	for (const base_in *b = skip_loader(p); b; b = skip_loader(b->pNext))
		n++;
	if (!n) {
		v->kind = TRACE_NULL;
		return;
	}
	trace_value *items = enc_array(a, v, n);
	const vk_enum_info *stypes = vk_enum_lookup("VkStructureType");
	uint64_t i = 0;
	for (const base_in *b = skip_loader(p); b; b = skip_loader(b->pNext), i++) {
		const vk_struct_info *s = vk_struct_by_stype(b->sType);
		if (s) {
			enc_struct(s, a, &items[i], b, true);
			continue;
		}
		trace_value *m = trace_arena_alloc(a, 2 * sizeof(trace_value));
		m[0].kind = TRACE_ENUM;
		m[0].en.sig = vk_enum_sig(stypes, b->sType);
		m[0].en.value = b->sType;
		m[1].kind = TRACE_NULL;
		items[i].kind = TRACE_STRUCT;
		items[i].st.sig = &base_sig;
		items[i].st.members = m;
	}
}

static bool has_dynamic(const VkPipelineDynamicStateCreateInfo *d, VkDynamicState state)
{
	for (uint32_t i = 0; d && d->pDynamicStates && i < d->dynamicStateCount; i++)
		if (d->pDynamicStates[i] == state)
			return true;
	return false;
}

enum {
	GP_VERTEX_INPUT = VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT,
	GP_PRE_RASTER = VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT,
	GP_FRAGMENT = VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT,
	GP_OUTPUT = VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT,
};

/* The state subsets a graphics pipeline's create info gives itself, as
 * VkGraphicsPipelineLibraryCreateInfoEXT's description has them: its
 * flags; without one, none for a library or a pipeline linked from
 * libraries ("it is as if flags is 0"), else all four. */
static VkGraphicsPipelineLibraryFlagsEXT gp_subsets(const VkGraphicsPipelineCreateInfo *ci)
{
	const VkGraphicsPipelineLibraryCreateInfoEXT *gpl =
		vk_chain_find(ci->pNext, VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT);
	const VkPipelineLibraryCreateInfoKHR *libs =
		vk_chain_find(ci->pNext, VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR);
	if (gpl)
		return gpl->flags;
	if ((ci->flags & VK_PIPELINE_CREATE_LIBRARY_BIT_KHR) || (libs && libs->libraryCount))
		return 0;
	return GP_VERTEX_INPUT | GP_PRE_RASTER | GP_FRAGMENT | GP_OUTPUT;
}

/* The stages of a create info whose pStages is not ignored. */
static VkShaderStageFlags gp_stages(const VkGraphicsPipelineCreateInfo *ci)
{
	VkShaderStageFlags stages = 0;
	for (uint32_t i = 0; ci->pStages && i < ci->stageCount; i++)
		stages |= ci->pStages[i].stage;
	return stages;
}

/* "the pipeline has rasterization disabled", as far as a create info
 * that gives the pre-rasterization state says */
static bool gp_discards(const VkGraphicsPipelineCreateInfo *ci)
{
	return ci->pRasterizationState && ci->pRasterizationState->rasterizerDiscardEnable == VK_TRUE &&
	       !has_dynamic(ci->pDynamicState, VK_DYNAMIC_STATE_RASTERIZER_DISCARD_ENABLE);
}

/* Whether a create info without a render pass renders no depth or
 * stencil (COLOR false) or no color attachment (COLOR true): "If this
 * structure [VkPipelineRenderingCreateInfo] is not specified, and the
 * pipeline does not include a VkRenderPass, ... colorAttachmentCount
 * [is] 0, and depthAttachmentFormat and stencilAttachmentFormat are
 * VK_FORMAT_UNDEFINED".  With a render pass, only its subpass knows. */
static bool gp_renders_none(const VkGraphicsPipelineCreateInfo *ci, bool color)
{
	const VkPipelineRenderingCreateInfo *r =
		vk_chain_find(ci->pNext, VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO);
	if (ci->renderPass)
		return false;
	if (!r)
		return true;
	return color ? !r->colorAttachmentCount
		     : r->depthAttachmentFormat == VK_FORMAT_UNDEFINED &&
		       r->stencilAttachmentFormat == VK_FORMAT_UNDEFINED;
}

/*
 * Whether a graphics pipeline's pointer at offset AT is one the
 * specification (1.3) ignores.  The pointers of a state subset the create
 * info does not give are (every VUID requiring one begins "If the
 * pipeline is being created with <subset> state"; flags-06640 and -06641
 * for pStages and pRasterizationState).  Besides:
 *   pVertexInputState    "ignored if the pipeline includes a mesh shader
 *                        stage"; "ignored if the pipeline is created with
 *                        the VK_DYNAMIC_STATE_VERTEX_INPUT_EXT dynamic
 *                        state set"
 *   pInputAssemblyState  "ignored if the pipeline includes a mesh shader
 *                        stage"
 *   pTessellationState   "ignored if the pipeline does not include a
 *                        tessellation control shader stage and
 *                        tessellation evaluation shader stage"
 *   pViewportState, pMultisampleState, pDepthStencilState,
 *   pColorBlendState     "ignored if the pipeline has rasterization
 *                        disabled": rasterizerDiscardEnable VK_TRUE and
 *                        not dynamic (rasterizerDiscardEnable-00750,
 *                        pViewportState-04892; a complete pipeline has
 *                        fragment state only otherwise)
 *   pDepthStencilState   "or if the subpass ... does not use a
 *                        depth/stencil attachment": decided only without
 *                        a render pass (renderPass-06053, -06590)
 *   pColorBlendState     "or if the subpass ... does not use any color
 *                        attachments": likewise (renderPass-06054)
 * Where only another object knows (a render pass's subpass, the
 * rasterization of a linked library), the pointer is followed as before;
 * so is one VK_EXT_extended_dynamic_state3 lets be NULL with all of a
 * state dynamic: "can be NULL" where a feature is enabled, not "ignored".
 * Each case reads only the fields decoded before the one at AT
 * (decoded_late()).
 */
static bool gp_ignored(const VkGraphicsPipelineCreateInfo *ci, size_t at)
{
	VkGraphicsPipelineLibraryFlagsEXT has = gp_subsets(ci);
	bool pre = has & GP_PRE_RASTER, frag = has & GP_FRAGMENT, out = has & GP_OUTPUT;
	const VkShaderStageFlags tess = VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT |
					VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT;
	switch (at) {
	case offsetof(VkGraphicsPipelineCreateInfo, pStages):
		return !pre && !frag;
	case offsetof(VkGraphicsPipelineCreateInfo, pRasterizationState):
		return !pre;
	case offsetof(VkGraphicsPipelineCreateInfo, pVertexInputState):
		return !(has & GP_VERTEX_INPUT) ||
		       ((pre || frag) && (gp_stages(ci) & VK_SHADER_STAGE_MESH_BIT_EXT)) ||
		       has_dynamic(ci->pDynamicState, VK_DYNAMIC_STATE_VERTEX_INPUT_EXT);
	case offsetof(VkGraphicsPipelineCreateInfo, pInputAssemblyState):
		return !(has & GP_VERTEX_INPUT) ||
		       ((pre || frag) && (gp_stages(ci) & VK_SHADER_STAGE_MESH_BIT_EXT));
	case offsetof(VkGraphicsPipelineCreateInfo, pTessellationState):
		return !pre || (gp_stages(ci) & tess) != tess;
	case offsetof(VkGraphicsPipelineCreateInfo, pViewportState):
		return !pre || gp_discards(ci);
	case offsetof(VkGraphicsPipelineCreateInfo, pMultisampleState):
		return (!frag && !out) || (pre && gp_discards(ci));
	case offsetof(VkGraphicsPipelineCreateInfo, pDepthStencilState):
		/* a fragment shader library without output state needs it
		 * without a render pass (renderPass-06590) */
		return !frag || (pre && gp_discards(ci)) || (out && gp_renders_none(ci, false));
	case offsetof(VkGraphicsPipelineCreateInfo, pColorBlendState):
		return !out || (pre && gp_discards(ci)) || gp_renders_none(ci, true);
	}
	return false;
}

/*
 * Pointers the specification says are ignored, in prose the registry
 * leaves to it (noautovalidity): a program may leave them dangling or
 * pointing at anything, and neither the layer nor a reader follows them.
 * Chromium's ANGLE gives vkCreateGraphicsPipelines a pTessellationState
 * without tessellation stages that points at another struct: recorded as
 * one, it stopped the replay at its sType.  BASE holds every field the
 * condition reads: the whole struct when writing; when reading, what
 * dec_struct decoded first (decoded_late()).
 */
bool vk_field_ignored(const vk_struct_info *s, const vk_field *f, const void *base)
{
	if (!(f->flags & VK_F_NOAUTO) || !f->ptr)
		return false;
	if (s->stype == VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO)
		return gp_ignored(base, f->offset);
	if (s->stype == VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET) {
		const VkWriteDescriptorSet *w = (const void *)base;
		size_t used;  /* the array the type reads; 0: none of the three */
		switch (w->descriptorType) {
		case VK_DESCRIPTOR_TYPE_SAMPLER:
		case VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER:
		case VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE:
		case VK_DESCRIPTOR_TYPE_STORAGE_IMAGE:
		case VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT:
			used = offsetof(VkWriteDescriptorSet, pImageInfo);
			break;
		case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER:
		case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
		case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC:
		case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC:
			used = offsetof(VkWriteDescriptorSet, pBufferInfo);
			break;
		case VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER:
		case VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER:
			used = offsetof(VkWriteDescriptorSet, pTexelBufferView);
			break;
		case VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK:
		case VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR:
		case VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_NV:
			used = 0;
			break;
		default:  /* a type this build does not know: follow them all */
			return false;
		}
		return f->offset != used && (f->offset == offsetof(VkWriteDescriptorSet, pImageInfo) ||
					     f->offset == offsetof(VkWriteDescriptorSet, pBufferInfo) ||
					     f->offset == offsetof(VkWriteDescriptorSet, pTexelBufferView));
	}
	return false;
}

/* CHAINED: a struct inside a flattened chain, its pNext written null.
 * So is the pNext of a struct whose sType is not its own: zink (Mesa
 * 22.3, threaded) passes vkCmdSetVertexInputEXT stale attribute structs
 * now and then, sType another struct's and pNext into a dead stack
 * frame, which lavapipe never reads; followed, bzflag's capture crashed
 * in the layer. */
static void enc_struct(const vk_struct_info *s, trace_arena *a, trace_value *out, const void *p,
		       bool chained)
{
	if (s->blob) {
		enc_blob(a, out, p, s->size);
		return;
	}
	if (s->stype >= 0 && ((const base_in *)p)->sType != s->stype)
		chained = true;
	trace_value *m = trace_arena_alloc(a, sizeof(trace_value) * (s->nfields ? s->nfields : 1));
	for (uint32_t i = 0; i < s->nfields; i++) {
		if ((chained && (s->fields[i].flags & VK_F_PNEXT)) ||
		    vk_field_ignored(s, &s->fields[i], p))
			m[i].kind = TRACE_NULL;
		else
			enc_field(a, &m[i], s->fields, &s->fields[i], p);
	}
	out->kind = TRACE_STRUCT;
	out->st.sig = &s->sig;
	out->st.members = m;
}

void vk_encode_struct(const vk_struct_info *s, trace_arena *a, trace_value *out, const void *p)
{
	enc_struct(s, a, out, p, false);
}

void vk_encode_args(const vk_command_info *cmd, trace_call *c, const void *args, vk_phase phase)
{
	c->sig = &cmd->sig;
	if (!c->args)
		c->args = trace_call_values(c, cmd->nparams);
	for (uint32_t i = 0; i < cmd->nparams; i++) {
		const vk_field *f = &cmd->params[i];
		bool out = f->flags & VK_F_OUT;
		if (out == (phase == VK_PHASE_LEAVE))
			enc_field(&c->arena, &c->args[i], cmd->params, f, args);
		else
			c->args[i].kind = TRACE_MISSING;
	}
	if (phase == VK_PHASE_LEAVE && cmd->ret) {
		c->ret = trace_arena_alloc(&c->arena, sizeof(trace_value));
		enc_elem(&c->arena, c->ret, cmd->ret, (const uint8_t *)args + cmd->ret->offset);
	}
}

void vk_encode_call(const vk_command_info *cmd, trace_call *c, const void *args)
{
	c->sig = &cmd->sig;
	c->args = trace_call_values(c, cmd->nparams);
	for (uint32_t i = 0; i < cmd->nparams; i++)
		enc_field(&c->arena, &c->args[i], cmd->params, &cmd->params[i], args);
	if (cmd->ret) {
		c->ret = trace_arena_alloc(&c->arena, sizeof(trace_value));
		enc_elem(&c->arena, c->ret, cmd->ret, (const uint8_t *)args + cmd->ret->offset);
	}
}

/* ------------------------------------------------------------------ */
/* Decoding: trace values into C. */

typedef struct dec {
	trace_arena *a;
	trace_error *err;
	const char *where;   /* the command or struct being decoded */
	bool out;            /* in what the command writes: values the driver
			      * gave at capture are not checked (a newer
			      * driver's formats or present modes) */
} dec;

static int dec_struct(const dec *up, const vk_struct_info *s, const trace_value *v, void *out);

static int bad(dec *d, const vk_field *f, const trace_value *v, const char *want)
{
	trace_error_set(d->err, "%s.%s: expected %s, found %s", d->where, f->name, want,
			trace_value_kind_name(v->kind));
	return -1;
}

/* Any integer-like value as 64 bits. */
static bool as_u64(const trace_value *v, uint64_t *u)
{
	switch ((trace_value_kind)v->kind) {
	case TRACE_NULL: *u = 0; return true;
	case TRACE_BOOL: *u = v->b; return true;
	case TRACE_SINT: *u = (uint64_t)v->i; return true;
	case TRACE_UINT: case TRACE_POINTER: *u = v->u; return true;
	case TRACE_ENUM: *u = (uint64_t)v->en.value; return true;
	case TRACE_BITMASK: *u = v->bm.value; return true;
	default: return false;
	}
}

/* V as a float and as a double, for a member of either width: a float or
 * a double as it is (its bits) and converted to the other width, an
 * integer (signed where V is) rounded to each. */
static bool as_real(const trace_value *v, float *f, double *d)
{
	uint64_t u;
	if (v->kind == TRACE_FLOAT) {
		memcpy(f, &v->f, 4);
		*d = v->f;
	} else if (v->kind == TRACE_DOUBLE) {
		*f = (float)v->d;
		memcpy(d, &v->d, 8);
	} else if (v->kind == TRACE_SINT) {
		*f = (float)v->i;
		*d = (double)v->i;
	} else if (as_u64(v, &u)) {
		*f = (float)u;
		*d = (double)u;
	} else {
		return false;
	}
	return true;
}

static int dec_pnext(dec *d, const vk_field *f, const trace_value *v, void **out);

/*
 * A value the registry this build was made from does not define for the
 * field's type is refused, in replay and trim alike: the driver would get
 * it (an out-of-range VkDescriptorType crashed llvmpipe), and the capture
 * layer hides every extension newer than the registry, so its own
 * captures hold none.  A capture from a newer tracekit needs that build.
 */
static int check_enum(dec *d, const vk_field *f, const uint8_t *p)
{
	const vk_enum_info *e = f->ref;
	int64_t value = read_sint(p, f->size);
	if (!e || vk_enum_sig(e, value)->nvalues)
		return 0;
	trace_error_set(d->err, "%s.%s: %lld is no %s value this build's registry defines",
			d->where, f->name, (long long)value, e->name);
	return -1;
}

/* Flags: only bits the registry defines for the type (none for a type
 * whose bits are all reserved). */
static int check_bits(dec *d, const vk_field *f, const uint8_t *p)
{
	const vk_bitmask_info *b = f->ref;
	uint64_t value = read_uint(p, f->size), known = 0;
	if (!b)
		return 0;
	for (uint32_t i = 0; i < b->sig.nflags; i++)
		known |= b->sig.flags[i].value;
	if (!(value & ~known))
		return 0;
	trace_error_set(d->err, "%s.%s: 0x%llx has bits (0x%llx) %s does not define", d->where,
			f->name, (unsigned long long)value, (unsigned long long)(value & ~known),
			b->name);
	return -1;
}

/* An integer in what the command reads fits its field: 18446744073709551615
 * for a uint32_t groupCountZ was cut to 4294967295 work groups, and
 * llvmpipe worked on them for ever. */
static int check_fits(dec *d, const vk_field *f, const trace_value *v, uint64_t u)
{
	if ((f->base != VK_B_UINT && f->base != VK_B_SINT) || f->size >= 8)
		return 0;
	unsigned bits = 8 * f->size;
	bool fits = f->base == VK_B_UINT
		? (v->kind == TRACE_SINT ? v->i >= 0 && u >> bits == 0 : u >> bits == 0)
		: (v->kind == TRACE_SINT ? v->i >= -(1ll << (bits - 1)) && v->i < (1ll << (bits - 1))
					 : u < (1ull << (bits - 1)));
	if (fits)
		return 0;
	if (v->kind == TRACE_SINT)
		trace_error_set(d->err, "%s.%s: %lld does not fit its %s", d->where, f->name,
				(long long)v->i, f->type);
	else
		trace_error_set(d->err, "%s.%s: %llu does not fit its %s", d->where, f->name,
				(unsigned long long)u, f->type);
	return -1;
}

static int dec_elem(dec *d, const vk_field *f, const trace_value *v, uint8_t *p)
{
	uint64_t u;
	switch ((vk_base)f->base) {
	case VK_B_ENUM:
	case VK_B_BITMASK:
		if (!as_u64(v, &u))
			return bad(d, f, v, "an integer");
		write_uint(p, f->size, u);
		if (d->out)
			return 0;
		return f->base == VK_B_ENUM ? check_enum(d, f, p) : check_bits(d, f, p);
	case VK_B_FLOAT:
	case VK_B_DOUBLE: {
		float x;
		double y;
		bool single = f->base == VK_B_FLOAT;
		if (!as_real(v, &x, &y))
			return bad(d, f, v, single ? "a float" : "a double");
		if (single)
			memcpy(p, &x, 4);
		else
			memcpy(p, &y, 8);
		return 0;
	}
	case VK_B_STRUCT: {
		const vk_struct_info *s = f->ref;
		return dec_struct(d, s, v, p);
	}
	case VK_B_UNION:
	case VK_B_OPAQUE:
	case VK_B_VOID:
		if (v->kind != TRACE_BLOB)
			return bad(d, f, v, "a blob");
		memcpy(p, v->blob, v->len < f->size ? v->len : f->size);
		return 0;
	default:
		if (!as_u64(v, &u))
			return bad(d, f, v, "an integer");
		write_uint(p, f->base == VK_B_HANDLE || f->base == VK_B_PTRVAL ? 8 : f->size, u);
		return d->out ? 0 : check_fits(d, f, v, u);
	}
}

static int dec_pointee(dec *d, const vk_field *f, const trace_value *v, void **out)
{
	*out = NULL;
	switch ((trace_value_kind)v->kind) {
	case TRACE_NULL:
	case TRACE_MISSING:
		return 0;
	case TRACE_POINTER:
		/* an address is what the layer writes for a void* without a
		 * length (pUserData) alone: one in place of an array would
		 * be read by the driver */
		if (v->u && f->base != VK_B_VOID && f->base != VK_B_PTRVAL)
			return bad(d, f, v, "an array");
		*out = (void *)(uintptr_t)v->u;
		return 0;
	case TRACE_STRING:
		if (f->base != VK_B_CHAR)
			return bad(d, f, v, "no string");
		*out = trace_arena_strndup(d->a, v->str, v->len);
		return 0;
	case TRACE_BLOB: {
		size_t n = v->len;
		if (f->base == VK_B_OPAQUE && n < f->size)
			n = f->size;
		uint8_t *b = trace_arena_alloc(d->a, n ? n : 1);
		memcpy(b, v->blob, v->len);
		*out = b;
		return 0;
	}
	case TRACE_ARRAY: {
		uint8_t *b = trace_arena_alloc(d->a, (size_t)f->size * (v->len ? v->len : 1));
		for (uint32_t i = 0; i < v->len; i++)
			if (dec_elem(d, f, &v->items[i], b + (size_t)i * f->size) < 0)
				return -1;
		*out = b;
		return 0;
	}
	default:
		return bad(d, f, v, "an array, a blob or a string");
	}
}

static int dec_field(dec *d, const vk_field *f, const trace_value *v, uint8_t *base)
{
	uint8_t *fp = base + f->offset;
	if (v->kind == TRACE_MISSING)
		return 0;
	if (f->flags & VK_F_PNEXT) {
		void *p;
		if (dec_pnext(d, f, v, &p) < 0)
			return -1;
		write_ptr(fp, p);
		return 0;
	}
	if (f->ptr == 0) {
		if (!f->count)
			return dec_elem(d, f, v, fp);
		if (f->base == VK_B_CHAR) {
			if (v->kind != TRACE_STRING)
				return bad(d, f, v, "a string");
			memcpy(fp, v->str, v->len < f->count ? v->len : f->count - 1);
			return 0;
		}
		if (v->kind == TRACE_BLOB) {
			memcpy(fp, v->blob, v->len < f->count * f->size ? v->len : f->count * f->size);
			return 0;
		}
		if (v->kind != TRACE_ARRAY)
			return bad(d, f, v, "an array");
		for (uint32_t i = 0; i < v->len && i < f->count; i++)
			if (dec_elem(d, f, &v->items[i], fp + (size_t)i * f->size) < 0)
				return -1;
		return 0;
	}
	void *p = NULL;
	if (f->ptr == 1 || v->kind != TRACE_ARRAY) {
		if (dec_pointee(d, f, v, &p) < 0)
			return -1;
	} else {
		void **pp = trace_arena_alloc(d->a, sizeof(void *) * (v->len ? v->len : 1));
		for (uint32_t i = 0; i < v->len; i++)
			if (dec_pointee(d, f, &v->items[i], &pp[i]) < 0)
				return -1;
		p = pp;
	}
	write_ptr(fp, p);
	return 0;
}

/* A flattened chain back into linked structs (a nested one reads too). */
static int dec_pnext(dec *d, const vk_field *f, const trace_value *v, void **out)
{
	*out = NULL;
	if (v->kind == TRACE_NULL || v->kind == TRACE_MISSING)
		return 0;
	if (v->kind != TRACE_ARRAY)
		return bad(d, f, v, "a chain of structs");
	base_in *last = NULL;
	for (uint32_t i = 0; i < v->len; i++) {
		const trace_value *st = &v->items[i];
		uint64_t stype;
		if (st->kind != TRACE_STRUCT || st->st.sig->nmembers < 2)
			return bad(d, f, st, "a chained struct");
		if (!as_u64(&st->st.members[0], &stype))
			return bad(d, f, &st->st.members[0], "an sType");
		/* an sType the registry lacks: a struct of a size nobody here
		 * knows, which a driver that knows it would read past its end
		 * (the layer leaves out the loader's own, and hides newer
		 * extensions) */
		const vk_struct_info *s = vk_struct_by_stype((int32_t)stype);
		if (!s || (int64_t)stype != (int32_t)stype) {
			trace_error_set(d->err, "%s.%s: item %u has sType %lld, a struct this "
					"build's registry does not define", d->where, f->name, i,
					(long long)(int64_t)stype);
			return -1;
		}
		base_in *b = trace_arena_alloc(d->a, s->size);
		if (dec_struct(d, s, st, b) < 0)
			return -1;
		if (last)
			last->pNext = b;
		else
			*out = b;
		for (last = b; last->pNext; last = (base_in *)last->pNext)
			;
	}
	return 0;
}

/*
 * A null array with a count: allowed where the registry says the pointer
 * is optional, leaves its validity to the prose (noautovalidity: the
 * pImageInfo of a buffer write), or the count is the call's to write (an
 * enumeration's first call); elsewhere the driver would read through it
 * (pushConstantRangeCount 65536 with no ranges crashed llvmpipe).
 */
static bool null_allowed(const vk_field *fields, const vk_field *f)
{
	return (f->flags & (VK_F_OPTIONAL | VK_F_NOAUTO | VK_F_OUT)) ||
	       (f->len >= 0 && fields[f->len].ptr) || f->len_op != VK_LEN_MEMBER;
}

/*
 * Every array whose length a count gives holds that many: a record whose
 * count passes its array (a count edited up, an array cut short) would
 * have the driver, or the walkers, read past what was decoded.  FIELDS[i]
 * was decoded from VALS[i] into BASE.
 */
static int check_lens(dec *d, const vk_field *fields, uint32_t n, const trace_value *vals,
		      const uint8_t *base)
{
	for (uint32_t i = 0; i < n; i++) {
		const vk_field *f = &fields[i];
		const trace_value *v = &vals[i];
		/* one struct the registry requires: the driver reads through
		 * it (vkCreateDescriptorPool edited to a null pCreateInfo
		 * crashed llvmpipe's replay, and --check took it) */
		if (f->ptr == 1 && f->len_op == VK_LEN_NONE && f->base == VK_B_STRUCT &&
		    v->kind == TRACE_NULL &&
		    !(f->flags & (VK_F_OPTIONAL | VK_F_NOAUTO | VK_F_OUT | VK_F_PNEXT))) {
			trace_error_set(d->err, "%s.%s is null, but the call reads it", d->where,
					f->name);
			return -1;
		}
		if (!f->ptr || f->len_op == VK_LEN_NONE || (f->flags & VK_F_PNEXT))
			continue;
		if (v->kind == TRACE_NULL && !null_allowed(fields, f)) {
			uint64_t want = vk_field_len(fields, f, base);
			if (want) {
				trace_error_set(d->err, "%s.%s is null, but %s says %llu", d->where,
						f->name, fields[f->len].name, (unsigned long long)want);
				return -1;
			}
		}
		/* read null: an ignored pointer, its array not read */
		if ((v->kind != TRACE_ARRAY && v->kind != TRACE_BLOB) || !read_ptr(base + f->offset))
			continue;
		uint64_t want = vk_field_len(fields, f, base);
		uint64_t have = v->kind == TRACE_ARRAY || f->size <= 1 ? v->len : v->len / f->size;
		if (want > have) {
			const char *count = f->len >= 0 ? fields[f->len].name : "its length";
			trace_error_set(d->err, "%s.%s holds %llu, but %s says %llu", d->where,
					f->name, (unsigned long long)have, count,
					(unsigned long long)want);
			return -1;
		}
	}
	return 0;
}

/* A struct's sType is its own: drivers read the struct by it. */
static int check_stype(dec *d, const vk_struct_info *s, const uint8_t *p)
{
	for (uint32_t i = 0; s->stype >= 0 && i < s->nfields; i++) {
		const vk_field *f = &s->fields[i];
		if (!(f->flags & VK_F_STYPE) || f->ptr || f->count)
			continue;
		int64_t have = read_sint(p + f->offset, f->size);
		if (have == s->stype)
			return 0;
		const trace_enum_sig *got = vk_enum_sig(f->ref, have);
		const trace_enum_sig *want = vk_enum_sig(f->ref, s->stype);
		char num[24];
		snprintf(num, sizeof(num), "%lld", (long long)have);
		trace_error_set(d->err, "%s.%s: %s, but a %s's is %s", s->sig.name, f->name,
				got->nvalues ? got->values[0].name : num, s->sig.name,
				want->nvalues ? want->values[0].name : "another");
		return -1;
	}
	return 0;
}

/*
 * Read after every other field of its struct: a graphics pipeline's state
 * pointers, whose conditions read pDynamicState, renderPass and
 * pRasterizationState, which follow some of them.  vk_field_ignored()
 * then sees when reading what the layer saw when writing: deciding on
 * what precedes alone, a pDynamicState not yet read would make a dynamic
 * rasterizer discard static, and null a viewport state the layer wrote.
 * (The layer writes null where it decides a pointer is ignored, and a
 * reader that follows a null reads null: only reading null what was
 * written can lose a state.)
 */
static bool decoded_late(const vk_struct_info *s, const vk_field *f)
{
	return s->stype == VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO &&
	       (f->flags & VK_F_NOAUTO) && f->ptr &&
	       f->offset != offsetof(VkGraphicsPipelineCreateInfo, pStages) &&
	       f->offset != offsetof(VkGraphicsPipelineCreateInfo, pRasterizationState);
}

static int dec_struct(const dec *up, const vk_struct_info *s, const trace_value *v, void *out)
{
	dec d = { up->a, up->err, s->sig.name, up->out };
	trace_error *err = d.err;
	if (s->blob) {
		if (v->kind != TRACE_BLOB) {
			trace_error_set(err, "%s: expected a blob, found %s", s->sig.name,
					trace_value_kind_name(v->kind));
			return -1;
		}
		memcpy(out, v->blob, v->len < s->size ? v->len : s->size);
		return 0;
	}
	if (v->kind != TRACE_STRUCT) {
		trace_error_set(err, "%s: expected a struct, found %s", s->sig.name,
				trace_value_kind_name(v->kind));
		return -1;
	}
	uint32_t n = v->st.sig->nmembers < s->nfields ? v->st.sig->nmembers : s->nfields;
	bool late = false;
	for (uint32_t i = 0; i < n; i++)
		late |= decoded_late(s, &s->fields[i]);
	for (int pass = 0; pass <= late; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			if (decoded_late(s, &s->fields[i]) != pass)
				continue;
			/* read null, as the layer now writes it (an older
			 * trace holds what it pointed at) */
			if (vk_field_ignored(s, &s->fields[i], out)) {
				write_ptr((uint8_t *)out + s->fields[i].offset, NULL);
				continue;
			}
			if (dec_field(&d, &s->fields[i], &v->st.members[i], out) < 0)
				return -1;
		}
		/* the late conditions read pStages no further than it holds */
		if (!pass && late && check_lens(&d, s->fields, n, v->st.members, out) < 0)
			return -1;
	}
	if (!d.out && check_stype(&d, s, out) < 0)
		return -1;
	return check_lens(&d, s->fields, n, v->st.members, out);
}

int vk_decode_struct(const vk_struct_info *s, trace_arena *a, const trace_value *v, void *out,
		     trace_error *err)
{
	dec d = { a, err, s->sig.name, false };
	return dec_struct(&d, s, v, out);
}

int vk_decode_args(const vk_command_info *cmd, const trace_call *c, trace_arena *a, void *args,
		   trace_error *err)
{
	dec d = { a, err, cmd->sig.name, false };
	uint32_t n = c->sig->nargs < cmd->nparams ? c->sig->nargs : cmd->nparams;
	for (uint32_t i = 0; i < n; i++) {
		d.out = cmd->params[i].flags & VK_F_OUT;
		if (dec_field(&d, &cmd->params[i], &c->args[i], args) < 0)
			return -1;
	}
	d.out = true;  /* the result: what the driver said */
	if (check_lens(&d, cmd->params, n, c->args, args) < 0)
		return -1;
	if (cmd->ret && c->ret)
		return dec_elem(&d, cmd->ret, c->ret, (uint8_t *)args + cmd->ret->offset);
	return 0;
}
