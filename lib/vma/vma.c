/*
 * VMA call recordings and the record stream: the function table and
 * pointer spellings.  The CSV reader is vma_reader.c, the writer
 * vma_writer.c.  The mapping itself is the contract in vma-import(1);
 * this folder is the one place it lives.
 */
#include "vma_columns.h"

#include <stdarg.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* The functions.  Names and column order are those of VMA's "Recording
 * file format" document; vmaAllocateMemoryPages, vmaFreeMemoryPages and
 * vmaSetPoolName are not in it but recorders wrote them (VmaReplay reads
 * them with these columns). */

/* Column runs that several functions share, in the document's order. */
#define MEMORY_REQUIREMENTS \
	{"vkMemoryRequirements.size", VMA_UINT64, false}, \
	{"vkMemoryRequirements.alignment", VMA_UINT64, false}, \
	{"vkMemoryRequirements.memoryTypeBits", VMA_UINT32, false}
#define ALLOCATION_CREATE_INFO \
	{"allocationCreateInfo.flags", VMA_UINT32, false}, \
	{"allocationCreateInfo.usage", VMA_UINT32, false}, \
	{"allocationCreateInfo.requiredFlags", VMA_UINT32, false}, \
	{"allocationCreateInfo.preferredFlags", VMA_UINT32, false}, \
	{"allocationCreateInfo.memoryTypeBits", VMA_UINT32, false}, \
	{"allocationCreateInfo.pool", VMA_POINTER, false}
/* the allocation made, then the user data (a string column, last) */
#define ALLOCATION_MADE \
	{"allocation", VMA_POINTER, true}, \
	{"allocationCreateInfo.pUserData", VMA_STRING, false}

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
	ALLOCATION_CREATE_INFO,
	ALLOCATION_MADE,
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
	ALLOCATION_CREATE_INFO,
	ALLOCATION_MADE,
};

static const vma_param p_allocate_memory[] = {
	MEMORY_REQUIREMENTS,
	ALLOCATION_CREATE_INFO,
	ALLOCATION_MADE,
};

static const vma_param p_allocate_memory_pages[] = {
	MEMORY_REQUIREMENTS,
	ALLOCATION_CREATE_INFO,
	{"allocations", VMA_POINTER_LIST, true},
	{"allocationCreateInfo.pUserData", VMA_STRING, false},
};

/* The document's order; VmaReplay read flags fourth, which the recorder
 * never wrote. */
static const vma_param p_allocate_memory_for[] = {
	MEMORY_REQUIREMENTS,
	{"requiresDedicatedAllocation", VMA_BOOL, false},
	{"prefersDedicatedAllocation", VMA_BOOL, false},
	ALLOCATION_CREATE_INFO,
	ALLOCATION_MADE,
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

const vma_function vma_function_table[NFUNCTIONS] = {
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

_Static_assert(ARRAY_LEN(vma_function_table) == NFUNCTIONS, "NFUNCTIONS: one a function");

const vma_function *vma_functions(size_t *n)
{
	*n = NFUNCTIONS;
	return vma_function_table;
}

const vma_function *vma_function_lookup(const char *name, size_t len)
{
	/* every name starts "vma"; the length tells most apart */
	for (size_t i = 0; i < NFUNCTIONS; i++)
		if (vma_function_table[i].namelen == len && !memcmp(vma_function_table[i].name, name, len))
			return &vma_function_table[i];
	return NULL;
}

_Static_assert(NFUNCTIONS < VMA_RECORD_FRAME, "VMA_RECORD_*: above every index");

__attribute__((format(printf, 3, 4)))
static int record_bad(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return VMA_RECORD_BAD;
}

int vma_record_kind(const trace_func_sig *sig, const char *holder, char *why, size_t cap)
{
	if (!strcmp(sig->name, VMA_CALL_FRAME) || !strcmp(sig->name, VMA_CALL_TIME)) {
		bool frame = !strcmp(sig->name, VMA_CALL_FRAME);
		const char *arg = frame ? "index" : "seconds";
		if (sig->nargs != 1 || strcmp(sig->arg_names[0], arg))
			return record_bad(why, cap, "%s takes one argument, %s", sig->name, arg);
		return frame ? VMA_RECORD_FRAME : VMA_RECORD_TIME;
	}
	if (!strncmp(sig->name, VMA_PSEUDO_PREFIX, strlen(VMA_PSEUDO_PREFIX)))
		return VMA_RECORD_SKIP;
	const vma_function *f = vma_function_lookup(sig->name, strlen(sig->name));
	if (!f)
		return record_bad(why, cap, "'%s' is not a VMA function (a VMA %s holds only the "
				  "calls VMA records)", sig->name, holder);
	if (sig->nargs != f->nparams)
		return record_bad(why, cap, "%s has %u argument%s, VMA records %u", f->name,
				  sig->nargs, sig->nargs == 1 ? "" : "s", f->nparams);
	for (uint32_t i = 0; i < f->nparams; i++)
		if (strcmp(sig->arg_names[i], f->params[i].name))
			return record_bad(why, cap, "argument %u of %s is '%s', VMA records '%s' there",
					  i + 1, f->name, sig->arg_names[i], f->params[i].name);
	return (int)(f - vma_function_table);
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

const char vma_hex_upper[] = "0123456789ABCDEF";
static const char hex_lower[] = "0123456789abcdef";

/* The spellings, indexed by style: one table for both directions. */
static const char *const pointer_style_names[] = {
	[VMA_PTR_UNKNOWN] = "unknown",
	[VMA_PTR_WINDOWS] = "windows",
	[VMA_PTR_WINDOWS32] = "windows32",
	[VMA_PTR_GLIBC] = "glibc",
};

const char *vma_pointer_style_name(vma_pointer_style s)
{
	if ((size_t)s >= ARRAY_LEN(pointer_style_names))
		s = VMA_PTR_UNKNOWN;
	return pointer_style_names[s];
}

vma_pointer_style vma_pointer_style_parse(const char *name)
{
	for (size_t i = VMA_PTR_UNKNOWN + 1; i < ARRAY_LEN(pointer_style_names); i++)
		if (!strcmp(name, pointer_style_names[i]))
			return (vma_pointer_style)i;
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
		out[n++] = vma_hex_upper[(v >> (4 * i)) & 15];
	out[n] = 0;
	return n;
}
