/*
 * report_json.h: the JSON of oomdoc, through jansson.  The report
 * (oomdoc.report/2) is written by report_json.c and read back by live
 * mode (src/live/report_read.c) through one description of the event's
 * fields, od_event_fields (report_fields.c); the live report
 * (oomdoc.live/1, src/live/live_report_json.c) uses the same helpers.
 *
 * The null rule, for both schemas: a number that the source does not give
 * (stored negative: OD_UNKNOWN, a rank or GPU of -1) and a text that it
 * does not give (NULL or empty) are written as null.  A field whose row
 * says OD_JSON_NEVER_NULL is written as it is.  Read back, null, an absent
 * key and a value of the wrong type all mean "not given".
 *
 * Every string goes to jansson through od_escape_json (escape.c), which
 * replaces what is not valid UTF-8, and out through od_json_write, which
 * also escapes what a terminal or JavaScript could take for a control.
 */
#ifndef OD_REPORT_JSON_H
#define OD_REPORT_JSON_H

#include <jansson.h>

#include "core.h"

/* s[0..n) as a JSON string, invalid UTF-8 replaced (escape.c). */
json_t *od_escape_json(const char *s, size_t n);
/* Writes the text jansson made of a document (escape.c). */
void od_escape_json_dump(FILE *out, const char *s, size_t n);

/* The null rule for numbers and for texts; NULL only when out of memory. */
json_t *od_json_figure(int64_t v);
json_t *od_json_text(const char *s);
/* Sets obj[key] to v, taking v; false when v is NULL (out of memory). */
bool od_json_set(json_t *obj, const char *key, json_t *v);
/*
 * Writes root with two-space indents and keys in the order they were set,
 * escaping as od_escape_json_dump does (escape.c); false, with
 * nothing written, when out of memory.
 */
bool od_json_write(FILE *out, const json_t *root);

/* How a field is stored, from which follows how it is written and read. */
typedef enum {
	OD_JSON_END,            /* ends a table */
	OD_JSON_I64,            /* int64_t */
	OD_JSON_INT,            /* int */
	OD_JSON_U64,            /* uint64_t: a count, never negative */
	OD_JSON_BOOL,           /* bool */
	OD_JSON_TRISTATE,       /* int: -1 not given (null), 0 false, 1 true */
	OD_JSON_CHARS,          /* char[size], NUL-terminated */
	OD_JSON_CSTR,           /* const char *, borrowed (see below) */
	OD_JSON_ENUM,           /* an enum written by its name */
	OD_JSON_OBJECT,         /* a nested object of the same struct: fields */
	OD_JSON_ARRAY,          /* an array of structs: fields (in place, or
	                         * through a pointer: heap) */
	OD_JSON_CUSTOM,         /* written by get, read by set */
} od_json_type;

/* The null rule of a field; a row that names none has the rule above. */
typedef enum {
	OD_JSON_NULL_UNKNOWN,   /* the null rule above */
	OD_JSON_NEVER_NULL,     /* a number as it is, a text "" for none */
} od_json_null;

/* What the writer and the reader know beyond the struct. */
typedef struct {
	const od_input *inputs;     /* the writer: the run's inputs */
	const char *input;          /* the reader: the event's input name */
	const char *kind;           /* the reader: its kind, as spelt */
} od_json_ctx;

typedef struct od_json_field od_json_field;
struct od_json_field {
	const char *key;
	od_json_type type;
	od_json_null null;
	size_t at;                  /* offset of the field in the struct */
	size_t size;                /* OD_JSON_CHARS: the buffer's size */
	/* OD_JSON_ENUM: the name of each of count values (NULL: none). */
	const char *(*name)(int v);
	int count;
	/* OD_JSON_OBJECT and OD_JSON_ARRAY: the members; for an array, the
	 * element's size, the offset of the int that counts them, the most,
	 * and whether at holds a pointer to them (owned, NULL when there are
	 * none; the reader allocates room for max with the first). */
	const od_json_field *fields;
	size_t stride;
	size_t count_at;
	int max;
	bool heap;
	/* OD_JSON_CUSTOM: the value for base, and base set from v (v may be
	 * NULL, for an absent key; no set: not read back). */
	json_t *(*get)(const void *base, const od_json_ctx *cx);
	bool (*set)(void *base, const json_t *v, od_json_ctx *cx);
};

/* The fields of an event, in the order of the report. */
extern const od_json_field od_event_fields[];

/*
 * The event as a JSON object, or NULL when out of memory; cx->inputs names
 * its input.
 */
json_t *od_event_to_json(const od_event *ev, const od_json_ctx *cx);
/*
 * Sets what obj gives of ev, which must have been initialised
 * (od_event_init); cx->input and cx->kind receive the strings of obj.
 * Strings of kind OD_JSON_CSTR (the framework, a rule's id, title and
 * probe, a fix's id) borrow from obj; the message, the ranks, the causes
 * and their texts are allocated into ev, as od_event_clear expects.
 * False when out of memory.
 */
bool od_event_from_json(od_event *ev, const json_t *obj, od_json_ctx *cx);

#endif
