/*
 * Descriptor update templates: pData is the bytes the template reads
 * (man/trace-format.5), its handles mapped in the record's copy.
 */
#include "replay_internal.h"

void vkr_create_template(vkr *r, const cmd_entry *e, vk_args_vkCreateDescriptorUpdateTemplate *a)
{
	const VkDescriptorUpdateTemplateCreateInfo *ci = a->pCreateInfo;
	uint64_t cap = a->pDescriptorUpdateTemplate ? (uint64_t)(uintptr_t)*a->pDescriptorUpdateTemplate : 0;
	uint32_t n = ci && ci->pDescriptorUpdateEntries ? ci->descriptorUpdateEntryCount : 0;
	/* the entries hold no handle: the same after the call (which may
	 * refuse the record: nothing allocated before it) */
	if (vkr_call_generic(r, e, a) < 0 || !cap)
		return;
	tmpl *t = trace_xcalloc(1, sizeof(*t) + (size_t)n * sizeof(t->e[0]));
	t->n = n;
	if (n)
		memcpy(t->e, ci->pDescriptorUpdateEntries, (size_t)n * sizeof(t->e[0]));
	uint64_t old;
	if (tmap_del(&r->templates, cap, TAG_TEMPLATE, &old))
		free((tmpl *)(uintptr_t)old);
	tmap_set(&r->templates, cap, TAG_TEMPLATE, (uint64_t)(uintptr_t)t);
}

void vkr_destroy_template(vkr *r, const cmd_entry *e, vk_args_vkDestroyDescriptorUpdateTemplate *a)
{
	uint64_t cap = (uint64_t)(uintptr_t)a->descriptorUpdateTemplate, old;
	vkr_call_generic(r, e, a);
	if (cap && tmap_del(&r->templates, cap, TAG_TEMPLATE, &old))
		free((tmpl *)(uintptr_t)old);
}

void vkr_free_templates(vkr *r)
{
	for (size_t i = 0; i < r->templates.cap; i++)
		if (tmap_used(&r->templates, i))
			free((tmpl *)(uintptr_t)r->templates.vals[i]);
	tmap_free(&r->templates);
}

/* vkUpdateDescriptorSetWithTemplate, vkCmdPushDescriptorSetWithTemplate*:
 * the handles in pData mapped, then the call. */
void vkr_template_data(vkr *r, const cmd_entry *e, void *args)
{
	const vk_command_info *cmd = e->cmd;
	const trace_call *c = r->call;
	if (e->tmpl < 0 || e->data < 0 || (uint32_t)e->data >= c->sig->nargs)
		vkr_fatal(r, "malformed record: no descriptorUpdateTemplate or pData");
	const trace_value *v = &c->args[e->data];
	uint64_t cap;
	memcpy(&cap, (uint8_t *)args + cmd->params[e->tmpl].offset, 8);
	uint64_t *h = tmap_at(&r->templates, cap, TAG_TEMPLATE);
	const tmpl *t = h ? (const tmpl *)(uintptr_t)*h : NULL;
	if (!t)  /* never a call skipped: the draws would read what it writes */
		vkr_fatal(r, "descriptorUpdateTemplate: VkDescriptorUpdateTemplate 0x%llx: no earlier "
			  "record made it, or it is destroyed%s", (unsigned long long)cap,
			  r->errors ? " (or its create failed here)" : "");
	uint64_t want;
	if (!vk_template_data_size(t->e, t->n, &want)) {
		vkr_warn(r, "%s: a descriptor type of the template is not supported yet (left out)",
			 cmd->sig.name);
		return;
	}
	if (v->kind == TRACE_POINTER || (v->kind == TRACE_NULL && want)) {
		/* a capture by a layer that recorded the address only */
		vkr_warn(r, "%s: pData is %s, not the %llu bytes the template reads (left out)",
			 cmd->sig.name, v->kind == TRACE_NULL ? "null" : "an address",
			 (unsigned long long)want);
		return;
	}
	if (v->kind == TRACE_BLOB) {
		if (v->len < want)
			vkr_fatal(r, "malformed record (byte %lld): pData has %u bytes, the template reads %llu",
				  (long long)c->offset, v->len, (unsigned long long)want);
		void *data;
		memcpy(&data, (uint8_t *)args + cmd->params[e->data].offset, sizeof(data));
		VkDeviceSize *moved = vkr_uniforms_template_sizes(r, e, t, data);
		vk_walk_template_handles(t->e, t->n, data, v->len, vkr_remap_in, r);
		/* (vkUpdateDescriptorSetWithTemplate(device, descriptorSet, ...)) */
		if (e->uniform == UK_TEMPLATE_SET)
			vkr_uniforms_template_move(r, vkr_handle_at(args, &cmd->params[1]), t, data,
						   moved);
	} else if (v->kind != TRACE_NULL) {
		vkr_fatal(r, "malformed record (byte %lld): pData is %s, not a blob", (long long)c->offset,
			  trace_value_kind_name(v->kind));
	}
	vkr_call_generic(r, e, args);
}
