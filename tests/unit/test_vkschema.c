/*
 * The generated Vulkan schema: every struct of the registry, filled with
 * varied values (arrays sized by their count members, strings, pNext
 * chains, NULLs where a pointer may be NULL), goes C -> record -> text ->
 * binary -> C and must come back member for member, byte for byte.
 * Every command, written as a capture writes it, reads back from its
 * text into the same bytes; every enum value carries a signature of its
 * own, every bitmask value its type's flags up to the last it shows.
 */
#include "vkschema_cmds.h"
#include "vkpass.h"
#include "vksync.h"
#include "unit.h"
#include "flowscan_agree.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Filling structs with varied values, the tables as the guide. */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void put_uint(void *p, uint32_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)p = (uint8_t)v; break;
	case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

static uint64_t get_uint(const void *p, uint32_t size)
{
	uint64_t v = 0;
	memcpy(&v, p, size > 8 ? 8 : size);
	return size >= 8 ? v : v & ((1ull << (size * 8)) - 1);
}

static void fill_struct(const vk_struct_info *s, trace_arena *a, uint8_t *p, int depth);

/* How many elements pointer member f of the struct at p points at: a
 * constant, or what its count member says (a size in bytes for DIV4, a
 * sample count for SAMPLES, whose mask holds 32 samples a word). */
static uint64_t elem_count(const vk_struct_info *s, const vk_field *f, const uint8_t *p)
{
	if (f->len_op == VK_LEN_CONST)
		return f->len_arg;
	if (f->len < 0)
		return 1;
	const uint8_t *cp = p + s->fields[f->len].offset;
	if (f->len_op == VK_LEN_FIELD || s->fields[f->len].ptr) {
		/* through the sibling: a uint32 of its struct, or what it points at */
		memcpy(&cp, cp, sizeof(cp));
		if (!cp)
			return 0;
		if (f->len_op == VK_LEN_FIELD)
			return get_uint(cp + f->len_arg, 4);
	}
	uint64_t c = get_uint(cp, s->fields[f->len].size);
	return f->len_op == VK_LEN_DIV4 ? c / 4 : f->len_op == VK_LEN_SAMPLES ? (c + 31) / 32 : c;
}

static void fill_string(char *s, size_t cap)
{
	size_t n = rnd() % (cap > 12 ? 12 : cap);
	for (size_t i = 0; i < n; i++)
		s[i] = "abcdefghijklmnopqrstuvwxyz0123456789_"[rnd() % 37];
	s[n] = 0;
}

static void fill_elem(const vk_field *f, trace_arena *a, uint8_t *p, int depth)
{
	switch ((vk_base)f->base) {
	case VK_B_BOOL32:
		put_uint(p, 4, rnd() & 1);
		return;
	case VK_B_UINT:
	case VK_B_SINT:
	case VK_B_EXTERN:
	case VK_B_CHAR:
		put_uint(p, f->size, rnd());
		return;
	case VK_B_FLOAT: {
		float x = (float)((int)(rnd() % 4001) - 2000) / 8.0f;
		memcpy(p, &x, 4);
		return;
	}
	case VK_B_DOUBLE: {
		double x = (double)((int64_t)(rnd() % 400001) - 200000) / 64.0;
		memcpy(p, &x, 8);
		return;
	}
	case VK_B_ENUM: {
		const vk_enum_info *e = f->ref;
		/* a value the registry defines: decoding refuses any other
		 * (test_decoding_refuses_what_the_registry_lacks) */
		int64_t v = e && e->sig.nvalues ? e->sig.values[rnd() % e->sig.nvalues].value : 0;
		put_uint(p, f->size, (uint64_t)v);
		return;
	}
	case VK_B_BITMASK: {
		const vk_bitmask_info *b = f->ref;
		uint64_t v = 0;
		for (uint32_t i = 0; b && i < b->sig.nflags; i++)
			if (rnd() % 3 == 0)
				v |= b->sig.flags[i].value;
		put_uint(p, f->size, v);
		return;
	}
	case VK_B_HANDLE:
	case VK_B_PTRVAL:
		put_uint(p, 8, rnd() | 1);
		return;
	case VK_B_STRUCT:
		fill_struct(f->ref, a, p, depth + 1);
		return;
	case VK_B_UNION:
	case VK_B_OPAQUE:
	case VK_B_VOID:
		for (uint32_t i = 0; i < f->size; i++)
			p[i] = (uint8_t)rnd();
		return;
	}
}

/* Chains 0 to 2 structs of sTypes the registry knows. */
static void *fill_chain(trace_arena *a, int depth)
{
	if (depth > 2 || rnd() % 3 == 0)
		return NULL;
	const vk_struct_info *s = vk_structs_by_stype[rnd() % vk_nstructs_by_stype];
	uint8_t *p = trace_arena_alloc(a, s->size);
	fill_struct(s, a, p, depth + 1);
	return p;
}

static uint64_t small_count(void)
{
	return rnd() % 4;
}

static void fill_struct(const vk_struct_info *s, trace_arena *a, uint8_t *p, int depth)
{
	if (s->blob) {
		for (uint32_t i = 0; i < s->size; i++)
			p[i] = (uint8_t)rnd();
		return;
	}
	bool *is_count = calloc(s->nfields + 1, 1), *ptr_count = calloc(s->nfields + 1, 1);
	for (uint32_t i = 0; i < s->nfields; i++)
		if (s->fields[i].len >= 0 && s->fields[i].len_op != VK_LEN_FIELD)
			is_count[s->fields[i].len] = true;
	/* values first, then counts, then what the counts size */
	for (uint32_t i = 0; i < s->nfields; i++) {
		const vk_field *f = &s->fields[i];
		uint8_t *fp = p + f->offset;
		if (f->ptr || is_count[i])
			continue;
		if (f->flags & VK_F_STYPE) {
			/* VkBaseInStructure and its kind have none of their own */
			put_uint(fp, 4, (uint64_t)(s->stype >= 0 ? s->stype : 1));
		} else if (f->count && f->base == VK_B_CHAR) {
			fill_string((char *)fp, f->count);
		} else if (f->count) {
			for (uint32_t k = 0; k < f->count; k++)
				fill_elem(f, a, fp + (size_t)k * f->size, depth);
		} else {
			fill_elem(f, a, fp, depth);
		}
	}
	for (uint32_t i = 0; i < s->nfields; i++) {
		const vk_field *f = &s->fields[i];
		if (f->len < 0 || f->len_op == VK_LEN_FIELD)
			continue;
		const vk_field *c = &s->fields[f->len];
		uint8_t *cp = p + c->offset;
		if (!is_count[f->len])
			continue;
		is_count[f->len] = false; /* set once: arrays may share a count */
		if (c->ptr) { /* a command's uint32_t *pCount: the count it points at */
			void *q = trace_arena_alloc(a, c->size);
			memcpy(cp, &q, sizeof(q));
			cp = q;
			ptr_count[f->len] = true;
		}
		if (f->len_op == VK_LEN_SAMPLES) /* a VkSampleCountFlagBits, 1 to 64 */
			put_uint(cp, c->size, 1ull << (rnd() % 7));
		else
			put_uint(cp, c->size, f->len_op == VK_LEN_DIV4 ? 4 * small_count() : small_count());
	}
	for (uint32_t i = 0; i < s->nfields; i++) {
		const vk_field *f = &s->fields[i];
		uint8_t *fp = p + f->offset;
		if (!f->ptr || ptr_count[i])
			continue;
		void *q = NULL;
		if (f->flags & VK_F_PNEXT) {
			q = fill_chain(a, depth);
		} else if (vk_field_ignored(s, f, p)) {
			q = NULL; /* written null whatever it holds */
		} else if ((f->flags & VK_F_OPTIONAL) && rnd() % 5 == 0) {
			q = NULL;
		} else if (f->base == VK_B_VOID && f->len_op == VK_LEN_NONE && f->ptr == 1) {
			q = (void *)(uintptr_t)(rnd() & ~7ull);
		} else if (depth > 4) {
			/* too deep: no array, and so no count either (decoding
			 * refuses a null array with a count where the registry
			 * does not allow one) */
			q = NULL;
			if (f->len >= 0 && f->len_op == VK_LEN_MEMBER && !s->fields[f->len].ptr)
				put_uint(p + s->fields[f->len].offset, s->fields[f->len].size, 0);
		} else {
			uint8_t *sib = NULL;
			if (f->len_op == VK_LEN_FIELD)
				memcpy(&sib, p + s->fields[f->len].offset, sizeof(sib));
			/* a count of another struct that nothing in it sizes
			 * (commandBufferCount) was filled as any number */
			if (sib && get_uint(sib + f->len_arg, 4) > 3)
				put_uint(sib + f->len_arg, 4, small_count());
			uint64_t n = elem_count(s, f, p);
			if (f->ptr == 2) {
				void **pp = trace_arena_alloc(a, sizeof(void *) * (n ? n : 1));
				for (uint64_t k = 0; k < n; k++) {
					if (f->base == VK_B_CHAR) {
						pp[k] = trace_arena_alloc(a, 16);
						fill_string(pp[k], 16);
					} else {
						pp[k] = trace_arena_alloc(a, f->size);
						fill_elem(f, a, pp[k], depth);
					}
				}
				q = pp;
			} else if (f->base == VK_B_CHAR && f->len_op == VK_LEN_NONE) {
				q = trace_arena_alloc(a, 16);
				fill_string(q, 16);
			} else if (f->base == VK_B_CHAR) {
				q = trace_arena_alloc(a, n + 1);
				fill_string(q, n + 1);
			} else {
				uint8_t *arr = trace_arena_alloc(a, (size_t)f->size * (n ? n : 1));
				for (uint64_t k = 0; k < n; k++)
					fill_elem(f, a, arr + k * f->size, depth);
				q = arr;
			}
		}
		memcpy(fp, &q, sizeof(q));
	}
	/* a condition may read what was filled after the pointer it decides
	 * (a graphics pipeline's pDynamicState): null those it ignores until
	 * none is left, as they are written */
	for (bool again = true; again;) {
		again = false;
		for (uint32_t i = 0; i < s->nfields; i++) {
			const vk_field *f = &s->fields[i];
			void *q;
			memcpy(&q, p + f->offset, sizeof(q));
			if (f->ptr && q && !(f->flags & VK_F_PNEXT) && vk_field_ignored(s, f, p)) {
				memset(p + f->offset, 0, sizeof(q));
				again = true;
			}
		}
	}
	free(is_count);
	free(ptr_count);
}

/* ------------------------------------------------------------------ */
/* Comparing, member by member. */

static bool same_struct(const vk_struct_info *s, const uint8_t *x, const uint8_t *y, const char *path);

static bool same_elem(const vk_field *f, const uint8_t *x, const uint8_t *y, const char *path)
{
	if (f->base == VK_B_STRUCT)
		return same_struct(f->ref, x, y, path);
	uint32_t size = f->base == VK_B_HANDLE || f->base == VK_B_PTRVAL ? 8 : f->size;
	if (memcmp(x, y, size)) {
		fprintf(stderr, "  %s: %s differs\n", path, f->name);
		return false;
	}
	return true;
}

static bool same_chain(const void *x, const void *y, const char *path)
{
	struct base { int32_t sType; const void *pNext; };
	const struct base *a = x, *b = y;
	if (!a || !b) {
		if (a != b)
			fprintf(stderr, "  %s: pNext %p vs %p\n", path, x, y);
		return a == b;
	}
	if (a->sType != b->sType) {
		fprintf(stderr, "  %s: pNext sType %d vs %d\n", path, a->sType, b->sType);
		return false;
	}
	const vk_struct_info *s = vk_struct_by_stype(a->sType);
	if (s)
		return same_struct(s, x, y, s->sig.name);
	return same_chain(a->pNext, b->pNext, path);
}

static bool same_struct(const vk_struct_info *s, const uint8_t *x, const uint8_t *y, const char *path)
{
	if (s->blob)
		return !memcmp(x, y, s->size);
	for (uint32_t i = 0; i < s->nfields; i++) {
		const vk_field *f = &s->fields[i];
		const uint8_t *fx = x + f->offset, *fy = y + f->offset;
		char sub[512];
		snprintf(sub, sizeof(sub), "%s.%s", path, f->name);
		if (f->flags & VK_F_PNEXT) {
			const void *a, *b;
			memcpy(&a, fx, sizeof(a));
			memcpy(&b, fy, sizeof(b));
			if (!same_chain(a, b, sub))
				return false;
			continue;
		}
		if (!f->ptr) {
			uint32_t n = f->count ? f->count : 1;
			for (uint32_t k = 0; k < n; k++)
				if (!same_elem(f, fx + (size_t)k * f->size, fy + (size_t)k * f->size, sub))
					return false;
			continue;
		}
		const uint8_t *a, *b;
		memcpy(&a, fx, sizeof(a));
		memcpy(&b, fy, sizeof(b));
		if (!a || !b) {
			if (a != b) {
				fprintf(stderr, "  %s: NULL on one side\n", sub);
				return false;
			}
			continue;
		}
		if (f->base == VK_B_VOID && f->len_op == VK_LEN_NONE && f->ptr == 1) {
			if (a != b) {
				fprintf(stderr, "  %s: pointer value differs\n", sub);
				return false;
			}
			continue;
		}
		uint64_t n = elem_count(s, f, x);
		if (f->base == VK_B_CHAR && f->ptr == 1) {
			if (strcmp((const char *)a, (const char *)b)) {
				fprintf(stderr, "  %s: string differs\n", sub);
				return false;
			}
			continue;
		}
		for (uint64_t k = 0; k < n; k++) {
			const uint8_t *ea = a + k * f->size, *eb = b + k * f->size;
			if (f->ptr == 2) {
				memcpy(&ea, a + k * sizeof(void *), sizeof(ea));
				memcpy(&eb, b + k * sizeof(void *), sizeof(eb));
				if (f->base == VK_B_CHAR) {
					if (strcmp((const char *)ea, (const char *)eb))
						return false;
					continue;
				}
			}
			if (f->base == VK_B_VOID ? memcmp(ea, eb, 1) : !same_elem(f, ea, eb, sub))
				return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------ */

static const char *const test_arg[] = { "value" };
static const trace_func_sig test_sig = { "vkschema.test", 1, (const char **)test_arg };

typedef struct mem {
	char *data;
	size_t len;
	FILE *f;
} mem;

/* Writes every call of CALLS in FMT, then reads them back. */
static char *through(trace_call *calls, uint32_t n, trace_format fmt, size_t *len)
{
	mem m = { NULL, 0, NULL };
	m.f = open_memstream(&m.data, &m.len);
	trace_error err;
	trace_error_clear(&err);
	trace_writer_options opt = { .format = fmt, .quality = -1 };
	trace_writer *w = trace_writer_open_file(m.f, "mem", &opt, &err);
	trace_header h = { .version = 6 };
	if (!w || trace_writer_header(w, &h, &err) < 0)
		abort();
	for (uint32_t i = 0; i < n; i++)
		if (trace_writer_call(w, &calls[i], &err) < 0) {
			trace_error_print(&err, "test_vkschema", stderr);
			abort();
		}
	if (trace_writer_close(w, &err) < 0)
		abort();
	fclose(m.f);
	*len = m.len;
	return m.data;
}

/* The text reader's own scanner takes every line the writer wrote, as
 * libyaml reads it. */
static void fast_lines(const char *text, size_t len)
{
	char why[640];
	size_t lines, took = flowscan_agree_lines(text, len, &lines, why, sizeof(why));
	check(took == lines, "flowscan took %zu of %zu lines: %s", took, lines, why);
}

/* Frees the first n calls of an array and the array. */
static void free_calls(trace_call *calls, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		trace_call_free(&calls[i]);
	free(calls);
}

/*
 * Opens a text stream and copies up to n of its records into again[],
 * saying in *got how many; NULL if it does not open.  The copies point
 * at the reader's signatures: close it only when done with them.
 */
static trace_reader *read_text(const char *text, size_t len, trace_call *again, uint32_t n,
			       uint32_t *got)
{
	trace_error err;
	trace_error_clear(&err);
	trace_reader *r = trace_reader_open_memory(text, len, "text", &err);
	trace_call *c;
	*got = 0;
	while (r && *got < n && trace_reader_next(r, &c, &err) == 1) {
		trace_call_init(&again[*got]);
		trace_call_copy(&again[*got], c);
		(*got)++;
	}
	return r;
}

static void test_every_struct_round_trips(void)
{
	uint32_t n = vk_nstructs;
	trace_call *calls = calloc(n, sizeof(*calls));
	uint8_t **orig = calloc(n, sizeof(*orig));
	trace_arena fill;
	trace_arena_init(&fill);
	for (uint32_t i = 0; i < n; i++) {
		const vk_struct_info *s = vk_structs[i];
		orig[i] = trace_arena_alloc(&fill, s->size);
		fill_struct(s, &fill, orig[i], 0);
		trace_call_init(&calls[i]);
		calls[i].no = i;
		calls[i].sig = &test_sig;
		calls[i].args = trace_call_values(&calls[i], 1);
		vk_encode_struct(s, &calls[i].arena, &calls[i].args[0], orig[i]);
	}
	/* C -> text -> binary */
	size_t tlen;
	char *text = through(calls, n, TRACE_FMT_TEXT, &tlen);
	fast_lines(text, tlen);
	trace_call *again = calloc(n, sizeof(*again));
	uint32_t got = 0;
	trace_reader *r = read_text(text, tlen, again, n, &got);
	check(r != NULL, "the text of every struct reads");
	check(got == n, "every struct comes back from text (%u of %u)", got, n);
	size_t blen;
	char *bin = through(again, got, TRACE_FMT_RAW, &blen);
	trace_error err;
	trace_error_clear(&err);
	trace_reader *rb = trace_reader_open_memory(bin, blen, "binary", &err);
	check(rb != NULL, "the binary of every struct reads");
	uint32_t same = 0;
	trace_arena out;
	trace_arena_init(&out);
	for (uint32_t i = 0; rb && i < got; i++) {
		trace_call *c;
		if (trace_reader_next(rb, &c, &err) != 1) {
			check(false, "binary record %u", i);
			break;
		}
		const vk_struct_info *s = vk_structs[i];
		uint8_t *back = trace_arena_alloc(&out, s->size);
		int rc = vk_decode_struct(s, &out, &c->args[0], back, &err);
		if (rc < 0)
			trace_error_print(&err, "test_vkschema", stderr);
		bool ok = rc == 0 && same_struct(s, orig[i], back, s->sig.name);
		check(ok, "%s: C -> text -> binary -> C gives back the same values", s->sig.name);
		same += ok;
		trace_arena_reset(&out);
	}
	printf("test_vkschema: %u of %u structs round trip (text %zu bytes, binary %zu bytes)\n",
	       same, n, tlen, blen);
	trace_arena_free(&out);
	if (r)
		trace_reader_close(r);
	if (rb)
		trace_reader_close(rb);
	free_calls(calls, n);
	free_calls(again, got);
	free(orig);
	free(text);
	free(bin);
	trace_arena_free(&fill);
}

/*
 * Every command, its parameters filled as a struct of them would be, as
 * a capture writes it: its text (untagged, the schema typing it) reads
 * back into the same bytes, signatures included: those that size an
 * array through a pointer (pPropertyCount) or by a member of another
 * parameter's struct (pAllocateInfo->descriptorSetCount) too.
 */
static void test_every_command_text_is_its_binary(void)
{
	trace_call *calls = calloc(vk_ncommands, sizeof(*calls));
	trace_arena fill;
	trace_arena_init(&fill);
	uint32_t n = 0;
	for (uint32_t i = 0; i < vk_ncommands; i++) {
		const vk_command_info *cmd = vk_commands[i];
		vk_struct_info as = { { cmd->sig.name, cmd->sig.nargs, cmd->sig.arg_names },
				      cmd->args_size, -1, 0, cmd->nparams, cmd->params, 0 };
		uint8_t *args = trace_arena_alloc(&fill, cmd->args_size);
		memset(args, 0, cmd->args_size);
		fill_struct(&as, &fill, args, 0);
		trace_call_init(&calls[n]);
		calls[n].no = n;
		vk_encode_call(cmd, &calls[n], args);
		n++;
	}
	size_t blen, tlen, again_len;
	char *bin = through(calls, n, TRACE_FMT_RAW, &blen);
	char *text = through(calls, n, TRACE_FMT_TEXT, &tlen);
	fast_lines(text, tlen);
	trace_call *again = calloc(n, sizeof(*again));
	uint32_t got = 0;
	trace_reader *r = read_text(text, tlen, again, n, &got);
	char *back = through(again, got, TRACE_FMT_RAW, &again_len);
	check(got == n && again_len == blen && !memcmp(bin, back, blen),
	      "%u commands: binary -> text -> binary gives the same %zu bytes (%zu)", n, blen,
	      again_len);
	printf("test_vkschema: %u commands, binary %zu bytes, text %zu bytes\n", n, blen, tlen);
	if (r)
		trace_reader_close(r);
	free_calls(calls, n);
	free_calls(again, got);
	free(bin);
	free(text);
	free(back);
	trace_arena_free(&fill);
}

/*
 * A bitmask whose signature is not the schema's (another registry's, an
 * edited or damaged trace's) prints by its names alone only where the
 * schema shows the same flags for its value; either way its text reads
 * back into the same text.
 */
static char *cull_mode_text(const trace_bitmask_sig *sig, uint64_t value)
{
	const vk_command_info *cmd = vk_command_lookup("vkCmdSetCullMode");
	uint8_t args[64] = { 0 };
	trace_call c;
	trace_call_init(&c);
	vk_encode_call(cmd, &c, args);
	c.args[1].kind = TRACE_BITMASK;
	c.args[1].bm.sig = sig;
	c.args[1].bm.value = value;
	size_t len, again_len;
	char *text = through(&c, 1, TRACE_FMT_TEXT, &len);
	trace_call again;
	uint32_t got = 0;
	trace_reader *r = read_text(text, len, &again, 1, &got);
	char *back = got ? through(&again, 1, TRACE_FMT_TEXT, &again_len) : NULL;
	check(back && again_len == len && !memcmp(text, back, len),
	      "cullMode %#llx: its text reads back as the same text", (unsigned long long)value);
	if (got)
		trace_call_free(&again);
	if (r)
		trace_reader_close(r);
	trace_call_free(&c);
	free(back);
	return text;
}

static void test_bitmask_text_by_what_it_shows(void)
{
	trace_bitmask_flag other[] = { { "VK_CULL_MODE_NONE", 0 },
				       { "VK_CULL_MODE_FRONT_BIT", 1 },
				       { "VK_CULL_MODE_SIDEWAYS_BIT", 2 } };
	trace_bitmask_sig sig = { 3, other };
	char *t = cull_mode_text(&sig, 1);
	check(strstr(t, "cullMode: VK_CULL_MODE_FRONT_BIT}") != NULL,
	      "the flags it shows are the schema's: names alone");
	free(t);
	t = cull_mode_text(&sig, 3);
	check(strstr(t, "cullMode: !bitmask VK_CULL_MODE_FRONT_BIT=0x1|VK_CULL_MODE_SIDEWAYS_BIT=0x2}"),
	      "a flag the schema names otherwise: tagged, with the values");
	free(t);
	t = cull_mode_text(&sig, 0);
	check(strstr(t, "cullMode: VK_CULL_MODE_NONE}") != NULL, "zero shows its zero flag");
	free(t);
	trace_bitmask_sig first = { 2, other };
	t = cull_mode_text(&first, 3);
	check(strstr(t, "cullMode: !bitmask VK_CULL_MODE_FRONT_BIT=0x1|0x2}") != NULL,
	      "the schema's first flags, stopping before a flag the schema shows: tagged");
	free(t);
	trace_bitmask_sig front = { 1, other + 1 };
	t = cull_mode_text(&front, 0);
	check(strstr(t, "cullMode: !bitmask 0x0}") != NULL,
	      "zero where the schema would name it and this signature does not: tagged");
	free(t);
}

static void test_tables_know_the_registry(void)
{
	check(vk_nstructs > 800, "more than 800 structs (%u)", vk_nstructs);
	const vk_command_info *c = vk_command_lookup("vkCreateBuffer");
	check(c && c->nparams == 4 && c->action == VK_ACTION_CREATE && c->object &&
	      !strcmp(c->object->name, "VkBuffer"), "vkCreateBuffer creates a VkBuffer");
	c = vk_command_lookup("vkCmdDraw");
	check(c && c->action == VK_ACTION_RECORD && c->level == VK_LEVEL_DEVICE,
	      "vkCmdDraw records into a command buffer");
	c = vk_command_lookup("vkFreeCommandBuffers");
	check(c && c->action == VK_ACTION_FREE && c->object &&
	      !strcmp(c->object->name, "VkCommandBuffer"), "vkFreeCommandBuffers frees command buffers");
	c = vk_command_lookup("vkCmdPushDescriptorSetKHR");
	check(c != NULL, "extension commands are there");
	c = vk_command_lookup("vkBindBufferMemory2KHR");
	check(c && c->alias_of && !strcmp(c->alias_of, "vkBindBufferMemory2"), "aliases say what they alias");
	const vk_struct_info *s = vk_struct_lookup("VkPipelineMultisampleStateCreateInfo");
	check(s && s->fields[6].len_op == VK_LEN_SAMPLES, "pSampleMask is sized by rasterizationSamples");
	s = vk_struct_lookup("VkInstanceCreateInfo");
	check(s && s->fields[5].flags & VK_F_NULLTERM && s->fields[5].ptr == 2,
	      "ppEnabledLayerNames is an array of strings");
	check(vk_struct_by_stype(1) == s, "sType 1 is VkInstanceCreateInfo");
	const vk_handle_info *h = vk_handle_lookup("VkCommandBuffer");
	check(h && h->dispatchable && h->parent && !strcmp(h->parent, "VkCommandPool"),
	      "command buffers are dispatchable, of a command pool");
	h = vk_handle_lookup("VkBuffer");
	check(h && !h->dispatchable, "buffers are not dispatchable");
	const vk_bitmask_info *b = vk_bitmask_lookup("VkBufferUsageFlags");
	check(b && b->sig.nflags >= 9, "buffer usage bits have names");
	const vk_enum_info *e = vk_enum_lookup("VkFormat");
	check(e && e->sig.nvalues > 180, "VkFormat has every format (%u)", e ? e->sig.nvalues : 0);
}

/* The flags apitrace's dump shows of VALUE with SIG, then what is left:
 * "A|B|0x10". */
static void shown(const trace_bitmask_sig *sig, uint64_t value, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (uint32_t i = 0; i < sig->nflags; i++) {
		const trace_bitmask_flag *f = &sig->flags[i];
		if ((f->value && (value & f->value) == f->value) || (!f->value && !value)) {
			n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s|", f->name);
			value &= ~f->value;
		}
		if (!value)
			break;
	}
	snprintf(out + (n < cap ? n : cap - 1), n < cap ? cap - n : 1, "%#llx",
		 (unsigned long long)value);
}

static void test_values_carry_small_signatures(void)
{
	/* every value of every enum: a signature of it alone, by the first
	 * name the registry gives it (the name a full table showed) */
	uint32_t bad = 0, values = 0;
	for (uint32_t i = 0; i < vk_nenums; i++) {
		const vk_enum_info *e = vk_enums[i];
		for (uint32_t k = 0; k < e->sig.nvalues; k++) {
			int64_t v = e->sig.values[k].value;
			const trace_enum_sig *one = vk_enum_sig(e, v);
			uint32_t first = 0;
			while (e->sig.values[first].value != v)
				first++;
			values++;
			if (one->nvalues != 1 || one->values[0].value != v ||
			    strcmp(one->values[0].name, e->sig.values[first].name)) {
				if (bad++ < 5)
					fprintf(stderr, "%s %lld: %s\n", e->name, (long long)v,
						one->nvalues ? one->values[0].name : "(none)");
			}
		}
	}
	check(values > 2000 && bad == 0, "each of %u enum values has its own signature (%u wrong)",
	      values, bad);
	const vk_enum_info *r = vk_enum_lookup("VkResult");
	const trace_enum_sig *dev_lost = vk_enum_sig(r, -4);
	check(dev_lost->nvalues == 1 && !strcmp(dev_lost->values[0].name, "VK_ERROR_DEVICE_LOST"),
	      "a negative VkResult finds its name");
	check(!vk_enum_sig(r, 12345)->nvalues && !vk_enum_sig(NULL, 0)->nvalues,
	      "a value the type does not name has an empty signature");
	const vk_enum_info *st = vk_enum_lookup("VkStructureType");
	check(vk_enum_sig(st, 1000001000)->nvalues == 1 &&
	      !strcmp(vk_enum_sig(st, 1000001000)->values[0].name,
		      "VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR"),
	      "an extension's sType, past the dense start, finds its name");

	/* bitmasks: the first flags, up to the last the value shows, which
	 * the dump reads as it reads the whole table */
	bad = values = 0;
	for (uint32_t i = 0; i < vk_nbitmasks; i++) {
		const vk_bitmask_info *b = vk_bitmasks[i];
		for (int k = 0; k < 16; k++) {
			uint64_t v = k == 0 ? 0 : k == 1 ? ~0ull : 0;
			for (uint32_t j = 0; k > 1 && j < b->sig.nflags; j++)
				if (rnd() % 4 == 0)
					v |= b->sig.flags[j].value;
			if (k > 1 && rnd() % 4 == 0)
				v |= 1ull << (rnd() % 32);
			const trace_bitmask_sig *p = vk_bitmask_sig(b, v);
			char full[4096], part[4096];
			shown(&b->sig, v, full, sizeof(full));
			shown(p, v, part, sizeof(part));
			bool prefix = p->nflags <= b->sig.nflags && (!p->nflags || p->flags == b->sig.flags);
			/* and no longer than that: its last flag shows */
			char less[4096] = "";
			if (p->nflags) {
				trace_bitmask_sig shorter = { p->nflags - 1, p->flags };
				shown(&shorter, v, less, sizeof(less));
			}
			values++;
			if (!prefix || strcmp(full, part) || (p->nflags && !strcmp(less, full))) {
				if (bad++ < 5)
					fprintf(stderr, "%s %#llx: %s, not %s (%u flags)\n", b->name,
						(unsigned long long)v, part, full, p->nflags);
			}
		}
	}
	check(bad == 0, "of %u bitmask values each signature is the shortest that shows the "
	      "same flags (%u wrong)", values, bad);
	const vk_bitmask_info *usage = vk_bitmask_lookup("VkBufferUsageFlags");
	const trace_bitmask_sig *u = vk_bitmask_sig(usage, 0x2);
	check(u->nflags == 2 && !strcmp(u->flags[1].name, "VK_BUFFER_USAGE_TRANSFER_DST_BIT"),
	      "TRANSFER_DST carries the buffer usage flags up to it (%u)", u->nflags);

	/* what that saves: a whole VkImageCreateInfo record, signatures and
	 * all, where the full VkStructureType table alone took 35 KB */
	const vk_struct_info *s = vk_struct_lookup("VkImageCreateInfo");
	uint8_t ci[256] = { 0 };
	int32_t stype = 14, type = 1, format = 37, samples = 1, usage_bits = 0x11;
	memcpy(ci + s->fields[0].offset, &stype, 4);
	for (uint32_t i = 0; i < s->nfields; i++) {
		const char *fn = s->fields[i].name;
		int32_t *to = (int32_t *)(ci + s->fields[i].offset);
		if (!strcmp(fn, "imageType"))
			*to = type;
		else if (!strcmp(fn, "format"))
			*to = format;
		else if (!strcmp(fn, "samples"))
			*to = samples;
		else if (!strcmp(fn, "usage"))
			*to = usage_bits;
	}
	trace_call c;
	trace_call_init(&c);
	c.sig = &test_sig;
	c.args = trace_call_values(&c, 1);
	vk_encode_struct(s, &c.arena, &c.args[0], ci);
	size_t len;
	char *bytes = through(&c, 1, TRACE_FMT_RAW, &len);
	check(len < 1500, "a VkImageCreateInfo record takes %zu bytes, signatures included", len);
	printf("test_vkschema: one VkImageCreateInfo, signatures and all: %zu bytes\n", len);
	free(bytes);
	trace_call_free(&c);
}

/* ------------------------------------------------------------------ */
/* Decoding (for replay and trim) refuses what the registry does not
 * define: a value the encoder keeps, and the text round trips, but that
 * no driver may be handed. */

static int decode_image_info(int32_t stype, int32_t type, uint32_t usage, int32_t next_stype,
			     trace_error *err)
{
	const vk_struct_info *s = vk_struct_lookup("VkImageCreateInfo");
	uint8_t ci[256] = { 0 };
	struct { int32_t sType; void *pNext; } next = { next_stype, NULL };
	memcpy(ci + s->fields[0].offset, &stype, 4);
	for (uint32_t i = 0; i < s->nfields; i++) {
		const char *fn = s->fields[i].name;
		if (!strcmp(fn, "imageType"))
			memcpy(ci + s->fields[i].offset, &type, 4);
		else if (!strcmp(fn, "samples"))
			memcpy(ci + s->fields[i].offset, &(int32_t){ 1 }, 4);
		else if (!strcmp(fn, "usage"))
			memcpy(ci + s->fields[i].offset, &usage, 4);
		else if (!strcmp(fn, "pNext") && next_stype)
			memcpy(ci + s->fields[i].offset, &(void *){ &next }, sizeof(void *));
	}
	trace_arena a;
	trace_arena_init(&a);
	trace_value v;
	vk_encode_struct(s, &a, &v, ci);
	uint8_t out[256] = { 0 };
	trace_error_clear(err);
	int rc = vk_decode_struct(s, &a, &v, out, err);
	trace_arena_free(&a);
	return rc;
}

static void test_decoding_refuses_what_the_registry_lacks(void)
{
	trace_error err;
	check(decode_image_info(14, 1, 0x11, 0, &err) == 0, "a VkImageCreateInfo decodes: %s",
	      err.msg);
	check(decode_image_info(14, 7, 0x11, 0, &err) < 0 &&
	      strstr(err.msg, "VkImageCreateInfo.imageType: 7 is no VkImageType value"),
	      "an imageType of 7 is refused: %s", err.msg);
	check(decode_image_info(14, 1, 0x80000011u, 0, &err) < 0 &&
	      strstr(err.msg, "VkImageCreateInfo.usage: 0x80000011 has bits (0x80000000)"),
	      "a usage bit the registry lacks is refused: %s", err.msg);
	check(decode_image_info(12, 1, 0x11, 0, &err) < 0 && strstr(err.msg, "sType"),
	      "another struct's sType is refused: %s", err.msg);
	check(decode_image_info(14, 1, 0x11, 0x7ffffff0, &err) < 0 &&
	      strstr(err.msg, "a struct this build's registry does not define"),
	      "a chained sType the registry lacks is refused: %s", err.msg);
}

/* ------------------------------------------------------------------ */
/* The update pseudo-calls: a sparse update made from a shadow writes back
 * exactly the live bytes; malformed ones are refused. */

static void apply_run(void *ctx, uint64_t off, const uint8_t *data, uint64_t len)
{
	memcpy((uint8_t *)ctx + off, data, len);
}

static trace_call sparse_call(trace_value *a, uint64_t off, const uint8_t *mask, size_t mlen,
			      const uint8_t *data, size_t dlen)
{
	a[0] = (trace_value){ .kind = TRACE_POINTER, .u = 0x1234 };
	a[1] = (trace_value){ .kind = TRACE_UINT, .u = off };
	a[2] = (trace_value){ .kind = TRACE_BLOB, .len = (uint32_t)mlen, .blob = mask };
	a[3] = (trace_value){ .kind = TRACE_BLOB, .len = (uint32_t)dlen, .blob = data };
	trace_call c = { .sig = &vk_update_sparse_sig, .args = a };
	return c;
}

/* A run as vk_update_runs gives it, against a mask read a bit at a time. */
typedef struct runs_seen {
	uint64_t off[512], len[512];
	const uint8_t *data[512];
	size_t n;
} runs_seen;

static void note_run(void *ctx, uint64_t off, const uint8_t *data, uint64_t len)
{
	runs_seen *r = ctx;
	if (r->n < 512) {
		r->off[r->n] = off;
		r->len[r->n] = len;
		r->data[r->n] = data;
	}
	r->n++;
}

static void test_sparse_update_runs_are_the_masks_runs(void)
{
	static uint8_t mask[40], data[4 * 320];
	static runs_seen got, listed;
	int bad = 0, nruns_bad = 0, list_bad = 0;
	trace_arena a;
	trace_arena_init(&a);
	/* lengths 1 to 40 bytes (whole 64-bit words and not), masks empty,
	 * full, alternating, random, ending on a set bit */
	for (int t = 0; t < 2000 && !bad; t++) {
		size_t mlen = 1 + (size_t)t % 40;
		for (size_t i = 0; i < mlen; i++) {
			int kind = t / 40 % 5;
			mask[i] = kind == 0 ? 0 : kind == 1 ? 0xff : kind == 2 ? 0x55 : (uint8_t)rnd();
		}
		if (t % 3 == 0)
			mask[mlen - 1] |= 0x80;
		uint64_t words = 0;
		for (size_t i = 0; i < 8 * mlen; i++)
			words += mask[i / 8] >> (i % 8) & 1;
		vk_update u = {.object = 1, .offset = 4096, .data = data, .len = 4 * words,
			       .mask = mask, .mask_len = mlen};
		got.n = 0;
		vk_update_runs(&u, note_run, &got);
		size_t n = 0;
		uint64_t k = 0;
		for (uint64_t i = 0; i < 8 * mlen;) {
			if (!(mask[i / 8] >> (i % 8) & 1)) {
				i++;
				continue;
			}
			uint64_t j = i + 1;
			while (j < 8 * mlen && mask[j / 8] >> (j % 8) & 1)
				j++;
			if (n >= got.n || got.off[n] != 4096 + 4 * i || got.len[n] != 4 * (j - i) ||
			    got.data[n] != data + 4 * k)
				bad = t + 1;
			n++;
			k += j - i;
			i = j;
		}
		if (n != got.n)
			bad = t + 1;
		/* counted, and counted no further than a word past the most asked */
		uint64_t most = (uint64_t)t % 7;
		if (!nruns_bad && (vk_update_nruns(&u, UINT64_MAX) != n ||
		    (vk_update_nruns(&u, most) > most) != (n > most)))
			nruns_bad = t + 1;
		/* listed ahead: the same runs, from the list */
		vk_update l = u;
		vk_update_list(&l, &a);
		listed.n = 0;
		vk_update_runs(&l, note_run, &listed);
		if (!list_bad && (!l.runs || l.nruns != n || vk_update_nruns(&l, 0) != n ||
				  listed.n != got.n ||
				  memcmp(listed.off, got.off, n * 8) || memcmp(listed.len, got.len, n * 8) ||
				  memcmp(listed.data, got.data, n * sizeof(listed.data[0]))))
			list_bad = t + 1;
		trace_arena_reset(&a);
	}
	trace_arena_free(&a);
	check(!list_bad, "vk_update_list: the runs listed are those found (first wrong: mask %d)",
	      list_bad - 1);
	check(!bad, "the runs of 2,000 masks of 1 to 40 bytes are those a bit at a time "
		    "finds, in order, with their data (first wrong: mask %d)", bad - 1);
	check(!nruns_bad, "vk_update_nruns counts them (first wrong: mask %d)", nruns_bad - 1);
	vk_update dense = {.object = 1, .offset = 4096, .data = data, .len = 12};
	check(vk_update_nruns(&dense, 0) == 1, "a dense update is one run");
}

static void test_sparse_updates_write_back_what_changed(void)
{
	enum { N = 1003 }; /* words: not a multiple of 8 */
	/* each its own allocation of its exact size: the sanitizer build sees
	 * a store past one */
	uint8_t *live = malloc(4 * N), *before = malloc(4 * N), *replayed = malloc(8 + 4 * N);
	uint8_t *old[2], *mask[2], *data[2];
	for (int i = 0; i < 2; i++) {
		old[i] = malloc(4 * N);
		mask[i] = malloc((N + 7) / 8);
		data[i] = malloc(4 * N);
	}
	/* patterns: nothing changed, everything, one word in three (a vertex
	 * member), random words, the last word only */
	for (int p = 0; p < 5; p++) {
		for (size_t i = 0; i < 4 * N; i++)
			before[i] = (uint8_t)rnd();
		memcpy(live, before, 4 * N);
		uint64_t want_end = 8; /* one past the last word that changed */
		for (size_t w = 0; w < N; w++) {
			bool change = p == 1 || (p == 2 && w % 3 == 1) || (p == 3 && rnd() % 5 == 0) ||
				      (p == 4 && w == N - 1);
			if (change) {
				live[4 * w + rnd() % 4] ^= (uint8_t)(1 + rnd() % 255);
				want_end = 8 + 4 * (w + 1);
			}
		}
		size_t k[2];
		memcpy(old[0], before, 4 * N);
		memcpy(old[1], before, 4 * N);
		k[0] = vk_update_gather(live, old[0], N, mask[0], data[0]);
		k[1] = vk_update_gather_plain(live, old[1], N, mask[1], data[1]);
		check(k[0] == k[1] && !memcmp(mask[0], mask[1], (N + 7) / 8) &&
		      !memcmp(data[0], data[1], 4 * k[0]),
		      "pattern %d: the vector and the plain gather agree", p);
		check(!memcmp(old[0], live, 4 * N) && !memcmp(old[1], live, 4 * N),
		      "pattern %d: the shadow becomes the live bytes", p);
		trace_value a[4];
		trace_call c = sparse_call(a, 8, mask[0], (N + 7) / 8, data[0], 4 * k[0]);
		vk_update u;
		trace_error err;
		trace_error_clear(&err);
		check(vk_update_read(&c, &u, &err) == 0, "pattern %d reads: %s", p, err.msg);
		memcpy(replayed + 8, before, 4 * N);
		vk_update_runs(&u, apply_run, replayed);
		check(!memcmp(replayed + 8, live, 4 * N),
		      "pattern %d: the runs written over the old bytes make the live ones", p);
		check(u.end == want_end, "pattern %d: the span ends after the last word written", p);
		/* vk_update_copy, from the mask and from a list */
		trace_arena ar;
		trace_arena_init(&ar);
		for (int listed = 0; listed < 2; listed++) {
			vk_update l = u;
			if (listed)
				vk_update_list(&l, &ar);
			memcpy(replayed + 8, before, 4 * N);
			vk_update_copy(&l, replayed);
			check(!memcmp(replayed + 8, live, 4 * N),
			      "pattern %d: vk_update_copy %s makes the live bytes", p,
			      listed ? "of the runs listed" : "of the mask");
		}
		trace_arena_free(&ar);
	}
	free(live);
	free(before);
	free(replayed);
	for (int i = 0; i < 2; i++) {
		free(old[i]);
		free(mask[i]);
		free(data[i]);
	}
	/* malformed: a mask that sets more words than the data has, a
	 * dense update without data, an offset that wraps */
	uint8_t m = 0x07, d[8] = {0};
	trace_value a[4];
	trace_call c = sparse_call(a, 0, &m, 1, d, 8);
	vk_update u;
	trace_error err;
	trace_error_clear(&err);
	check(vk_update_read(&c, &u, &err) < 0 && strstr(err.msg, "sets 3 words"),
	      "a mask of 3 words over 8 bytes of data is refused: %s", err.msg);
	trace_call dense = { .sig = &vk_update_sig, .args = a };
	a[2].kind = TRACE_UINT;
	trace_error_clear(&err);
	check(vk_update_read(&dense, &u, &err) < 0 && strstr(err.msg, "malformed tracekit.update:"),
	      "a dense update whose data is no blob is refused: %s", err.msg);
	a[1].u = UINT64_MAX - 2;
	a[2] = (trace_value){ .kind = TRACE_BLOB, .len = 8, .blob = d };
	trace_error_clear(&err);
	check(vk_update_read(&dense, &u, &err) < 0 && strstr(err.msg, "overflow"),
	      "an update whose bytes wrap past 2^64 is refused: %s", err.msg);
	check(vk_is_update("tracekit.update") && vk_is_update("tracekit.update.sparse") &&
	      !vk_is_update("tracekit.frame"), "the update calls are known by name");
}

/* vk_sync_walk: a batch's waits, then its signals, with the values of its
 * timeline chain (writable, as --loop shifts them), the fence last; an
 * acquire that timed out signals nothing. */
typedef struct seen {
	vk_sync_use u[8];
	int n;
} seen;

static void note_use(void *ctx, const vk_sync_use *u)
{
	seen *s = ctx;
	if (s->n < 8)
		s->u[s->n++] = *u;
	if (u->value)
		*u->value += 100;
}

static void test_sync_walk_sees_every_use(void)
{
	VkSemaphore wait[2] = {(VkSemaphore)(uintptr_t)0x11, (VkSemaphore)(uintptr_t)0x12};
	VkSemaphore signal[1] = {(VkSemaphore)(uintptr_t)0x21};
	uint64_t wv[2] = {5, 6}, sv[1] = {7};
	VkTimelineSemaphoreSubmitInfo tl = {
		.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
		.waitSemaphoreValueCount = 2, .pWaitSemaphoreValues = wv,
		.signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = sv,
	};
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &tl,
			   .waitSemaphoreCount = 2, .pWaitSemaphores = wait,
			   .signalSemaphoreCount = 1, .pSignalSemaphores = signal};
	vk_args_vkQueueSubmit a = {.queue = (VkQueue)(uintptr_t)0x77, .submitCount = 1,
				   .pSubmits = &si, .fence = (VkFence)(uintptr_t)0x99};
	seen s = {0};
	check(vk_sync_command(vk_command_lookup("vkQueueSubmit")) == VK_SYNC_QUEUE_SUBMIT &&
	      vk_sync_command(vk_command_lookup("vkQueueSubmit2KHR")) == VK_SYNC_QUEUE_SUBMIT2 &&
	      vk_sync_command(vk_command_lookup("vkCmdDraw")) == VK_SYNC_NONE,
	      "vk_sync_command knows a command by its name or its alias's");
	vk_sync_walk(VK_SYNC_QUEUE_SUBMIT, &a, VK_SUCCESS, note_use, &s);
	check(s.n == 4 && s.u[0].handle == 0x11 && s.u[0].op == VK_SYNC_WAIT &&
	      s.u[1].handle == 0x12 && s.u[2].handle == 0x21 && s.u[2].op == VK_SYNC_SIGNAL &&
	      s.u[3].fence && s.u[3].handle == 0x99 && s.u[3].op == VK_SYNC_SIGNAL,
	      "a submit: waits, signals, then the fence (%d uses)", s.n);
	check(s.u[0].queue == 0x77 && s.u[2].queue == 0x77 && s.u[3].queue == 0x77,
	      "a submit's uses name its queue");
	check(wv[0] == 105 && wv[1] == 106 && sv[0] == 107,
	      "a submit's timeline values are written through the walk");
	vk_args_vkAcquireNextImageKHR acq = {.semaphore = (VkSemaphore)(uintptr_t)0x31,
					     .fence = (VkFence)(uintptr_t)0x32};
	s.n = 0;
	vk_sync_walk(VK_SYNC_ACQUIRE, &acq, VK_TIMEOUT, note_use, &s);
	check(s.n == 0, "an acquire that timed out signals nothing");
	vk_sync_walk(VK_SYNC_ACQUIRE, &acq, VK_SUBOPTIMAL_KHR, note_use, &s);
	check(s.n == 2 && s.u[0].type == VK_SYNC_BINARY && s.u[1].fence,
	      "an acquire signals its semaphore and its fence");
	check(s.n == 2 && !s.u[0].queue && !s.u[1].queue, "an acquire's uses name no queue");
}

/* vkCreateRenderPass's create info in the second form: every value the
 * first form gives, each NULL array NULL, what the first form lacks 0. */
static void test_render_pass_second_form(void)
{
	VkAttachmentDescription att[2] = {
		{0, VK_FORMAT_R8G8B8A8_UNORM, VK_SAMPLE_COUNT_1_BIT, VK_ATTACHMENT_LOAD_OP_CLEAR,
		 VK_ATTACHMENT_STORE_OP_STORE, VK_ATTACHMENT_LOAD_OP_DONT_CARE,
		 VK_ATTACHMENT_STORE_OP_DONT_CARE, VK_IMAGE_LAYOUT_UNDEFINED,
		 VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL},
		{0, VK_FORMAT_D32_SFLOAT, VK_SAMPLE_COUNT_4_BIT, VK_ATTACHMENT_LOAD_OP_LOAD,
		 VK_ATTACHMENT_STORE_OP_DONT_CARE, VK_ATTACHMENT_LOAD_OP_CLEAR,
		 VK_ATTACHMENT_STORE_OP_STORE, VK_IMAGE_LAYOUT_GENERAL,
		 VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL},
	};
	VkAttachmentReference color = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
	VkAttachmentReference resolve = {1, VK_IMAGE_LAYOUT_GENERAL};
	VkAttachmentReference depth = {1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
	uint32_t preserve = 1;
	VkSubpassDescription sub[2] = {
		{.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS, .colorAttachmentCount = 1,
		 .pColorAttachments = &color, .pResolveAttachments = &resolve,
		 .pDepthStencilAttachment = &depth},
		{.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS, .inputAttachmentCount = 1,
		 .pInputAttachments = &color, .preserveAttachmentCount = 1,
		 .pPreserveAttachments = &preserve},
	};
	VkSubpassDependency dep = {0, 1, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
				   VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
				   VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
				   VK_ACCESS_INPUT_ATTACHMENT_READ_BIT, VK_DEPENDENCY_BY_REGION_BIT};
	VkRenderPassCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
		.attachmentCount = 2, .pAttachments = att,
		.subpassCount = 2, .pSubpasses = sub,
		.dependencyCount = 1, .pDependencies = &dep,
	};
	VkRenderPassCreateInfo2 *c2 = vk_render_pass2_of(&ci);
	check(c2->sType == VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO_2 && !c2->pNext,
	      "render pass 2: sType %d", c2->sType);
	check(c2->attachmentCount == 2 && c2->subpassCount == 2 && c2->dependencyCount == 1,
	      "render pass 2: counts");
	for (uint32_t i = 0; i < 2; i++) {
		const VkAttachmentDescription2 *a = &c2->pAttachments[i];
		check(a->sType == VK_STRUCTURE_TYPE_ATTACHMENT_DESCRIPTION_2 && !a->pNext &&
		      a->format == att[i].format && a->samples == att[i].samples &&
		      a->loadOp == att[i].loadOp && a->storeOp == att[i].storeOp &&
		      a->stencilLoadOp == att[i].stencilLoadOp &&
		      a->stencilStoreOp == att[i].stencilStoreOp &&
		      a->initialLayout == att[i].initialLayout &&
		      a->finalLayout == att[i].finalLayout, "render pass 2: attachment %u", i);
	}
	const VkSubpassDescription2 *s0 = &c2->pSubpasses[0], *s1 = &c2->pSubpasses[1];
	check(s0->colorAttachmentCount == 1 && s0->pColorAttachments[0].attachment == 0 &&
	      s0->pColorAttachments[0].layout == color.layout &&
	      s0->pColorAttachments[0].sType == VK_STRUCTURE_TYPE_ATTACHMENT_REFERENCE_2,
	      "render pass 2: subpass 0's colour");
	check(s0->pResolveAttachments[0].attachment == 1 &&
	      s0->pDepthStencilAttachment->attachment == 1 &&
	      s0->pDepthStencilAttachment->layout == depth.layout,
	      "render pass 2: subpass 0's resolve and depth");
	check(!s0->pInputAttachments && !s0->pPreserveAttachments && !s0->viewMask,
	      "render pass 2: subpass 0's missing arrays stay NULL");
	check(s1->inputAttachmentCount == 1 && s1->pInputAttachments[0].attachment == 0 &&
	      !s1->pColorAttachments && !s1->pResolveAttachments &&
	      !s1->pDepthStencilAttachment && s1->preserveAttachmentCount == 1 &&
	      s1->pPreserveAttachments[0] == 1, "render pass 2: subpass 1");
	const VkSubpassDependency2 *d = c2->pDependencies;
	check(d->sType == VK_STRUCTURE_TYPE_SUBPASS_DEPENDENCY_2 && d->srcSubpass == 0 &&
	      d->dstSubpass == 1 && d->srcStageMask == dep.srcStageMask &&
	      d->dstStageMask == dep.dstStageMask && d->srcAccessMask == dep.srcAccessMask &&
	      d->dstAccessMask == dep.dstAccessMask &&
	      d->dependencyFlags == dep.dependencyFlags && !d->viewOffset,
	      "render pass 2: dependency");
	free(c2);

	VkRenderPassCreateInfo bare = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
				       .attachmentCount = 3};
	c2 = vk_render_pass2_of(&bare);
	check(c2->attachmentCount == 3 && !c2->pAttachments && !c2->pSubpasses &&
	      !c2->pDependencies, "render pass 2: NULL arrays stay NULL, counts as given");
	free(c2);
	check(!vk_render_pass2_of(NULL), "render pass 2: of NULL");
}

typedef struct seen_descriptors {
	uint32_t n;
	vk_descriptor d[8];
	VkDescriptorImageInfo image[8];
	VkDescriptorBufferInfo buffer[8];
	uint64_t view[8];
} seen_descriptors;

static void see_descriptor(void *ctx, const vk_descriptor *d)
{
	seen_descriptors *s = ctx;
	if (s->n == 8)
		return;
	s->d[s->n] = *d;
	if (d->image)
		s->image[s->n] = *d->image;
	if (d->buffer)
		s->buffer[s->n] = *d->buffer;
	if (d->texel_view)
		s->view[s->n] = *d->texel_view;
	s->n++;
}

/* A write's and a template's descriptors come one by one with what their
 * type holds, and nothing from an array their type does not read. */
static void test_descriptors_one_by_one(void)
{
	VkDescriptorBufferInfo bi[2] = {{(VkBuffer)(uintptr_t)0x100, 16, 32},
					{(VkBuffer)(uintptr_t)0x200, 0, VK_WHOLE_SIZE}};
	VkWriteDescriptorSet w = {
		.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstBinding = 3,
		.dstArrayElement = 1, .descriptorCount = 2,
		.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = bi,
		/* ignored for a buffer type: never read */
		.pImageInfo = (const VkDescriptorImageInfo *)(uintptr_t)8,
		.pTexelBufferView = (const VkBufferView *)(uintptr_t)8,
	};
	seen_descriptors s = {0};
	vk_write_descriptors(&w, see_descriptor, &s);
	check(s.n == 2 && s.d[0].binding == 3 && s.d[0].element == 1 && s.d[1].element == 2 &&
	      s.d[0].type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, "write: 2 buffer descriptors");
	check(!s.d[0].image && !s.d[0].texel_view && s.d[1].buffer &&
	      s.buffer[1].buffer == bi[1].buffer && s.buffer[0].offset == 16,
	      "write: the buffer infos, nothing else");

	VkBufferView views[1] = {(VkBufferView)(uintptr_t)0x300};
	VkWriteDescriptorSet t = {
		.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .descriptorCount = 1,
		.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, .pTexelBufferView = views,
	};
	memset(&s, 0, sizeof(s));
	vk_write_descriptors(&t, see_descriptor, &s);
	check(s.n == 1 && s.d[0].texel_view && s.view[0] == 0x300 && !s.d[0].buffer,
	      "write: a texel view's handle");
	VkWriteDescriptorSet inl = {
		.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .descriptorCount = 64,
		.descriptorType = VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK,
	};
	memset(&s, 0, sizeof(s));
	vk_write_descriptors(&inl, see_descriptor, &s);
	check(s.n == 1 && !s.d[0].image && !s.d[0].buffer && !s.d[0].texel_view,
	      "write: an inline block is one descriptor holding none");

	/* a template: an image info at 4 (unaligned), a view at 40 */
	VkDescriptorUpdateTemplateEntry e[2] = {
		{5, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 4, 0},
		{6, 2, 1, VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, 40, 0},
	};
	uint8_t data[48] = {0};
	VkDescriptorImageInfo ii = {0, (VkImageView)(uintptr_t)0x400, VK_IMAGE_LAYOUT_GENERAL};
	uint64_t view = 0x500;
	memcpy(data + 4, &ii, sizeof(ii));
	memcpy(data + 40, &view, sizeof(view));
	memset(&s, 0, sizeof(s));
	check(vk_template_descriptors(e, 2, data, sizeof(data), see_descriptor, &s),
	      "template: walked");
	check(s.n == 2 && s.d[0].binding == 5 && s.d[0].image &&
	      s.image[0].imageView == ii.imageView && s.image[0].imageLayout == VK_IMAGE_LAYOUT_GENERAL,
	      "template: the image info");
	check(s.d[1].binding == 6 && s.d[1].element == 2 && s.d[1].texel_view && s.view[1] == 0x500,
	      "template: the texel view");
	memset(&s, 0, sizeof(s));
	check(!vk_template_descriptors(e, 2, data, 40, see_descriptor, &s) && s.n == 1,
	      "template: a descriptor past pData's end is not given");
}

/*
 * A pointer the specification says is ignored is neither followed when
 * written nor when read: Chromium's ANGLE gave a pipeline without
 * tessellation stages a pTessellationState pointing at another struct,
 * and the replay refused the record for its sType.
 */
static void test_ignored_pointers_are_not_followed(void)
{
	const vk_struct_info *s = vk_struct_lookup("VkGraphicsPipelineCreateInfo");
	const vk_struct_info *app = vk_struct_lookup("VkApplicationInfo");
	VkApplicationInfo other = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO };
	VkPipelineShaderStageCreateInfo stage = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
		.stage = VK_SHADER_STAGE_VERTEX_BIT, .pName = "main" };
	VkGraphicsPipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, .stageCount = 1,
		.pStages = &stage, .pTessellationState = (const void *)&other };
	uint32_t k = 0;
	while (k < s->nfields && strcmp(s->fields[k].name, "pTessellationState"))
		k++;
	trace_arena a;
	trace_arena_init(&a);
	trace_value v;
	vk_encode_struct(s, &a, &v, &ci);
	check(v.st.members[k].kind == TRACE_NULL, "pTessellationState without tessellation stages is written null");
	/* as an older capture holds it: the struct it pointed at */
	trace_value *one = trace_arena_alloc(&a, sizeof(*one));
	vk_encode_struct(app, &a, one, &other);
	v.st.members[k].kind = TRACE_ARRAY;
	v.st.members[k].len = 1;
	v.st.members[k].items = one;
	VkGraphicsPipelineCreateInfo back;
	memset(&back, 0xab, sizeof(back));
	trace_error err;
	trace_error_clear(&err);
	int rc = vk_decode_struct(s, &a, &v, &back, &err);
	if (rc < 0)
		trace_error_print(&err, "test_vkschema", stderr);
	check(rc == 0 && !back.pTessellationState, "and read null from a record that holds what it pointed at");
	/* a uniform buffer write's image array */
	const vk_struct_info *ws = vk_struct_lookup("VkWriteDescriptorSet");
	VkDescriptorBufferInfo buf = { .range = 16 };
	uint8_t junk[64];
	memset(junk, 0x5a, sizeof(junk));
	VkWriteDescriptorSet w = { .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .descriptorCount = 1,
				   .descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
				   .pImageInfo = (const void *)junk, .pBufferInfo = &buf,
				   .pTexelBufferView = (const void *)junk };
	vk_encode_struct(ws, &a, &v, &w);
	uint32_t nulls = 0, arrays = 0;
	for (uint32_t i = 0; i < ws->nfields; i++) {
		nulls += v.st.members[i].kind == TRACE_NULL && ws->fields[i].ptr;
		arrays += v.st.members[i].kind == TRACE_ARRAY;
	}
	check(nulls == 3 && arrays == 1, "a uniform buffer write keeps pBufferInfo alone (%u null, %u arrays)",
	      nulls, arrays);
	trace_arena_free(&a);
}

/* A struct whose sType is another's (zink's stale vertex attributes):
 * its pNext, which may point anywhere, is not followed. */
static void test_wrong_stype_pnext_not_followed(void)
{
	const vk_struct_info *s = vk_struct_lookup("VkVertexInputAttributeDescription2EXT");
	VkVertexInputAttributeDescription2EXT d = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.pNext = (void *)(uintptr_t)8,  /* read, it faults */
		.location = 12, .binding = 2, .format = VK_FORMAT_R32G32_SFLOAT };
	uint32_t k = 0;
	while (k < s->nfields && strcmp(s->fields[k].name, "pNext"))
		k++;
	trace_arena a;
	trace_arena_init(&a);
	trace_value v;
	vk_encode_struct(s, &a, &v, &d);
	check(k < s->nfields && v.st.members[k].kind == TRACE_NULL,
	      "a pNext beside a wrong sType is written null, not followed");
	check(v.st.members[0].en.value == VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
	      "the sType is written as the program gave it");
	trace_arena_free(&a);
}

/* ------------------------------------------------------------------ */
/* A graphics pipeline's states the specification ignores. */

/* Every pointer of a VkGraphicsPipelineCreateInfo that may be ignored. */
static const char *const gp_pointers[] = {
	"pStages", "pVertexInputState", "pInputAssemblyState", "pTessellationState",
	"pViewportState", "pRasterizationState", "pMultisampleState", "pDepthStencilState",
	"pColorBlendState",
};

static const vk_field *gp_field(const char *name)
{
	const vk_struct_info *s = vk_struct_lookup("VkGraphicsPipelineCreateInfo");
	for (uint32_t i = 0; i < s->nfields; i++)
		if (!strcmp(s->fields[i].name, name))
			return &s->fields[i];
	return NULL;
}

static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

/*
 * CI, whose pointers all point at structs of their types, with those
 * named in IGNORED aimed instead at another struct (zeroed past its
 * sType): those must be written null and read null from a record that
 * holds what they pointed at, as an older capture does; the others
 * written and read as what they point at.
 */
static void gp_check(const char *what, VkGraphicsPipelineCreateInfo ci, const char *ignored)
{
	const vk_struct_info *s = vk_struct_lookup("VkGraphicsPipelineCreateInfo");
	const vk_struct_info *app = vk_struct_lookup("VkApplicationInfo");
	static uint64_t other[64];
	const VkStructureType app_type = VK_STRUCTURE_TYPE_APPLICATION_INFO;
	memset(other, 0, sizeof(other));
	memcpy(other, &app_type, sizeof(app_type));
	size_t n = sizeof(gp_pointers) / sizeof(gp_pointers[0]);
	for (size_t i = 0; i < n; i++) {
		const vk_field *f = gp_field(gp_pointers[i]);
		const void *q = other;
		if (listed(ignored, gp_pointers[i]))
			memcpy((uint8_t *)&ci + f->offset, &q, sizeof(q));
	}
	trace_arena a;
	trace_arena_init(&a);
	trace_value v;
	vk_encode_struct(s, &a, &v, &ci);
	trace_value *one = trace_arena_alloc(&a, sizeof(*one));
	vk_encode_struct(app, &a, one, other);
	for (size_t i = 0; i < n; i++) {
		const vk_field *f = gp_field(gp_pointers[i]);
		trace_value *m = &v.st.members[f - s->fields];
		bool ign = listed(ignored, gp_pointers[i]);
		check(m->kind == (ign ? TRACE_NULL : TRACE_ARRAY), "%s: %s written %s", what,
		      f->name, ign ? "null" : "as what it points at");
		if (ign) {
			m->kind = TRACE_ARRAY;
			m->len = 1;
			m->items = one;
		}
	}
	/* zeroed, as a replay's arguments are: a condition read before
	 * what it reads was decoded sees no dynamic state, no stages */
	VkGraphicsPipelineCreateInfo back;
	memset(&back, 0, sizeof(back));
	trace_error err;
	trace_error_clear(&err);
	int rc = vk_decode_struct(s, &a, &v, &back, &err);
	if (rc < 0)
		trace_error_print(&err, "test_vkschema", stderr);
	check(rc == 0, "%s: a record holding what the ignored pointers pointed at reads", what);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const vk_field *f = gp_field(gp_pointers[i]);
		const void *q;
		memcpy(&q, (const uint8_t *)&back + f->offset, sizeof(q));
		bool ign = listed(ignored, gp_pointers[i]);
		check(ign ? !q : q != NULL, "%s: %s read %s", what, f->name,
		      ign ? "null" : "as what it points at");
	}
	trace_arena_free(&a);
}

/*
 * vkCreateGraphicsPipelines' states the specification ignores (as
 * vk_field_ignored() cites it) are written and read null, each both
 * ways: ignored under its condition, followed without it.  zink and
 * DXVK make graphics pipeline libraries whose create infos leave the
 * other subsets' pointers as they are.
 */
static void test_pipeline_states_ignored(void)
{
	VkPipelineShaderStageCreateInfo st[2] = {
		{ .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
		  .stage = VK_SHADER_STAGE_VERTEX_BIT, .pName = "main" },
		{ .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
		  .stage = VK_SHADER_STAGE_FRAGMENT_BIT, .pName = "main" },
	};
	VkPipelineShaderStageCreateInfo mesh[2] = { st[0], st[1] };
	mesh[0].stage = VK_SHADER_STAGE_MESH_BIT_EXT;
	VkPipelineVertexInputStateCreateInfo vi = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO };
	VkPipelineInputAssemblyStateCreateInfo ia = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
		.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST };
	VkPipelineTessellationStateCreateInfo ts = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_TESSELLATION_STATE_CREATE_INFO };
	VkPipelineViewportStateCreateInfo vp = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO };
	VkPipelineRasterizationStateCreateInfo rs = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO, .lineWidth = 1 };
	VkPipelineRasterizationStateCreateInfo discard = rs;
	discard.rasterizerDiscardEnable = VK_TRUE;
	VkPipelineMultisampleStateCreateInfo ms = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
		.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT };
	VkPipelineDepthStencilStateCreateInfo ds = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO };
	VkPipelineColorBlendStateCreateInfo cb = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO };
	VkDynamicState dyn_discard = VK_DYNAMIC_STATE_RASTERIZER_DISCARD_ENABLE;
	VkDynamicState dyn_vi = VK_DYNAMIC_STATE_VERTEX_INPUT_EXT;
	VkPipelineDynamicStateCreateInfo dy_discard = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO,
		.dynamicStateCount = 1, .pDynamicStates = &dyn_discard };
	VkPipelineDynamicStateCreateInfo dy_vi = dy_discard;
	dy_vi.pDynamicStates = &dyn_vi;
	VkFormat color = VK_FORMAT_B8G8R8A8_UNORM;
	VkPipelineRenderingCreateInfo rendering = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO,
		.colorAttachmentCount = 1, .pColorAttachmentFormats = &color,
		.depthAttachmentFormat = VK_FORMAT_D32_SFLOAT };
	VkGraphicsPipelineLibraryCreateInfoEXT gpl = {
		.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT };
	VkPipeline lib = (VkPipeline)(uintptr_t)0x4000;
	VkPipelineLibraryCreateInfoKHR libs = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR,
		.libraryCount = 1, .pLibraries = &lib };
	const VkGraphicsPipelineCreateInfo full = {
		.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
		.stageCount = 2, .pStages = st, .pVertexInputState = &vi,
		.pInputAssemblyState = &ia, .pTessellationState = &ts, .pViewportState = &vp,
		.pRasterizationState = &rs, .pMultisampleState = &ms, .pDepthStencilState = &ds,
		.pColorBlendState = &cb, .renderPass = (VkRenderPass)(uintptr_t)0x1000,
		.layout = (VkPipelineLayout)(uintptr_t)0x2000, .basePipelineIndex = -1 };
	VkGraphicsPipelineCreateInfo ci = full;
	gp_check("a complete pipeline", ci, "pTessellationState");

	ci = full;
	ci.pRasterizationState = &discard;
	gp_check("rasterizer discard", ci, "pTessellationState pViewportState "
		 "pMultisampleState pDepthStencilState pColorBlendState");
	ci.pDynamicState = &dy_discard;
	gp_check("a dynamic rasterizer discard", ci, "pTessellationState");

	ci = full;
	ci.renderPass = VK_NULL_HANDLE;
	gp_check("dynamic rendering to no attachment", ci,
		 "pTessellationState pDepthStencilState pColorBlendState");
	ci.pNext = &rendering;
	gp_check("dynamic rendering to color and depth", ci, "pTessellationState");
	rendering.colorAttachmentCount = 0;
	gp_check("dynamic rendering to depth alone", ci, "pTessellationState pColorBlendState");
	rendering.colorAttachmentCount = 1;
	rendering.depthAttachmentFormat = VK_FORMAT_UNDEFINED;
	gp_check("dynamic rendering to color alone", ci, "pTessellationState pDepthStencilState");

	ci = full;
	ci.pDynamicState = &dy_vi;
	gp_check("a dynamic vertex input", ci, "pTessellationState pVertexInputState");
	ci = full;
	ci.pStages = mesh;
	gp_check("a mesh pipeline", ci,
		 "pTessellationState pVertexInputState pInputAssemblyState");

	ci = full;
	ci.flags = VK_PIPELINE_CREATE_LIBRARY_BIT_KHR;
	ci.pNext = &gpl;
	gpl.flags = VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT;
	gp_check("a vertex input library", ci, "pStages pTessellationState pViewportState "
		 "pRasterizationState pMultisampleState pDepthStencilState pColorBlendState");
	gpl.flags = VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT;
	gp_check("a pre-rasterization library", ci, "pVertexInputState pInputAssemblyState "
		 "pTessellationState pMultisampleState pDepthStencilState pColorBlendState");
	ci.pRasterizationState = &discard;
	gp_check("a pre-rasterization library with rasterizer discard", ci,
		 "pVertexInputState pInputAssemblyState pTessellationState pViewportState "
		 "pMultisampleState pDepthStencilState pColorBlendState");
	ci.pRasterizationState = &rs;
	gpl.flags = VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT;
	gp_check("a fragment shader library", ci, "pVertexInputState pInputAssemblyState "
		 "pTessellationState pViewportState pRasterizationState pColorBlendState");
	ci.renderPass = VK_NULL_HANDLE;
	gp_check("a fragment shader library without a render pass", ci,
		 "pVertexInputState pInputAssemblyState pTessellationState pViewportState "
		 "pRasterizationState pColorBlendState");
	ci.renderPass = full.renderPass;
	gpl.flags = VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT;
	gp_check("a fragment output library", ci, "pStages pVertexInputState "
		 "pInputAssemblyState pTessellationState pViewportState pRasterizationState "
		 "pDepthStencilState");
	ci.flags = 0;
	ci.pNext = &libs;
	gp_check("a pipeline linked from libraries, no subset named", ci, "pStages "
		 "pVertexInputState pInputAssemblyState pTessellationState pViewportState "
		 "pRasterizationState pMultisampleState pDepthStencilState pColorBlendState");
	ci.pNext = NULL;
	ci.flags = VK_PIPELINE_CREATE_LIBRARY_BIT_KHR;
	gp_check("a library naming no subset", ci, "pStages pVertexInputState "
		 "pInputAssemblyState pTessellationState pViewportState pRasterizationState "
		 "pMultisampleState pDepthStencilState pColorBlendState");
}

/* Whether IDX (N of them) are the indexes of FIELDS that vk_field_walked
 * picks, of those whose output flag is OUT (-1: any), in order. */
static bool plan_is(const vk_field *fields, uint32_t nfields, int out, const uint16_t *idx,
		    uint32_t n)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < nfields; i++) {
		if (out >= 0 && ((fields[i].flags & VK_F_OUT) != 0) != out)
			continue;
		if (!vk_field_walked(&fields[i]))
			continue;
		if (k == n || idx[k] != i)
			return false;
		k++;
	}
	return k == n;
}

/*
 * The members and parameters the generator lists for walking handles
 * (what trace-replay remaps, trim references) are those the predicate
 * picks, in every struct and command: a list that left one out would
 * hand the driver a capture's handle.
 */
static void test_walk_plans_are_the_predicates(void)
{
	const char *bad = NULL;
	uint32_t walked = 0;
	for (uint32_t i = 0; i < vk_nstructs && !bad; i++) {
		const vk_struct_info *s = vk_structs[i];
		if (!(s->blob ? s->nwalk == 0
			      : plan_is(s->fields, s->nfields, -1, s->walk, s->nwalk)))
			bad = s->sig.name;
		walked += s->nwalk;
	}
	for (uint32_t i = 0; i < vk_ncommands && !bad; i++) {
		const vk_command_info *c = vk_commands[i];
		if (!plan_is(c->params, c->nparams, 0, c->walk_in, c->nwalk_in) ||
		    !plan_is(c->params, c->nparams, 1, c->walk_out, c->nwalk_out))
			bad = c->sig.name;
	}
	check(!bad, "walk plans: the predicate's fields, in order (first that differs: %s)",
	      bad ? bad : "none");
	const vk_struct_info *b = vk_struct_lookup("VkImageMemoryBarrier");
	check(b && b->nwalk == 2 && !strcmp(b->fields[b->walk[0]].name, "pNext") &&
	      !strcmp(b->fields[b->walk[1]].name, "image"),
	      "VkImageMemoryBarrier: its pNext and image walked, nothing else");
	check(walked > 100, "walk plans: %u members in all", walked);
}

int main(void)
{
	test_tables_know_the_registry();
	test_values_carry_small_signatures();
	test_every_struct_round_trips();
	test_every_command_text_is_its_binary();
	test_bitmask_text_by_what_it_shows();
	test_decoding_refuses_what_the_registry_lacks();
	test_sparse_updates_write_back_what_changed();
	test_sparse_update_runs_are_the_masks_runs();
	test_sync_walk_sees_every_use();
	test_render_pass_second_form();
	test_descriptors_one_by_one();
	test_ignored_pointers_are_not_followed();
	test_wrong_stype_pnext_not_followed();
	test_pipeline_states_ignored();
	test_walk_plans_are_the_predicates();
	return unit_done("test_vkschema");
}
