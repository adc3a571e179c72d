/*
 * known: the handles earlier records made and did not destroy, by type,
 * over the whole trace (before the range and in it).  A record that
 * names any other is refused, as trace-replay refuses it: a trim would
 * otherwise write a setup and a range that no replay can run, and exit
 * 0 (a create cut out by hand, a handle edited).  See trim_internal.h.
 */
#include "trim_internal.h"

typedef struct unknown {
	trim *t;
	const vk_field *f;       /* the first handle no record made */
	const vk_handle_info *h;
	uint64_t value;
} unknown;

static void check_in(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		     const vk_field *f)
{
	(void)top;
	unknown *u = ctx;
	/* a type field the registry does not name (a debug name's object
	 * of a newer type) cannot be checked */
	if (!*value || u->f || h == &vk_handle_untyped)
		return;
	if (!tmap_at(&u->t->known, *value, (uint64_t)(uintptr_t)h)) {
		u->f = f;
		u->h = h;
		u->value = *value;
	}
}

/* What a destroy or free ends: handles of its object type. */
static void forget(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		   const vk_field *f)
{
	(void)top;
	(void)f;
	const vk_handle_info *object = ((const void **)ctx)[1];
	if (h == object && *value)
		tmap_del(&((trim *)((void **)ctx)[0])->known, *value, (uint64_t)(uintptr_t)h, NULL);
}

static void learn(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		  const vk_field *f)
{
	(void)top;
	(void)f;
	if (*value && h != &vk_handle_untyped)
		tmap_set(&((trim *)ctx)->known, *value, (uint64_t)(uintptr_t)h, 1);
}

int trim_known(trim *t, const vk_command_info *cmd, void *args, trace_error *err)
{
	unknown u = {t, NULL, NULL, 0};
	vk_walk_handles(cmd, args, false, check_in, &u);
	if (u.f) {
		trace_error_set(err, "%s: %s: %s 0x%llx: no earlier record made it, or it is "
				"destroyed", cmd->sig.name, u.f->name, u.h->name,
				(unsigned long long)u.value);
		return -1;
	}
	if (cmd->action == VK_ACTION_DESTROY || cmd->action == VK_ACTION_FREE) {
		const void *ctx[2] = {t, cmd->object};
		vk_walk_handles(cmd, args, false, forget, ctx);
	}
	vk_walk_handles(cmd, args, true, learn, t);
	return 0;
}
