/*
 * pickle.h: a restricted reader of Python pickles (pickle.c), for the
 * memory snapshots that PyTorch's torch.cuda.memory._dump_snapshot()
 * writes: plain dicts, lists, tuples, str, bytes, int, float, bool and
 * None, and nothing that imports or calls.
 */
#ifndef OD_PICKLE_H
#define OD_PICKLE_H

#include <jansson.h>

#include "core.h"

/* The documented bounds of one pickle (man/oomdoc.1, SNAPSHOTS). */
#define OD_PICKLE_MAX_BYTES ((size_t)512 << 20) /* the input */
#define OD_PICKLE_MAX_DEPTH 64          /* containers inside containers */
#define OD_PICKLE_MAX_VALUES 16000000   /* values made, memo copies none */
#define OD_PICKLE_MAX_STACK 1000000     /* entries on the stack and marks */
#define OD_PICKLE_MAX_MEMO 16000000     /* memo slots */

/*
 * Reads the pickle data[0..len) into a jansson value: dicts become
 * objects (keys that are int, float, bool or None become their JSON
 * text), lists and tuples arrays, bytes a string when they are UTF-8 and
 * null when not, an int outside int64_t a real.  name is the file's name
 * for errors.  Returns a new reference (the caller's to json_decref), or
 * NULL with err filled in: the byte offset and the opcode at fault, for
 * an opcode that would import or call (GLOBAL, REDUCE, ...), one that is
 * not of a memory snapshot, a bound passed, a bad memo reference or a
 * truncated input.
 */
json_t *od_pickle_read(const unsigned char *data, size_t len,
    const char *name, od_error *err);

/* Whether data starts as a pickle of protocol 2 or later does (the PROTO
 * opcode, 0x80, and a protocol from 2 to 5). */
bool od_pickle_sniff(const unsigned char *data, size_t len);

#endif
