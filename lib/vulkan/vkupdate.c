/*
 * vkupdate.c: the object update pseudo-calls, tracekit.update and
 * tracekit.update.sparse (lib/vkschema.h, man/trace-format.5): their
 * signatures, reading them, the runs of bytes they write, and making a
 * sparse one's mask and data from a shadow copy.
 */
#include "vkschema.h"

#include <pthread.h>
#include <string.h>

static const char *const update_names[] = { "object", "offset", "data" };
const trace_func_sig vk_update_sig = { VK_UPDATE_CALL, 3, (const char **)update_names };
static const char *const sparse_names[] = { "object", "offset", "mask", "data" };
const trace_func_sig vk_update_sparse_sig = { VK_UPDATE_SPARSE_CALL, 4,
					      (const char **)sparse_names };

bool vk_is_update(const char *name)
{
	return !strcmp(name, VK_UPDATE_CALL) || !strcmp(name, VK_UPDATE_SPARSE_CALL);
}

/* The bits set in V, in a register (without -mpopcnt, __builtin_popcountll
 * is a call to libgcc a word) */
static inline uint64_t popcount64(uint64_t v)
{
	v -= (v >> 1) & 0x5555555555555555ull;
	v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (v * 0x0101010101010101ull) >> 56;
}

/* The bits set in the N bytes at M, eight bytes at a time (a call a
 * byte to libgcc's popcount was 2% of a driverless replay's time) */
static uint64_t bits_set(const uint8_t *m, uint64_t n)
{
	uint64_t k = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v;
		memcpy(&v, m + i, 8);
		k += popcount64(v);
	}
	for (; i < n; i++)
		for (uint8_t b = m[i]; b; b &= (uint8_t)(b - 1))
			k++;
	return k;
}

int vk_update_read(const trace_call *c, vk_update *u, trace_error *err)
{
	const trace_value *a = c->args;
	bool sparse = !strcmp(c->sig->name, VK_UPDATE_SPARSE_CALL);
	uint32_t nargs = sparse ? 4 : 3;
	if (c->sig->nargs < nargs || a[0].kind != TRACE_POINTER ||
	    (a[1].kind != TRACE_UINT && a[1].kind != TRACE_SINT) || a[2].kind != TRACE_BLOB ||
	    (sparse && a[3].kind != TRACE_BLOB)) {
		trace_error_set(err, "malformed %s: wants object (pointer), offset, %s",
				c->sig->name, sparse ? "mask (blob), data (blob)" : "data (blob)");
		return -1;
	}
	memset(u, 0, sizeof(*u));
	u->object = a[0].u;
	u->offset = a[1].u;
	if (!sparse) {
		u->data = a[2].blob;
		u->len = a[2].len;
		u->end = u->offset + u->len;
	} else {
		u->mask = a[2].blob;
		u->mask_len = a[2].len;
		u->data = a[3].blob;
		u->len = a[3].len;
		uint64_t words = bits_set(u->mask, u->mask_len), last = 0;
		for (uint64_t i = u->mask_len; i-- > 0;)
			if (u->mask[i]) { /* one past its last set bit */
				last = 8 * i + 32 - (uint64_t)__builtin_clz(u->mask[i]);
				break;
			}
		if (4 * words != u->len) {
			trace_error_set(err, "malformed %s: its mask sets %llu words, its data has "
					"%llu bytes", c->sig->name, (unsigned long long)words,
					(unsigned long long)u->len);
			return -1;
		}
		u->end = u->offset + 4 * last;
	}
	if (u->end < u->offset) {
		trace_error_set(err, "malformed %s: offset %llu and length overflow", c->sig->name,
				(unsigned long long)u->offset);
		return -1;
	}
	return 0;
}

/* Bits [64 W, 64 W + 64) of mask M (LEN bytes), the first the lowest;
 * zero past its end. */
static uint64_t mask_word(const uint8_t *m, uint64_t len, uint64_t w)
{
	uint64_t v = 0, at = 8 * w, n = len - at < 8 ? len - at : 8;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n == 8) {
		memcpy(&v, m + at, 8);
		return v;
	}
#endif
	for (uint64_t i = 0; i < n; i++)
		v |= (uint64_t)m[at + i] << (8 * i);
	return v;
}

/* Sixty-four words of the mask at a time, a run's start and end found
 * with a count of trailing zeros: mpv's sparse updates (76 runs over
 * 1,216 words, the median) took 1.5 us a bit at a time.  Always inline:
 * vk_update_list's FN is then inlined in the loop (a call a run through
 * the pointer was a sixth of what listing mpv's updates cost). */
static inline __attribute__((always_inline)) void mask_runs(const vk_update *u, vk_update_fn fn,
							    void *ctx)
{
	uint64_t nw = (u->mask_len + 7) / 8, k = 0, start = 0;
	bool open = false;
	for (uint64_t w = 0; w < nw; w++) {
		uint64_t v = mask_word(u->mask, u->mask_len, w), base = 64 * w;
		for (unsigned pos = 0; pos < 64;) {
			uint64_t rest = (open ? ~v : v) >> pos;  /* where the run ends, or starts */
			if (!rest)
				break;
			pos += (unsigned)__builtin_ctzll(rest);
			if (open) {
				uint64_t end = base + pos;
				fn(ctx, u->offset + 4 * start, u->data + 4 * k, 4 * (end - start));
				k += end - start;
			} else {
				start = base + pos;
			}
			open = !open;
		}
	}
	if (open)
		fn(ctx, u->offset + 4 * start, u->data + 4 * k, 4 * (8 * u->mask_len - start));
}

void vk_update_runs(const vk_update *u, vk_update_fn fn, void *ctx)
{
	if (u->runs) {
		for (uint64_t i = 0; i < u->nruns; i++)
			fn(ctx, u->runs[i].offset, u->runs[i].data, u->runs[i].len);
		return;
	}
	if (!u->mask) {
		if (u->len)
			fn(ctx, u->offset, u->data, u->len);
		return;
	}
	mask_runs(u, fn, ctx);
}

uint64_t vk_update_nruns(const vk_update *u, uint64_t most)
{
	if (u->runs)
		return u->nruns;
	if (!u->mask)
		return u->len ? 1 : 0;
	uint64_t n = 0, carry = 0;  /* the last bit of the word before */
	for (uint64_t w = 0; w < (u->mask_len + 7) / 8 && n <= most; w++) {
		uint64_t v = mask_word(u->mask, u->mask_len, w);
		n += popcount64(v & ~(v << 1 | carry));  /* the runs' first bits */
		carry = v >> 63;
	}
	return n;
}

typedef struct run_list {
	vk_update_run *runs;
	uint64_t n, cap;
} run_list;

static void list_run(void *ctx, uint64_t off, const uint8_t *data, uint64_t len)
{
	run_list *l = ctx;
	if (l->n < l->cap)
		l->runs[l->n] = (vk_update_run){off, len, data};
	l->n++;
}

/* (the list is not zeroed, each run is written over: zeroing it, and a
 * call to libgcc's popcount a word of the mask, were 14 M of the 54 M
 * instructions listing mpv's sparse updates cost the thread that decodes
 * ahead) */
void vk_update_list(vk_update *u, trace_arena *a)
{
	uint64_t n = vk_update_nruns(u, UINT64_MAX);
	run_list l = {trace_arena_take(a, (n ? n : 1) * sizeof(vk_update_run)), 0, n};
	if (u->mask && !u->runs)
		mask_runs(u, list_run, &l);
	else
		vk_update_runs(u, list_run, &l);
	if (l.n == n) {  /* (the count is the runs': left unlisted otherwise) */
		u->runs = l.runs;
		u->nruns = n;
	}
}

static void copy_run(void *ctx, uint64_t off, const uint8_t *data, uint64_t len)
{
	memcpy((uint8_t *)ctx + off, data, len);
}

/* A replay's thread writes each run of an update listed ahead with no
 * call of its own: mpv's sparse updates are 300 runs of 16 bytes at the
 * median, and a call a run, clipped to the object's room, cost its
 * replay's thread 70 instructions a run where it costs 30 now. */
void vk_update_copy(const vk_update *u, uint8_t *dst)
{
	if (!u->runs) {
		vk_update_runs(u, copy_run, dst);
		return;
	}
	for (uint64_t i = 0; i < u->nruns; i++)
		memcpy(dst + u->runs[i].offset, u->runs[i].data, u->runs[i].len);
}

/* Eight words at a time, the mask byte built in a register; each word
 * is stored at DATA's next place, which the next word takes over where it
 * did not differ: no branch. */
size_t vk_update_gather_plain(const uint8_t *live, uint8_t *old, size_t n, uint8_t *mask,
			      uint8_t *data)
{
	size_t k = 0;
	for (size_t w = 0; w < n; w += 8) {
		size_t end = w + 8 < n ? w + 8 : n;
		unsigned m = 0;
		for (size_t j = w; j < end; j++) {
			uint32_t a, b;
			memcpy(&a, live + 4 * j, 4);
			memcpy(&b, old + 4 * j, 4);
			unsigned d = a != b;
			memcpy(data + 4 * k, &a, 4);
			memcpy(old + 4 * j, &a, 4);
			k += d;
			m |= d << (j - w);
		}
		mask[w / 8] = (uint8_t)m;
	}
	return k;
}

static size_t (*gather)(const uint8_t *, uint8_t *, size_t, uint8_t *, uint8_t *) =
	vk_update_gather_plain;
static pthread_once_t gather_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* [m]: the indexes of the set bits of m, first to last: the permutation
 * that packs a group's differing words to its front. */
static uint32_t pack_order[256][8];

/* Eight words a step: a compare, a permute, three stores (the plain loop
 * took about 1.1 ns a word on glmark2-zink's buffer scene, perf).  A
 * group's 32 bytes go to data + 4 k, and k <= w: inside DATA. */
__attribute__((target("avx2,popcnt"))) static size_t gather_avx2(const uint8_t *live, uint8_t *old,
							   size_t n, uint8_t *mask, uint8_t *data)
{
	size_t k = 0, w = 0;
	for (; w + 8 <= n; w += 8) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(live + 4 * w));
		__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(old + 4 * w));
		__m256i eq = _mm256_cmpeq_epi32(a, b);
		unsigned m = ~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(eq)) & 0xff;
		_mm256_storeu_si256((__m256i *)(void *)(old + 4 * w), a);
		__m256i order = _mm256_loadu_si256((const __m256i *)(const void *)pack_order[m]);
		_mm256_storeu_si256((__m256i *)(void *)(data + 4 * k),
				    _mm256_permutevar8x32_epi32(a, order));
		k += (size_t)__builtin_popcount(m);
		mask[w / 8] = (uint8_t)m;
	}
	return k + vk_update_gather_plain(live + 4 * w, old + 4 * w, n - w, mask + w / 8,
					  data + 4 * k);
}
#endif

static void gather_init(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2")) {
		for (unsigned m = 0; m < 256; m++)
			for (unsigned b = 0, k = 0; b < 8; b++)
				if (m >> b & 1)
					pack_order[m][k++] = b;
		gather = gather_avx2;
	}
#endif
}

size_t vk_update_gather(const uint8_t *live, uint8_t *old, size_t n, uint8_t *mask, uint8_t *data)
{
	pthread_once(&gather_once, gather_init);
	return gather(live, old, n, mask, data);
}
