/*
 * decide.h: whether an event read is a failure or a mention (decide.c).
 */
#ifndef OOMDOC_DECIDE_H
#define OOMDOC_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

/* The reasons dc_mention gives (static strings). */
extern const char dc_reason_weak[];
extern const char dc_reason_prose[];
extern const char dc_reason_explained[];
extern const char dc_reason_link[];
extern const char dc_reason_diff[];
extern const char dc_reason_compared[];
extern const char dc_reason_example[];
extern const char dc_reason_limit[];

/* The lines before a shell's kill looked at for the program's own error. */
#define DC_EXPLAIN_LINES 30

/*
 * The look back over the text before a line (whether a shell's kill there
 * follows the program's own other error), kept by the caller for the next
 * event: every hit of one line looks back at the same text, and the next
 * line's look back at 29 of the same lines, so that a log dense with
 * "Killed" would otherwise read each line 30 times.  The answer holds for
 * the same line start (an offset of the input) and the same length of
 * text before it, which are then the same bytes.  The lines the last look
 * back read are kept too, nearest first (a ring: line i is
 * line[(head + i) % DC_EXPLAIN_LINES]), in input offsets: where each ends,
 * where it starts, and whether it is such an error; a later look back
 * that reaches the end of the first of them takes them instead of reading
 * them again (see dc_kill_explained).  Zeroed: nothing kept.
 */
typedef struct dc_memo {
	bool set;
	bool explained;
	uint64_t at;            /* the line's start, an offset of the input */
	size_t bn;              /* the length of the text before it */
	uint64_t from;          /* where that text starts (at - bn) */
	int head, nlines;       /* the ring of the lines read */
	struct dc_line {
		uint64_t e, b;  /* where the look's line ends, and starts */
		bool error;     /* the program's own other error */
	} line[DC_EXPLAIN_LINES];
} dc_memo;

/*
 * Why the event ev is only a mention of an out-of-memory failure, or NULL
 * when it is one: line[0..n) is the input line the event starts on (its
 * prefix included), at its offset in the input, before[0..bn) the text
 * before that line that the scanner still holds (may be empty).  memo,
 * when not NULL, keeps the look back's answer for the next call (see
 * dc_memo).  The reason is one of dc_reason_*.
 */
const char *dc_mention(const od_event *ev, const char *line, size_t n,
    uint64_t at, const char *before, size_t bn, dc_memo *memo);

#endif
