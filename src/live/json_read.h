/*
 * json_read.h: a small, bounded JSON reader (RFC 8259), for the JSON
 * reports that live mode reads back.
 *
 * The document is parsed whole into a table of values; a value is named
 * by its index (jr_ref), -1 meaning none, so that a lookup on a missing
 * key or a value of the wrong type simply yields -1 and the caller can
 * chain lookups without checking each step.  Limits: JR_INPUT_MAX bytes
 * of input, JR_VALUES_MAX values, JR_DEPTH_MAX levels of nesting.  Strings
 * must be valid UTF-8; escapes (surrogate pairs included) are decoded.
 *
 * Ownership: the document owns every string it returns.
 */
#ifndef OD_JSON_READ_H
#define OD_JSON_READ_H

#include "core.h"

#define JR_INPUT_MAX (64u * 1024 * 1024)
#define JR_VALUES_MAX (1u << 20)
#define JR_DEPTH_MAX 64

typedef enum {
	JR_NULL,
	JR_FALSE,
	JR_TRUE,
	JR_NUMBER,
	JR_STRING,
	JR_ARRAY,
	JR_OBJECT,
} jr_type;

typedef int jr_ref;
typedef struct jr_doc jr_doc;

/*
 * Parses text[0..len).  NULL with err filled in (line and column of the
 * fault, 1-based) when it is not one valid JSON value within the limits.
 */
jr_doc *jr_parse(const char *text, size_t len, od_error *err);
void jr_free(jr_doc *doc);

jr_ref jr_root(const jr_doc *doc);
/* The type of v; JR_NULL for -1. */
jr_type jr_type_of(const jr_doc *doc, jr_ref v);
/* The member key of an object, -1 when obj is not one or lacks it. */
jr_ref jr_get(const jr_doc *doc, jr_ref obj, const char *key);
/* The first element (or member) of an array (or object), and the next. */
jr_ref jr_first(const jr_doc *doc, jr_ref v);
jr_ref jr_next(const jr_doc *doc, jr_ref v);
/* The number of elements or members. */
size_t jr_count(const jr_doc *doc, jr_ref v);
/* The key of an object member (as returned by jr_first / jr_next). */
const char *jr_key(const jr_doc *doc, jr_ref member, size_t *len);
/* A string's text, NUL-terminated (it may hold other NULs); NULL if v is
 * not a string. */
const char *jr_str(const jr_doc *doc, jr_ref v, size_t *len);
/* A number that is an integer within int64_t; false otherwise. */
bool jr_int(const jr_doc *doc, jr_ref v, int64_t *out);
/* Any number. */
bool jr_num(const jr_doc *doc, jr_ref v, double *out);

#endif
