/*
 * input.h: one input (a file or standard input), plain or compressed, read
 * as a stream of decompressed bytes (UTF-16 decoded to UTF-8).  Compression is recognised by the
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
 * The zstd decoder's window: a frame may ask for up to 2^31 bytes (zstd
 * --long=31), which the decoder would allocate and fill.  A frame whose
 * window is over 2^IN_ZSTD_WINDOW_LOG bytes (8 MiB, what zstd's levels 1 to
 * 19 use at most) is refused, with an error that names the limit and the
 * window the frame asks for, unless in_set_zstd_window_log, called before
 * the first in_read, raises the limit (IN_ZSTD_WINDOW_LOG_MIN to
 * IN_ZSTD_WINDOW_LOG_MAX, ZSTD_d_windowLogMax's bounds).
 */
#define IN_ZSTD_WINDOW_LOG 23
#define IN_ZSTD_WINDOW_LOG_MIN 10
#define IN_ZSTD_WINDOW_LOG_MAX 31
void in_set_zstd_window_log(in_reader *r, int log);

/*
 * Reads up to cap decompressed bytes into buf.  Returns the count, 0 at the
 * end of the input, or -1 with err filled in (a read error, corrupt or
 * truncated compressed data).  After -1 the reader only returns 0.
 */
ssize_t in_read(in_reader *r, char *buf, size_t cap, od_error *err);

/*
 * As in_read, without a copy: *data receives the reader's bytes, valid
 * until the next in_next, in_read or in_close.  At most 128 KiB at a time,
 * or for a plain regular file of 512 KiB or more, a window of its mapping
 * of up to 512 KiB (input.c, "Mapping a regular file"; a file truncated
 * while it is read is an error).  Otherwise reading and decompressing
 * run in a second thread that reads ahead into
 * a few buffers (512 KiB in all, input.c says how), unless
 * in_set_background(r, false) was called before the first read or the
 * thread cannot be started; either way the bytes and the errors are the
 * same.  After the end of the input (or an error) the thread has ended.
 */
ssize_t in_next(in_reader *r, const char **data, od_error *err);
void in_set_background(in_reader *r, bool on);
/* Gzip through zlib although the build has ISA-L's igzip (see input.c),
 * when called before the first read: the tests compare the two. */
void in_set_zlib(in_reader *r, bool on);
/* Whether the build decodes gzip with ISA-L's igzip. */
bool in_have_isal(void);

/*
 * The descriptor to poll before the next read, for a caller that must
 * not block in it (a pipe that pauses): readable when in_next or in_read
 * has something to return (or the end) without waiting.  -1 when the
 * reader may already hold bytes: read without waiting.
 */
int in_wait_fd(const in_reader *r);

/* "none", "gzip", "zstd", "bzip2" or "xz"; known after the first
 * in_read.  The formats that are not read (zip, lzip, lz4, 7-Zip,
 * compress) make the first in_read fail with an error that names the
 * format.  Text in UTF-16 with a byte order mark comes out as UTF-8. */
const char *in_compression(const in_reader *r);

void in_close(in_reader *r);
/*
 * Following a file that grows (oomdoc --follow): after in_read returned 0
 * at the end of a plain file, lets the next in_read read on from there,
 * and returns true.  False, and nothing changes, for standard input and
 * compressed input (read to its end only) and after an error.  *fd
 * receives the descriptor, for fstat and lseek (the reader owns it).
 */
bool in_resume(in_reader *r, int *fd);

#endif
