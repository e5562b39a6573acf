/*
 * structured.h: the structured-line reader.  Between the input (input.c)
 * and the scanner (scan.c), it turns the records of log shippers and
 * container runtimes (JSON lines, CRI lines) into the text lines that the
 * program wrote, and remembers which labels (od_labels) each line of that
 * text came with.  Lines that are not such records go through unchanged.
 */
#ifndef OD_STRUCTURED_H
#define OD_STRUCTURED_H

#include "core.h"

typedef struct sl_reader sl_reader;

/* Where the text goes: n bytes at p, in order. */
typedef void sl_emit_fn(void *arg, const char *p, size_t n);

/* A reader for one input at a time; NULL when out of memory. */
sl_reader *sl_new(void);
void sl_free(sl_reader *r);

/* Starts an input: forgets the last one's lines and labels. */
void sl_begin(sl_reader *r, sl_emit_fn *fn, void *arg);

/*
 * Reads the next n bytes of the input.  The text of every line they
 * complete goes to the function before sl_feed returns; a line that has
 * not ended yet is held (at most SL_RECORD_MAX bytes of it; a longer one
 * goes through as it is).
 */
void sl_feed(sl_reader *r, const char *p, size_t n);

/* The input ended: the line held, if any, goes out. */
void sl_finish(sl_reader *r);

/*
 * The labels of the text's byte at offset off (counted from the start of
 * the input's text), or NULL when its line came with none, or so long ago
 * that its labels were forgotten (more than SL_RUNS changes of labels).
 */
const od_labels *sl_labels_at(const sl_reader *r, uint64_t off);

/*
 * The input's line (0-based) that text line t (0-based, t at most the
 * text's lines so far) came from: a record's lines are all its line's, a
 * line joined from split records is its first record's.  Exact for the
 * last SL_RUNS changes of the relation, a guess before.
 */
uint64_t sl_input_line(const sl_reader *r, uint64_t t);

/* The last input line that text line t came from (a line joined from
 * split records ends on its last record's line). */
uint64_t sl_input_line_end(const sl_reader *r, uint64_t t);

/* The input's bytes so far, and its lines ('\n', and one more for a
 * last line without one). */
void sl_input(const sl_reader *r, uint64_t *bytes, uint64_t *lines);

/* The longest record read; a longer line goes through as it is. */
#define SL_RECORD_MAX (1024u * 1024)
/* A record's time is written padded to this width, then a blank. */
#define SL_TS_WIDTH 36
/* Changes of labels remembered. */
#define SL_RUNS 512

#endif
