/*
 * The layer's records (output.c queues and writes them) and where their
 * memory comes from: written records come back to application threads as
 * spares, and large update bytes as blocks, so that the steady state
 * allocates nothing (records.c).
 */
#ifndef TK_RECORDS_H
#define TK_RECORDS_H

#include "layer.h"

struct tk_rec {
	tk_rec *next;
	tk_rec *enter;  /* for a leave: its enter, which numbered the call */
	bool leave;
	bool folded;    /* an enter queued at its leave, standing for both */
	tk_rec *outer;  /* for a folded enter: the thread's call it is inside */
	uint8_t *own;   /* an update's bytes, up to megabytes: kept out of the
			 * arena, whose chunk a spare record keeps */
	size_t own_len, own_cap;
	/* a spare (tk_spares_keep): the next spare's arena chunk and the bytes
	 * of it its last record used, to prefetch (tk_rec_retire: this one's); the
	 * first of a batch: the next batch and this one's bytes */
	void *next_chunk;
	uint32_t next_used, used;
	tk_rec *next_batch;
	size_t batch_bytes;
	trace_call call;
};

/* Update bytes of this many and more come from tk_block_take. */
#define TK_BLOCK_MIN (64u << 10)

/* At the first vkCreateInstance; and when the writer ends, everything
 * kept is freed. */
void tk_records_init(void);
void tk_records_end(void);

/* A record for this thread: a spare, else a new one. */
tk_rec *tk_rec_new(void);
void tk_rec_free(tk_rec *r);
/* R, written: reset onto the list *DONE for reuse, or freed (a large one:
 * the spares stay small). */
void tk_rec_retire(tk_rec **done, tk_rec *r);
/* The records of DONE become spares, as many as the pool holds. */
void tk_spares_keep(tk_rec *done);
/* A block for N bytes (N >= TK_BLOCK_MIN), its capacity in *CAP. */
uint8_t *tk_block_take(size_t n, size_t *cap);

#endif
