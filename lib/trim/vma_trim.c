/*
 * vma_trim: the VMA path.  A VMA recording's objects are the pointers its
 * calls return (pools, allocations); a call that frees or destroys one
 * ends it; a map and its unmap cancel; of other calls on an object (user
 * data, touches, infos) the last of each function is its state, and of
 * the calls on no object (the allocator's) the last of each.  Records
 * keep the tracekit.time they came after, which the setup writes again.
 */
#include "trim_internal.h"

/* How VMA function N changes the state, from the function table. */
enum kind trim_vma_kind(const char *n)
{
	if (!strcmp(n, "tracekit.time"))
		return K_VMA_TIME;
	if (!strncmp(n, "tracekit.", 9))
		return K_DROP;
	const vma_function *f = vma_function_lookup(n, strlen(n));
	if (!f)
		return K_UNSEEN;
	if (!strncmp(n, "vmaFree", 7) || !strncmp(n, "vmaDestroy", 10))
		return K_VMA_DESTROY;
	if (!strcmp(n, "vmaMapMemory"))
		return K_VMA_MAP;
	if (!strcmp(n, "vmaUnmapMemory"))
		return K_VMA_UNMAP;
	for (uint32_t i = 0; i < f->nparams; i++)
		if (f->params[i].output)
			return K_VMA_CREATE;
	for (uint32_t i = 0; i < f->nparams; i++)
		if (f->params[i].type == VMA_POINTER || f->params[i].type == VMA_POINTER_LIST)
			return K_VMA_OTHER;
	return K_VMA_GLOBAL;
}

/* VMA: pointers are the objects, the function table says which a call
 * makes; a map and its unmap cancel; of other calls on an object (user
 * data, touches, infos) the last of each function is its state. */
static void vma_pointers(const trace_call *c, const vma_function *f, bool outputs, vec *out)
{
	for (uint32_t i = 0; i < f->nparams && i < c->sig->nargs; i++) {
		if (f->params[i].output != outputs)
			continue;
		const trace_value *v = &c->args[i];
		if (v->kind == TRACE_POINTER && v->u)
			vec_push(out, (void *)(uintptr_t)v->u);
		else if (v->kind == TRACE_ARRAY)
			for (uint32_t k = 0; k < v->len; k++)
				if (v->items[k].kind == TRACE_POINTER && v->items[k].u)
					vec_push(out, (void *)(uintptr_t)v->items[k].u);
	}
}

static void vma_replace(obj *o, rec *r)
{
	for (uint32_t i = 0; i < o->recs.n; i++) {
		rec *x = o->recs.v[i];
		if (i > 0 && x->sig == r->sig) {
			rec_unref(x);
			o->recs.v[i] = rec_ref(r);
			return;
		}
	}
	obj_attach(o, r);
}

/* A VMA call before the range, of kind K. */
int trim_vma_before(trim *t, const trace_call *c, enum kind k)
{
	if (k == K_DROP)
		return 0;
	rec *r = rec_new(c);
	if (k == K_VMA_TIME) {
		rec_unref(t->last_time);
		t->last_time = r;
		return 0;
	}
	r->time = rec_ref(t->last_time);
	const char *n = c->sig->name;
	const vma_function *f = vma_function_lookup(n, strlen(n));
	vec in = {0}, out = {0};
	vma_pointers(c, f, false, &in);
	vma_pointers(c, f, true, &out);
	switch (k) {
	case K_VMA_CREATE:
		for (uint32_t i = 0; i < out.n; i++) {
			uint64_t h = (uint64_t)(uintptr_t)out.v[i];
			obj *o = obj_lookup(t, NULL, h);
			if (o)
				obj_kill(t, o, NULL);
			o = obj_new(t, h, NULL);
			obj_attach(o, r);
			for (uint32_t j = 0; j < in.n; j++)
				obj_dep(o, obj_lookup(t, NULL, (uint64_t)(uintptr_t)in.v[j]));
		}
		break;
	case K_VMA_DESTROY:
		for (uint32_t i = 0; i < in.n; i++) {
			obj *o = obj_lookup(t, NULL, (uint64_t)(uintptr_t)in.v[i]);
			if (o)
				obj_kill(t, o, r);
		}
		break;
	case K_VMA_MAP:
	case K_VMA_UNMAP:
		for (uint32_t i = 0; i < in.n; i++) {
			obj *o = obj_lookup(t, NULL, (uint64_t)(uintptr_t)in.v[i]);
			if (!o)
				continue;
			rec *last = o->recs.n > 1 ? o->recs.v[o->recs.n - 1] : NULL;
			if (k == K_VMA_UNMAP && last && !strcmp(last->sig->name, "vmaMapMemory")) {
				rec_unref(last);
				o->recs.n--;
			} else {
				vec_push(&o->recs, rec_ref(r));
			}
		}
		break;
	case K_VMA_OTHER: {
		bool attached = false;
		for (uint32_t i = 0; i < in.n; i++) {
			obj *o = obj_lookup(t, NULL, (uint64_t)(uintptr_t)in.v[i]);
			if (o) {
				vma_replace(o, r);
				attached = true;
			}
		}
		if (!attached)
			trim_keep_global(t, r);
		break;
	}
	default: {
		/* global: vmaCreateAllocator stays, of others the last */
		uint32_t i = 0;
		if (strcmp(n, "vmaCreateAllocator"))
			for (; i < t->globals.n; i++)
				if (((rec *)t->globals.v[i])->sig == c->sig)
					break;
		if (i < t->globals.n) {
			rec_unref(t->globals.v[i]);
			t->globals.v[i] = rec_ref(r);
		} else {
			trim_keep_global(t, r);
		}
		break;
	}
	}
	vec_free(&in);
	vec_free(&out);
	rec_unref(r);
	return 0;
}

/* A VMA call of the range: the objects it names are roots. */
void trim_vma_range(trim *t, const trace_call *c, enum kind k)
{
	if (k == K_UNSEEN || k == K_DROP || k == K_VMA_TIME)
		return;
	const vma_function *f = vma_function_lookup(c->sig->name, strlen(c->sig->name));
	vec in = {0};
	vma_pointers(c, f, false, &in);
	for (uint32_t i = 0; i < in.n; i++)
		range_root(t, obj_lookup(t, NULL, (uint64_t)(uintptr_t)in.v[i]));
	vec_free(&in);
}
