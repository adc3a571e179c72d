/*
 * What the unit tests and the fuzz target ask of lib/stream/flowscan.c:
 * where it takes a line, that its events are libyaml's for that line
 * (type, tag, value, length, style and column of each).
 */
#ifndef TRACEKIT_FLOWSCAN_AGREE_H
#define TRACEKIT_FLOWSCAN_AGREE_H

#include "flowscan.h"

#include <stdio.h>
#include <string.h>

static inline const char *flowscan_tag(const yaml_event_t *e)
{
	const yaml_char_t *t = e->type == YAML_SCALAR_EVENT	    ? e->data.scalar.tag
			       : e->type == YAML_MAPPING_START_EVENT  ? e->data.mapping_start.tag
			       : e->type == YAML_SEQUENCE_START_EVENT ? e->data.sequence_start.tag
								      : NULL;
	return t ? (const char *)t : "";
}

/* 1: taken, and libyaml's events alike; 0: left to libyaml; -1: taken,
 * and unlike libyaml's (WHY says where). */
static inline int flowscan_agree(const char *line, size_t len, char *why, size_t whylen)
{
	trace_flowscan f = { 0 };
	if (!trace_flowscan_line(&f, line, len)) {
		trace_flowscan_free(&f);
		return 0;
	}
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)line, len);
	int rc = 1;
	for (size_t k = 0; k < f.nev && rc == 1; k++) {
		yaml_event_t e;
		const yaml_event_t *m = &f.ev[k];
		if (!yaml_parser_parse(&p, &e)) {
			snprintf(why, whylen, "event %zu: libyaml fails: %s", k,
				 p.problem ? p.problem : "?");
			rc = -1;
			break;
		}
		bool same = e.type == m->type && !strcmp(flowscan_tag(&e), flowscan_tag(m));
		if (same && e.type == YAML_SCALAR_EVENT)
			same = e.data.scalar.length == m->data.scalar.length &&
			       !memcmp(e.data.scalar.value, m->data.scalar.value, e.data.scalar.length) &&
			       e.data.scalar.style == m->data.scalar.style;
		if (same && e.type != YAML_STREAM_START_EVENT && e.type != YAML_DOCUMENT_START_EVENT &&
		    e.type != YAML_DOCUMENT_END_EVENT && e.type != YAML_STREAM_END_EVENT)
			same = e.start_mark.column == m->start_mark.column;
		if (!same) {
			snprintf(why, whylen,
				 "event %zu: libyaml type %d tag '%s' column %zu value '%.40s', "
				 "flowscan type %d tag '%s' column %zu value '%.40s'",
				 k, e.type, flowscan_tag(&e), e.start_mark.column,
				 e.type == YAML_SCALAR_EVENT ? (const char *)e.data.scalar.value : "",
				 m->type, flowscan_tag(m), m->start_mark.column,
				 m->type == YAML_SCALAR_EVENT ? (const char *)m->data.scalar.value : "");
			rc = -1;
		}
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	trace_flowscan_free(&f);
	return rc;
}

/* Each line of TEXT: how many flowscan took; the first unlike libyaml's,
 * or the first it left to libyaml, in WHY (empty when there is none). */
static inline size_t flowscan_agree_lines(const char *text, size_t len, size_t *lines, char *why,
				   size_t whylen)
{
	size_t took = 0;
	*lines = 0;
	why[0] = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char one[512];
		int rc = flowscan_agree(p, n, one, sizeof(one));
		(*lines)++;
		took += rc == 1;
		if (rc != 1 && !why[0])
			snprintf(why, whylen, "line %zu (%.60s): %s", *lines, p,
				 rc == 0 ? "left to libyaml" : one);
		p += n + 1;
	}
	return took;
}

#endif
