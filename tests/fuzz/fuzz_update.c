/*
 * libFuzzer target for the object update records (lib/vulkan/vkupdate.c):
 * vk_update_read, vk_update_runs and vk_update_gather, which the layer,
 * trace-trim and trace-replay share.
 *
 * The input is a record's arguments: a flags byte (bit 0: sparse; bit 1:
 * the offset signed), an 8-byte offset, a 1-byte mask length, the mask,
 * then the data.  A record must read or be refused without a crash, and
 * one that reads must
 *  - span [offset, end) with end >= offset, the data's bytes for a plain
 *    one, up to its mask's last set word for a sparse one;
 *  - write, run by run, exactly what its mask and data say, word by
 *    word, in order, runs apart and inside [offset, end) and the data;
 *    listed ahead (vk_update_list, a replay's decoding thread), the same
 *    runs.
 * Then the data, taken as the words a buffer holds now against zeroes as
 * it held before, gathered into a sparse update (the layer's
 * vk_update_gather, vector and plain) and read back, must write exactly
 * the words that changed: applied to the old copy it gives the new one
 * (the encoding is lossless).
 */
#include "vkschema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what)
{
	fprintf(stderr, "%s\n", what);
	abort();
}

/* What the runs wrote, against what the record says, as they come. */
typedef struct check {
	const vk_update *u;
	uint64_t next;     /* where the next run may start: after the last one */
	uint64_t used;     /* data bytes the runs took */
	uint8_t *applied;  /* [end - offset) bytes, for the gather check */
	bool first;
} check;

static void on_run(void *ctx, uint64_t off, const uint8_t *data, uint64_t len)
{
	check *c = ctx;
	const vk_update *u = c->u;
	if (!len || off < u->offset || off + len > u->end || off + len < off)
		fail("a run outside [offset, end), or empty");
	if (!c->first && off <= c->next)
		fail("runs out of order, or touching (they should be one)");
	if (data != u->data + c->used || c->used + len > u->len)
		fail("a run's bytes are not the data's next");
	if (u->mask)
		for (uint64_t w = (off - u->offset) / 4; w < (off - u->offset + len) / 4; w++)
			if (!(u->mask[w / 8] >> (w % 8) & 1))
				fail("a run writes a word its mask does not set");
	if (c->applied)
		memcpy(c->applied + (off - u->offset), data, len);
	c->first = false;
	c->next = off + len;
	c->used += len;
}

static void check_runs(const vk_update *u, uint8_t *applied)
{
	check c = { u, 0, 0, applied, true };
	vk_update_runs(u, on_run, &c);
	if (c.used != u->len)
		fail("the runs did not take all the data");
}

static trace_call record(bool sparse, trace_value *args)
{
	trace_call c;
	memset(&c, 0, sizeof(c));
	c.sig = sparse ? &vk_update_sparse_sig : &vk_update_sig;
	c.args = args;
	return c;
}

/* The bytes of DATA (N words) gathered against zeroes, read back as a
 * sparse update and applied to zeroes: DATA again. */
static void check_gather(const uint8_t *data, size_t n, bool plain)
{
	uint8_t *old = calloc(n ? 4 * n : 1, 1), *mask = calloc((n + 7) / 8 + 1, 1);
	uint8_t *packed = malloc(n ? 4 * n : 1), *applied = calloc(n ? 4 * n : 1, 1);
	size_t k = plain ? vk_update_gather_plain(data, old, n, mask, packed)
			 : vk_update_gather(data, old, n, mask, packed);
	if (memcmp(old, data, 4 * n))
		fail("gather did not leave the old copy equal to the live words");
	size_t changed = 0;
	for (size_t i = 0; i < n; i++) {
		static const uint8_t zero[4];
		bool d = memcmp(data + 4 * i, zero, 4) != 0;
		changed += d;
		if (d != (mask[i / 8] >> (i % 8) & 1))
			fail("the mask's bit is not whether the word changed");
	}
	if (k != changed)
		fail("gather's count is not the words that changed");
	trace_value args[4] = {
		{ .kind = TRACE_POINTER, .u = 0x1000 },
		{ .kind = TRACE_UINT, .u = 64 },
		{ .kind = TRACE_BLOB, .len = (uint32_t)((n + 7) / 8), .blob = mask },
		{ .kind = TRACE_BLOB, .len = (uint32_t)(4 * k), .blob = packed },
	};
	trace_call c = record(true, args);
	vk_update u;
	trace_error err;
	if (vk_update_read(&c, &u, &err) < 0)
		fail("a gathered update does not read");
	if (u.end > 64 + 4 * n)
		fail("a gathered update ends past its words");
	check_runs(&u, applied);
	/* the words past its end stayed zero in both */
	if (memcmp(applied, data, 4 * n))
		fail("the gathered update, applied, is not the live words");
	free(old);
	free(mask);
	free(packed);
	free(applied);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	if (size < 10)
		return 0;
	bool sparse = in[0] & 1;
	uint64_t offset;
	memcpy(&offset, in + 1, 8);
	size_t mask_len = in[9];
	const uint8_t *rest = in + 10;
	size_t left = size - 10;
	if (mask_len > left)
		mask_len = left;
	const uint8_t *mask = rest, *data = sparse ? rest + mask_len : rest;
	size_t data_len = sparse ? left - mask_len : left;

	trace_value args[4] = {
		{ .kind = TRACE_POINTER, .u = 0x1000 },
		{ .kind = in[0] & 2 ? TRACE_SINT : TRACE_UINT, .u = offset },
		{ .kind = TRACE_BLOB, .len = (uint32_t)(sparse ? mask_len : data_len),
		  .blob = sparse ? mask : data },
		{ .kind = TRACE_BLOB, .len = (uint32_t)data_len, .blob = data },
	};
	trace_call c = record(sparse, args);
	vk_update u;
	trace_error err;
	if (vk_update_read(&c, &u, &err) == 0) {
		if (u.end < u.offset || u.offset != offset || u.len != data_len ||
		    (!sparse && u.end - u.offset != data_len))
			fail("the update's span is not its record's");
		if (sparse) {
			uint64_t last = 0;
			for (uint64_t w = 0; w < 8 * (uint64_t)mask_len; w++)
				if (mask[w / 8] >> (w % 8) & 1)
					last = w + 1;
			if (u.end - u.offset != 4 * last)
				fail("a sparse update does not end at its mask's last word");
		}
		check_runs(&u, NULL);
		vk_update l = u;
		trace_arena a;
		trace_arena_init(&a);
		vk_update_list(&l, &a);
		if (!l.runs || l.nruns != vk_update_nruns(&u, UINT64_MAX))
			fail("vk_update_list did not list every run");
		check_runs(&l, NULL);
		trace_arena_free(&a);
	}

	check_gather(data, data_len / 4, true);
	check_gather(data, data_len / 4, false);
	return 0;
}
