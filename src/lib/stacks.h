/*
 * stacks.h: the recognisers of every stack other than PyTorch's caching
 * allocator (whose clause grammar lives in extract.c), as a table of
 * patterns whose named groups say which field they fill.
 */
#ifndef OD_STACKS_H
#define OD_STACKS_H

#include "core.h"

typedef struct sk_set sk_set;

/* A fixed string for the prefilter. */
typedef struct {
	const char *text;
	bool caseless;
} sk_anchor;

/* jit: compile the patterns with PCRE2's JIT. */
sk_set *sk_new(bool jit, od_error *err);
void sk_free(sk_set *s);

/* The number of recognisers (at most 64). */
int sk_count(const sk_set *s);

/*
 * Finds, among the recognisers not in the mask skip, the match that
 * starts earliest in t[0..tlen) and covers the hit at offset ht: it ends at
 * or after ht and starts no later than ht + 8.  Returns its index with *ms
 * set to its start, or -1.
 */
int sk_find(sk_set *s, const char *t, size_t tlen, size_t ht, uint64_t skip,
    size_t *ms);

/*
 * Fills ev from recogniser i matched at ms, and from the lines after it
 * where the recogniser reads on; *me is set to the end of what it took.
 * Returns false when the recogniser's condition is not met (an NCCL
 * wrapper without an out-of-memory CUDA failure, say).
 */
bool sk_fill(sk_set *s, int i, const char *t, size_t tlen, size_t ms,
    size_t *me, od_event *ev);

/* Whether recogniser i reads on into the lines after its match. */
bool sk_follows(const sk_set *s, int i);

/* The prefilter's strings, terminated by one whose text is NULL. */
const sk_anchor *sk_anchors(void);

#endif
