/*
 * apitrace's trace binary format: the tags of its events, call details
 * and values, as its trace_format.hpp numbers them.  Shared by the
 * reader (binreader.c) and the writer (writer.c); not installed.
 */
#ifndef TRACE_BINFORMAT_H
#define TRACE_BINFORMAT_H

enum { EV_ENTER = 0, EV_LEAVE = 1 };
enum { D_END = 0, D_ARG, D_RET, D_THREAD, D_BACKTRACE, D_FLAGS };
enum {
	V_NULL = 0, V_FALSE, V_TRUE, V_SINT, V_UINT, V_FLOAT, V_DOUBLE, V_STRING,
	V_BLOB, V_ENUM, V_BITMASK, V_ARRAY, V_STRUCT, V_OPAQUE, V_REPR, V_WSTRING,
};
/* Ours: the kinds of signature, as the seek index's log of definitions
 * tags them (seekindex.c). */
enum sig_kind { SK_FUNC = 0, SK_STRUCT, SK_ENUM, SK_BITMASK, SK_FRAME };

#endif
