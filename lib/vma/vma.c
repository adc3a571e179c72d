/*
 * VMA call recordings and the record stream: the function table, pointer
 * spellings, the CSV reader and the CSV writer.  The mapping itself is
 * the contract in vma-import(1); this file is the one place it lives.
 *
 * The reader is a hand-written scanner over the mapped file (or large
 * reads from a pipe): memchr finds a line, the columns are parsed where
 * they lie, and one trace_call per kind of record is reused (its arena
 * reset per line), so a column never costs a malloc.  Recordings run to millions of lines and the figure we
 * answer for is "faster than awk splitting the same file".
 */
#include "internal.h"
#include "vma.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* The functions.  Names and column order are those of VMA's "Recording
 * file format" document; vmaAllocateMemoryPages, vmaFreeMemoryPages and
 * vmaSetPoolName are not in it but recorders wrote them (VmaReplay reads
 * them with these columns). */

static const vma_param p_create_pool[] = {
	{"memoryTypeIndex", VMA_UINT32, false},
	{"flags", VMA_UINT32, false},
	{"blockSize", VMA_UINT64, false},
	{"minBlockCount", VMA_UINT64, false},
	{"maxBlockCount", VMA_UINT64, false},
	{"frameInUseCount", VMA_UINT32, false},
	{"pool", VMA_POINTER, true},
};

static const vma_param p_pool[] = {
	{"pool", VMA_POINTER, false},
};

static const vma_param p_allocation[] = {
	{"allocation", VMA_POINTER, false},
};

static const vma_param p_allocation_out[] = {
	{"allocation", VMA_POINTER, true},
};

static const vma_param p_allocations[] = {
	{"allocations", VMA_POINTER_LIST, false},
};

static const vma_param p_set_user_data[] = {
	{"allocation", VMA_POINTER, false},
	{"pUserData", VMA_STRING, false},
};

static const vma_param p_set_pool_name[] = {
	{"pool", VMA_POINTER, false},
	{"pName", VMA_STRING, false},
};

static const vma_param p_create_buffer[] = {
	{"bufferCreateInfo.flags", VMA_UINT32, false},
	{"bufferCreateInfo.size", VMA_UINT64, false},
	{"bufferCreateInfo.usage", VMA_UINT32, false},
	{"bufferCreateInfo.sharingMode", VMA_UINT32, false},
	{"allocationCreateInfo.flags", VMA_UINT32, false},
	{"allocationCreateInfo.usage", VMA_UINT32, false},
	{"allocationCreateInfo.requiredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.preferredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.memoryTypeBits", VMA_UINT32, false},
	{"allocationCreateInfo.pool", VMA_POINTER, false},
	{"allocation", VMA_POINTER, true},
	{"allocationCreateInfo.pUserData", VMA_STRING, false},
};

static const vma_param p_create_image[] = {
	{"imageCreateInfo.flags", VMA_UINT32, false},
	{"imageCreateInfo.imageType", VMA_UINT32, false},
	{"imageCreateInfo.format", VMA_UINT32, false},
	{"imageCreateInfo.extent.width", VMA_UINT32, false},
	{"imageCreateInfo.extent.height", VMA_UINT32, false},
	{"imageCreateInfo.extent.depth", VMA_UINT32, false},
	{"imageCreateInfo.mipLevels", VMA_UINT32, false},
	{"imageCreateInfo.arrayLayers", VMA_UINT32, false},
	{"imageCreateInfo.samples", VMA_UINT32, false},
	{"imageCreateInfo.tiling", VMA_UINT32, false},
	{"imageCreateInfo.usage", VMA_UINT32, false},
	{"imageCreateInfo.sharingMode", VMA_UINT32, false},
	{"imageCreateInfo.initialLayout", VMA_UINT32, false},
	{"allocationCreateInfo.flags", VMA_UINT32, false},
	{"allocationCreateInfo.usage", VMA_UINT32, false},
	{"allocationCreateInfo.requiredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.preferredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.memoryTypeBits", VMA_UINT32, false},
	{"allocationCreateInfo.pool", VMA_POINTER, false},
	{"allocation", VMA_POINTER, true},
	{"allocationCreateInfo.pUserData", VMA_STRING, false},
};

static const vma_param p_allocate_memory[] = {
	{"vkMemoryRequirements.size", VMA_UINT64, false},
	{"vkMemoryRequirements.alignment", VMA_UINT64, false},
	{"vkMemoryRequirements.memoryTypeBits", VMA_UINT32, false},
	{"allocationCreateInfo.flags", VMA_UINT32, false},
	{"allocationCreateInfo.usage", VMA_UINT32, false},
	{"allocationCreateInfo.requiredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.preferredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.memoryTypeBits", VMA_UINT32, false},
	{"allocationCreateInfo.pool", VMA_POINTER, false},
	{"allocation", VMA_POINTER, true},
	{"allocationCreateInfo.pUserData", VMA_STRING, false},
};

static const vma_param p_allocate_memory_pages[] = {
	{"vkMemoryRequirements.size", VMA_UINT64, false},
	{"vkMemoryRequirements.alignment", VMA_UINT64, false},
	{"vkMemoryRequirements.memoryTypeBits", VMA_UINT32, false},
	{"allocationCreateInfo.flags", VMA_UINT32, false},
	{"allocationCreateInfo.usage", VMA_UINT32, false},
	{"allocationCreateInfo.requiredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.preferredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.memoryTypeBits", VMA_UINT32, false},
	{"allocationCreateInfo.pool", VMA_POINTER, false},
	{"allocations", VMA_POINTER_LIST, true},
	{"allocationCreateInfo.pUserData", VMA_STRING, false},
};

/* The document's order; VmaReplay read flags fourth, which the recorder
 * never wrote. */
static const vma_param p_allocate_memory_for[] = {
	{"vkMemoryRequirements.size", VMA_UINT64, false},
	{"vkMemoryRequirements.alignment", VMA_UINT64, false},
	{"vkMemoryRequirements.memoryTypeBits", VMA_UINT32, false},
	{"requiresDedicatedAllocation", VMA_BOOL, false},
	{"prefersDedicatedAllocation", VMA_BOOL, false},
	{"allocationCreateInfo.flags", VMA_UINT32, false},
	{"allocationCreateInfo.usage", VMA_UINT32, false},
	{"allocationCreateInfo.requiredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.preferredFlags", VMA_UINT32, false},
	{"allocationCreateInfo.memoryTypeBits", VMA_UINT32, false},
	{"allocationCreateInfo.pool", VMA_POINTER, false},
	{"allocation", VMA_POINTER, true},
	{"allocationCreateInfo.pUserData", VMA_STRING, false},
};

static const vma_param p_flush[] = {
	{"allocation", VMA_POINTER, false},
	{"offset", VMA_UINT64, false},
	{"size", VMA_UINT64, false},
};

static const vma_param p_resize[] = {
	{"allocation", VMA_POINTER, false},
	{"newSize", VMA_UINT64, false},
};

static const vma_param p_defragmentation_begin[] = {
	{"defragmentationInfo2.flags", VMA_UINT32, false},
	{"defragmentationInfo2.pAllocations", VMA_POINTER_LIST, false},
	{"defragmentationInfo2.pPools", VMA_POINTER_LIST, false},
	{"defragmentationInfo2.maxCpuBytesToMove", VMA_UINT64, false},
	{"defragmentationInfo2.maxCpuAllocationsToMove", VMA_UINT32, false},
	{"defragmentationInfo2.maxGpuBytesToMove", VMA_UINT64, false},
	{"defragmentationInfo2.maxGpuAllocationsToMove", VMA_UINT32, false},
	{"defragmentationInfo2.commandBuffer", VMA_POINTER, false},
	{"context", VMA_POINTER, true},
};

static const vma_param p_context[] = {
	{"context", VMA_POINTER, false},
};

#define FN(name, params) {name, sizeof(name) - 1, ARRAY_LEN(params), params}
#define FN0(name) {name, sizeof(name) - 1, 0, NULL}

static const vma_function functions[] = {
	FN0("vmaCreateAllocator"),
	FN0("vmaDestroyAllocator"),
	FN("vmaCreatePool", p_create_pool),
	FN("vmaDestroyPool", p_pool),
	FN("vmaSetAllocationUserData", p_set_user_data),
	FN("vmaCreateBuffer", p_create_buffer),
	FN("vmaDestroyBuffer", p_allocation),
	FN("vmaCreateImage", p_create_image),
	FN("vmaDestroyImage", p_allocation),
	FN("vmaFreeMemory", p_allocation),
	FN("vmaFreeMemoryPages", p_allocations),
	FN("vmaCreateLostAllocation", p_allocation_out),
	FN("vmaAllocateMemory", p_allocate_memory),
	FN("vmaAllocateMemoryPages", p_allocate_memory_pages),
	FN("vmaAllocateMemoryForBuffer", p_allocate_memory_for),
	FN("vmaAllocateMemoryForImage", p_allocate_memory_for),
	FN("vmaMapMemory", p_allocation),
	FN("vmaUnmapMemory", p_allocation),
	FN("vmaFlushAllocation", p_flush),
	FN("vmaInvalidateAllocation", p_flush),
	FN("vmaTouchAllocation", p_allocation),
	FN("vmaGetAllocationInfo", p_allocation),
	FN("vmaMakePoolAllocationsLost", p_pool),
	FN("vmaResizeAllocation", p_resize),
	FN("vmaDefragmentationBegin", p_defragmentation_begin),
	FN("vmaDefragmentationEnd", p_context),
	FN("vmaSetPoolName", p_set_pool_name),
};

#define NFUNCTIONS ARRAY_LEN(functions)

const vma_function *vma_functions(size_t *n)
{
	*n = NFUNCTIONS;
	return functions;
}

const vma_function *vma_function_lookup(const char *name, size_t len)
{
	/* every name starts "vma"; the length tells most apart */
	for (size_t i = 0; i < NFUNCTIONS; i++)
		if (functions[i].namelen == len && !memcmp(functions[i].name, name, len))
			return &functions[i];
	return NULL;
}

const char *vma_type_name(vma_type t)
{
	switch (t) {
	case VMA_UINT32: return "uint32";
	case VMA_UINT64: return "uint64";
	case VMA_BOOL: return "bool";
	case VMA_POINTER: return "pointer";
	case VMA_POINTER_LIST: return "list of pointers";
	case VMA_STRING: return "string";
	}
	return "?";
}

/* ------------------------------------------------------------------ */
/* Pointers. */

static const char hex_upper[] = "0123456789ABCDEF";
static const char hex_lower[] = "0123456789abcdef";

const char *vma_pointer_style_name(vma_pointer_style s)
{
	switch (s) {
	case VMA_PTR_WINDOWS: return "windows";
	case VMA_PTR_WINDOWS32: return "windows32";
	case VMA_PTR_GLIBC: return "glibc";
	case VMA_PTR_UNKNOWN: break;
	}
	return "unknown";
}

vma_pointer_style vma_pointer_style_parse(const char *name)
{
	if (!strcmp(name, "windows"))
		return VMA_PTR_WINDOWS;
	if (!strcmp(name, "windows32"))
		return VMA_PTR_WINDOWS32;
	if (!strcmp(name, "glibc"))
		return VMA_PTR_GLIBC;
	return VMA_PTR_UNKNOWN;
}

/* Hex digit values plus one, by case: 0 is not a digit of that case. */
static const uint8_t hex_upper_val[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
	['7'] = 8, ['8'] = 9, ['9'] = 10, ['A'] = 11, ['B'] = 12, ['C'] = 13,
	['D'] = 14, ['E'] = 15, ['F'] = 16,
};
static const uint8_t hex_lower_val[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
	['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13,
	['d'] = 14, ['e'] = 15, ['f'] = 16,
};

/* Accumulates n hex digits of one case; false if one is not. */
static inline bool scan_hex(const char *s, size_t n, const uint8_t *val, uint64_t *out)
{
	uint64_t v = 0;
	unsigned bad = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = val[(unsigned char)s[i]];
		bad |= d == 0;
		v = v << 4 | ((d - 1) & 15);
	}
	*out = v;
	return !bad;
}

/*
 * Only the exact spellings %p produces are pointers: that is what makes
 * the spelling restorable from one word in the header.
 */
vma_pointer_style vma_pointer_parse(const char *s, size_t n, uint64_t *value)
{
	if (n == 16)
		return scan_hex(s, 16, hex_upper_val, value) ? VMA_PTR_WINDOWS : VMA_PTR_UNKNOWN;
	if (n >= 3 && s[0] == '0' && s[1] == 'x') {
		/* glibc: %#lx, so no leading zeros, and null is "(nil)" */
		if (n > 18 || s[2] == '0')
			return VMA_PTR_UNKNOWN;
		return scan_hex(s + 2, n - 2, hex_lower_val, value) ? VMA_PTR_GLIBC
								     : VMA_PTR_UNKNOWN;
	}
	if (n == 5 && !memcmp(s, "(nil)", 5)) {
		*value = 0;
		return VMA_PTR_GLIBC;
	}
	/* MSVC: zero-padded to the pointer's width, upper case */
	if (n == 8)
		return scan_hex(s, 8, hex_upper_val, value) ? VMA_PTR_WINDOWS32 : VMA_PTR_UNKNOWN;
	return VMA_PTR_UNKNOWN;
}

size_t vma_pointer_format(char *out, uint64_t v, vma_pointer_style s)
{
	size_t n = 0;
	if (s == VMA_PTR_GLIBC) {
		if (!v) {
			memcpy(out, "(nil)", 6);
			return 5;
		}
		char tmp[16];
		size_t k = 0;
		while (v) {
			tmp[k++] = hex_lower[v & 15];
			v >>= 4;
		}
		out[n++] = '0';
		out[n++] = 'x';
		while (k)
			out[n++] = tmp[--k];
		out[n] = 0;
		return n;
	}
	int width = s == VMA_PTR_WINDOWS32 && v <= UINT32_MAX ? 8 : 16;
	for (int i = width - 1; i >= 0; i--)
		out[n++] = hex_upper[(v >> (4 * i)) & 15];
	out[n] = 0;
	return n;
}

/* ------------------------------------------------------------------ */
/* Columns shared by reader and writer. */

enum { NUM_OK = 0, NUM_EMPTY, NUM_BAD, NUM_ZERO, NUM_RANGE };

/* A decimal as %u and %llu write it: digits, no sign, no leading zero. */
static int scan_uint(const char *p, const char *e, uint64_t max, uint64_t *out)
{
	size_t n = (size_t)(e - p);
	if (!n)
		return NUM_EMPTY;
	uint64_t v = 0;
	bool over = false;
	/* 19 digits cannot overflow 64 bits; the 20th is checked */
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)p[i] - '0';
		if (d > 9)
			return NUM_BAD;
		if (i >= 19 && (i > 19 || v > (UINT64_MAX - d) / 10))
			over = true;
		v = v * 10 + d;
	}
	if (*p == '0' && n > 1)
		return NUM_ZERO;
	if (over || v > max)
		return NUM_RANGE;
	*out = v;
	return NUM_OK;
}

/* The longest decimal of a uint64. */
#define NUMBER_MAX 20

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal, written in place: count the digits, then fill from the end. */
static inline char *fmt_u64(char *o, uint64_t v)
{
	if (v < 10) {
		*o++ = (char)('0' + v);
		return o;
	}
	int n = 2;
	for (uint64_t p = 100; n < NUMBER_MAX && v >= p; p *= 10)
		n++;
	char *q = o + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		*--q = digit_pairs[2 * r + 1];
		*--q = digit_pairs[2 * r];
	}
	if (v >= 10) {
		*--q = digit_pairs[2 * v + 1];
		*--q = digit_pairs[2 * v];
	} else {
		*--q = (char)('0' + v);
	}
	return o + n;
}

/*
 * Eight bytes at a time.  The word tricks below read a little-endian
 * load (x86, ARM): the first byte of the text is the low byte.
 */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

static inline uint64_t load8(const char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

/* The end of the column that starts at p: its comma, or e.  Function
 * names run to 26 bytes, so look for the comma a word at a time. */
static inline const char *column_end(const char *p, const char *e)
{
	while (e - p >= 8) {
		uint64_t x = load8(p) ^ (ONES * ',');
		uint64_t zero = (x - ONES) & ~x & HIGHS; /* lowest set byte is exact */
		if (zero)
			return p + (__builtin_ctzll(zero) >> 3);
		p += 8;
	}
	while (p < e && *p != ',')
		p++;
	return p;
}

/*
 * Eight upper-case hex digits (MSVC's %p) to their value, or false: each
 * byte range-checked and converted in the word, then the nibbles packed,
 * first digit highest.
 */
static inline bool hex8_upper(const char *p, uint32_t *out)
{
	uint64_t w = load8(p);
	if (w & HIGHS)
		return false;
	/* bytes below 0x80 plus (0x80 - k) carry into their top bit iff >= k */
	uint64_t ge_0 = (w + ONES * (0x80 - '0')) & HIGHS;
	uint64_t gt_9 = (w + ONES * (0x80 - '9' - 1)) & HIGHS;
	uint64_t ge_a = (w + ONES * (0x80 - 'A')) & HIGHS;
	uint64_t gt_f = (w + ONES * (0x80 - 'F' - 1)) & HIGHS;
	uint64_t digit = ge_0 & ~gt_9, letter = ge_a & ~gt_f;
	if ((digit | letter) != HIGHS)
		return false;
	uint64_t n = (w & (ONES * 0x0f)) + (letter >> 7) * 9;
	n = ((n << 4) | (n >> 8)) & 0x00ff00ff00ff00ffull;
	n = ((n << 8) | (n >> 16)) & 0x0000ffff0000ffffull;
	*out = (uint32_t)((n & 0xffff) << 16 | (n >> 32));
	return true;
}

/*
 * The uint column that starts at p, and its end: what VMA writes goes the
 * fast way, in one pass; anything else gets scan_uint's verdict.
 */
static inline int uint_column(const char *p, const char *e, uint64_t max, uint64_t *v,
			      const char **end)
{
	const char *q = p;
	uint64_t x = 0;
	while (q < e) {
		unsigned d = (unsigned)(unsigned char)*q - '0';
		if (d > 9)
			break;
		x = x * 10 + d;
		q++;
	}
	size_t n = (size_t)(q - p);
	if ((q == e || *q == ',') && n - 1 < 19 && (*p != '0' || n == 1) && x <= max) {
		*v = x;
		*end = q;
		return NUM_OK;
	}
	*end = column_end(q, e);
	return scan_uint(p, *end, max, v);
}

/* Any decimal VmaReplay would take as a time: digits, then maybe a
 * fraction. */
static bool is_decimal(const char *p, const char *e)
{
	const char *q = p;
	while (q < e && *q >= '0' && *q <= '9')
		q++;
	if (q == p)
		return false;
	if (q == e)
		return true;
	if (*q++ != '.' || q == e)
		return false;
	while (q < e && *q >= '0' && *q <= '9')
		q++;
	return q == e;
}

/* At most 12 integer digits, so that milliseconds stay below 2^50 and
 * the double of a time prints back (as %.3f) to the same text. */
#define TIME_INT_DIGITS_MAX 12

/*
 * The time column that starts at p, and its end: true with milliseconds
 * when it is spelled as VMA writes it (%.3f).  ms / 1000.0 is then the
 * double nearest the decimal: both are exact and IEEE division rounds once.
 */
static inline bool time_column(const char *p, const char *e, uint64_t *ms, const char **end)
{
	const char *q = p;
	uint64_t v = 0;
	while (q < e && (unsigned)(unsigned char)*q - '0' <= 9)
		v = v * 10 + (unsigned)(*q++ - '0');
	size_t n = (size_t)(q - p);
	bool ok = n >= 1 && n <= TIME_INT_DIGITS_MAX && (*p != '0' || n == 1) && e - q >= 4 &&
		  q[0] == '.';
	if (ok) {
		for (int i = 1; i <= 3; i++) {
			unsigned d = (unsigned)(unsigned char)q[i] - '0';
			ok = ok && d <= 9;
			v = v * 10 + d;
		}
		q += 4;
		ok = ok && (q == e || *q == ',');
	}
	if (ok) {
		*ms = v;
		*end = q;
		return true;
	}
	*end = column_end(p, e);
	return false;
}

static inline const char *trim_cr(const char *s, const char *e)
{
	while (e > s && e[-1] == '\r')
		e--;
	return e;
}

static inline const char *trim_blanks(const char *s, const char *e)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return e;
}

/* Text for a message: the start of a column, control bytes as '?'. */
static const char *shown(char *out, size_t cap, const char *s, size_t n)
{
	size_t max = cap - 4, k = 0;
	for (size_t i = 0; i < n && k < max; i++) {
		unsigned char c = (unsigned char)s[i];
		out[k++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	if (n > max) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = 0;
	return out;
}

/* ------------------------------------------------------------------ */
/* Reading. */

#define READ_BLOCK (1u << 20)

struct vma_reader {
	/* the window: data[0..len) are input bytes from offset base on */
	FILE *file;
	bool own_file;
	char *buf;             /* owned storage for file input */
	size_t cap;
	void *map;             /* or the whole file, mapped */
	size_t mapsize;
	const char *data;
	size_t len, pos;       /* pos: the first byte not yet taken */
	uint64_t base;
	bool eof;
	char *name;
	int64_t line;          /* number of the line last taken */
	const char *line_start;
	trace_error *err;
	char msg[2][64];       /* shown() buffers */

	uint8_t slots[64];     /* function index + 1 by fn_hash(), 0 = empty */
	trace_sigtab *sigtab;
	const trace_func_sig *sigs[NFUNCTIONS];
	const trace_func_sig *frame_sig, *time_sig;
	trace_header header;
	trace_arena harena;    /* the header's strings */
	vma_pointer_style style;

	trace_call call, frame, time;
	trace_call *queue[3];
	int nqueue, iqueue;
	uint64_t next_no;
	bool started;
	uint32_t cur_frame;
	tbuf cur_time;         /* the time column of the last line */
};

/* Every line names a function: a hash of three bytes finds it in one or
 * two probes, where the table would take a dozen comparisons. */
static inline unsigned fn_hash(const char *name, size_t len)
{
	return (unsigned)(len * 31 + (unsigned char)name[3] * 7 +
			  (unsigned char)name[len - 1]) & 63;
}

static void build_slots(vma_reader *r)
{
	for (size_t i = 0; i < NFUNCTIONS; i++) {
		unsigned h = fn_hash(functions[i].name, functions[i].namelen);
		while (r->slots[h])
			h = (h + 1) & 63;
		r->slots[h] = (uint8_t)(i + 1);
	}
}

/* Short equal-length strings, compared inline: a call to memcmp costs
 * more than the comparison. */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
	for (; n >= 8; n -= 8, a += 8, b += 8)
		if (load8(a) != load8(b))
			return false;
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static inline const vma_function *lookup(const vma_reader *r, const char *name, size_t len)
{
	if (len < 4)
		return NULL;
	for (unsigned h = fn_hash(name, len); r->slots[h]; h = (h + 1) & 63) {
		const vma_function *f = &functions[r->slots[h] - 1];
		if (f->namelen == len && same_bytes(f->name, name, len))
			return f;
	}
	return NULL;
}

__attribute__((format(printf, 3, 4)))
static int fail_at(vma_reader *r, const char *at, const char *fmt, ...)
{
	trace_error *err = r->err;
	trace_error_clear(err);
	snprintf(err->file, sizeof(err->file), "%s", r->name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (at) {
		err->line = r->line;
		err->column = at - r->line_start + 1;
		err->offset = (int64_t)(r->base + (uint64_t)(at - r->data));
	} else {
		/* at the end of the input, where the next line would be */
		err->line = r->line + 1;
		err->offset = (int64_t)(r->base + r->pos);
	}
	return -1;
}

static const char *show(vma_reader *r, int i, const char *p, const char *e)
{
	return shown(r->msg[i], sizeof(r->msg[i]), p, (size_t)(e - p));
}

/* Reads more input into the window, keeping the bytes from pos on. */
static int fill(vma_reader *r)
{
	if (r->eof)
		return 0;
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->base += r->pos;
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == r->cap) {
		r->cap *= 2;
		r->buf = trace_xrealloc(r->buf, r->cap);
	}
	r->data = r->buf;
	size_t got = fread(r->buf + r->len, 1, r->cap - r->len, r->file);
	r->len += got;
	if (got == 0) {
		if (ferror(r->file)) {
			trace_error_errno(r->err, r->name, "read error");
			return -1;
		}
		r->eof = true;
	}
	return 0;
}

/*
 * Finds the line that starts rel bytes after pos, reading as needed:
 * *eol (also from pos) is its '\n' or the end of the input.  1 if there
 * is such a line, 0 at the end, -1 on a read error.  Offsets from pos
 * survive a fill; pointers into the window do not.
 */
static int find_line(vma_reader *r, size_t rel, size_t *eol)
{
	size_t scan = rel;
	for (;;) {
		size_t have = r->len - r->pos;
		if (scan < have) {
			const char *nl = memchr(r->data + r->pos + scan, '\n', have - scan);
			if (nl) {
				*eol = (size_t)(nl - r->data) - r->pos;
				return 1;
			}
			scan = have;
		}
		if (r->eof) {
			*eol = have;
			return have > rel;
		}
		if (fill(r) < 0)
			return -1;
	}
}

/* Takes the next line: [*s, *e) without its CRs. */
static int take_line(vma_reader *r, const char **s, const char **e)
{
	size_t eol;
	int k = find_line(r, 0, &eol);
	if (k <= 0)
		return k;
	*s = r->data + r->pos;
	*e = trim_cr(*s, *s + eol);
	r->line_start = *s;
	r->line++;
	r->pos += eol < r->len - r->pos ? eol + 1 : eol;
	return 1;
}

/* The spelling of the first pointer in the line, 0 for none, -1 when the
 * line is not one we can look into (the parse will say why). */
static int sniff_line(const char *s, const char *e)
{
	const char *p = s;
	for (int i = 0; i < 3; i++) {
		p = memchr(p, ',', (size_t)(e - p));
		if (!p)
			return -1;
		p++;
	}
	const char *q = memchr(p, ',', (size_t)(e - p));
	const vma_function *f = vma_function_lookup(p, (size_t)((q ? q : e) - p));
	if (!f)
		return -1;
	p = q;
	for (uint32_t i = 0; i < f->nparams; i++) {
		if (!p)
			return -1;
		p++;
		const vma_param *pa = &f->params[i];
		if (pa->type == VMA_STRING)
			return 0;
		q = memchr(p, ',', (size_t)(e - p));
		const char *fe = q ? q : e;
		if (pa->type == VMA_POINTER_LIST && p < fe) {
			const char *sp = memchr(p, ' ', (size_t)(fe - p));
			fe = sp ? sp : fe;
		}
		if ((pa->type == VMA_POINTER || pa->type == VMA_POINTER_LIST) && p < fe) {
			uint64_t v;
			vma_pointer_style st = vma_pointer_parse(p, (size_t)(fe - p), &v);
			return st ? (int)st : -1;
		}
		p = q;
	}
	return 0;
}

/*
 * The header goes out before any record, and says how pointers are
 * spelled: so look ahead, without taking lines, to the first pointer.
 * Recordings name a pool or an allocation within a few lines.
 */
static int sniff_pointers(vma_reader *r)
{
	size_t rel = 0, eol;
	int k;
	while ((k = find_line(r, rel, &eol)) > 0) {
		const char *s = r->data + r->pos + rel;
		const char *e = trim_blanks(s, trim_cr(s, r->data + r->pos + eol));
		rel = eol + 1;
		int st = sniff_line(s, e);
		if (st > 0)
			r->style = (vma_pointer_style)st;
		if (st != 0)
			return 0;
	}
	return k;
}

static void add_prop(vma_reader *r, size_t *n, const char *name, const char *value)
{
	r->header.props[*n].name = name;
	r->header.props[*n].value = value;
	(*n)++;
}

static int read_header(vma_reader *r)
{
	static const char magic[] = VMA_MAGIC_LINE;
	const char *s, *e;
	int k = take_line(r, &s, &e);
	if (k < 0)
		return -1;
	if (k == 0)
		return fail_at(r, NULL, "empty input, not a VMA recording (expected '%s')", magic);
	e = trim_blanks(s, e);
	if ((size_t)(e - s) != sizeof(magic) - 1 || memcmp(s, magic, sizeof(magic) - 1))
		return fail_at(r, s, "not a VMA recording: the first line is '%s', not '%s'",
			       show(r, 0, s, e), magic);

	k = take_line(r, &s, &e);
	if (k < 0)
		return -1;
	if (k == 0)
		return fail_at(r, NULL, "the recording ends before its format version");
	e = trim_blanks(s, e);
	const char *comma = memchr(s, ',', (size_t)(e - s));
	uint64_t major, minor;
	if (!comma || scan_uint(s, comma, UINT32_MAX, &major) ||
	    scan_uint(comma + 1, e, UINT32_MAX, &minor))
		return fail_at(r, s, "bad format version '%s' (expected MAJOR,MINOR, such as 1,8)",
			       show(r, 0, s, e));
	if (major != VMA_VERSION_MAJOR || minor > VMA_VERSION_MINOR_MAX)
		return fail_at(r, s, "unknown format version %s (vma-import reads 1,0 to 1,%d)",
			       show(r, 0, s, e), VMA_VERSION_MINOR_MAX);
	const char *version = trace_arena_strndup(&r->harena, s, (size_t)(e - s));

	char **config = NULL;
	size_t nconfig = 0, cconfig = 0;
	bool has_config = minor >= VMA_VERSION_MINOR_CONFIG;
	if (has_config) {
		k = take_line(r, &s, &e);
		if (k < 0)
			return -1;
		const char *t = k ? trim_blanks(s, e) : NULL;
		if (!k || (size_t)(t - s) != 12 || memcmp(s, "Config,Begin", 12)) {
			if (!k)
				return fail_at(r, NULL, "the recording ends before 'Config,Begin' "
					       "(format 1,3 and later have a Config section)");
			return fail_at(r, s, "expected 'Config,Begin' (format 1,3 and later have a "
				       "Config section), found '%s'", show(r, 0, s, e));
		}
		for (;;) {
			k = take_line(r, &s, &e);
			if (k <= 0) {
				free(config);
				if (k < 0)
					return -1;
				return fail_at(r, NULL, "the Config section has no 'Config,End' line");
			}
			t = trim_blanks(s, e);
			if ((size_t)(t - s) == 10 && !memcmp(s, "Config,End", 10))
				break;
			/* kept as read, blanks and all; it becomes a C string */
			const char *nul = memchr(s, 0, (size_t)(e - s));
			if (nul) {
				free(config);
				return fail_at(r, nul, "a NUL byte in a Config line");
			}
			if (nconfig == cconfig) {
				cconfig = cconfig ? cconfig * 2 : 64;
				config = trace_xrealloc(config, cconfig * sizeof(*config));
			}
			config[nconfig++] = trace_arena_strndup(&r->harena, s, (size_t)(e - s));
		}
	}

	if (sniff_pointers(r) < 0) {
		free(config);
		return -1;
	}

	size_t nprops = 1 + (r->style != VMA_PTR_UNKNOWN) + (has_config ? 1 + nconfig : 0);
	r->header.version = TRACE_FORMAT_VERSION;
	r->header.semantic_version = TRACE_FORMAT_VERSION;
	r->header.props = trace_arena_alloc(&r->harena, nprops * sizeof(trace_property));
	size_t n = 0;
	add_prop(r, &n, VMA_PROP_VERSION, version);
	if (r->style != VMA_PTR_UNKNOWN)
		add_prop(r, &n, VMA_PROP_POINTERS, vma_pointer_style_name(r->style));
	if (has_config) {
		char num[32];
		snprintf(num, sizeof(num), "%zu", nconfig);
		add_prop(r, &n, VMA_PROP_CONFIG_LINES, trace_arena_strndup(&r->harena, num,
									 strlen(num)));
		for (size_t i = 0; i < nconfig; i++) {
			char name[48];
			int len = snprintf(name, sizeof(name), VMA_PROP_CONFIG_PREFIX "%zu", i);
			add_prop(r, &n, trace_arena_strndup(&r->harena, name, (size_t)len),
				 config[i]);
		}
	}
	r->header.nprops = (uint32_t)n;
	free(config);
	return 0;
}

static vma_reader *reader_new(const char *name, trace_error *err)
{
	vma_reader *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->name = trace_xstrdup(name ? name : "-");
	r->err = err;
	r->sigtab = trace_sigtab_new();
	build_slots(r);
	trace_arena_init(&r->harena);
	trace_call_init(&r->call);
	trace_call_init(&r->frame);
	trace_call_init(&r->time);
	static const char *const frame_args[] = {"index"};
	static const char *const time_args[] = {"seconds"};
	r->frame_sig = trace_sigtab_func(r->sigtab, VMA_CALL_FRAME, 1, frame_args);
	r->time_sig = trace_sigtab_func(r->sigtab, VMA_CALL_TIME, 1, time_args);
	return r;
}

static vma_reader *reader_start(vma_reader *r)
{
	if (read_header(r) < 0) {
		vma_reader_close(r);
		return NULL;
	}
	return r;
}

/*
 * A regular file read from its start is mapped rather than read: the
 * copy out of the page cache was a tenth of the import.  Anything else (a
 * pipe, a terminal, a file half read) goes through the window.
 */
static bool map_file(vma_reader *r, FILE *f)
{
	struct stat st;
	int fd = fileno(f);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX || lseek(fd, 0, SEEK_CUR) != 0)
		return false;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return false;
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	r->map = m;
	r->mapsize = (size_t)st.st_size;
	r->data = m;
	r->len = r->mapsize;
	r->eof = true;
	return true;
}

static vma_reader *reader_over_file(vma_reader *r, FILE *f, bool own)
{
	r->file = f;
	r->own_file = own;
	if (!map_file(r, f)) {
		r->cap = READ_BLOCK;
		r->buf = trace_xmalloc(r->cap);
		r->data = r->buf;
	}
	return reader_start(r);
}

vma_reader *vma_reader_open_file(FILE *f, const char *name, trace_error *err)
{
	trace_error_clear(err);
	return reader_over_file(reader_new(name, err), f, false);
}

vma_reader *vma_reader_open(const char *path, trace_error *err)
{
	if (!path || !strcmp(path, "-"))
		return vma_reader_open_file(stdin, "-", err);
	FILE *f = fopen(path, "rb");
	if (!f) {
		trace_error_errno(err, path, "cannot open");
		return NULL;
	}
	trace_error_clear(err);
	return reader_over_file(reader_new(path, err), f, true);
}

vma_reader *vma_reader_open_memory(const void *data, size_t size, const char *name,
				   trace_error *err)
{
	trace_error_clear(err);
	vma_reader *r = reader_new(name, err);
	r->data = data ? data : "";
	r->len = data ? size : 0;
	r->eof = true;
	return reader_start(r);
}

const trace_header *vma_reader_header(vma_reader *r)
{
	return &r->header;
}

uint64_t vma_reader_position(const vma_reader *r)
{
	return r->base + r->pos;
}

void vma_reader_close(vma_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->mapsize);
	if (r->own_file)
		fclose(r->file);
	free(r->buf);
	free(r->name);
	trace_call_free(&r->call);
	trace_call_free(&r->frame);
	trace_call_free(&r->time);
	trace_arena_free(&r->harena);
	tbuf_free(&r->cur_time);
	trace_sigtab_free(r->sigtab);
	free(r);
}

/* ------------------------------------------------------------------ */
/* One line of a recording. */

static int bad_number(vma_reader *r, int why, const char *p, const char *e, const char *what,
		      const char *type)
{
	switch (why) {
	case NUM_EMPTY:
		return fail_at(r, p, "expected %s (a %s), found an empty column", what, type);
	case NUM_ZERO:
		return fail_at(r, p, "'%s' is not %s: a %s is written without leading zeros",
			       show(r, 0, p, e), what, type);
	case NUM_RANGE:
		return fail_at(r, p, "'%s' is out of range for %s (a %s)", show(r, 0, p, e),
			       what, type);
	default:
		return fail_at(r, p, "'%s' is not a number (expected %s, a %s)", show(r, 0, p, e),
			       what, type);
	}
}

static int parse_pointer(vma_reader *r, const char *p, const char *e, const vma_param *pa,
			 uint64_t *v)
{
	vma_pointer_style st = vma_pointer_parse(p, (size_t)(e - p), v);
	if (!st)
		return fail_at(r, p, "'%s' is not a pointer (%s), which is spelled like "
			       "000001D85B8B1A80 or 0x55d0a1b2c3d0 or (nil)",
			       show(r, 0, p, e), pa->name);
	if (st != r->style) {
		if (r->style != VMA_PTR_UNKNOWN)
			return fail_at(r, p, "pointer '%s' (%s) is spelled the %s way, but this "
				       "recording spells pointers the %s way", show(r, 0, p, e),
				       pa->name, vma_pointer_style_name(st),
				       vma_pointer_style_name(r->style));
		r->style = st; /* cannot happen: the look-ahead saw it first */
	}
	return 0;
}

/* One parameter column from p (not the final string); *end is where it
 * ends, at its comma or e. */
static int parse_column(vma_reader *r, trace_call *c, trace_value *a, const vma_param *pa,
			const char *p, const char *e, const char **end)
{
	uint64_t v;
	int k;
	const char *fe;
	switch ((vma_type)pa->type) {
	case VMA_UINT32:
	case VMA_UINT64:
		k = uint_column(p, e, pa->type == VMA_UINT32 ? UINT32_MAX : UINT64_MAX, &v, end);
		if (k)
			return bad_number(r, k, p, *end, pa->name, vma_type_name(pa->type));
		a->kind = TRACE_UINT;
		a->u = v;
		return 0;
	case VMA_BOOL:
		*end = fe = column_end(p, e);
		if (fe - p != 1 || (*p != '0' && *p != '1'))
			return fail_at(r, p, "'%s' is not a bool (%s), which is 0 or 1",
				       show(r, 0, p, fe), pa->name);
		a->kind = TRACE_BOOL;
		a->b = *p == '1';
		return 0;
	case VMA_POINTER: {
		/* the common case first: 16 digits, then the comma */
		uint32_t hi, lo;
		if (e - p >= 16 && (e - p == 16 || p[16] == ',') && r->style == VMA_PTR_WINDOWS &&
		    hex8_upper(p, &hi) && hex8_upper(p + 8, &lo)) {
			v = (uint64_t)hi << 32 | lo;
			*end = p + 16;
		} else {
			*end = fe = column_end(p, e);
			if (parse_pointer(r, p, fe, pa, &v) < 0)
				return -1;
		}
		a->kind = TRACE_POINTER;
		a->u = v;
		return 0;
	}
	case VMA_POINTER_LIST: {
		*end = fe = column_end(p, e);
		uint32_t n = 0;
		if (p < fe) {
			n = 1;
			for (const char *q = p; q < fe; q++)
				n += *q == ' ';
		}
		a->kind = TRACE_ARRAY;
		a->len = n;
		a->items = n ? trace_arena_alloc(&c->arena, n * sizeof(trace_value)) : NULL;
		for (uint32_t i = 0; i < n; i++) {
			const char *ie = p;
			while (ie < fe && *ie != ' ')
				ie++;
			if (parse_pointer(r, p, ie, pa, &v) < 0)
				return -1;
			a->items[i].kind = TRACE_POINTER;
			a->items[i].u = v;
			p = ie + 1;
		}
		return 0;
	}
	case VMA_STRING:
		break;
	}
	return fail_at(r, p, "internal: no column type %d", pa->type);
}

static const trace_func_sig *function_sig(vma_reader *r, size_t i)
{
	if (!r->sigs[i]) {
		const vma_function *f = &functions[i];
		const char *names[32];
		for (uint32_t k = 0; k < f->nparams; k++)
			names[k] = f->params[k].name;
		r->sigs[i] = trace_sigtab_func(r->sigtab, f->name, f->nparams, names);
	}
	return r->sigs[i];
}

static uint32_t count_commas(const char *p, const char *e)
{
	uint32_t n = 0;
	for (; p < e; p++)
		n += *p == ',';
	return n;
}

/*
 * thread,time,frame,function,parameters...  The line has no CR; its
 * trailing blanks belong to a final string column and nowhere else.
 */
static int parse_line(vma_reader *r, const char *s, const char *raw_end)
{
	const char *e = trim_blanks(s, raw_end);
	if (s == e)
		return fail_at(r, s, "an empty line (expected a call: "
			       "thread,time,frame,function,parameters...)");
	/* thread, time, frame, then the function up to the next comma */
	static const char too_few[] = "too few columns for a call (expected "
				      "thread,time,frame,function,parameters...)";
	uint64_t thread, frame, ms = 0;
	const char *p = s, *fe;
	int k = uint_column(p, e, UINT32_MAX, &thread, &fe);
	if (k)
		return bad_number(r, k, p, fe, "the thread id", "uint32");
	if (fe == e)
		return fail_at(r, e, too_few);
	const char *time = fe + 1, *time_end;
	bool canonical_time = time_column(time, e, &ms, &time_end);
	if (!canonical_time && !is_decimal(time, time_end))
		return fail_at(r, time, "'%s' is not a number (expected the time in seconds, "
			       "such as 0.017)", show(r, 0, time, time_end));
	if (time_end == e)
		return fail_at(r, e, too_few);
	p = time_end + 1;
	k = uint_column(p, e, UINT32_MAX, &frame, &fe);
	if (k)
		return bad_number(r, k, p, fe, "the frame index", "uint32");
	if (fe == e)
		return fail_at(r, e, too_few);
	const char *name = fe + 1, *name_end = column_end(name, e);
	const vma_function *f = lookup(r, name, (size_t)(name_end - name));
	if (!f) {
		if (name == name_end)
			return fail_at(r, name, "an empty function name");
		return fail_at(r, name, "unknown function '%s'", show(r, 0, name, name_end));
	}

	trace_call *c = &r->call;
	trace_call_reset(c);
	c->sig = function_sig(r, (size_t)(f - functions));
	c->thread = (uint32_t)thread;
	c->args = f->nparams ? trace_call_values(c, f->nparams) : NULL;
	p = name_end;
	bool rest_taken = false;
	for (uint32_t i = 0; i < f->nparams; i++) {
		const vma_param *pa = &f->params[i];
		trace_value *a = &c->args[i];
		if (p == e) {
			if (pa->type == VMA_STRING) {
				/* VmaReplay too reads a line without it */
				a->kind = TRACE_MISSING;
				rest_taken = true;
				break;
			}
			return fail_at(r, e, "too few columns: %s records %u parameter%s, this line "
				       "has %u", f->name, f->nparams, f->nparams == 1 ? "" : "s", i);
		}
		p++;
		if (pa->type == VMA_STRING) {
			a->kind = TRACE_STRING;
			a->len = (uint32_t)(raw_end - p);
			a->str = trace_arena_strndup(&c->arena, p, a->len);
			rest_taken = true;
			break;
		}
		if (parse_column(r, c, a, pa, p, e, &p) < 0)
			return -1;
	}
	if (!rest_taken && p != e) {
		uint32_t extra = count_commas(p, e);
		return fail_at(r, p + 1, "too many columns: %s records %u parameter%s, this line "
			       "has %u", f->name, f->nparams, f->nparams == 1 ? "" : "s",
			       f->nparams + extra);
	}

	/* the pseudo-calls that go before it */
	r->nqueue = r->iqueue = 0;
	if (!r->started || frame != r->cur_frame) {
		trace_call *fc = &r->frame;
		trace_call_reset(fc);
		fc->sig = r->frame_sig;
		fc->thread = c->thread;
		fc->args = trace_call_values(fc, 1);
		fc->args[0].kind = TRACE_UINT;
		fc->args[0].u = frame;
		r->cur_frame = (uint32_t)frame;
		r->queue[r->nqueue++] = fc;
	}
	size_t tlen = (size_t)(time_end - time);
	if (!r->started || r->cur_time.len != tlen || !same_bytes(r->cur_time.data, time, tlen)) {
		trace_call *tc = &r->time;
		trace_call_reset(tc);
		tc->sig = r->time_sig;
		tc->thread = c->thread;
		tc->args = trace_call_values(tc, 1);
		if (canonical_time) {
			tc->args[0].kind = TRACE_DOUBLE;
			tc->args[0].d = (double)ms / 1000.0;
		} else {
			/* any other spelling travels as the text it was */
			tc->args[0].kind = TRACE_STRING;
			tc->args[0].len = (uint32_t)tlen;
			tc->args[0].str = trace_arena_strndup(&tc->arena, time, tlen);
		}
		r->cur_time.len = 0;
		tbuf_add(&r->cur_time, time, tlen);
		r->queue[r->nqueue++] = tc;
	}
	r->started = true;
	r->queue[r->nqueue++] = c;
	return 0;
}

int vma_reader_next(vma_reader *r, trace_call **call, trace_error *err)
{
	r->err = err;
	if (r->iqueue == r->nqueue) {
		const char *s, *e;
		int k = take_line(r, &s, &e);
		if (k <= 0)
			return k;
		if (parse_line(r, s, e) < 0) {
			r->nqueue = r->iqueue = 0;
			return -1;
		}
	}
	trace_call *c = r->queue[r->iqueue++];
	c->no = r->next_no++;
	c->offset = (int64_t)(r->base + (uint64_t)(r->line_start - r->data));
	*call = c;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Writing. */

enum { KIND_FRAME = NFUNCTIONS, KIND_TIME, KIND_SKIP };

struct vma_writer {
	trace_sink k;
	trace_error *err;
	vma_pointer_style style;
	uint32_t frame;
	tbuf time;           /* the time column to write */
	tbuf line;
	tmap kinds;          /* signature -> function index or KIND_*, plus one */
};

__attribute__((format(printf, 3, 4)))
static int wfail(vma_writer *w, const trace_call *c, const char *fmt, ...)
{
	trace_error *err = w->err;
	trace_error_clear(err);
	if (c)
		err->call = (int64_t)c->no;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static void put_u64(tbuf *b, uint64_t v)
{
	if (b->cap - b->len < NUMBER_MAX)
		tbuf_grow(b, NUMBER_MAX);
	b->len = (size_t)(fmt_u64(b->data + b->len, v) - b->data);
}

/* %.3f as VMA wrote it: exact milliseconds take the fast way. */
static void put_seconds(tbuf *b, double d)
{
	if (d < 2e12) {
		uint64_t ms = (uint64_t)(d * 1000.0 + 0.5);
		if ((double)ms / 1000.0 == d) {
			put_u64(b, ms / 1000);
			char frac[4] = {'.', (char)('0' + ms / 100 % 10), (char)('0' + ms / 10 % 10),
					(char)('0' + ms % 10)};
			tbuf_add(b, frac, 4);
			return;
		}
	}
	tbuf_addf(b, "%.3f", d);
}

static vma_writer *writer_new(void)
{
	vma_writer *w = calloc(1, sizeof(*w));
	if (!w)
		abort();
	tbuf_add(&w->time, "0.000", 5);
	return w;
}

vma_writer *vma_writer_open(const char *path, trace_error *err)
{
	trace_error_clear(err);
	vma_writer *w = writer_new();
	if (trace_sink_open(&w->k, path, NULL, NULL, TRACE_FMT_TEXT, -1, err) < 0) {
		tbuf_free(&w->time);
		free(w);
		return NULL;
	}
	return w;
}

vma_writer *vma_writer_open_file(FILE *f, const char *name, trace_error *err)
{
	trace_error_clear(err);
	vma_writer *w = writer_new();
	if (trace_sink_open(&w->k, NULL, f, name, TRACE_FMT_TEXT, -1, err) < 0) {
		tbuf_free(&w->time);
		free(w);
		return NULL;
	}
	if (name)
		w->k.name = name;
	return w;
}

/* A line the reader takes back as it is: no line break inside, no CR at
 * the end (that would read as a CRLF ending). */
static const char *unwritable(const char *s, size_t n)
{
	if (memchr(s, '\n', n))
		return "a line break";
	if (n && s[n - 1] == '\r')
		return "a carriage return at its end";
	return NULL;
}

int vma_writer_header(vma_writer *w, const trace_header *h, trace_error *err)
{
	w->err = err;
	const char *version = trace_header_get(h, VMA_PROP_VERSION);
	if (!version)
		return wfail(w, NULL, "not a VMA stream: the header has no %s property "
			     "(vma-export writes streams that vma-import made)", VMA_PROP_VERSION);
	const char *comma = strchr(version, ',');
	uint64_t major, minor;
	if (!comma || scan_uint(version, comma, UINT32_MAX, &major) ||
	    scan_uint(comma + 1, comma + strlen(comma), UINT32_MAX, &minor) ||
	    major != VMA_VERSION_MAJOR || minor > VMA_VERSION_MINOR_MAX)
		return wfail(w, NULL, "header property %s is '%s', not a format version "
			     "vma-export writes (1,0 to 1,%d)", VMA_PROP_VERSION, version,
			     VMA_VERSION_MINOR_MAX);

	const char *style = trace_header_get(h, VMA_PROP_POINTERS);
	w->style = VMA_PTR_WINDOWS;
	if (style && !(w->style = vma_pointer_style_parse(style)))
		return wfail(w, NULL, "header property %s is '%s' (windows, windows32 or glibc)",
			     VMA_PROP_POINTERS, style);

	const char *lines = trace_header_get(h, VMA_PROP_CONFIG_LINES);
	uint64_t nlines = 0;
	bool want_config = minor >= VMA_VERSION_MINOR_CONFIG;
	if (lines && scan_uint(lines, lines + strlen(lines), UINT32_MAX, &nlines))
		return wfail(w, NULL, "header property %s is '%s', not a count",
			     VMA_PROP_CONFIG_LINES, lines);
	if (want_config != !!lines)
		return wfail(w, NULL, want_config ? "format %s has a Config section, but the "
			     "header has no %s property" : "format %s has no Config section, but "
			     "the header has a %s property", version, VMA_PROP_CONFIG_LINES);
	if (nlines > h->nprops)
		return wfail(w, NULL, "header property %s says %llu lines, the header has "
			     "fewer properties", VMA_PROP_CONFIG_LINES, (unsigned long long)nlines);

	/* config lines by number, whatever order the properties came in */
	const char **config = calloc(nlines ? nlines : 1, sizeof(*config));
	if (!config)
		abort();
	const size_t plen = strlen(VMA_PROP_CONFIG_PREFIX);
	for (uint32_t i = 0; i < h->nprops; i++) {
		const char *name = h->props[i].name;
		uint64_t idx;
		if (strncmp(name, VMA_PROP_CONFIG_PREFIX, plen) ||
		    scan_uint(name + plen, name + strlen(name), UINT32_MAX, &idx) || idx >= nlines)
			continue;
		config[idx] = h->props[i].value;
	}
	w->line.len = 0;
	tbuf_adds(&w->line, VMA_MAGIC_LINE "\n");
	tbuf_adds(&w->line, version);
	tbuf_addc(&w->line, '\n');
	if (want_config) {
		tbuf_adds(&w->line, "Config,Begin\n");
		for (uint64_t i = 0; i < nlines; i++) {
			const char *l = config[i];
			if (!l) {
				free(config);
				return wfail(w, NULL, "the header has no %s%llu property (%s says %llu "
					     "lines)", VMA_PROP_CONFIG_PREFIX, (unsigned long long)i,
					     VMA_PROP_CONFIG_LINES, (unsigned long long)nlines);
			}
			size_t n = strlen(l);
			const char *why = unwritable(l, n);
			const char *t = trim_blanks(l, l + n);
			if (!why && t - l == 10 && !memcmp(l, "Config,End", 10))
				why = "the text of the section's end";
			if (why) {
				free(config);
				return wfail(w, NULL, "header property %s%llu holds %s", 
					     VMA_PROP_CONFIG_PREFIX, (unsigned long long)i, why);
			}
			tbuf_add(&w->line, l, n);
			tbuf_addc(&w->line, '\n');
		}
		tbuf_adds(&w->line, "Config,End\n");
	}
	free(config);
	return trace_sink_write(&w->k, w->line.data, w->line.len, err);
}

/* What the record is (a function index or KIND_*), checked once per
 * signature: a VMA function's arguments must be the table's. */
static int record_kind(vma_writer *w, const trace_call *c)
{
	uint64_t v;
	if (tmap_get(&w->kinds, c->sig, &v))
		return (int)v - 1;
	const trace_func_sig *sig = c->sig;
	int kind;
	if (!strcmp(sig->name, VMA_CALL_FRAME) || !strcmp(sig->name, VMA_CALL_TIME)) {
		bool frame = !strcmp(sig->name, VMA_CALL_FRAME);
		const char *arg = frame ? "index" : "seconds";
		if (sig->nargs != 1 || strcmp(sig->arg_names[0], arg))
			return wfail(w, c, "%s takes one argument, %s", sig->name, arg);
		kind = frame ? KIND_FRAME : KIND_TIME;
	} else if (!strncmp(sig->name, VMA_PSEUDO_PREFIX, strlen(VMA_PSEUDO_PREFIX))) {
		kind = KIND_SKIP;
	} else {
		const vma_function *f = vma_function_lookup(sig->name, strlen(sig->name));
		if (!f)
			return wfail(w, c, "'%s' is not a VMA function (a VMA stream holds only "
				     "the calls VMA records)", sig->name);
		if (sig->nargs != f->nparams)
			return wfail(w, c, "%s has %u argument%s, VMA records %u", f->name,
				     sig->nargs, sig->nargs == 1 ? "" : "s", f->nparams);
		for (uint32_t i = 0; i < f->nparams; i++)
			if (strcmp(sig->arg_names[i], f->params[i].name))
				return wfail(w, c, "argument %u of %s is '%s', VMA records '%s' "
					     "there", i + 1, f->name, sig->arg_names[i],
					     f->params[i].name);
		kind = (int)(f - functions);
	}
	tmap_put(&w->kinds, c->sig, (uint64_t)kind + 1);
	return kind;
}

static int bad_arg(vma_writer *w, const trace_call *c, const vma_param *pa,
		   const trace_value *v)
{
	return wfail(w, c, "argument %s of %s is %s %s, not a %s", pa->name, c->sig->name,
		     v->kind == TRACE_ARRAY || v->kind == TRACE_UINT ? "an" : "a",
		     trace_value_kind_name((trace_value_kind)v->kind),
		     vma_type_name((vma_type)pa->type));
}

static inline bool pointer_value(const trace_value *v, uint64_t *out)
{
	switch (v->kind) {
	case TRACE_POINTER:
	case TRACE_UINT:
		*out = v->u;
		return true;
	case TRACE_NULL:
		*out = 0;
		return true;
	}
	return false;
}

/* The longest pointer column (glibc's 0x and 16 digits). */
#define POINTER_MAX 18

/*
 * Whether an argument can be written as its column, and the most bytes
 * it takes: every check happens before a byte of the line is written.
 */
static int check_arg(vma_writer *w, const trace_call *c, const vma_param *pa,
		     const trace_value *v, size_t *size)
{
	uint64_t u;
	switch ((vma_type)pa->type) {
	case VMA_UINT32:
	case VMA_UINT64:
		if (v->kind != TRACE_UINT)
			return bad_arg(w, c, pa, v);
		if (pa->type == VMA_UINT32 && v->u > UINT32_MAX)
			return wfail(w, c, "argument %s of %s is %llu, more than a uint32 holds",
				     pa->name, c->sig->name, (unsigned long long)v->u);
		*size += NUMBER_MAX;
		return 0;
	case VMA_BOOL:
		if (v->kind != TRACE_BOOL && !(v->kind == TRACE_UINT && v->u <= 1))
			return bad_arg(w, c, pa, v);
		*size += 1;
		return 0;
	case VMA_POINTER:
		if (!pointer_value(v, &u))
			return bad_arg(w, c, pa, v);
		*size += POINTER_MAX;
		return 0;
	case VMA_POINTER_LIST:
		if (v->kind != TRACE_ARRAY)
			return bad_arg(w, c, pa, v);
		for (uint32_t i = 0; i < v->len; i++)
			if (!pointer_value(&v->items[i], &u))
				return wfail(w, c, "item %u of %s (%s) is a %s, not a pointer", i,
					     pa->name, c->sig->name,
					     trace_value_kind_name((trace_value_kind)v->items[i].kind));
		*size += (size_t)v->len * (POINTER_MAX + 1);
		return 0;
	case VMA_STRING: {
		if (v->kind != TRACE_STRING)
			return bad_arg(w, c, pa, v);
		const char *why = unwritable(v->str, v->len);
		if (why)
			return wfail(w, c, "argument %s of %s holds %s, which a recording cannot",
				     pa->name, c->sig->name, why);
		*size += v->len;
		return 0;
	}
	}
	return bad_arg(w, c, pa, v);
}

static inline char *fmt_pointer(char *o, uint64_t v, vma_pointer_style style)
{
	if (style == VMA_PTR_WINDOWS) {
		for (int i = 15; i >= 0; i--)
			*o++ = hex_upper[(v >> (4 * i)) & 15];
		return o;
	}
	return o + vma_pointer_format(o, v, style);
}

/* Writes a checked argument's column at o. */
static char *fmt_arg(vma_writer *w, char *o, const vma_param *pa, const trace_value *v)
{
	uint64_t u = 0;
	switch ((vma_type)pa->type) {
	case VMA_UINT32:
	case VMA_UINT64:
		return fmt_u64(o, v->u);
	case VMA_BOOL:
		*o++ = (v->kind == TRACE_BOOL ? v->b : v->u != 0) ? '1' : '0';
		return o;
	case VMA_POINTER:
		pointer_value(v, &u);
		return fmt_pointer(o, u, w->style);
	case VMA_POINTER_LIST:
		for (uint32_t i = 0; i < v->len; i++) {
			if (i)
				*o++ = ' ';
			pointer_value(&v->items[i], &u);
			o = fmt_pointer(o, u, w->style);
		}
		return o;
	case VMA_STRING:
		memcpy(o, v->str, v->len);
		return o + v->len;
	}
	return o;
}

static int set_time(vma_writer *w, const trace_call *c)
{
	const trace_value *v = &c->args[0];
	tbuf *t = &w->time;
	t->len = 0;
	switch (v->kind) {
	case TRACE_DOUBLE:
	case TRACE_FLOAT: {
		double d = v->kind == TRACE_DOUBLE ? v->d : (double)v->f;
		if (!(d >= 0 && d < 1e300))
			return wfail(w, c, "%s: seconds must be a finite number, not negative",
				     VMA_CALL_TIME);
		put_seconds(t, d);
		return 0;
	}
	case TRACE_UINT:
		put_u64(t, v->u);
		tbuf_add(t, ".000", 4);
		return 0;
	case TRACE_STRING:
		if (!is_decimal(v->str, v->str + v->len)) {
			char text[64];
			return wfail(w, c, "%s: seconds '%s' is not a decimal number", VMA_CALL_TIME,
				     shown(text, sizeof(text), v->str, v->len));
		}
		tbuf_add(t, v->str, v->len);
		return 0;
	}
	return wfail(w, c, "%s: seconds is a %s, not a number", VMA_CALL_TIME,
		     trace_value_kind_name((trace_value_kind)v->kind));
}

int vma_writer_call(vma_writer *w, const trace_call *c, trace_error *err)
{
	w->err = err;
	int kind = record_kind(w, c);
	if (kind < 0)
		return -1;
	if (kind == KIND_SKIP)
		return 0;
	if (kind == KIND_TIME)
		return set_time(w, c);
	if (kind == KIND_FRAME) {
		const trace_value *v = &c->args[0];
		if (v->kind != TRACE_UINT || v->u > UINT32_MAX)
			return wfail(w, c, "%s: index must be a uint32", VMA_CALL_FRAME);
		w->frame = (uint32_t)v->u;
		return 0;
	}
	const vma_function *f = &functions[kind];
	uint32_t nwritten = f->nparams;
	size_t size = 3 * NUMBER_MAX + w->time.len + f->namelen + f->nparams + 1;
	for (uint32_t i = 0; i < f->nparams; i++) {
		const vma_param *pa = &f->params[i];
		if (c->args[i].kind == TRACE_MISSING) {
			/* only a final string may be left out, as the reader allows */
			if (pa->type == VMA_STRING) {
				nwritten = i;
				break;
			}
			return wfail(w, c, "argument %s of %s is missing", pa->name, f->name);
		}
		if (check_arg(w, c, pa, &c->args[i], &size) < 0)
			return -1;
	}

	/* the line goes straight into the output buffer when it fits */
	trace_sink *k = &w->k;
	if (k->cap - k->len < size && trace_sink_flush_block(k, err) < 0)
		return -1;
	bool direct = k->cap - k->len >= size;
	if (!direct) {
		w->line.len = 0;
		tbuf_grow(&w->line, size);
	}
	char *start = direct ? (char *)k->buf + k->len : w->line.data;
	char *o = fmt_u64(start, c->thread);
	*o++ = ',';
	for (size_t i = 0; i < w->time.len; i++)
		*o++ = w->time.data[i];
	*o++ = ',';
	o = fmt_u64(o, w->frame);
	*o++ = ',';
	memcpy(o, f->name, f->namelen);
	o += f->namelen;
	for (uint32_t i = 0; i < nwritten; i++) {
		*o++ = ',';
		o = fmt_arg(w, o, &f->params[i], &c->args[i]);
	}
	*o++ = '\n';
	if (direct) {
		k->len += (size_t)(o - start);
		return 0;
	}
	return trace_sink_write(k, start, (size_t)(o - start), err);
}

static void writer_release(vma_writer *w)
{
	tbuf_free(&w->time);
	tbuf_free(&w->line);
	tmap_free(&w->kinds);
	free(w);
}

int vma_writer_close(vma_writer *w, trace_error *err)
{
	int r = trace_sink_close(&w->k, err);
	writer_release(w);
	return r;
}

void vma_writer_abort(vma_writer *w)
{
	trace_sink_abort(&w->k);
	writer_release(w);
}
