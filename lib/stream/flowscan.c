/*
 * The text form's lines scanned without libyaml: see flowscan.h.
 *
 * libyaml made a parser a line (some 60 KB of buffers allocated and
 * freed), a token and an event a scalar, each value a malloc: 60% of
 * reading a text trace.  Here a line is one pass over its bytes into
 * events kept from line to line, and values copied into one buffer.
 * Whatever this does not take whole goes back to libyaml, so a line is
 * never read two ways: the scanner accepts a subset of YAML's flow
 * syntax, chosen small enough to be sure of, and the one the writer
 * writes.
 */
#include "flowscan.h"
#include "internal.h"

#include <stdint.h>
#include <string.h>

#define NONE SIZE_MAX
#define MAX_DEPTH 256 /* deeper lines are libyaml's */
#define SECONDARY "tag:yaml.org,2002:"

typedef struct scan {
	trace_flowscan *f;
	const char *s;
	size_t n, i;
} scan;

static int peek(const scan *c)
{
	return c->i < c->n ? (unsigned char)c->s[c->i] : -1;
}

static void skip_spaces(scan *c)
{
	while (c->i < c->n && c->s[c->i] == ' ')
		c->i++;
}

static void text_add(trace_flowscan *f, const char *p, size_t n)
{
	if (f->tcap - f->len < n) {
		f->tcap = (f->tcap + n) * 2;
		f->text = trace_xrealloc(f->text, f->tcap);
	}
	memcpy(f->text + f->len, p, n);
	f->len += n;
}

static void text_addc(trace_flowscan *f, char ch)
{
	text_add(f, &ch, 1);
}

/* An event at COLUMN; its value and tag are set by the caller. */
static yaml_event_t *push(scan *c, yaml_event_type_t type, size_t column, size_t tag)
{
	trace_flowscan *f = c->f;
	if (f->nev == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->ev = trace_xrealloc(f->ev, f->cap * sizeof(*f->ev));
		f->at = trace_xrealloc(f->at, f->cap * 2 * sizeof(*f->at));
	}
	yaml_event_t *e = &f->ev[f->nev];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->start_mark.column = e->end_mark.column = column;
	f->at[2 * f->nev] = NONE;
	f->at[2 * f->nev + 1] = tag;
	f->nev++;
	return e;
}

static bool is_alnum(int ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* A plain scalar's bytes: none of flow YAML's indicators, no space, no
 * colon; its first byte no indicator that may begin one ('-' neither:
 * "-x" is a scalar, "- x" is not). */
static bool plain_byte(int ch)
{
	return is_alnum(ch) || (ch && strchr("_.+-|/~()=<>;$^", ch));
}

static bool plain_first(const scan *c)
{
	int ch = peek(c);
	if (ch == '-')
		return c->i + 1 < c->n && plain_byte((unsigned char)c->s[c->i + 1]);
	return ch != '|' && ch != '>' && plain_byte(ch);
}

/* A plain scalar ends at a space, a comma, a closing bracket or ": "
 * (a key); false for anything else after it: a second word, a comment,
 * a colon inside. */
static bool plain_scalar(scan *c, size_t tag, size_t column)
{
	size_t start = c->i;
	while (c->i < c->n && plain_byte((unsigned char)c->s[c->i]))
		c->i++;
	size_t end = c->i;
	if (peek(c) == ':') {
		if (c->i + 1 >= c->n || c->s[c->i + 1] != ' ')
			return false;
	} else {
		skip_spaces(c);
		int ch = peek(c);
		if (ch != ',' && ch != '}' && ch != ']')
			return false;
	}
	trace_flowscan *f = c->f;
	yaml_event_t *e = push(c, YAML_SCALAR_EVENT, column, tag);
	e->data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
	e->data.scalar.length = end - start;
	e->data.scalar.plain_implicit = tag == NONE;
	f->at[2 * (f->nev - 1)] = f->len;
	text_add(f, c->s + start, end - start);
	text_addc(f, 0);
	return true;
}

/* The byte a one-letter escape stands for, or -1. */
static int escape(int ch)
{
	switch (ch) {
	case '0': return 0;
	case 'a': return '\a';
	case 'b': return '\b';
	case 't': return '\t';
	case 'n': return '\n';
	case 'v': return '\v';
	case 'f': return '\f';
	case 'r': return '\r';
	case 'e': return 0x1B;
	case ' ': return ' ';
	case '"': return '"';
	case '\\': return '\\';
	default: return -1;
	}
}

/* A double-quoted scalar of printable ASCII and the escapes the writer
 * writes (and a few more); what else it holds is libyaml's to judge. */
static bool quoted_scalar(scan *c, size_t tag, size_t column)
{
	trace_flowscan *f = c->f;
	size_t value = f->len;
	c->i++;
	for (;;) {
		size_t run = c->i;
		while (c->i < c->n && c->s[c->i] != '"' && c->s[c->i] != '\\' &&
		       c->s[c->i] >= 0x20 && c->s[c->i] < 0x7F)
			c->i++;
		text_add(f, c->s + run, c->i - run);
		int ch = peek(c);
		if (ch == '"')
			break;
		if (ch != '\\' || c->i + 1 >= c->n)
			return false;
		ch = (unsigned char)c->s[c->i + 1];
		c->i += 2;
		int simple = escape(ch);
		if (simple >= 0) {
			text_addc(f, (char)simple);
			continue;
		}
		int digits = ch == 'x' ? 2 : ch == 'u' ? 4 : ch == 'U' ? 8 : 0;
		if (!digits || c->n - c->i < (size_t)digits)
			return false;
		uint64_t cp;
		if (!trace_text_u64(c->s + c->i, (size_t)digits, 16, &cp) ||
		    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return false;
		c->i += (size_t)digits;
		char u[4];
		text_add(f, u, trace_utf8_encode(u, (uint32_t)cp));
	}
	c->i++;
	size_t n = f->len - value;
	text_addc(f, 0);
	yaml_event_t *e = push(c, YAML_SCALAR_EVENT, column, tag);
	e->data.scalar.style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	e->data.scalar.length = n;
	e->data.scalar.quoted_implicit = tag == NONE;
	f->at[2 * (f->nev - 1)] = value;
	return true;
}

/* "!!name", "!name" (the writer's "!struct:Name" too) or "!" and the
 * space after it: the tag as libyaml
 * resolves it with the default handles, its offset in text. */
static bool tag_of(scan *c, size_t *tag)
{
	trace_flowscan *f = c->f;
	size_t at = ++c->i;
	bool secondary = peek(c) == '!';
	if (secondary)
		at = ++c->i;
	while (c->i < c->n && (is_alnum((unsigned char)c->s[c->i]) ||
			       (c->s[c->i] && strchr("-_.:", c->s[c->i]))))
		c->i++;
	if (peek(c) != ' ' || (secondary && c->i == at))
		return false;
	*tag = f->len;
	if (secondary)
		text_add(f, SECONDARY, strlen(SECONDARY));
	else
		text_addc(f, '!');
	text_add(f, c->s + at, c->i - at);
	text_addc(f, 0);
	skip_spaces(c);
	return true;
}

enum { ITEM_FIRST, ITEM_NEXT, VALUE, AFTER };

static bool scan_line(scan *c)
{
	char stack[MAX_DEPTH];
	int depth = 0, state;
	skip_spaces(c);
	if (peek(c) != '{')
		return false;
	push(c, YAML_STREAM_START_EVENT, 0, NONE);
	push(c, YAML_DOCUMENT_START_EVENT, c->i, NONE);
	push(c, YAML_MAPPING_START_EVENT, c->i, NONE);
	stack[depth++] = '}';
	c->i++;
	state = ITEM_FIRST;
	for (;;) {
		skip_spaces(c);
		int ch = peek(c);
		if (state == ITEM_FIRST && ch == stack[depth - 1]) {
			state = AFTER;
		} else if (state == ITEM_FIRST || state == ITEM_NEXT) {
			if (stack[depth - 1] == ']') {
				state = VALUE;
				continue;
			}
			/* a key: a plain scalar, then ": " */
			if (!plain_first(c) || !plain_scalar(c, NONE, c->i) || peek(c) != ':')
				return false;
			c->i += 2;
			state = VALUE;
			continue;
		}
		if (state == VALUE) {
			size_t column = c->i, tag = NONE;
			if (ch == '!' && !tag_of(c, &tag))
				return false;
			ch = peek(c);
			if (ch == '{' || ch == '[') {
				if (depth == MAX_DEPTH)
					return false;
				yaml_event_t *e = push(c, ch == '{' ? YAML_MAPPING_START_EVENT
							       : YAML_SEQUENCE_START_EVENT,
						       column, tag);
				if (ch == '{')
					e->data.mapping_start.implicit = tag == NONE;
				else
					e->data.sequence_start.implicit = tag == NONE;
				stack[depth++] = ch == '{' ? '}' : ']';
				c->i++;
				state = ITEM_FIRST;
				continue;
			}
			if (ch == '"') {
				if (!quoted_scalar(c, tag, column))
					return false;
			} else if (!plain_first(c) || !plain_scalar(c, tag, column)) {
				return false;
			}
			state = AFTER;
			continue;
		}
		/* AFTER a node: a comma and the next item, or the end */
		skip_spaces(c);
		ch = peek(c);
		if (ch == ',') {
			c->i++;
			skip_spaces(c);
			if (peek(c) == stack[depth - 1])
				return false; /* a trailing comma */
			state = ITEM_NEXT;
			continue;
		}
		if (ch != stack[depth - 1])
			return false;
		push(c, ch == '}' ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT, c->i, NONE);
		c->i++;
		if (--depth == 0)
			break;
		state = AFTER;
	}
	skip_spaces(c);
	if (c->i != c->n)
		return false;
	push(c, YAML_DOCUMENT_END_EVENT, c->n, NONE);
	push(c, YAML_STREAM_END_EVENT, c->n, NONE);
	return true;
}

bool trace_flowscan_line(trace_flowscan *f, const char *line, size_t len)
{
	scan c = { f, line, len, 0 };
	f->nev = 0;
	f->len = 0;
	if (!scan_line(&c))
		return false;
	/* the values and tags where the text buffer ended up */
	for (size_t k = 0; k < f->nev; k++) {
		yaml_event_t *e = &f->ev[k];
		yaml_char_t *tag = f->at[2 * k + 1] == NONE ? NULL
							   : (yaml_char_t *)f->text + f->at[2 * k + 1];
		if (e->type == YAML_SCALAR_EVENT) {
			e->data.scalar.value = (yaml_char_t *)f->text + f->at[2 * k];
			e->data.scalar.tag = tag;
		} else if (e->type == YAML_MAPPING_START_EVENT) {
			e->data.mapping_start.tag = tag;
		} else if (e->type == YAML_SEQUENCE_START_EVENT) {
			e->data.sequence_start.tag = tag;
		}
	}
	return true;
}

void trace_flowscan_free(trace_flowscan *f)
{
	free(f->ev);
	free(f->at);
	free(f->text);
	memset(f, 0, sizeof(*f));
}
