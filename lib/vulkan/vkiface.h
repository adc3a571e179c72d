/*
 * A pipeline's shaders against its layout (lib/vulkan/vkiface.c): what
 * each stage's entry point uses of descriptor sets and push constants
 * (SPIR-V reflection, lib/vulkan/spirv.h), and what its pipeline layout
 * declares.  A stage using a binding its layout lacks, or makes visible
 * to other stages only, or declares as a descriptor of another type or
 * of fewer elements, is invalid Vulkan that drivers do not survive
 * (llvmpipe crashed making vkcube's pipeline after its set layout's
 * stageFlags were edited): replay refuses it before the driver sees it.
 *
 * And what else a driver takes on trust that a record can break: a
 * descriptor write's null where its type reads a handle, a framebuffer
 * of other attachments than its render pass, a null among the handles
 * the specification lets be null only in a mode the call is not in; a
 * draw, dispatch or trace whose pipeline uses a binding that the set
 * bound has never had written, or a set never bound (vkbound.c).
 *
 * Handles are the capture's: the records as they are read, before any
 * remapping, so replay and the threads that make pipelines ahead each
 * follow the trace with one of these.
 */
#ifndef TRACE_VKIFACE_H
#define TRACE_VKIFACE_H

#include "vkschema.h"

#include <stdbool.h>

typedef struct vk_iface vk_iface;

vk_iface *vk_iface_new(void);
void vk_iface_free(vk_iface *v);
/* A record of CMD (ARGS as decoded; FAILED: the capture's call failed):
 * shader modules, descriptor set layouts, pipeline layouts, descriptor
 * sets, render passes and framebuffers made (and some destroyed) are
 * followed; a shader module that is no SPIR-V, a pipeline (graphics,
 * compute, ray tracing) whose stage uses what its layout does not
 * declare, and the records above, are -1 with ERR's message naming the
 * field. */
int vk_iface_note(vk_iface *v, const vk_command_info *cmd, const void *args, bool failed,
		  trace_error *err);
/* Pipeline layout LAYOUT (a capture handle) as made: how many set
 * layouts it has, and where its push constant ranges end; false where no
 * record made it, or it is destroyed. */
bool vk_iface_layout(const vk_iface *v, uint64_t layout, uint32_t *nsets, uint64_t *push_end);
/* The descriptors of each core type (VkDescriptorType 0 to 10) in the
 * set layouts of LAYOUT but those made for update-after-bind pools, as
 * the device limits maxDescriptorSet* count them; false as above. */
bool vk_iface_layout_descriptors(const vk_iface *v, uint64_t layout, uint64_t counts[11]);
/* The device the records go to makes MAX viewports at most: a graphics
 * pipeline's viewport state asking more is refused (0: not known). */
void vk_iface_set_max_viewports(vk_iface *v, uint32_t max);
/* Whether command NAME runs shaders that may use the descriptor sets
 * bound: draws, dispatches, traces, device-generated commands. */
bool vk_iface_runs_shaders(const char *name);
/* What command NAME, recorded into command buffer CB, lets its shaders
 * write through the sets bound there (capture handles), as the records
 * handed to vk_iface_note so far say: FN(CTX, set, binding) for each
 * binding of the bound pipeline that a stage may write (a storage
 * buffer, image or texel buffer not declared NonWritable), or FN(CTX,
 * set, UINT32_MAX) for each set bound where the pipeline is not known
 * (shader objects, a stage not read, device-generated commands). */
typedef void vk_set_write_fn(void *ctx, uint64_t set, uint32_t binding);
void vk_iface_shader_writes(const vk_iface *v, uint64_t cb, const char *name,
			    vk_set_write_fn *fn, void *ctx);
/* ... and what it lets them read: FN(CTX, set, binding) for each binding
 * of the bound pipeline that a stage may read (all but a storage
 * buffer, image or texel buffer declared NonReadable, GLSL's writeonly),
 * FN(CTX, set, UINT32_MAX) for each set bound where the pipeline is not
 * known.  A binding no stage uses is neither. */
void vk_iface_shader_reads(const vk_iface *v, uint64_t cb, const char *name,
			   vk_set_write_fn *fn, void *ctx);
/* Whether SET is bound in command buffer CB now, at some bind point and
 * set number, as the records handed to vk_iface_note say (a set bound
 * by a command it does not follow is not). */
bool vk_iface_set_bound(const vk_iface *v, uint64_t cb, uint64_t set);
/* The binding of SET that descriptor ELEMENT of a write from BINDING
 * lands in (a write runs on into the next bindings), UINT32_MAX where
 * its layout is not known or it lands in none. */
uint32_t vk_iface_binding_at(const vk_iface *v, uint64_t set, uint32_t binding, uint32_t element);
/* Whether vk_iface_note does anything with CMD's records (the others
 * need not be handed to it). */
bool vk_iface_wants(const vk_command_info *cmd);

#endif
