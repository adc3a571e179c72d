/*
 * A line of the text form scanned into libyaml's events without libyaml
 * (flowscan.c), where the line keeps to the flow YAML that the text
 * writer writes: one flow mapping of plain keys; values plain, double-
 * quoted, tagged (!name, !!name), or flow mappings and sequences.  Any
 * other line (anchors, single quotes, comments, multi-word or non-ASCII
 * scalars, a malformed line) is left to libyaml, which reads it, or says
 * what is wrong with it, as before.  The events are those libyaml makes
 * of the same line: type, tag, value, style and column (the unit test
 * and the fuzz target compare the two).
 */
#ifndef FLOWSCAN_H
#define FLOWSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

typedef struct trace_flowscan {
	yaml_event_t *ev;   /* the line's events, STREAM_START to STREAM_END */
	size_t nev, cap;
	size_t *at;         /* scratch: each event's value and tag in text */
	char *text;         /* the scalars' values and the tags, NUL-ended */
	size_t len, tcap;
} trace_flowscan;

/* Scans LINE (LEN bytes, no newline) into f->ev: true, or false where
 * libyaml must read it. */
bool trace_flowscan_line(trace_flowscan *f, const char *line, size_t len);
void trace_flowscan_free(trace_flowscan *f);

#endif
