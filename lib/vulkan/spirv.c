/*
 * SPIR-V reflection, as much as a pipeline's layout is checked against:
 * each entry point's resource variables (DescriptorSet and Binding
 * decorations), the descriptor types each variable's type takes, and its
 * push constant block.
 *
 * Static use follows Vulkan's glossary: a variable is used where an
 * instruction of a function in the entry point's call tree names it; a
 * mention in the entry point's interface list is no use (glslang lists
 * every global there from SPIR-V 1.4, used or not).  This reads the
 * instructions that take a pointer (loads, stores, access chains,
 * atomics, copies, calls ...) at their pointer operands only: a literal
 * operand that happens to equal a variable's id must not make it used,
 * which would refuse a valid pipeline whose layout leaves it out.
 *
 * Whether a stage may write through a variable is what the module
 * declares: a storage buffer, storage image or storage texel buffer may
 * be written unless it is NonWritable (GLSL's readonly: on the variable,
 * or on every member of its block).  Trim counts a shader's storage
 * descriptors as GPU writes with this.  Whether it may read through one
 * likewise: any but a storage buffer, image or texel buffer declared
 * NonReadable (GLSL's writeonly) may be read; trim counts what earlier
 * submits wrote there as read with this.
 *
 * A module read in the other byte order is swapped first.  Opcodes and
 * enumerants are the SPIR-V specification's (unified1 grammar).
 */
#include "spirv.h"

#include "internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan_core.h>

enum {
	OP_ENTRY_POINT = 15, OP_TYPE_IMAGE = 25, OP_TYPE_SAMPLER = 26,
	OP_TYPE_SAMPLED_IMAGE = 27, OP_TYPE_ARRAY = 28, OP_TYPE_RUNTIME_ARRAY = 29,
	OP_TYPE_STRUCT = 30, OP_TYPE_POINTER = 32, OP_CONSTANT = 43, OP_FUNCTION = 54,
	OP_FUNCTION_END = 56, OP_FUNCTION_CALL = 57, OP_VARIABLE = 59,
	OP_DECORATE = 71, OP_MEMBER_DECORATE = 72, OP_TYPE_ACCEL = 5341,
};
enum {
	DEC_BLOCK = 2, DEC_BUFFER_BLOCK = 3, DEC_NON_WRITABLE = 24, DEC_NON_READABLE = 25,
	DEC_BINDING = 33, DEC_SET = 34
};
enum { SC_UNIFORM_CONSTANT = 0, SC_UNIFORM = 2, SC_PUSH_CONSTANT = 9, SC_STORAGE_BUFFER = 12 };
enum { DIM_BUFFER = 5, DIM_SUBPASS = 6 };

/* An id: where it is defined, what decorates it. */
enum { D_SET = 1, D_BINDING = 2, D_BLOCK = 4, D_BUFFER_BLOCK = 8, D_VAR = 16, D_PUSH = 32,
       D_NON_WRITABLE = 64, D_NON_READABLE = 128 };
typedef struct id_info {
	uint32_t def;   /* word index of the defining instruction, 0 if none */
	uint32_t set, binding;
	uint8_t dec;
	uint64_t nw_members;  /* structs: members 0 to 63 decorated NonWritable */
	uint64_t nr_members;  /* ... NonReadable */
} id_info;

typedef struct reader {
	const uint32_t *w;
	size_t n;
	uint32_t bound;
	id_info *ids;
	uint8_t *seen;  /* functions walked, per entry point */
	uint8_t *used;  /* variables used, per entry point */
	trace_error *err;
} reader;

static uint32_t op_of(const uint32_t *w, size_t at)
{
	return w[at] & 0xffff;
}

static uint32_t len_of(const uint32_t *w, size_t at)
{
	return w[at] >> 16;
}

/* The execution model's shader stage (VkShaderStageFlagBits). */
static uint32_t stage_of(uint32_t model)
{
	static const struct { uint32_t model, stage; } t[] = {
		{0, 0x1}, {1, 0x2}, {2, 0x4}, {3, 0x8}, {4, 0x10}, {5, 0x20},
		{5267, 0x40}, {5268, 0x80}, {5364, 0x40}, {5365, 0x80},
		{5313, 0x100}, {5314, 0x1000}, {5315, 0x200}, {5316, 0x400}, {5317, 0x800},
		{5318, 0x2000},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].model == model)
			return t[i].stage;
	return 0;
}

/* The instruction defining ID, if it is one of OP (and at least MIN words). */
static const uint32_t *def_of(const reader *r, uint32_t id, uint32_t op, uint32_t min)
{
	if (id >= r->bound || !r->ids[id].def)
		return NULL;
	const uint32_t *i = r->w + r->ids[id].def;
	return op_of(i, 0) == op && len_of(i, 0) >= min ? i : NULL;
}

/* Which descriptor types a variable of pointee type T in storage class
 * SC takes, and its array length into *count. */
static uint32_t types_of(const reader *r, uint32_t t, uint32_t sc, uint32_t *count)
{
	const uint32_t *i;
	*count = 1;
	if ((i = def_of(r, t, OP_TYPE_ARRAY, 4))) {
		const uint32_t *c = def_of(r, i[3], OP_CONSTANT, 4);
		*count = c ? c[3] : 0;  /* a specialisation constant: not known */
		t = i[2];
	} else if ((i = def_of(r, t, OP_TYPE_RUNTIME_ARRAY, 3))) {
		*count = 0;
		t = i[2];
	}
	if (t >= r->bound)
		return SPV_ANY;
	if (def_of(r, t, OP_TYPE_SAMPLER, 2))
		return SPV_DTYPE(VK_DESCRIPTOR_TYPE_SAMPLER) |
		       SPV_DTYPE(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER);
	if ((i = def_of(r, t, OP_TYPE_SAMPLED_IMAGE, 3))) {
		/* GLSL's samplerBuffer: a sampled buffer image, a texel buffer */
		const uint32_t *image = def_of(r, i[2], OP_TYPE_IMAGE, 9);
		return SPV_DTYPE(image && image[3] == DIM_BUFFER
				 ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
				 : VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER);
	}
	if ((i = def_of(r, t, OP_TYPE_IMAGE, 9))) {
		uint32_t dim = i[3], sampled = i[7];
		if (dim == DIM_SUBPASS)
			return SPV_DTYPE(VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT);
		uint32_t as_sampled = dim == DIM_BUFFER
			? SPV_DTYPE(VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER)
			: SPV_DTYPE(VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE) |
			  SPV_DTYPE(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER);
		uint32_t as_storage = SPV_DTYPE(dim == DIM_BUFFER ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER
								  : VK_DESCRIPTOR_TYPE_STORAGE_IMAGE);
		return sampled == 1 ? as_sampled : sampled == 2 ? as_storage : as_sampled | as_storage;
	}
	if (def_of(r, t, OP_TYPE_STRUCT, 2)) {
		uint32_t ubo = SPV_DTYPE(VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER) |
			       SPV_DTYPE(VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC);
		uint32_t ssbo = SPV_DTYPE(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER) |
				SPV_DTYPE(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC);
		if (sc == SC_STORAGE_BUFFER || (r->ids[t].dec & D_BUFFER_BLOCK))
			return ssbo;
		if (sc == SC_UNIFORM && (r->ids[t].dec & D_BLOCK))
			return ubo;  /* (or an inline uniform block: not a type below 11) */
		return SPV_ANY;
	}
	return SPV_ANY;  /* acceleration structures and what this does not read */
}

static const uint32_t storage_types = SPV_DTYPE(VK_DESCRIPTOR_TYPE_STORAGE_IMAGE) |
				      SPV_DTYPE(VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER) |
				      SPV_DTYPE(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER) |
				      SPV_DTYPE(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC);

/* Whether type T (or the element type of an array T) is a block of 64
 * members at most, each of them decorated NonReadable (READ) or
 * NonWritable. */
static bool members_all(const reader *r, uint32_t t, bool read)
{
	const uint32_t *i;
	if ((i = def_of(r, t, OP_TYPE_ARRAY, 4)) || (i = def_of(r, t, OP_TYPE_RUNTIME_ARRAY, 3)))
		t = i[2];
	const uint32_t *s = def_of(r, t, OP_TYPE_STRUCT, 2);
	uint32_t n = s ? len_of(s, 0) - 2 : 0;
	if (!n || n > 64)
		return false;
	return (read ? r->ids[t].nr_members : r->ids[t].nw_members) ==
	       (n == 64 ? ~0ull : (1ull << n) - 1);
}

/* Whether a stage may write through variable VAR, of pointee type T and
 * descriptor TYPES: one of a storage type (or of a type not read) not
 * declared NonWritable, on the variable or on each member of its block. */
static bool may_write(const reader *r, uint32_t var, uint32_t t, uint32_t types)
{
	if ((types != SPV_ANY && !(types & storage_types)) || (r->ids[var].dec & D_NON_WRITABLE))
		return false;
	return !members_all(r, t, false);
}

/* Whether a stage may read through variable VAR (T, TYPES as above): any
 * but one of storage types only, declared NonReadable on the variable or
 * on each member of its block (vkd3d's UAV clears, GLSL's writeonly). */
static bool may_read(const reader *r, uint32_t var, uint32_t t, uint32_t types)
{
	if (types == SPV_ANY || (types & ~storage_types))
		return true;
	return !(r->ids[var].dec & D_NON_READABLE) && !members_all(r, t, true);
}

/* Whether ID is a variable of interest, and marks it used. */
static void use(reader *r, uint32_t id)
{
	if (id < r->bound && (r->ids[id].dec & D_VAR))
		r->used[id] = 1;
}

/* The pointer operands (word indexes) of the instruction at I, into USE;
 * OpFunctionCall's callee walked. */
static void walk_function(reader *r, uint32_t fn, unsigned depth);

static void pointer_operands(reader *r, const uint32_t *i, uint32_t len, unsigned depth)
{
	uint32_t op = op_of(i, 0);
	switch (op) {
	case OP_FUNCTION_CALL:
		for (uint32_t k = 4; k < len; k++)
			use(r, i[k]);
		if (len > 3)
			walk_function(r, i[3], depth + 1);
		return;
	case 62:   /* OpStore */
	case 228:  /* OpAtomicStore */
	case 319:  /* OpAtomicFlagClear */
		if (len > 1)
			use(r, i[1]);
		return;
	case 63:   /* OpCopyMemory */
	case 64:   /* OpCopyMemorySized */
		if (len > 2)
			use(r, i[1]), use(r, i[2]);
		return;
	case 169:  /* OpSelect */
		if (len > 5)
			use(r, i[4]), use(r, i[5]);
		return;
	case 245:  /* OpPhi: (value, parent) pairs */
		for (uint32_t k = 3; k < len; k += 2)
			use(r, i[k]);
		return;
	case 401: case 402: case 403:  /* OpPtrEqual, OpPtrNotEqual, OpPtrDiff */
		if (len > 4)
			use(r, i[3]), use(r, i[4]);
		return;
	case 60:   /* OpImageTexelPointer */
	case 61:   /* OpLoad */
	case 65: case 66: case 67: case 70:  /* access chains */
	case 68:   /* OpArrayLength */
	case 83:   /* OpCopyObject */
	case 227: case 229: case 230: case 231: case 232: case 233: case 234: case 235:
	case 236: case 237: case 238: case 239: case 240: case 241: case 242:  /* atomics */
	case 318:  /* OpAtomicFlagTestAndSet */
	case 5614: case 5615: case 6035:  /* OpAtomicFMinEXT, FMaxEXT, FAddEXT */
		if (len > 3)
			use(r, i[3]);
		return;
	default:
		return;
	}
}

/* The function FN's instructions and what it calls, once per entry point. */
static void walk_function(reader *r, uint32_t fn, unsigned depth)
{
	if (fn >= r->bound || r->seen[fn] || depth > 256)
		return;
	r->seen[fn] = 1;
	const uint32_t *f = def_of(r, fn, OP_FUNCTION, 5);
	if (!f)
		return;
	size_t at = (size_t)(f - r->w);
	for (at += len_of(r->w, at); at < r->n; at += len_of(r->w, at)) {
		uint32_t op = op_of(r->w, at);
		if (op == OP_FUNCTION_END || op == OP_FUNCTION)
			break;
		pointer_operands(r, r->w + at, len_of(r->w, at), depth);
	}
}

/* The entry point at I (LEN words) and what it uses, into E. */
static int read_entry(reader *r, const uint32_t *i, uint32_t len, spv_entry *e)
{
	const char *name = (const char *)&i[3];
	size_t max = len > 3 ? (size_t)(len - 3) * 4 : 0, nl = strnlen(name, max);
	if (nl == max) {
		trace_error_set(r->err, "SPIR-V word %zu: OpEntryPoint's name has no end",
				(size_t)(i - r->w));
		return -1;
	}
	e->name = trace_xmalloc(nl + 1);
	memcpy(e->name, name, nl + 1);
	e->stage = stage_of(i[1]);
	memset(r->seen, 0, r->bound);
	memset(r->used, 0, r->bound);
	walk_function(r, i[2], 0);
	for (uint32_t id = 0; id < r->bound; id++) {
		if (!r->used[id])
			continue;
		const id_info *v = &r->ids[id];
		if (v->dec & D_PUSH) {
			e->push = 1;
			continue;
		}
		if ((v->dec & (D_SET | D_BINDING)) != (D_SET | D_BINDING))
			continue;
		const uint32_t *var = r->w + v->def, *ptr = def_of(r, var[1], OP_TYPE_POINTER, 4);
		spv_binding b = {.set = v->set, .binding = v->binding, .count = 1};
		b.types = ptr ? types_of(r, ptr[3], var[3], &b.count) : SPV_ANY;
		b.writes = !ptr || may_write(r, id, ptr[3], b.types);
		b.reads = !ptr || may_read(r, id, ptr[3], b.types);
		e->bindings = trace_xrealloc(e->bindings, (e->nbindings + 1) * sizeof(*e->bindings));
		e->bindings[e->nbindings++] = b;
	}
	return 0;
}

static uint32_t swap32(uint32_t x)
{
	return x >> 24 | (x >> 8 & 0xff00) | (x << 8 & 0xff0000) | x << 24;
}

/* The instructions' structure and ids, into R->ids. */
static int index_ids(reader *r)
{
	for (size_t at = 5; at < r->n;) {
		uint32_t op = op_of(r->w, at), len = len_of(r->w, at);
		if (!len || len > r->n - at) {
			trace_error_set(r->err, "SPIR-V word %zu: an instruction (opcode %u) of %u words%s",
					at, op, len, len ? " past the module's end" : "");
			return -1;
		}
		const uint32_t *i = r->w + at;
		/* the result id: of types and constants (word 1 or 2) */
		uint32_t res = 0;
		if ((op >= 19 && op <= 39) || op == OP_TYPE_ACCEL)
			res = len > 1 ? i[1] : 0;       /* OpType*: result first */
		else if (op == OP_CONSTANT || op == 50 || op == OP_FUNCTION || op == OP_VARIABLE)
			res = len > 2 ? i[2] : 0;
		if (res >= r->bound) {
			trace_error_set(r->err, "SPIR-V word %zu: id %u, past the module's bound %u", at,
					res, r->bound);
			return -1;
		}
		if (res)
			r->ids[res].def = (uint32_t)at;
		if (op == OP_VARIABLE && len > 3 && res) {
			uint32_t sc = i[3];
			if (sc == SC_UNIFORM_CONSTANT || sc == SC_UNIFORM || sc == SC_STORAGE_BUFFER)
				r->ids[res].dec |= D_VAR;
			else if (sc == SC_PUSH_CONSTANT)
				r->ids[res].dec |= D_VAR | D_PUSH;
		}
		if (op == OP_DECORATE && len > 2 && i[1] < r->bound) {
			id_info *t = &r->ids[i[1]];
			if (i[2] == DEC_SET && len > 3)
				t->dec |= D_SET, t->set = i[3];
			else if (i[2] == DEC_BINDING && len > 3)
				t->dec |= D_BINDING, t->binding = i[3];
			else if (i[2] == DEC_BLOCK)
				t->dec |= D_BLOCK;
			else if (i[2] == DEC_BUFFER_BLOCK)
				t->dec |= D_BUFFER_BLOCK;
			else if (i[2] == DEC_NON_WRITABLE)
				t->dec |= D_NON_WRITABLE;
			else if (i[2] == DEC_NON_READABLE)
				t->dec |= D_NON_READABLE;
		}
		if (op == OP_MEMBER_DECORATE && len > 3 && i[1] < r->bound && i[2] < 64) {
			if (i[3] == DEC_NON_WRITABLE)
				r->ids[i[1]].nw_members |= 1ull << i[2];
			else if (i[3] == DEC_NON_READABLE)
				r->ids[i[1]].nr_members |= 1ull << i[2];
		}
		at += len;
	}
	return 0;
}

spv_module *spv_reflect(const uint32_t *code, size_t n, trace_error *err)
{
	uint32_t *swapped = NULL;
	if (n >= 1 && code[0] == swap32(0x07230203u)) {
		swapped = trace_xmalloc(n * 4);
		for (size_t i = 0; i < n; i++)
			swapped[i] = swap32(code[i]);
		code = swapped;
	}
	if (n < 5 || code[0] != 0x07230203u) {
		if (n < 5)
			trace_error_set(err, "SPIR-V of %zu words, short of its header", n);
		else
			trace_error_set(err, "no SPIR-V: its first word is 0x%08x, not the magic "
					"0x07230203", code[0]);
		free(swapped);
		return NULL;
	}
	spv_module *m = trace_xcalloc(1, sizeof(*m));
	/* every id is defined by an instruction of at least two words: a
	 * bound past the words (and past the 4,194,303 ids SPIR-V's universal
	 * limits ask a consumer to take) is no module's, and would size the
	 * tables */
	uint32_t bound = code[3];
	if (bound > n && bound > 1u << 22) {
		trace_error_set(err, "SPIR-V: an id bound of %u in a module of %zu words", bound, n);
		free(m);
		free(swapped);
		return NULL;
	}
	reader r = {.w = code, .n = n, .bound = bound, .err = err};
	r.ids = trace_xcalloc(bound ? bound : 1, sizeof(*r.ids));
	r.seen = trace_xcalloc(bound ? bound : 1, 1);
	r.used = trace_xcalloc(bound ? bound : 1, 1);
	int rc = index_ids(&r);
	for (size_t at = 5; rc == 0 && at < n; at += len_of(code, at)) {
		if (op_of(code, at) != OP_ENTRY_POINT)
			continue;
		m->entries = trace_xrealloc(m->entries, (m->nentries + 1) * sizeof(*m->entries));
		spv_entry *e = &m->entries[m->nentries++];
		memset(e, 0, sizeof(*e));
		rc = read_entry(&r, code + at, len_of(code, at), e);
	}
	free(r.ids);
	free(r.seen);
	free(r.used);
	free(swapped);
	if (rc < 0) {
		spv_free(m);
		return NULL;
	}
	return m;
}

void spv_free(spv_module *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->nentries; i++) {
		free(m->entries[i].name);
		free(m->entries[i].bindings);
	}
	free(m->entries);
	free(m);
}

const spv_entry *spv_entry_of(const spv_module *m, const char *name, uint32_t stage)
{
	for (uint32_t i = 0; m && name && i < m->nentries; i++)
		if (m->entries[i].stage == stage && !strcmp(m->entries[i].name, name))
			return &m->entries[i];
	return NULL;
}
