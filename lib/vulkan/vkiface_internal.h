/*
 * What vkiface.c (pipelines' shaders against their layouts, and what
 * else a record must fit) and vkbound.c (what draws read of the sets
 * bound) share: the state followed, by capture handle.
 */
#ifndef TRACE_VKIFACE_INTERNAL_H
#define TRACE_VKIFACE_INTERNAL_H

#include "vkiface.h"

#include "internal.h"
#include "spirv.h"
#include "tmap.h"
#include "vkschema_cmds.h"

enum { K_MODULE = 1, K_SET_LAYOUT, K_LAYOUT, K_SET, K_RENDER_PASS, K_FRAMEBUFFER, K_VIEW,
       K_BUFFER, K_NOTE, K_WRITTEN, K_PIPELINE, K_BOUND };

#define H(x) ((uint64_t)(uintptr_t)(x))

typedef struct set_layout {
	uint32_t refs;   /* its K_SET_LAYOUT entry, and each set of it (K_SET) */
	uint32_t n;
	bool immutable;  /* a binding has immutable samplers */
	bool after_bind; /* made for pools of update-after-bind sets */
	VkDescriptorSetLayoutBinding b[];  /* (pImmutableSamplers left null),
					    * then n bytes: B_* per binding */
} set_layout;

/* What a draw may leave unwritten of a binding: one partially bound or
 * updated after bind (VkDescriptorSetLayoutBindingFlagsCreateInfo), one
 * of samplers its layout makes immutable. */
enum { B_LOOSE = 1, B_NO_WRITE = 2 };

static inline uint8_t *flags_of(const set_layout *s)
{
	return (uint8_t *)(s->b + s->n);
}

typedef struct pipe_layout {
	uint32_t nsets, npush;
	set_layout **sets;  /* copies; NULL for a null or unknown set layout */
	VkPushConstantRange *push;
} pipe_layout;

/* The bindings a pipeline's shaders statically use (K_PIPELINE), for
 * the draws that bind it: (set, binding, 1 if a stage may write it, 1
 * if a stage may read it), each (set, binding) once; partial where a stage was not read
 * (a module identifier, a module, layout or library not followed): it
 * may use more. */
typedef struct pipe_uses {
	uint32_t n, cap;
	uint32_t (*sb)[4];
	bool partial;
} pipe_uses;

struct vk_iface {
	tmap map;  /* (capture handle, K_*) -> spv_module *, set_layout *, pipe_layout *;
		    * (descriptor set, K_SET) -> its set layout (shared, by
		    * reference: none where it is unknown); (buffer,
		    * K_BUFFER) -> 1 + its size; (vk_command_info, K_NOTE) ->
		    * 1 + its row of notes[], or 0; (render pass, K_RENDER_PASS) ->
		    * uint32_t[]: its attachments' count, then their formats;
		    * (framebuffer, K_FRAMEBUFFER) -> 1 + its attachments;
		    * (image view, K_VIEW) -> 1 + its format; (descriptor set,
		    * K_WRITTEN), (pipeline, K_PIPELINE), (command buffer,
		    * K_BOUND): vkbound.c's */
	bool null_descriptor;  /* a device enabled robustness2's nullDescriptor */
	uint32_t max_viewports;  /* the replay device's, or 0: not known */
};

static inline void *vk_iface_get(const vk_iface *v, uint64_t handle, uint64_t kind)
{
	uint64_t *p = handle ? tmap_at(&v->map, handle, kind) : NULL;
	return p ? (void *)(uintptr_t)*p : NULL;
}

/* (HANDLE, KIND) -> P, what it held freed; P NULL: forgotten. */
void vk_iface_put(vk_iface *v, uint64_t handle, uint64_t kind, void *p);
void vk_iface_forget(vk_iface *v, uint64_t handle, uint64_t kind);
const VkDescriptorSetLayoutBinding *vk_iface_binding_of(const set_layout *s, uint32_t binding);

/* One handler of a followed command: what its record makes, forgets or
 * must fit.  A (capture-time) failed create made nothing. */
typedef int note_fn(vk_iface *v, const char *name, const void *args, bool failed,
		    trace_error *err);

/* vkbound.c: what each pipeline uses, what is bound and written */
void vk_iface_uses_add(pipe_uses *u, const spv_entry *e);
void vk_iface_uses_merge(pipe_uses *u, const pipe_uses *from);
void vk_iface_written(vk_iface *v, uint64_t set, uint32_t binding, uint32_t element,
		      uint32_t count);
void vk_iface_sets_bound(vk_iface *v, uint64_t cb, VkPipelineBindPoint point, uint32_t first,
			 uint32_t n, const VkDescriptorSet *sets);
note_fn vk_iface_on_draw, vk_iface_on_bind_pipeline, vk_iface_on_bind_sets,
	vk_iface_on_unfollowed, vk_iface_on_begin_cb, vk_iface_on_template_update,
	vk_iface_on_bind_shaders;

#endif
