/*
 * SPIR-V reflection (lib/vulkan/spirv.c) and pipelines' stages against
 * their layouts (lib/vulkan/vkiface.c).
 *
 * tests/unit/shaders/iface.frag, compiled by glslangValidator to SPIR-V
 * 1.0 and 1.5, uses one resource of each kind (one only inside a called
 * function) and declares one it does not use: both compilations must
 * read as the same bindings, the unused one absent (1.5 lists it in the
 * entry point's interface, which is no use).  Then a pipeline made of
 * it against layouts that fit, and against one edit each of a layout
 * that does not: each is refused naming the binding.  Malformed modules
 * are refused with the word they break at.  Descriptor writes with a
 * null where their type reads a handle are refused, but where a device
 * enabled nullDescriptor or the set's layout may hold immutable samplers.
 * A draw reads each binding its pipeline uses: of a set bound, and
 * written there.
 */
#include "spirv.h"
#include "vkiface.h"
#include "vkschema_cmds.h"
#include "unit.h"

#include "iface_comp10.h"
#include "iface_comp15.h"
#include "iface_frag10.h"
#include "iface_frag15.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define T(x) SPV_DTYPE(VK_DESCRIPTOR_TYPE_##x)

static const spv_binding frag_uses[] = {
	{0, 0, T(UNIFORM_BUFFER) | T(UNIFORM_BUFFER_DYNAMIC), 1},
	{0, 1, T(COMBINED_IMAGE_SAMPLER), 4},
	{1, 0, T(STORAGE_BUFFER) | T(STORAGE_BUFFER_DYNAMIC), 1, 1},
	{1, 2, T(STORAGE_IMAGE), 1},
	{2, 0, T(UNIFORM_TEXEL_BUFFER), 1},
	{2, 1, T(SAMPLED_IMAGE) | T(COMBINED_IMAGE_SAMPLER), 1},
	{2, 2, T(SAMPLER) | T(COMBINED_IMAGE_SAMPLER), 1},
	{3, 1, T(COMBINED_IMAGE_SAMPLER), 0},
	{3, 2, T(INPUT_ATTACHMENT), 1},
	{3, 3, T(STORAGE_TEXEL_BUFFER), 1, 1},
};
#define NUSES (sizeof(frag_uses) / sizeof(frag_uses[0]))

static const spv_binding *find(const spv_entry *e, uint32_t set, uint32_t binding)
{
	for (uint32_t i = 0; i < e->nbindings; i++)
		if (e->bindings[i].set == set && e->bindings[i].binding == binding)
			return &e->bindings[i];
	return NULL;
}

static void reflects_frag(const uint32_t *code, size_t size, const char *what)
{
	trace_error err = {0};
	spv_module *m = spv_reflect(code, size / 4, &err);
	check(m != NULL, "%s: reflects (%s)", what, err.msg);
	if (!m)
		return;
	const spv_entry *e = spv_entry_of(m, "main", VK_SHADER_STAGE_FRAGMENT_BIT);
	check(e != NULL, "%s: a fragment entry point 'main'", what);
	check(!spv_entry_of(m, "main", VK_SHADER_STAGE_VERTEX_BIT), "%s: no vertex one", what);
	check(!spv_entry_of(m, "mian", VK_SHADER_STAGE_FRAGMENT_BIT), "%s: none of another name",
	      what);
	if (e) {
		check(e->nbindings == NUSES, "%s: %u bindings used, not %zu", what, e->nbindings,
		      (size_t)NUSES);
		for (size_t i = 0; i < NUSES; i++) {
			const spv_binding *want = &frag_uses[i], *b = find(e, want->set, want->binding);
			check(b != NULL, "%s: set %u binding %u used", what, want->set, want->binding);
			if (b)
				check(b->types == want->types && b->count == want->count &&
				      b->writes == want->writes,
				      "%s: set %u binding %u: types 0x%x count %u writes %u, not 0x%x "
				      "%u %u", what, want->set, want->binding, b->types, b->count,
				      b->writes, want->types, want->count, want->writes);
		}
		for (uint32_t i = 0; i < e->nbindings; i++)
			check(e->bindings[i].reads, "%s: set %u binding %u may be read", what,
			      e->bindings[i].set, e->bindings[i].binding);
		check(!find(e, 3, 0), "%s: the block declared and not used is not used", what);
		check(e->push, "%s: push constants used", what);
	}
	spv_free(m);
}

/* Which of iface.comp's bindings 0 to 9 a stage may write: the storage
 * not declared readonly (binding 4: one member of two is); which it may
 * read: all but the writeonly image (8) and block (9).  Binding 10 is
 * declared, and not used. */
enum { COMP_USED = 10 };
static const uint8_t comp_writes[COMP_USED] = {0, 1, 0, 0, 1, 0, 0, 1, 1, 1};
static const uint8_t comp_reads[COMP_USED] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};

static void reflects_comp(const uint32_t *code, size_t size, const char *what)
{
	trace_error err = {0};
	spv_module *m = spv_reflect(code, size / 4, &err);
	const spv_entry *e = m ? spv_entry_of(m, "main", VK_SHADER_STAGE_COMPUTE_BIT) : NULL;
	check(e != NULL, "%s: a compute entry point (%s)", what, err.msg);
	for (uint32_t i = 0; e && i < COMP_USED; i++) {
		const spv_binding *b = find(e, 0, i);
		check(b && b->writes == comp_writes[i], "%s: binding %u %s", what, i,
		      comp_writes[i] ? "may be written" : "is not written");
		check(b && b->reads == comp_reads[i], "%s: binding %u %s", what, i,
		      comp_reads[i] ? "may be read" : "is not read (writeonly)");
	}
	if (e) {
		check(!find(e, 0, COMP_USED) && e->nbindings == COMP_USED,
		      "%s: the sampler declared and not used is not used", what);
		const spv_binding *arr = find(e, 0, 0), *out = find(e, 0, 1);
		check(arr && arr->count == 0, "%s: an array of a specialisation constant's "
		      "length: its count unknown", what);
		check(out && out->types == (T(STORAGE_BUFFER) | T(STORAGE_BUFFER_DYNAMIC)),
		      "%s: the storage buffer", what);
		check(!e->push, "%s: no push constants", what);
	}
	spv_free(m);
}

/* Malformed modules: refused, the message naming what. */
static void refuses(const uint32_t *code, size_t n, const char *want, const char *what)
{
	trace_error err = {0};
	spv_module *m = spv_reflect(code, n, &err);
	check(!m && strstr(err.msg, want), "%s: refused with '%s', got '%s'", what, want,
	      m ? "(read)" : err.msg);
	spv_free(m);
}

static void malformed(void)
{
	size_t n = sizeof(iface_frag10) / 4;
	uint32_t *c = malloc(n * 4);
	memcpy(c, iface_frag10, n * 4);
	refuses(c, 4, "short of its header", "four words");
	c[0] = 0x12345678;
	refuses(c, n, "not the magic", "another magic");
	c[0] = iface_frag10[0];
	c[3] = 0xffffffffu;
	refuses(c, n, "id bound", "a bound of 2^32 - 1");
	c[3] = iface_frag10[3];
	/* the last instruction (OpFunctionEnd) said to run a word past the end */
	c[n - 1] = (2u << 16) | (c[n - 1] & 0xffff);
	refuses(c, n, "past the module's end", "an instruction past the end");
	c[n - 1] = (0u << 16) | (c[n - 1] & 0xffff);
	refuses(c, n, "of 0 words", "an instruction of no words");
	free(c);
	/* hand-made: an entry point whose name fills its words with no NUL
	 * (OpEntryPoint GLCompute %1 "abcd"), and a type's id past the
	 * bound (OpTypeVoid %9 of bound 4) */
	const uint32_t noend[] = {0x07230203, 0x00010000, 0, 4, 0,
				  (4u << 16) | 15, 5, 1, 0x64636261};
	refuses(noend, sizeof(noend) / 4, "name has no end", "a name with no NUL");
	const uint32_t pastbound[] = {0x07230203, 0x00010000, 0, 4, 0, (2u << 16) | 19, 9};
	refuses(pastbound, sizeof(pastbound) / 4, "past the module's bound 4", "an id past the bound");
	/* the same module byte-swapped reads alike */
	uint32_t *s = malloc(n * 4);
	for (size_t i = 0; i < n; i++) {
		uint32_t x = iface_frag10[i];
		s[i] = x >> 24 | (x >> 8 & 0xff00) | (x << 8 & 0xff0000) | x << 24;
	}
	reflects_frag(s, n * 4, "frag 1.0 byte-swapped");
	free(s);
}

/* ------------------------------------------------------------------ */
/* vk_iface: the fragment shader in a pipeline against layouts. */

#define MODULE ((VkShaderModule)(uintptr_t)0x100)
#define PIPE_LAYOUT ((VkPipelineLayout)(uintptr_t)0x300)

static const VkGraphicsPipelineLibraryCreateInfoEXT fragment_library = {
	VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT, NULL,
	VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT};

static int note(vk_iface *v, const char *fn, void *args, trace_error *err)
{
	/* replay hands vk_iface_note only the commands it wants */
	check(vk_iface_wants(vk_command_lookup(fn)), "%s is wanted", fn);
	return vk_iface_note(v, vk_command_lookup(fn), args, false, err);
}

/* The fragment shader of MODULE as pipeline MADE of LAYOUT: what
 * vk_iface_note says of it.  A fragment shader library: the module has
 * no vertex stage, which a complete pipeline needs. */
static int fragment_pipeline(vk_iface *v, VkPipelineLayout layout, VkPipeline made,
			     trace_error *err)
{
	VkPipelineShaderStageCreateInfo stage = {
		VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
		VK_SHADER_STAGE_FRAGMENT_BIT, MODULE, "main", NULL};
	VkGraphicsPipelineCreateInfo gci = {.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
					    .pNext = &fragment_library,
					    .flags = VK_PIPELINE_CREATE_LIBRARY_BIT_KHR,
					    .stageCount = 1, .pStages = &stage, .layout = layout};
	vk_args_vkCreateGraphicsPipelines ga = {.createInfoCount = 1, .pCreateInfos = &gci,
						.pPipelines = &made};
	memset(err->msg, 0, sizeof(err->msg));
	return note(v, "vkCreateGraphicsPipelines", &ga, err);
}

/* The shader's every binding, as it uses them; EDIT changes one. */
static VkDescriptorSetLayoutBinding bindings[4][4];
static uint32_t nbindings[4];

static void full_layout(void)
{
	memset(bindings, 0, sizeof(bindings));
	memset(nbindings, 0, sizeof(nbindings));
	static const VkDescriptorType type[] = {
		[0] = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, [1] = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
		[2] = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, [3] = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
		[4] = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, [5] = VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
		[6] = VK_DESCRIPTOR_TYPE_SAMPLER, [7] = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
		[8] = VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT, [9] = VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER,
	};
	for (size_t i = 0; i < NUSES; i++) {
		uint32_t s = frag_uses[i].set;
		bindings[s][nbindings[s]++] = (VkDescriptorSetLayoutBinding){
			.binding = frag_uses[i].binding, .descriptorType = type[i],
			.descriptorCount = i == 7 ? 64 : frag_uses[i].count,
			.stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT | VK_SHADER_STAGE_VERTEX_BIT,
		};
	}
}

/* The module, the four set layouts of BINDINGS, a pipeline layout of
 * NSETS of them (PUSH: with a push constant range for STAGES), then a
 * pipeline: what vk_iface_note says of the pipeline. */
static int pipeline(uint32_t nsets, bool push, VkShaderStageFlags push_stages, trace_error *err)
{
	vk_iface *v = vk_iface_new();
	VkShaderModuleCreateInfo mci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
					sizeof(iface_frag10), iface_frag10};
	VkShaderModule module = MODULE;
	vk_args_vkCreateShaderModule cm = {.pCreateInfo = &mci, .pShaderModule = &module};
	check(note(v, "vkCreateShaderModule", &cm, err) == 0, "the module is made (%s)", err->msg);
	VkDescriptorSetLayout sets[4];
	for (uint32_t s = 0; s < 4; s++) {
		VkDescriptorSetLayoutCreateInfo ci = {
			VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, nbindings[s],
			bindings[s]};
		sets[s] = (VkDescriptorSetLayout)(uintptr_t)(0x200 + s);
		vk_args_vkCreateDescriptorSetLayout a = {.pCreateInfo = &ci, .pSetLayout = &sets[s]};
		note(v, "vkCreateDescriptorSetLayout", &a, err);
	}
	VkPushConstantRange range = {push_stages, 0, 16};
	VkPipelineLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0,
					  nsets, sets, push ? 1 : 0, push ? &range : NULL};
	VkPipelineLayout layout = PIPE_LAYOUT;
	vk_args_vkCreatePipelineLayout la = {.pCreateInfo = &lci, .pPipelineLayout = &layout};
	note(v, "vkCreatePipelineLayout", &la, err);
	/* the set layouts go before the pipeline is made, as they may */
	for (uint32_t s = 0; s < 4; s++) {
		vk_args_vkDestroyDescriptorSetLayout d = {.descriptorSetLayout = sets[s]};
		note(v, "vkDestroyDescriptorSetLayout", &d, err);
	}
	int rc = fragment_pipeline(v, layout, (VkPipeline)(uintptr_t)0x900, err);
	vk_iface_free(v);
	return rc;
}

static void refused(const char *want, const char *what)
{
	trace_error err = {0};
	int rc = pipeline(4, true, VK_SHADER_STAGE_FRAGMENT_BIT, &err);
	check(rc < 0 && strstr(err.msg, want), "%s: refused with '%s', got '%s'", what, want,
	      rc < 0 ? err.msg : "(made)");
}

static void layouts(void)
{
	trace_error err = {0};
	full_layout();
	check(pipeline(4, true, VK_SHADER_STAGE_FRAGMENT_BIT, &err) == 0,
	      "the layout that declares each binding fits (%s)", err.msg);
	check(pipeline(4, false, 0, &err) < 0 && strstr(err.msg, "uses push constants"),
	      "no push constant range: refused (%s)", err.msg);
	check(pipeline(4, true, VK_SHADER_STAGE_VERTEX_BIT, &err) < 0 &&
	      strstr(err.msg, "no push constant range for its stage"),
	      "a push constant range of the vertex stage only: refused (%s)", err.msg);
	check(pipeline(3, true, VK_SHADER_STAGE_FRAGMENT_BIT, &err) < 0 &&
	      strstr(err.msg, "set 3 binding 1, but VkPipelineLayout 0x300 has 3 set layouts"),
	      "three set layouts: refused (%s)", err.msg);
	bindings[0][1].stageFlags = VK_SHADER_STAGE_GEOMETRY_BIT;
	refused("pCreateInfos[0].pStages[0]: the VK_SHADER_STAGE_FRAGMENT_BIT shader 'main' uses "
		"set 0 binding 1, which VkPipelineLayout 0x300 makes visible to "
		"VK_SHADER_STAGE_GEOMETRY_BIT only", "a binding the stage does not see");
	full_layout();
	bindings[0][1].descriptorType = VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
	refused("set 0 binding 1, which VkPipelineLayout 0x300 declares a "
		"VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE", "a sampled image for a combined one");
	full_layout();
	bindings[1][0].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
	refused("set 1 binding 0, which VkPipelineLayout 0x300 declares a "
		"VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER", "a uniform buffer for a storage one");
	full_layout();
	bindings[0][1].descriptorCount = 3;
	refused("set 0 binding 1 as an array of 4, but VkPipelineLayout 0x300 declares 3 "
		"descriptors there", "an array of 4 in 3 descriptors");
	full_layout();
	bindings[1][0].binding = 7;
	refused("set 1 binding 0, which VkPipelineLayout 0x300's set layout 1 does not have",
		"a binding renumbered");
	full_layout();
	bindings[0][0].descriptorCount = 0;
	refused("set 0 binding 0, which VkPipelineLayout 0x300's set layout 0 declares with no "
		"descriptors", "a binding of no descriptors");
	full_layout();
	bindings[2][0].descriptorType = VK_DESCRIPTOR_TYPE_MUTABLE_EXT;
	check(pipeline(4, true, VK_SHADER_STAGE_FRAGMENT_BIT, &err) == 0,
	      "a mutable descriptor (an extension's type) fits (%s)", err.msg);
	full_layout();
}

static void entry_points(void)
{
	vk_iface *v = vk_iface_new();
	trace_error err = {0};
	VkShaderModuleCreateInfo mci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
					sizeof(iface_frag10) - 2, iface_frag10};
	VkShaderModule module = MODULE;
	vk_args_vkCreateShaderModule cm = {.pCreateInfo = &mci, .pShaderModule = &module};
	check(note(v, "vkCreateShaderModule", &cm, &err) < 0 &&
	      strstr(err.msg, "pCreateInfo.codeSize: "), "a codeSize of no whole words: refused");
	mci.codeSize = sizeof(iface_frag10);
	check(note(v, "vkCreateShaderModule", &cm, &err) == 0, "the module");
	VkPipelineLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
	VkPipelineLayout layout = PIPE_LAYOUT;
	vk_args_vkCreatePipelineLayout la = {.pCreateInfo = &lci, .pPipelineLayout = &layout};
	note(v, "vkCreatePipelineLayout", &la, &err);
	VkPipelineShaderStageCreateInfo stage = {
		VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
		VK_SHADER_STAGE_VERTEX_BIT, MODULE, "main", NULL};
	VkComputePipelineCreateInfo cci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
					   .stage = stage, .layout = layout};
	VkPipeline made;
	vk_args_vkCreateComputePipelines ca = {.createInfoCount = 1, .pCreateInfos = &cci,
					       .pPipelines = &made};
	check(note(v, "vkCreateComputePipelines", &ca, &err) < 0 &&
	      strstr(err.msg, "pCreateInfos[0].stage.pName: 'main', which VkShaderModule 0x100 "
		     "has no VK_SHADER_STAGE_VERTEX_BIT entry point of"),
	      "a stage the module has no entry point for: refused (%s)", err.msg);
	vk_iface_free(v);
}

/* Descriptor writes: nulls where the type reads a handle. */
static int write1(vk_iface *v, VkDescriptorType type, const VkDescriptorImageInfo *ii,
		  const VkDescriptorBufferInfo *bi, const VkBufferView *tv, trace_error *err)
{
	VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
				  .dstSet = (VkDescriptorSet)(uintptr_t)0x500, .descriptorCount = 1,
				  .descriptorType = type, .pImageInfo = ii, .pBufferInfo = bi,
				  .pTexelBufferView = tv};
	vk_args_vkUpdateDescriptorSets a = {.descriptorWriteCount = 1, .pDescriptorWrites = &w};
	memset(err->msg, 0, sizeof(err->msg));
	return note(v, "vkUpdateDescriptorSets", &a, err);
}

/* Set 0x500 allocated again, of a layout of NB bindings B (made as
 * 0x800 + its first binding's type). */
static void set_of(vk_iface *v, const VkDescriptorSetLayoutBinding *b, uint32_t nb)
{
	trace_error err = {0};
	VkDescriptorSetLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
					       NULL, 0, nb, b};
	VkDescriptorSetLayout sl = (VkDescriptorSetLayout)(uintptr_t)(0x800 + b[0].descriptorType);
	vk_args_vkCreateDescriptorSetLayout cl = {.pCreateInfo = &lci, .pSetLayout = &sl};
	note(v, "vkCreateDescriptorSetLayout", &cl, &err);
	VkDescriptorSet set = (VkDescriptorSet)(uintptr_t)0x500;
	VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, 0, 1,
					  &sl};
	vk_args_vkAllocateDescriptorSets as = {.pAllocateInfo = &ai, .pDescriptorSets = &set};
	note(v, "vkAllocateDescriptorSets", &as, &err);
	/* the layout destroyed: the set keeps what it was */
	vk_args_vkDestroyDescriptorSetLayout dl = {.descriptorSetLayout = sl};
	note(v, "vkDestroyDescriptorSetLayout", &dl, &err);
}

/* Writes against their set's layout and their buffer's size. */
static void writes_in_layout(void)
{
	trace_error err = {0};
	vk_iface *v = vk_iface_new();
	VkDescriptorSetLayoutBinding b[2] = {
		{0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 2, VK_SHADER_STAGE_FRAGMENT_BIT, NULL},
		{1, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1, VK_SHADER_STAGE_FRAGMENT_BIT, NULL}};
	set_of(v, b, 2);
	VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 256};
	VkBuffer buf = (VkBuffer)(uintptr_t)0xa00;
	vk_args_vkCreateBuffer cb = {.pCreateInfo = &bci, .pBuffer = &buf};
	note(v, "vkCreateBuffer", &cb, &err);
	VkDescriptorBufferInfo bi[4] = {{buf, 0, 64}, {buf, 64, 64}, {buf, 128, VK_WHOLE_SIZE},
					{buf, 0, 64}};
	VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
				  .dstSet = (VkDescriptorSet)(uintptr_t)0x500, .dstArrayElement = 1,
				  .descriptorCount = 2,
				  .descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, .pBufferInfo = bi};
	vk_args_vkUpdateDescriptorSets a = {.descriptorWriteCount = 1, .pDescriptorWrites = &w};
	check(note(v, "vkUpdateDescriptorSets", &a, &err) == 0,
	      "element 1 of binding 0 and on into binding 1: taken (%s)", err.msg);
	w.descriptorCount = 3;
	check(note(v, "vkUpdateDescriptorSets", &a, &err) < 0 &&
	      strstr(err.msg, "dstArrayElement 1, descriptorCount 3, but binding 0 of the set's "
		     "layout and those after it hold 2 from there"),
	      "past binding 1: refused (%s)", err.msg);
	b[1].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
	set_of(v, b, 2);
	w.descriptorCount = 2;
	check(note(v, "vkUpdateDescriptorSets", &a, &err) < 0 &&
	      strstr(err.msg, "pDescriptorWrites[0]: descriptorCount 2 runs on from binding 0 into "
		     "binding 1, which is of VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, not of "
		     "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER as binding 0"),
	      "on into a binding of another type: refused (%s)", err.msg);
	b[1].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
	b[1].stageFlags = VK_SHADER_STAGE_VERTEX_BIT;
	set_of(v, b, 2);
	check(note(v, "vkUpdateDescriptorSets", &a, &err) < 0 &&
	      strstr(err.msg, "which is of VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER for other stages"),
	      "on into a binding of other stages: refused (%s)", err.msg);
	b[1].stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT;
	set_of(v, b, 2);
	w.descriptorCount = 1, w.dstBinding = 2;
	check(note(v, "vkUpdateDescriptorSets", &a, &err) < 0 &&
	      strstr(err.msg, "dstBinding: 2, but the set's layout has no such binding"),
	      "a binding the layout lacks: refused (%s)", err.msg);
	w.dstBinding = 0, w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
	check(note(v, "vkUpdateDescriptorSets", &a, &err) < 0 &&
	      strstr(err.msg, "descriptorType: VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, but binding 0 of "
		     "the set's layout is of VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER"),
	      "another type than the binding's: refused (%s)", err.msg);
	w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, w.dstArrayElement = 0;
	w.descriptorCount = 3;
	check(note(v, "vkUpdateDescriptorSets", &a, &err) == 0,
	      "ranges within the buffer, the whole rest: taken (%s)", err.msg);
	bi[1].offset = 256;
	check(note(v, "vkUpdateDescriptorSets", &a, &err) < 0 &&
	      strstr(err.msg, "pBufferInfo[1]: offset 256, range 64, but VkBuffer 0xa00 holds 256"),
	      "an offset at the buffer's end: refused (%s)", err.msg);
	bi[1].offset = 64, bi[1].range = 193;
	check(note(v, "vkUpdateDescriptorSets", &a, &err) < 0 &&
	      strstr(err.msg, "pBufferInfo[1]: offset 64, range 193"),
	      "a range past the buffer's end: refused (%s)", err.msg);
	vk_iface_free(v);
}

static void writes(void)
{
	trace_error err = {0};
	vk_iface *v = vk_iface_new();
	VkDescriptorImageInfo no_sampler = {.imageView = (VkImageView)(uintptr_t)0x600};
	VkDescriptorImageInfo no_view = {.sampler = (VkSampler)(uintptr_t)0x700};
	VkDescriptorBufferInfo no_buffer = {0};
	VkBufferView no_tv = VK_NULL_HANDLE;
	check(write1(v, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, NULL, NULL, NULL, &err) < 0 &&
	      strstr(err.msg, "pDescriptorWrites[0].pImageInfo: null, but a "
		     "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER write reads 1"),
	      "no image infos: refused (%s)", err.msg);
	/* a set no record allocated: its layout's samplers not known */
	check(write1(v, VK_DESCRIPTOR_TYPE_SAMPLER, &no_sampler, NULL, NULL, &err) == 0,
	      "a null sampler in a set of a layout not known: taken (%s)", err.msg);
	check(write1(v, VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, &no_view, NULL, NULL, &err) < 0 &&
	      strstr(err.msg, "pImageInfo[0].imageView: null, which a "
		     "VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE write needs (no device enabled nullDescriptor)"),
	      "a null image view: refused (%s)", err.msg);
	check(write1(v, VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, NULL, NULL, &no_tv, &err) < 0 &&
	      strstr(err.msg, "pTexelBufferView[0]: null"), "a null texel buffer view: refused (%s)",
	      err.msg);
	/* a set of a layout without immutable samplers */
	VkDescriptorSetLayoutBinding b = {0, VK_DESCRIPTOR_TYPE_SAMPLER, 1,
					  VK_SHADER_STAGE_FRAGMENT_BIT, NULL};
	set_of(v, &b, 1);
	check(write1(v, VK_DESCRIPTOR_TYPE_SAMPLER, &no_sampler, NULL, NULL, &err) < 0 &&
	      strstr(err.msg, "pImageInfo[0].sampler: null, which a VK_DESCRIPTOR_TYPE_SAMPLER "
		     "write needs (the set's layout has no immutable samplers)"),
	      "a null sampler: refused (%s)", err.msg);
	/* a device with nullDescriptor: null buffers and views are descriptors,
	 * but not a dynamic buffer's */
	VkPhysicalDeviceRobustness2FeaturesEXT r2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT,
		.nullDescriptor = VK_TRUE};
	VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &r2};
	VkDevice dev = (VkDevice)(uintptr_t)0x900;
	vk_args_vkCreateDevice cd = {.pCreateInfo = &dci, .pDevice = &dev};
	note(v, "vkCreateDevice", &cd, &err);
	VkDescriptorSetLayoutBinding ub = {0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1,
					   VK_SHADER_STAGE_FRAGMENT_BIT, NULL};
	set_of(v, &ub, 1);
	check(write1(v, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, NULL, &no_buffer, NULL, &err) == 0,
	      "nullDescriptor: a null uniform buffer taken (%s)", err.msg);
	ub.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC;
	set_of(v, &ub, 1);
	check(write1(v, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, NULL, &no_buffer, NULL, &err) < 0 &&
	      strstr(err.msg, "pBufferInfo[0].buffer: null, which a "
		     "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC write needs") &&
	      !strstr(err.msg, "nullDescriptor"),
	      "nullDescriptor: a null dynamic uniform buffer still refused (%s)", err.msg);
	vk_iface_free(v);
}

/* Draws against the sets they read: each binding the bound pipeline
 * uses, in a set bound at its number and written there, but for a
 * partially bound binding and one of immutable samplers. */
static int draw(vk_iface *v, VkCommandBuffer cb, trace_error *err)
{
	vk_args_vkCmdDraw d = {.commandBuffer = cb, .vertexCount = 3, .instanceCount = 1};
	memset(err->msg, 0, sizeof(err->msg));
	return note(v, "vkCmdDraw", &d, err);
}

static void bind(vk_iface *v, VkCommandBuffer cb, VkPipeline pipe, const VkDescriptorSet *sets,
		 uint32_t n)
{
	trace_error err = {0};
	vk_args_vkBeginCommandBuffer b = {.commandBuffer = cb};
	note(v, "vkBeginCommandBuffer", &b, &err);
	vk_args_vkCmdBindPipeline bp = {cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipe};
	note(v, "vkCmdBindPipeline", &bp, &err);
	vk_args_vkCmdBindDescriptorSets bs = {cb, VK_PIPELINE_BIND_POINT_GRAPHICS, PIPE_LAYOUT, 0, n,
					      sets, 0, NULL};
	note(v, "vkCmdBindDescriptorSets", &bs, &err);
}

static void update(vk_iface *v, VkDescriptorSet set, uint32_t binding, VkDescriptorType type,
		   const VkCopyDescriptorSet *copy)
{
	trace_error err = {0};
	VkDescriptorImageInfo ii = {.imageView = (VkImageView)(uintptr_t)0x600};
	VkDescriptorBufferInfo bi = {.buffer = (VkBuffer)(uintptr_t)0xa00, .range = VK_WHOLE_SIZE};
	VkBufferView tv = (VkBufferView)(uintptr_t)0xb00;
	VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set,
				  .dstBinding = binding, .descriptorCount = 1, .descriptorType = type,
				  .pImageInfo = &ii, .pBufferInfo = &bi, .pTexelBufferView = &tv};
	vk_args_vkUpdateDescriptorSets a = {.descriptorWriteCount = copy ? 0 : 1,
					    .pDescriptorWrites = &w, .descriptorCopyCount = !!copy,
					    .pDescriptorCopies = copy};
	check(note(v, "vkUpdateDescriptorSets", &a, &err) == 0, "the update is taken (%s)", err.msg);
}

static void draws_read(void)
{
	trace_error err = {0};
	vk_iface *v = vk_iface_new();
	full_layout();
	VkSampler immutable = (VkSampler)(uintptr_t)0x700;
	bindings[2][2].pImmutableSamplers = &immutable;
	VkDescriptorBindingFlags partly[4] = {VK_DESCRIPTOR_BINDING_PARTIALLY_BOUND_BIT};
	VkDescriptorSetLayoutBindingFlagsCreateInfo flags = {
		VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO, NULL, 4, partly};
	VkShaderModuleCreateInfo mci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
					sizeof(iface_frag10), iface_frag10};
	VkShaderModule module = MODULE;
	vk_args_vkCreateShaderModule cm = {.pCreateInfo = &mci, .pShaderModule = &module};
	note(v, "vkCreateShaderModule", &cm, &err);
	VkDescriptorSetLayout layouts[4];
	VkDescriptorSet sets[4];
	for (uint32_t s = 0; s < 4; s++) {
		VkDescriptorSetLayoutCreateInfo ci = {
			VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, s == 3 ? &flags : NULL, 0,
			nbindings[s], bindings[s]};
		layouts[s] = (VkDescriptorSetLayout)(uintptr_t)(0x200 + s);
		sets[s] = (VkDescriptorSet)(uintptr_t)(0x500 + s);
		vk_args_vkCreateDescriptorSetLayout a = {.pCreateInfo = &ci, .pSetLayout = &layouts[s]};
		note(v, "vkCreateDescriptorSetLayout", &a, &err);
		VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL,
						  0, 1, &layouts[s]};
		vk_args_vkAllocateDescriptorSets as = {.pAllocateInfo = &ai, .pDescriptorSets = &sets[s]};
		note(v, "vkAllocateDescriptorSets", &as, &err);
	}
	bindings[2][2].pImmutableSamplers = NULL;
	VkPipelineLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 4,
					  layouts, 0, NULL};
	VkPushConstantRange range = {VK_SHADER_STAGE_FRAGMENT_BIT, 0, 16};
	lci.pushConstantRangeCount = 1, lci.pPushConstantRanges = &range;
	VkPipelineLayout layout = PIPE_LAYOUT;
	vk_args_vkCreatePipelineLayout la = {.pCreateInfo = &lci, .pPipelineLayout = &layout};
	note(v, "vkCreatePipelineLayout", &la, &err);
	VkPipeline pipe = (VkPipeline)(uintptr_t)0x900;
	check(fragment_pipeline(v, layout, pipe, &err) == 0, "the pipeline (%s)", err.msg);
	VkCommandBuffer cb = (VkCommandBuffer)(uintptr_t)0xc00;
	bind(v, cb, pipe, sets, 4);
	check(draw(v, cb, &err) < 0 &&
	      strstr(err.msg, "commandBuffer: VkCommandBuffer 0xc00: vkCmdDraw, and the bound "
		     "VkPipeline 0x900 uses set "),
	      "nothing written: refused at the draw (%s)", err.msg);
	vk_args_vkUpdateDescriptorSetWithTemplate t = {.descriptorSet = sets[0]};
	note(v, "vkUpdateDescriptorSetWithTemplate", &t, &err);
	update(v, sets[1], 0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL);
	check(draw(v, cb, &err) < 0 && strstr(err.msg, "uses set 1 binding 2, but nothing"),
	      "set 0 by a template, one binding of set 1 written: set 1's next refused (%s)",
	      err.msg);
	VkCopyDescriptorSet copy = {VK_STRUCTURE_TYPE_COPY_DESCRIPTOR_SET, NULL, sets[0], 0, 0,
				    sets[1], 2, 0, 1};
	update(v, sets[1], 0, 0, &copy);
	update(v, sets[2], 0, VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, NULL);
	update(v, sets[2], 1, VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, NULL);
	check(draw(v, cb, &err) < 0 && strstr(err.msg, "uses set 3 binding 2, but nothing"),
	      "a copy writes, immutable samplers and a partially bound binding need no write (%s)",
	      err.msg);
	update(v, sets[3], 2, VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT, NULL);
	update(v, sets[3], 3, VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, NULL);
	check(draw(v, cb, &err) == 0, "every binding used written: drawn (%s)", err.msg);
	bind(v, cb, pipe, sets, 3);
	check(draw(v, cb, &err) < 0 &&
	      strstr(err.msg, "uses set 3 binding 1, but no descriptor set is bound at set 3 since "
		     "vkBeginCommandBuffer"),
	      "set 3 not bound in the recording begun again: refused (%s)", err.msg);
	vk_args_vkCmdPushDescriptorSetWithTemplateKHR pt = {.commandBuffer = cb, .layout = layout,
							     .set = 3};
	note(v, "vkCmdPushDescriptorSetWithTemplateKHR", &pt, &err);
	check(draw(v, cb, &err) == 0, "set 3 pushed: not followed, drawn (%s)", err.msg);
	VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, 0, 1,
					  &layouts[0]};
	vk_args_vkAllocateDescriptorSets as = {.pAllocateInfo = &ai, .pDescriptorSets = &sets[0]};
	note(v, "vkAllocateDescriptorSets", &as, &err);
	bind(v, cb, pipe, sets, 4);
	check(draw(v, cb, &err) < 0 && strstr(err.msg, "uses set 0 binding 0, but nothing"),
	      "a set allocated again has nothing written (%s)", err.msg);
	vk_args_vkCmdDispatch dc = {.commandBuffer = cb, 1, 1, 1};
	check(note(v, "vkCmdDispatch", &dc, &err) == 0, "no compute pipeline bound: not followed");
	vk_iface_free(v);
}

/* What a draw or dispatch may write of the sets bound: (set, binding)
 * pairs, "set:binding" each, UINT32_MAX as "any". */
static char wrote[512];
#define H(x) ((uint64_t)(uintptr_t)(x))

static void wrote_one(void *ctx, uint64_t set, uint32_t binding)
{
	size_t at = strlen(wrote);
	(void)ctx;
	if (binding == UINT32_MAX)
		snprintf(wrote + at, sizeof(wrote) - at, "0x%llx:any ", (unsigned long long)set);
	else
		snprintf(wrote + at, sizeof(wrote) - at, "0x%llx:%u ", (unsigned long long)set, binding);
}

typedef void uses_fn(const vk_iface *v, uint64_t cb, const char *name, vk_set_write_fn *fn,
		     void *ctx);

/* Whether command CMD in CB writes (FN vk_iface_shader_writes) or reads
 * (vk_iface_shader_reads) the pairs WANT ("set:binding " each), in any
 * order. */
static bool uses_are(uses_fn *fn, vk_iface *v, VkCommandBuffer cb, const char *cmd,
		     const char *want)
{
	wrote[0] = 0;
	fn(v, H(cb), cmd, wrote_one, NULL);
	if (strlen(wrote) != strlen(want))
		return false;
	char one[64];
	for (const char *p = want; *p; p += strlen(one)) {
		size_t n = strcspn(p, " ") + 1;
		snprintf(one, sizeof(one), "%.*s", (int)n, p);
		if (!strstr(wrote, one))
			return false;
	}
	return true;
}

static bool writes_are(vk_iface *v, VkCommandBuffer cb, const char *cmd, const char *want)
{
	return uses_are(vk_iface_shader_writes, v, cb, cmd, want);
}

static bool reads_are(vk_iface *v, VkCommandBuffer cb, const char *cmd, const char *want)
{
	return uses_are(vk_iface_shader_reads, v, cb, cmd, want);
}

/* iface.comp's pipeline against a set of its ten bindings used: a
 * dispatch writes the storage not declared readonly and reads all but
 * the storage declared writeonly; a pipeline not known, shader objects,
 * a library not known or device-generated commands write and read any
 * binding of every set bound; a library's uses are its pipeline's. */
static void draws_write(void)
{
	trace_error err = {0};
	vk_iface *v = vk_iface_new();
	VkShaderModuleCreateInfo mci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
					sizeof(iface_comp10), iface_comp10};
	VkShaderModule module = (VkShaderModule)(uintptr_t)0x110;
	vk_args_vkCreateShaderModule cm = {.pCreateInfo = &mci, .pShaderModule = &module};
	note(v, "vkCreateShaderModule", &cm, &err);
	static const VkDescriptorType type[COMP_USED] = {
		VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
		VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
		VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
	VkDescriptorSetLayoutBinding b[COMP_USED];
	for (uint32_t i = 0; i < COMP_USED; i++)
		b[i] = (VkDescriptorSetLayoutBinding){i, type[i], i == 0 ? 3 : i == 5 ? 2 : 1,
						      VK_SHADER_STAGE_ALL, NULL};
	set_of(v, b, COMP_USED);
	VkDescriptorSetLayout sl = (VkDescriptorSetLayout)(uintptr_t)0x210;
	VkDescriptorSetLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
					       NULL, 0, COMP_USED, b};
	vk_args_vkCreateDescriptorSetLayout cl = {.pCreateInfo = &lci, .pSetLayout = &sl};
	note(v, "vkCreateDescriptorSetLayout", &cl, &err);
	VkPipelineLayoutCreateInfo pci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1,
					  &sl, 0, NULL};
	VkPipelineLayout layout = PIPE_LAYOUT;
	vk_args_vkCreatePipelineLayout la = {.pCreateInfo = &pci, .pPipelineLayout = &layout};
	note(v, "vkCreatePipelineLayout", &la, &err);
	VkComputePipelineCreateInfo cci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
			  VK_SHADER_STAGE_COMPUTE_BIT, module, "main", NULL},
		.layout = layout};
	VkPipeline pipe = (VkPipeline)(uintptr_t)0x910;
	vk_args_vkCreateComputePipelines cp = {.createInfoCount = 1, .pCreateInfos = &cci,
					       .pPipelines = &pipe};
	check(note(v, "vkCreateComputePipelines", &cp, &err) == 0, "the compute pipeline (%s)",
	      err.msg);
	VkCommandBuffer cb = (VkCommandBuffer)(uintptr_t)0xc10;
	VkDescriptorSet set = (VkDescriptorSet)(uintptr_t)0x500;
	vk_args_vkBeginCommandBuffer begin = {.commandBuffer = cb};
	note(v, "vkBeginCommandBuffer", &begin, &err);
	check(writes_are(v, cb, "vkCmdDispatch", ""), "nothing bound: nothing written");
	vk_args_vkCmdBindPipeline bp = {cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe};
	note(v, "vkCmdBindPipeline", &bp, &err);
	vk_args_vkCmdBindDescriptorSets bs = {cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set,
					      0, NULL};
	note(v, "vkCmdBindDescriptorSets", &bs, &err);
	check(writes_are(v, cb, "vkCmdDispatch", "0x500:1 0x500:4 0x500:7 0x500:8 0x500:9 "),
	      "a dispatch writes bindings 1, 4, 7, 8 and 9, not the readonly ones: %s", wrote);
	check(reads_are(v, cb, "vkCmdDispatch", "0x500:0 0x500:1 0x500:2 0x500:3 0x500:4 0x500:5 "
			"0x500:6 0x500:7 "),
	      "... and reads 0 to 7, not the writeonly ones nor 10, which it does not use: %s",
	      wrote);
	check(vk_iface_set_bound(v, H(cb), H(set)) && !vk_iface_set_bound(v, H(cb), 0x501),
	      "the set bound is bound, another not");
	check(writes_are(v, cb, "vkCmdDispatchIndirect", "0x500:1 0x500:4 0x500:7 0x500:8 0x500:9 "),
	      "an indirect dispatch too: %s", wrote);
	check(writes_are(v, cb, "vkCmdDraw", "") && reads_are(v, cb, "vkCmdDraw", ""),
	      "a draw: nothing bound for graphics: %s", wrote);
	check(writes_are(v, cb, "vkCmdCopyBuffer", "") &&
	      !vk_iface_runs_shaders("vkCmdCopyBuffer") && vk_iface_runs_shaders("vkCmdDrawMeshTasksEXT"),
	      "a copy runs no shaders");
	check(writes_are(v, cb, "vkCmdExecuteGeneratedCommandsEXT", "0x500:any ") &&
	      reads_are(v, cb, "vkCmdExecuteGeneratedCommandsEXT", "0x500:any "),
	      "device-generated commands: any binding of each set bound: %s", wrote);
	/* a graphics pipeline linking it as a library, then one linking a
	 * library no record made */
	VkPipeline lib = pipe, linked[2] = {(VkPipeline)(uintptr_t)0x920,
					    (VkPipeline)(uintptr_t)0x930};
	VkPipelineLibraryCreateInfoKHR li = {VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR, NULL,
					     1, &lib};
	VkGraphicsPipelineCreateInfo gci = {.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
					    .pNext = &li, .flags = VK_PIPELINE_CREATE_LIBRARY_BIT_KHR,
					    .layout = layout};
	vk_args_vkCreateGraphicsPipelines gp = {.createInfoCount = 1, .pCreateInfos = &gci,
						.pPipelines = &linked[0]};
	check(note(v, "vkCreateGraphicsPipelines", &gp, &err) == 0, "linked (%s)", err.msg);
	lib = (VkPipeline)(uintptr_t)0x999;
	gp.pPipelines = &linked[1];
	check(note(v, "vkCreateGraphicsPipelines", &gp, &err) == 0, "linked (%s)", err.msg);
	vk_args_vkCmdBindDescriptorSets gs = {cb, VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, 1, &set,
					      0, NULL};
	note(v, "vkCmdBindDescriptorSets", &gs, &err);
	vk_args_vkCmdBindPipeline gb = {cb, VK_PIPELINE_BIND_POINT_GRAPHICS, linked[0]};
	note(v, "vkCmdBindPipeline", &gb, &err);
	check(writes_are(v, cb, "vkCmdDrawIndexed", "0x500:1 0x500:4 0x500:7 0x500:8 0x500:9 "),
	      "a draw of a pipeline linking a library: the library's writes: %s", wrote);
	gb.pipeline = linked[1];
	note(v, "vkCmdBindPipeline", &gb, &err);
	check(writes_are(v, cb, "vkCmdDraw", "0x500:any ") &&
	      reads_are(v, cb, "vkCmdDraw", "0x500:any "),
	      "a library not known: any binding: %s", wrote);
	gb.pipeline = (VkPipeline)(uintptr_t)0x998;
	note(v, "vkCmdBindPipeline", &gb, &err);
	check(writes_are(v, cb, "vkCmdDraw", "0x500:any "),
	      "a pipeline no record made: any binding: %s", wrote);
	/* (a registry older than VK_EXT_shader_object has no such record;
	 * the handler reads the command buffer, the first parameter) */
	const vk_command_info *shaders = vk_command_lookup("vkCmdBindShadersEXT");
	if (shaders) {
		note(v, "vkCmdBindPipeline", &bp, &err);
		vk_iface_note(v, shaders, &cb, false, &err);
		check(writes_are(v, cb, "vkCmdDispatch", "0x500:any ") &&
		      reads_are(v, cb, "vkCmdDispatch", "0x500:any "),
		      "shader objects bound: any binding: %s", wrote);
	}
	note(v, "vkCmdBindPipeline", &bp, &err);
	check(writes_are(v, cb, "vkCmdDispatch", "0x500:1 0x500:4 0x500:7 0x500:8 0x500:9 "),
	      "the pipeline bound again: its writes: %s", wrote);
	/* where a write's descriptors land: on into the next bindings */
	check(vk_iface_binding_at(v, H(set), 0, 2) == 0 && vk_iface_binding_at(v, H(set), 0, 3) == 1 &&
	      vk_iface_binding_at(v, H(set), 4, 2) == 5 && vk_iface_binding_at(v, H(set), 7, 1) == 8 &&
	      vk_iface_binding_at(v, H(set), 9, 1) == UINT32_MAX &&
	      vk_iface_binding_at(v, 0x501, 0, 0) == UINT32_MAX,
	      "elements past a binding's count land in the next; past the last, or in a set not "
	      "known, in none");
	vk_iface_free(v);
}

int main(void)
{
	reflects_frag(iface_frag10, sizeof(iface_frag10), "frag 1.0");
	reflects_frag(iface_frag15, sizeof(iface_frag15), "frag 1.5");
	reflects_comp(iface_comp10, sizeof(iface_comp10), "comp 1.0");
	reflects_comp(iface_comp15, sizeof(iface_comp15), "comp 1.5");
	malformed();
	layouts();
	entry_points();
	writes();
	writes_in_layout();
	draws_read();
	draws_write();
	check(!vk_iface_wants(vk_command_lookup("vkCmdCopyBuffer")), "vkCmdCopyBuffer is not wanted");
	return unit_done("test_spirv");
}
