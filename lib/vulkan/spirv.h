/*
 * What a SPIR-V module's entry points use of a pipeline layout: each
 * entry point's descriptor bindings (set, binding, what kind of
 * descriptor the variable's type takes, how many) and whether it uses
 * push constants, by static use as the Vulkan specification defines it,
 * and whether the stage may write and read each (lib/vulkan/spirv.c).  Replay checks a pipeline's stages against its
 * layout with this before the driver sees them (lib/vulkan/vkiface.c).
 */
#ifndef TRACE_SPIRV_H
#define TRACE_SPIRV_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* The descriptor types a variable's type takes: VK_DESCRIPTOR_TYPE_* as
 * bits (1 << type, types up to 10), SPV_ANY where the type is not one
 * this reads (then no type is refused). */
#define SPV_DTYPE(t) (1u << (t))
#define SPV_ANY 0u

typedef struct spv_binding {
	uint32_t set, binding;
	uint32_t types;  /* SPV_DTYPE bits; SPV_ANY */
	uint32_t count;  /* array elements; 1 if not an array, 0 if unknown
			  * (runtime or specialised) */
	uint8_t writes;  /* the stage may write through it: of a storage type
			  * (or one not read), not declared NonWritable */
	uint8_t reads;   /* ... may read through it: not of storage types only
			  * declared NonReadable */
} spv_binding;

typedef struct spv_entry {
	char *name;
	uint32_t stage;  /* VkShaderStageFlagBits; 0 for a model Vulkan has none for */
	uint32_t nbindings;
	spv_binding *bindings;
	int push;        /* uses a push constant block */
} spv_entry;

typedef struct spv_module {
	uint32_t nentries;
	spv_entry *entries;
} spv_module;

/* Reads the N words at CODE.  NULL and ERR set (what, at which word)
 * when it is no SPIR-V module: the magic, an instruction's word count of
 * 0 or past the end, an id past the header's bound, an entry point's
 * name without its end. */
spv_module *spv_reflect(const uint32_t *code, size_t n, trace_error *err);
void spv_free(spv_module *m);
/* The entry point NAME of STAGE, or NULL. */
const spv_entry *spv_entry_of(const spv_module *m, const char *name, uint32_t stage);

#endif
