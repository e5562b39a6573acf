/*
 * decide.h: whether an event read is a failure or a mention (decide.c).
 */
#ifndef OOMDOC_DECIDE_H
#define OOMDOC_DECIDE_H

#include <stddef.h>

#include "core.h"

/* The reasons dc_mention gives (static strings). */
extern const char dc_reason_weak[];
extern const char dc_reason_prose[];
extern const char dc_reason_explained[];

/*
 * Why the event ev is only a mention of an out-of-memory failure, or NULL
 * when it is one: line[0..n) is the input line the event starts on (its
 * prefix included), before[0..bn) the text before that line that the
 * scanner still holds (may be empty).  The reason is one of dc_reason_*.
 */
const char *dc_mention(const od_event *ev, const char *line, size_t n,
    const char *before, size_t bn);

#endif
