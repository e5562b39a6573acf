/*
 * input.h: one input (a file or standard input), plain or compressed, read
 * as a stream of decompressed bytes.  Compression is recognised by the
 * magic bytes, never by the name.
 */
#ifndef OD_INPUT_H
#define OD_INPUT_H

#include <sys/types.h>

#include "core.h"

typedef struct in_reader in_reader;

/* Opens path ("-" is standard input).  NULL with err filled in on failure. */
in_reader *in_open(const char *path, od_error *err);

/*
 * Reads up to cap decompressed bytes into buf.  Returns the count, 0 at the
 * end of the input, or -1 with err filled in (a read error, corrupt or
 * truncated compressed data).  After -1 the reader only returns 0.
 */
ssize_t in_read(in_reader *r, char *buf, size_t cap, od_error *err);

/* "none", "gzip" or "zstd"; known after the first in_read. */
const char *in_compression(const in_reader *r);

void in_close(in_reader *r);

#endif
