/*
 * input.c: reading plain, gzip, zstd, bzip2 and xz input as one
 * decompressed stream, and UTF-16 text as UTF-8.
 *
 * A plain regular file is read through windows of its mapping, with no
 * copy (see "Mapping a regular file" below).  Otherwise, reading and
 * decompressing run in a second thread, which reads ahead
 * into a ring of fixed buffers (see "The reader thread" below); gzip is
 * decoded by ISA-L's igzip when the build has it (in_read_isal), else by
 * zlib.  The raw bytes go through a fixed buffer of IN_RAW_SIZE; nothing
 * here grows with the size of the input but the decoders' state, which is
 * bounded: the
 * zstd window (in_set_zstd_window_log), xz's memory limit (IN_XZ_MEMLIMIT),
 * bzip2's blocks (900 kB at most, the format's own bound).  The format is
 * decided on the first bytes:
 * 1f 8b is gzip (several concatenated members are read as one stream, and
 * zero bytes after the last member are ignored, as gzip -d does),
 * 28 b5 2f fd is zstd and 5? 2a 4d 18 a zstd skippable frame, which pzstd
 * writes first (several frames, skippable ones anywhere, likewise),
 * "BZh" and a block's magic is bzip2 (several streams, as pbzip2 and
 * lbzip2 write them, likewise), fd "7zXZ" 00 is xz (several streams and
 * their padding, as xz --decompress reads them: liblzma's
 * LZMA_CONCATENATED).  The formats that are not read (lzip, lz4, lzop, zip,
 * 7-Zip, compress) are an error that names them, not text; anything else
 * is read as it is.
 *
 * After decompression, text that starts with a UTF-16 byte order mark
 * (ff fe little-endian, as Windows PowerShell 5.1's `>` writes it; fe ff
 * big-endian) is decoded to UTF-8, streaming: a code unit or a surrogate
 * pair cut by a read is completed by the next one, and a lone surrogate or
 * an odd last byte becomes U+FFFD, as iconv's and Python's "replace" error
 * handlers do.  The mark itself is left out.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#ifdef OOMDOC_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif
/* ZSTD_getFrameHeader, to name the window a frame asks for. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include "input.h"

#define IN_RAW_SIZE (128 * 1024)
/* The bytes read before deciding the format, and at the start of each
 * zstd frame: a frame header's largest size (ZSTD_FRAMEHEADERSIZE_MAX). */
#define IN_MAGIC_MAX 18
_Static_assert(IN_MAGIC_MAX == ZSTD_FRAMEHEADERSIZE_MAX, "a frame header");
_Static_assert(IN_ZSTD_WINDOW_LOG_MAX == ZSTD_WINDOWLOG_MAX_64 &&
    IN_ZSTD_WINDOW_LOG_MIN == ZSTD_WINDOWLOG_MIN, "zstd's bounds");

/* The memory xz's decoder may take: 80 MiB is enough for xz -9 and -9e
 * (a 64 MiB dictionary, 65 MiB to decode, xz(1)'s table of presets);
 * a stream that asks for more is refused with an error that says so. */
#define IN_XZ_MEMLIMIT (UINT64_C(80) << 20)

/* The decoded text's buffer, for the UTF-16 check and decoding. */
#define IN_TEXT_SIZE (64 * 1024)

typedef enum {
	IN_UNDECIDED, IN_PLAIN, IN_GZIP, IN_ZSTD, IN_BZIP2, IN_XZ
} in_format;

/* What the decompressed bytes are: not yet known, UTF-8 (or anything
 * read as it is), UTF-16 in either byte order. */
typedef enum { IN_TEXT_UNKNOWN, IN_TEXT_BYTES, IN_TEXT_UTF16LE,
	IN_TEXT_UTF16BE } in_text;

struct in_reader {
	int fd;
	bool own_fd;
	char name[256];
	in_format format;
	bool raw_eof;
	bool done;              /* end reached or an error reported */
	unsigned char *raw;     /* IN_RAW_SIZE bytes */
	size_t raw_pos, raw_len;
	uint64_t raw_total;     /* compressed bytes consumed, for messages */
	z_stream z;
	bool z_ready;
	bool z_member_done;     /* between two gzip members */
	/* Whether gzip goes through zlib although ISA-L is there
	 * (in_set_zlib), and ISA-L's decoder (in_read_isal). */
	bool use_zlib;
#ifdef OOMDOC_HAVE_ISAL
	struct inflate_state *isal;
#endif
	ZSTD_DCtx *zd;
	int zd_window_log;      /* the largest window allowed, log2 bytes */
	bool zd_boundary;       /* between two zstd frames */
	uint64_t zd_skip;       /* bytes of a skippable frame left to skip */
	bz_stream bz;
	bool bz_ready;
	bool bz_stream_done;    /* between two bzip2 streams */
	lzma_stream xz;
	bool xz_ready;
	bool xz_done;
	/* The text layer: decompressed bytes not handed over yet (tx_pos to
	 * tx_len of tx, IN_TEXT_SIZE bytes), and for UTF-16 a code unit's
	 * first byte and a high surrogate waiting for the rest. */
	in_text text;
	unsigned char *tx;
	size_t tx_pos, tx_len;
	bool tx_eof;
	int tx_byte;            /* -1: none */
	unsigned tx_high;       /* 0: none */
	/* A character's UTF-8 bytes that did not fit into the caller's
	 * buffer (two characters: a replacement and a code point). */
	unsigned char stash[8];
	size_t stash_pos, stash_len;
	/* The reader thread (in_ring_start), NULL while none runs; whether
	 * one was started or refused (one per reader at most), and whether
	 * one may be (in_set_background). */
	struct in_ring *ring;
	bool ring_tried;
	bool background;
	/* The thread's stop pipe, polled with fd before each read of an
	 * input that may block (a pipe, a terminal); -1: plain reads. */
	int stop_fd;
	/* Without a thread: in_next's buffer (IN_SLOT_SIZE bytes), and
	 * whether the last direct read filled what it was given. */
	char *view;
	bool last_full;
	/* in_read through the thread: the rest of the slot in_next gave. */
	const char *part;
	size_t part_pos, part_len;
	/* A regular file read through windows of its mapping (in_map_start):
	 * whether it is, the window handed out last (NULL: none), the file
	 * offset in_next goes on from, and the size it reads up to. */
	bool mapped;
	char *map;
	size_t map_len;
	off_t map_pos, map_size;
	size_t map_window;
};

/*
 * The reader thread.  Reading and decompressing run in a second thread
 * that fills a ring of IN_SLOTS buffers of IN_SLOT_SIZE bytes, each with
 * the result of one in_read_direct (a count, 0 at the end, or -1 and its
 * error); the caller takes them in order (in_next), and hands each back
 * when it asks for the next.  Two pipes count the slots as semaphores: a
 * byte in full per slot filled, a byte in free per slot handed back
 * (IN_SLOTS at the start).  A pipe is what the caller can poll
 * (in_wait_fd), and a thread that waits on one takes no CPU; the bytes
 * cost four system calls per slot, about 30 000 for 1 GiB.  The slots
 * are 512 KiB in all, the peak memory the thread adds (a pipe gives at
 * most 64 KiB a read, a slot gets one read).  The thread stops after the
 * slot that ends the input, or when in_close closes the write ends of the
 * stop pipe (it polls that pipe with the input before each read that may
 * block, in_sysread) and of the free one (its wait for a free slot ends).
 * It blocks every signal, so that they reach the
 * caller's thread as before (a poll or read there ends with EINTR).  The
 * fences pair each slot's writes with the reads of the thread that takes
 * the byte after them.
 */
#define IN_SLOT_SIZE (128 * 1024)
#define IN_SLOTS 4

struct in_slot {
	char *data;             /* IN_SLOT_SIZE bytes */
	ssize_t n;
	od_error err;           /* when n < 0 */
};

struct in_ring {
	pthread_t thread;
	int full[2], free[2], stop[2];
	char *mem;              /* the slots' data, IN_SLOTS * IN_SLOT_SIZE */
	struct in_slot slot[IN_SLOTS];
	unsigned put;           /* the thread's next slot */
	unsigned take;          /* the caller's next slot */
	bool holding;           /* the caller holds slot take - 1 */
};

/* Reads from the input's descriptor, as read(2) does (EINTR retried); in
 * the reader thread, first waits for the input or the stop pipe. */
static ssize_t
in_sysread(in_reader *r, void *buf, size_t n)
{
	ssize_t got;

	while (r->stop_fd >= 0) {
		struct pollfd p[2] = {
			{ .fd = r->fd, .events = POLLIN },
			{ .fd = r->stop_fd, .events = POLLIN },
		};
		int rc = poll(p, 2, -1);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc > 0 && p[1].revents != 0) {
			errno = ECANCELED;
			return -1;
		}
		break;
	}
	do {
		got = read(r->fd, buf, n);
	} while (got < 0 && errno == EINTR);
	return got;
}

in_reader *
in_open(const char *path, od_error *err)
{
	in_reader *r;
	struct stat st;
	const char *shown = strcmp(path, "-") == 0 ? "(standard input)" : path;
	int fd;

	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			od_error_set(err, shown, 0, 0, "%s", strerror(errno));
			return NULL;
		}
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		od_error_set(err, shown, 0, 0, "is a directory");
		if (fd != STDIN_FILENO)
			close(fd);
		return NULL;
	}
	r = calloc(1, sizeof *r);
	if (r != NULL)
		r->raw = malloc(IN_RAW_SIZE);
	if (r == NULL || r->raw == NULL) {
		od_error_set(err, shown, 0, 0, "out of memory");
		if (r != NULL)
			free(r);
		if (fd != STDIN_FILENO)
			close(fd);
		return NULL;
	}
	r->fd = fd;
	r->own_fd = fd != STDIN_FILENO;
	r->zd_window_log = IN_ZSTD_WINDOW_LOG;
	r->background = true;
	r->stop_fd = -1;
	snprintf(r->name, sizeof r->name, "%s", shown);
	return r;
}

void
in_set_zstd_window_log(in_reader *r, int log)
{
	r->zd_window_log = log;
}

/* Refills the raw buffer when it is empty.  Returns false on a read error. */
static bool
in_fill(in_reader *r, od_error *err)
{
	ssize_t n;

	if (r->raw_pos < r->raw_len || r->raw_eof)
		return true;
	r->raw_pos = r->raw_len = 0;
	n = in_sysread(r, r->raw, IN_RAW_SIZE);
	if (n < 0) {
		od_error_set(err, r->name, 0, 0, "read error: %s", strerror(errno));
		return false;
	}
	if (n == 0)
		r->raw_eof = true;
	r->raw_len = (size_t)n;
	r->raw_total += (uint64_t)n;
	return true;
}

/*
 * Makes at least want (at most IN_MAGIC_MAX) unread raw bytes available,
 * moving what is left to the front of the buffer first, unless the input
 * ends before.  Returns false on a read error.
 */
static bool
in_want(in_reader *r, size_t want, od_error *err)
{
	ssize_t n;

	if (r->raw_len - r->raw_pos >= want || r->raw_eof)
		return true;
	memmove(r->raw, r->raw + r->raw_pos, r->raw_len - r->raw_pos);
	r->raw_len -= r->raw_pos;
	r->raw_pos = 0;
	/* A short read from a pipe may give fewer: read on. */
	while (r->raw_len < want && !r->raw_eof) {
		n = in_sysread(r, r->raw + r->raw_len,
		    IN_RAW_SIZE - r->raw_len);
		if (n < 0) {
			od_error_set(err, r->name, 0, 0, "read error: %s",
			    strerror(errno));
			return false;
		}
		if (n == 0)
			r->raw_eof = true;
		r->raw_len += (size_t)n;
		r->raw_total += (uint64_t)n;
	}
	return true;
}

static uint32_t
in_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Whether p[0..n) starts a zstd frame or a skippable frame. */
static bool
in_zstd_magic(const unsigned char *p, size_t n)
{
	return n >= 4 && (in_le32(p) == ZSTD_MAGICNUMBER ||
	    (in_le32(p) & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START);
}

/*
 * bzip2: "BZh", the block size '1'-'9', then a block's magic (the digits
 * of pi) or the end of the stream's (those of sqrt(pi)); bzip2 1.0.8,
 * decompress.c, BZ_X_MAGIC_1 to BZ_X_BLKHDR_6.
 */
static bool
in_bzip2_magic(const unsigned char *p, size_t n)
{
	return n >= 10 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' &&
	    p[3] <= '9' && (memcmp(p + 4, "\x31\x41\x59\x26\x53\x59", 6) == 0 ||
	    memcmp(p + 4, "\x17\x72\x45\x38\x50\x90", 6) == 0);
}

/* xz: the stream header's magic (The .xz File Format 1.1.0, 2.1.1.1). */
static bool
in_xz_magic(const unsigned char *p, size_t n)
{
	return n >= 6 && memcmp(p, "\xfd" "7zXZ\0", 6) == 0;
}

/*
 * The compressed formats that are not read, by their magic (each format's
 * specification: lzip's "LZIP", the LZ4 frame format 1.6 (its frame and
 * its legacy frame, 0x184C2102, which lz4 -l and the Linux kernel write),
 * lzop's nine bytes (lzop_magic in lzop 1.04's src/lzop.c), PKZIP's local
 * file header and empty archive, 7-Zip's signature header, compress(1)'s
 * 1f 9d).
 */
static const struct {
	const char *magic;
	size_t len;
	const char *name;
	const char *tool;
} in_unsupported[] = {
	{ .magic = "LZIP", .len = 4, .name = "lzip", .tool = "lzip -dc" },
	{ .magic = "\x04\x22\x4d\x18", .len = 4, .name = "lz4",
	  .tool = "lz4 -dc" },
	{ .magic = "\x02\x21\x4c\x18", .len = 4, .name = "lz4 (legacy)",
	  .tool = "lz4 -dc" },
	{ .magic = "\x89" "LZO\0\r\n\x1a\n", .len = 9, .name = "lzop",
	  .tool = "lzop -dc" },
	{ .magic = "PK\x03\x04", .len = 4, .name = "zip", .tool = "unzip -p" },
	{ .magic = "PK\x05\x06", .len = 4, .name = "zip", .tool = "unzip -p" },
	{ .magic = "7z\xbc\xaf\x27\x1c", .len = 6, .name = "7-Zip",
	  .tool = "7z x -so" },
	{ .magic = "\x1f\x9d", .len = 2, .name = "compress (.Z)",
	  .tool = "gzip -dc" },
};

/* The name of the format that p[0..n) starts, if it is one not read. */
static const char *
in_unsupported_format(const unsigned char *p, size_t n, const char **tool)
{
	size_t i;

	for (i = 0; i < sizeof in_unsupported / sizeof in_unsupported[0]; i++) {
		if (n >= in_unsupported[i].len && memcmp(p,
		    in_unsupported[i].magic, in_unsupported[i].len) == 0) {
			*tool = in_unsupported[i].tool;
			return in_unsupported[i].name;
		}
	}
	return NULL;
}

/* Reads the first bytes and decides the format from their magic. */
static bool
in_decide(in_reader *r, od_error *err)
{
	const char *other, *tool;

	if (!in_want(r, IN_MAGIC_MAX, err))
		return false;
	if (r->raw_len >= 2 && r->raw[0] == 0x1f && r->raw[1] == 0x8b) {
		r->format = IN_GZIP;
#ifdef OOMDOC_HAVE_ISAL
		if (!r->use_zlib) {
			r->isal = malloc(sizeof *r->isal);
			if (r->isal == NULL) {
				od_error_set(err, r->name, 0, 0,
				    "out of memory");
				return false;
			}
			isal_inflate_init(r->isal);
			r->isal->crc_flag = ISAL_GZIP;
			return true;
		}
#endif
		if (inflateInit2(&r->z, 15 + 16) != Z_OK) {
			od_error_set(err, r->name, 0, 0,
			    "cannot start the gzip decoder");
			return false;
		}
		r->z_ready = true;
	} else if (in_zstd_magic(r->raw, r->raw_len)) {
		r->format = IN_ZSTD;
		r->zd = ZSTD_createDCtx();
		if (r->zd == NULL || ZSTD_isError(ZSTD_DCtx_setParameter(r->zd,
		    ZSTD_d_windowLogMax, r->zd_window_log))) {
			od_error_set(err, r->name, 0, 0,
			    "cannot start the zstd decoder");
			return false;
		}
		r->zd_boundary = true;
	} else if (in_bzip2_magic(r->raw, r->raw_len)) {
		r->format = IN_BZIP2;
		if (BZ2_bzDecompressInit(&r->bz, 0, 0) != BZ_OK) {
			od_error_set(err, r->name, 0, 0,
			    "cannot start the bzip2 decoder");
			return false;
		}
		r->bz_ready = true;
	} else if (in_xz_magic(r->raw, r->raw_len)) {
		r->format = IN_XZ;
		if (lzma_stream_decoder(&r->xz, IN_XZ_MEMLIMIT,
		    LZMA_CONCATENATED) != LZMA_OK) {
			od_error_set(err, r->name, 0, 0,
			    "cannot start the xz decoder");
			return false;
		}
		r->xz_ready = true;
	} else if ((other = in_unsupported_format(r->raw, r->raw_len,
	    &tool)) != NULL) {
		od_error_set(err, r->name, 0, 0, "%s-compressed input is not "
		    "supported: decompress it first (%s FILE | oomdoc)", other,
		    tool);
		return false;
	} else {
		r->format = IN_PLAIN;
	}
	return true;
}

static ssize_t
in_read_plain(in_reader *r, char *buf, size_t cap, od_error *err)
{
	size_t n;
	ssize_t got;

	/* Nothing buffered and room for a lot: read straight into buf,
	 * saving a copy of every byte. */
	if (r->raw_pos == r->raw_len && !r->raw_eof && cap >= IN_RAW_SIZE) {
		got = in_sysread(r, buf, cap);
		if (got < 0) {
			od_error_set(err, r->name, 0, 0, "read error: %s",
			    strerror(errno));
			return -1;
		}
		if (got == 0)
			r->raw_eof = true;
		r->raw_total += (uint64_t)got;
		return got;
	}

	if (!in_fill(r, err))
		return -1;
	n = r->raw_len - r->raw_pos;
	if (n > cap)
		n = cap;
	memcpy(buf, r->raw + r->raw_pos, n);
	r->raw_pos += n;
	return (ssize_t)n;
}

/*
 * After a gzip member: zero bytes (a tape's or a block device's padding)
 * are skipped without a word, as gzip -d does (gzip 1.12, gzip.c:
 * "trailing zero bytes ignored" only with --verbose).  Returns 1 when
 * another member starts, 0 when the raw input read so far is used up, and
 * -1 with err set for anything else, where gzip -d warns and exits with 2
 * too.
 */
static int
in_gzip_after_member(in_reader *r, od_error *err)
{
	while (r->raw_pos < r->raw_len && r->raw[r->raw_pos] == 0)
		r->raw_pos++;
	if (r->raw_pos == r->raw_len)
		return 0;
	if (r->raw[r->raw_pos] != 0x1f) {
		od_error_set(err, r->name, 0, 0,
		    "trailing data after the gzip stream was ignored");
		return -1;
	}
	return 1;
}

static void
in_gzip_truncated(const in_reader *r, od_error *err)
{
	od_error_set(err, r->name, 0, 0, "truncated gzip input: it ends "
	    "inside a member after %llu compressed bytes",
	    (unsigned long long)r->raw_total);
}

static ssize_t
in_read_gzip(in_reader *r, char *buf, size_t cap, od_error *err)
{
	int zr;

	if (cap > (1u << 30))
		cap = 1u << 30;
	r->z.next_out = (unsigned char *)buf;
	r->z.avail_out = (uInt)cap;
	while (r->z.avail_out == (uInt)cap) {
		if (!in_fill(r, err))
			return -1;
		if (r->raw_pos == r->raw_len) {
			/* The raw input ended. */
			if (r->z_member_done)
				return 0;
			in_gzip_truncated(r, err);
			return -1;
		}
		if (r->z_member_done) {
			/* Another member follows, or trailing garbage. */
			int next = in_gzip_after_member(r, err);

			if (next < 0)
				return -1;
			if (next == 0)
				continue;
			inflateReset(&r->z);
			r->z_member_done = false;
		}
		r->z.next_in = r->raw + r->raw_pos;
		r->z.avail_in = (uInt)(r->raw_len - r->raw_pos);
		zr = inflate(&r->z, Z_NO_FLUSH);
		r->raw_pos = r->raw_len - r->z.avail_in;
		if (zr == Z_STREAM_END) {
			r->z_member_done = true;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			od_error_set(err, r->name, 0, 0, "corrupt gzip data: %s",
			    r->z.msg != NULL ? r->z.msg : "inflate failed");
			return -1;
		}
	}
	return (ssize_t)(cap - r->z.avail_out);
}

#ifdef OOMDOC_HAVE_ISAL
/*
 * ISA-L's igzip (isa-l 2.30, igzip/igzip_inflate.c, isal_inflate with
 * crc_flag ISAL_GZIP: the header is parsed and the trailer's CRC-32 and
 * length are checked, as zlib's inflate does for windowBits 15 + 16).  It
 * decodes gzip's deflate about 3 times as fast as zlib 1.2.13 (figures
 * in bench/RESULTS.md).  The members, the zero bytes after the last one,
 * trailing garbage and truncation go as in_read_gzip takes them, with the
 * same messages; for corrupt data ISA-L has an error code where zlib has
 * a message, and the message given is zlib's for that kind of fault.
 */
static const char *
in_isal_message(int rc)
{
	switch (rc) {
	case ISAL_INVALID_BLOCK:
		return "invalid block type";
	case ISAL_INVALID_SYMBOL:
		return "invalid literal/length code";
	case ISAL_INVALID_LOOKBACK:
		return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER:
		return "incorrect header check";
	case ISAL_UNSUPPORTED_METHOD:
		return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM:
		return "incorrect data check";
	default:
		return "inflate failed";
	}
}

static ssize_t
in_read_isal(in_reader *r, char *buf, size_t cap, od_error *err)
{
	struct inflate_state *z = r->isal;
	int zr;

	if (cap > (1u << 30))
		cap = 1u << 30;
	z->next_out = (uint8_t *)buf;
	z->avail_out = (uint32_t)cap;
	while (z->avail_out == (uint32_t)cap) {
		if (!in_fill(r, err))
			return -1;
		if (r->raw_pos == r->raw_len) {
			if (r->z_member_done)
				return 0;
			/* ISA-L reads ahead into its own buffers: what it
			 * has decoded may still be to write. */
			z->next_in = r->raw + r->raw_pos;
			z->avail_in = 0;
			zr = isal_inflate(z);
			if (zr < 0) {
				od_error_set(err, r->name, 0, 0,
				    "corrupt gzip data: %s",
				    in_isal_message(zr));
				return -1;
			}
			if (z->block_state == ISAL_BLOCK_FINISH)
				r->z_member_done = true;
			if (r->z_member_done || z->avail_out < (uint32_t)cap)
				continue;
			in_gzip_truncated(r, err);
			return -1;
		}
		if (r->z_member_done) {
			int next = in_gzip_after_member(r, err);

			if (next < 0)
				return -1;
			if (next == 0)
				continue;
			isal_inflate_reset(z);
			z->crc_flag = ISAL_GZIP;
			z->next_out = (uint8_t *)buf;
			z->avail_out = (uint32_t)cap;
			r->z_member_done = false;
		}
		z->next_in = r->raw + r->raw_pos;
		z->avail_in = (uint32_t)(r->raw_len - r->raw_pos);
		zr = isal_inflate(z);
		r->raw_pos = r->raw_len - z->avail_in;
		if (zr < 0) {
			od_error_set(err, r->name, 0, 0, "corrupt gzip data: %s",
			    in_isal_message(zr));
			return -1;
		}
		if (z->block_state == ISAL_BLOCK_FINISH)
			r->z_member_done = true;
	}
	return (ssize_t)(cap - z->avail_out);
}
#endif

void
in_set_zlib(in_reader *r, bool on)
{
	r->use_zlib = on;
}

/* The smallest log2 of a window of size bytes. */
static int
in_log2_up(uint64_t size)
{
	int k = 0;

	while (k < 63 && (UINT64_C(1) << k) < size)
		k++;
	return k;
}

/*
 * At a boundary between zstd frames: skips a skippable frame's header,
 * and refuses a frame whose window is over the limit before the decoder
 * allocates it.  Returns false with err filled in.
 */
static bool
in_zstd_frame_start(in_reader *r, od_error *err)
{
	const unsigned char *p;
	ZSTD_frameHeader h;
	size_t avail;

	if (!in_want(r, IN_MAGIC_MAX, err))
		return false;
	p = r->raw + r->raw_pos;
	avail = r->raw_len - r->raw_pos;
	if (avail == 0)
		return true;            /* the end, between frames */
	if (!in_zstd_magic(p, avail)) {
		od_error_set(err, r->name, 0, 0, "corrupt zstd data: no frame "
		    "starts after %llu compressed bytes",
		    (unsigned long long)(r->raw_total - avail));
		return false;
	}
	if (in_le32(p) != ZSTD_MAGICNUMBER) {
		if (avail < 8) {
			od_error_set(err, r->name, 0, 0, "truncated zstd input: "
			    "it ends inside a skippable frame's header");
			return false;
		}
		r->zd_skip = in_le32(p + 4);
		r->raw_pos += 8;
		return true;
	}
	if (ZSTD_getFrameHeader(&h, p, avail) == 0 &&
	    h.frameType == ZSTD_frame &&
	    h.windowSize > (UINT64_C(1) << r->zd_window_log)) {
		int need = in_log2_up(h.windowSize);

		od_error_set(err, r->name, 0, 0, "a zstd frame needs a window of "
		    "%llu MiB (window log %d, as zstd --long or --ultra make), "
		    "over the limit of %llu MiB (window log %d): "
		    "--zstd-window-log %d lifts it",
		    (unsigned long long)((h.windowSize + (1u << 20) - 1) >> 20),
		    need, (unsigned long long)(UINT64_C(1) <<
		    r->zd_window_log >> 20), r->zd_window_log, need);
		return false;
	}
	r->zd_boundary = false;
	return true;
}

static ssize_t
in_read_zstd(in_reader *r, char *buf, size_t cap, od_error *err)
{
	ZSTD_outBuffer out = { buf, cap, 0 };

	while (out.pos == 0) {
		ZSTD_inBuffer in;
		size_t zr;

		if (r->zd_boundary && r->zd_skip == 0 &&
		    !in_zstd_frame_start(r, err))
			return -1;
		if (!in_fill(r, err))
			return -1;
		if (r->raw_pos == r->raw_len) {
			if (r->zd_boundary && r->zd_skip == 0)
				return 0;
			od_error_set(err, r->name, 0, 0,
			    "truncated zstd input: it ends inside a %sframe "
			    "after %llu compressed bytes",
			    r->zd_skip > 0 ? "skippable " : "",
			    (unsigned long long)r->raw_total);
			return -1;
		}
		if (r->zd_skip > 0) {
			size_t n = r->raw_len - r->raw_pos;

			if (n > r->zd_skip)
				n = (size_t)r->zd_skip;
			r->raw_pos += n;
			r->zd_skip -= n;
			continue;
		}
		if (r->zd_boundary)
			continue;       /* a skippable frame's header, skipped */
		in.src = r->raw + r->raw_pos;
		in.size = r->raw_len - r->raw_pos;
		in.pos = 0;
		zr = ZSTD_decompressStream(r->zd, &out, &in);
		r->raw_pos += in.pos;
		if (ZSTD_isError(zr) && ZSTD_getErrorCode(zr) ==
		    ZSTD_error_frameParameter_windowTooLarge) {
			od_error_set(err, r->name, 0, 0, "a zstd frame needs a "
			    "window over the limit of %llu MiB (window log %d): "
			    "--zstd-window-log lifts it, up to %d",
			    (unsigned long long)(UINT64_C(1) <<
			    r->zd_window_log >> 20), r->zd_window_log,
			    IN_ZSTD_WINDOW_LOG_MAX);
			return -1;
		}
		if (ZSTD_isError(zr)) {
			od_error_set(err, r->name, 0, 0, "corrupt zstd data: %s",
			    ZSTD_getErrorName(zr));
			return -1;
		}
		/* 0: the frame is decoded and flushed; another may follow. */
		if (zr == 0)
			r->zd_boundary = true;
	}
	return (ssize_t)out.pos;
}

static ssize_t
in_read_bzip2(in_reader *r, char *buf, size_t cap, od_error *err)
{
	int br;

	if (cap > (1u << 30))
		cap = 1u << 30;
	r->bz.next_out = buf;
	r->bz.avail_out = (unsigned)cap;
	while (r->bz.avail_out == (unsigned)cap) {
		if (!in_fill(r, err))
			return -1;
		if (r->raw_pos == r->raw_len) {
			if (r->bz_stream_done)
				return 0;
			od_error_set(err, r->name, 0, 0,
			    "truncated bzip2 input: it ends inside a stream "
			    "after %llu compressed bytes",
			    (unsigned long long)r->raw_total);
			return -1;
		}
		if (r->bz_stream_done) {
			/* Another stream follows (pbzip2, lbzip2 and cat
			 * write several), or trailing garbage, which
			 * bzip2 -d warns of and ignores. */
			if (!in_want(r, 10, err))
				return -1;
			if (!in_bzip2_magic(r->raw + r->raw_pos,
			    r->raw_len - r->raw_pos)) {
				od_error_set(err, r->name, 0, 0,
				    "trailing data after the bzip2 stream was "
				    "ignored");
				return -1;
			}
			BZ2_bzDecompressEnd(&r->bz);
			r->bz_ready = false;
			if (BZ2_bzDecompressInit(&r->bz, 0, 0) != BZ_OK) {
				od_error_set(err, r->name, 0, 0,
				    "cannot start the bzip2 decoder");
				return -1;
			}
			r->bz_ready = true;
			r->bz.next_out = buf;
			r->bz.avail_out = (unsigned)cap;
			r->bz_stream_done = false;
		}
		r->bz.next_in = (char *)r->raw + r->raw_pos;
		r->bz.avail_in = (unsigned)(r->raw_len - r->raw_pos);
		br = BZ2_bzDecompress(&r->bz);
		r->raw_pos = r->raw_len - r->bz.avail_in;
		if (br == BZ_STREAM_END) {
			r->bz_stream_done = true;
		} else if (br != BZ_OK) {
			od_error_set(err, r->name, 0, 0, "corrupt bzip2 data "
			    "(libbz2 error %d) after %llu compressed bytes", br,
			    (unsigned long long)r->raw_total);
			return -1;
		}
	}
	return (ssize_t)(cap - r->bz.avail_out);
}

static ssize_t
in_read_xz(in_reader *r, char *buf, size_t cap, od_error *err)
{
	lzma_ret xr;

	if (r->xz_done)
		return 0;
	r->xz.next_out = (uint8_t *)buf;
	r->xz.avail_out = cap;
	while (r->xz.avail_out == cap) {
		if (!in_fill(r, err))
			return -1;
		r->xz.next_in = r->raw + r->raw_pos;
		r->xz.avail_in = r->raw_len - r->raw_pos;
		/* LZMA_FINISH at the end of the input: the decoder then
		 * says whether the last stream was complete. */
		xr = lzma_code(&r->xz, r->raw_eof && r->xz.avail_in == 0 ?
		    LZMA_FINISH : LZMA_RUN);
		r->raw_pos = r->raw_len - r->xz.avail_in;
		if (xr == LZMA_STREAM_END) {
			r->xz_done = true;
			break;
		}
		if (xr == LZMA_MEMLIMIT_ERROR) {
			od_error_set(err, r->name, 0, 0, "an xz stream needs "
			    "%llu MiB to decode, over the limit of %llu MiB: "
			    "decompress it first (xz -dc FILE | oomdoc)",
			    (unsigned long long)((lzma_memusage(&r->xz) +
			    (1u << 20) - 1) >> 20),
			    (unsigned long long)(IN_XZ_MEMLIMIT >> 20));
			return -1;
		}
		if (xr == LZMA_BUF_ERROR && r->raw_eof) {
			od_error_set(err, r->name, 0, 0,
			    "truncated xz input: it ends inside a stream "
			    "after %llu compressed bytes",
			    (unsigned long long)r->raw_total);
			return -1;
		}
		if (xr != LZMA_OK && xr != LZMA_BUF_ERROR) {
			od_error_set(err, r->name, 0, 0, "corrupt xz data "
			    "(liblzma error %d) after %llu compressed bytes",
			    (int)xr, (unsigned long long)r->raw_total);
			return -1;
		}
	}
	return (ssize_t)(cap - r->xz.avail_out);
}

/* Reads decompressed bytes, before the text layer. */
static ssize_t
in_read_bytes(in_reader *r, char *buf, size_t cap, od_error *err)
{
	switch (r->format) {
	case IN_GZIP:
#ifdef OOMDOC_HAVE_ISAL
		if (r->isal != NULL)
			return in_read_isal(r, buf, cap, err);
#endif
		return in_read_gzip(r, buf, cap, err);
	case IN_ZSTD:
		return in_read_zstd(r, buf, cap, err);
	case IN_BZIP2:
		return in_read_bzip2(r, buf, cap, err);
	case IN_XZ:
		return in_read_xz(r, buf, cap, err);
	default:
		return in_read_plain(r, buf, cap, err);
	}
}

/* Fills the text buffer when it is empty.  Returns false on an error. */
static bool
in_text_fill(in_reader *r, od_error *err)
{
	ssize_t n;

	if (r->tx_pos < r->tx_len || r->tx_eof)
		return true;
	r->tx_pos = r->tx_len = 0;
	n = in_read_bytes(r, (char *)r->tx, IN_TEXT_SIZE, err);
	if (n < 0)
		return false;
	if (n == 0)
		r->tx_eof = true;
	r->tx_len = (size_t)n;
	return true;
}

/* Writes code point cp as UTF-8 at out; returns its length (1 to 4). */
static size_t
in_utf8_put(unsigned cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

#define IN_REPLACEMENT 0xfffdu

/* Hands code point cp over: into out[*k..cap) as far as it fits, the
 * rest into the reader's stash, which the next call empties first. */
static void
in_put(in_reader *r, unsigned cp, unsigned char *out, size_t cap, size_t *k)
{
	unsigned char u8[4];
	size_t n = in_utf8_put(cp, u8), i;

	for (i = 0; i < n; i++) {
		if (*k < cap)
			out[(*k)++] = u8[i];
		else
			r->stash[r->stash_len++] = u8[i];
	}
}

/*
 * Decodes UTF-16 from the text buffer into buf as UTF-8.  A high
 * surrogate waits in tx_high for its low one; one not followed by a low
 * surrogate, and a low one alone, become U+FFFD, as does an odd byte at
 * the end.  Returns the bytes written, 0 at the end, -1 on an error.
 */
static ssize_t
in_read_utf16(in_reader *r, char *buf, size_t cap, od_error *err)
{
	unsigned char *out = (unsigned char *)buf;
	size_t k = 0;
	bool le = r->text == IN_TEXT_UTF16LE;

	while (k < cap && r->stash_pos < r->stash_len)
		out[k++] = r->stash[r->stash_pos++];
	if (r->stash_pos == r->stash_len)
		r->stash_pos = r->stash_len = 0;
	while (k < cap && r->stash_len == 0) {
		unsigned u;
		int b0, b1;

		if (!in_text_fill(r, err))
			return -1;
		if (r->tx_pos == r->tx_len) {
			/* The end: what is left waiting is not a character. */
			if (r->tx_high != 0 || r->tx_byte >= 0)
				in_put(r, IN_REPLACEMENT, out, cap, &k);
			r->tx_high = 0;
			r->tx_byte = -1;
			break;
		}
		if (r->tx_byte < 0) {
			r->tx_byte = r->tx[r->tx_pos++];
			continue;
		}
		b0 = r->tx_byte;
		b1 = r->tx[r->tx_pos++];
		r->tx_byte = -1;
		u = le ? (unsigned)b0 | (unsigned)b1 << 8 :
		    (unsigned)b0 << 8 | (unsigned)b1;
		if (r->tx_high != 0) {
			unsigned hi = r->tx_high;

			r->tx_high = 0;
			if (u >= 0xdc00 && u <= 0xdfff) {
				in_put(r, 0x10000 + ((hi - 0xd800) << 10) +
				    (u - 0xdc00), out, cap, &k);
				continue;
			}
			in_put(r, IN_REPLACEMENT, out, cap, &k);
		}
		if (u >= 0xd800 && u <= 0xdbff)
			r->tx_high = u;
		else if (u >= 0xdc00 && u <= 0xdfff)
			in_put(r, IN_REPLACEMENT, out, cap, &k);
		else
			in_put(r, u, out, cap, &k);
	}
	return (ssize_t)k;
}

/* Reads in the caller's thread (or is the reader thread's read). */
static ssize_t
in_read_direct(in_reader *r, char *buf, size_t cap, od_error *err)
{
	ssize_t n = -1;

	if (r->done || cap == 0)
		return 0;
	if (r->format == IN_UNDECIDED && !in_decide(r, err)) {
		r->done = true;
		return -1;
	}
	if (r->text == IN_TEXT_UNKNOWN) {
		/* The first decompressed bytes say whether it is UTF-16:
		 * read up to two of them into the text buffer. */
		if (r->tx == NULL)
			r->tx = malloc(IN_TEXT_SIZE);
		r->tx_byte = -1;
		if (r->tx == NULL) {
			od_error_set(err, r->name, 0, 0, "out of memory");
			r->done = true;
			return -1;
		}
		while (r->tx_len < 2 && !r->tx_eof) {
			n = in_read_bytes(r, (char *)r->tx + r->tx_len,
			    IN_TEXT_SIZE - r->tx_len, err);
			if (n < 0) {
				r->done = true;
				return -1;
			}
			r->tx_len += (size_t)n;
			r->tx_eof = n == 0;
		}
		r->text = IN_TEXT_BYTES;
		if (r->tx_len >= 2 && r->tx[0] == 0xff && r->tx[1] == 0xfe)
			r->text = IN_TEXT_UTF16LE;
		else if (r->tx_len >= 2 && r->tx[0] == 0xfe && r->tx[1] == 0xff)
			r->text = IN_TEXT_UTF16BE;
		if (r->text != IN_TEXT_BYTES)
			r->tx_pos = 2;
	}
	if (r->text != IN_TEXT_BYTES) {
		n = in_read_utf16(r, buf, cap, err);
	} else if (r->tx_pos < r->tx_len) {
		/* What the check read, first. */
		n = (ssize_t)(r->tx_len - r->tx_pos < cap ?
		    r->tx_len - r->tx_pos : cap);
		memcpy(buf, r->tx + r->tx_pos, (size_t)n);
		r->tx_pos += (size_t)n;
	} else if (r->tx_eof) {
		n = 0;
	} else {
		n = in_read_bytes(r, buf, cap, err);
	}
	if (n <= 0)
		r->done = true;
	r->last_full = n > 0 && (size_t)n == cap;
	return n;
}

/* A byte to a pipe, or from it: false when it is closed. */
static bool
in_token_give(int fd)
{
	ssize_t n;

	do {
		n = write(fd, "", 1);
	} while (n < 0 && errno == EINTR);
	return n == 1;
}

static bool
in_token_take(int fd)
{
	char c;
	ssize_t n;

	do {
		n = read(fd, &c, 1);
	} while (n < 0 && errno == EINTR);
	return n == 1;
}

static void *
in_thread(void *arg)
{
	in_reader *r = arg;
	struct in_ring *g = r->ring;

	for (;;) {
		struct in_slot *s;

		/* A free slot; none when in_close stops the thread. */
		if (!in_token_take(g->free[0]))
			break;
		s = &g->slot[g->put++ % IN_SLOTS];
		s->n = in_read_direct(r, s->data, IN_SLOT_SIZE, &s->err);
		atomic_thread_fence(memory_order_release);
		if (!in_token_give(g->full[1]) || s->n <= 0)
			break;
	}
	return NULL;
}

/* Closes the ring's pipes and frees it (the thread has ended). */
static void
in_ring_free(in_reader *r)
{
	struct in_ring *g = r->ring;
	int i;

	for (i = 0; i < 2; i++) {
		if (g->full[i] >= 0)
			close(g->full[i]);
		if (g->free[i] >= 0)
			close(g->free[i]);
		if (g->stop[i] >= 0)
			close(g->stop[i]);
	}
	free(g->mem);
	free(g);
	r->ring = NULL;
	r->stop_fd = -1;
}

/*
 * Starts the reader thread once, on the first read.  When a pipe, the
 * memory or the thread cannot be had, the reader reads in the caller's
 * thread, as it would without one: the thread only makes it faster.
 */
static void
in_ring_start(in_reader *r)
{
	struct in_ring *g;
	struct stat st;
	sigset_t all, old;
	int i, rc;

	if (r->ring_tried || !r->background || r->done)
		return;
	r->ring_tried = true;
	g = calloc(1, sizeof *g);
	if (g == NULL)
		return;
	for (i = 0; i < 2; i++)
		g->full[i] = g->free[i] = g->stop[i] = -1;
	r->ring = g;
	g->mem = malloc((size_t)IN_SLOTS * IN_SLOT_SIZE);
	if (g->mem == NULL || pipe2(g->full, O_CLOEXEC) != 0 ||
	    pipe2(g->free, O_CLOEXEC) != 0 || pipe2(g->stop, O_CLOEXEC) != 0) {
		in_ring_free(r);
		return;
	}
	for (i = 0; i < IN_SLOTS; i++) {
		g->slot[i].data = g->mem + (size_t)i * IN_SLOT_SIZE;
		if (!in_token_give(g->free[1])) {
			in_ring_free(r);
			return;
		}
	}
	/* A regular file's read does not wait for a writer. */
	if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode))
		r->stop_fd = g->stop[0];
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&g->thread, NULL, in_thread, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		in_ring_free(r);
}

/* Stops the thread (when it has not ended by itself), waits for it and
 * frees the ring. */
static void
in_ring_end(in_reader *r)
{
	struct in_ring *g = r->ring;

	close(g->stop[1]);
	g->stop[1] = -1;
	close(g->free[1]);
	g->free[1] = -1;
	pthread_join(g->thread, NULL);
	in_ring_free(r);
}

/*
 * Mapping a regular file.  A plain regular file that in_next reads is not
 * copied by read(2) into the thread's slots: its bytes are handed out
 * straight from a window of its mapping, IN_MAP_WINDOW bytes at a time
 * (MAP_PRIVATE, read only, the page table filled at once with
 * MAP_POPULATE), and each window is unmapped at the next in_next.  The
 * pages of a file mapping count in the process's resident size while they
 * are mapped, so the window is what bounds it: the peak is one window of
 * 512 KiB, as much as the thread's slots take (a larger one costs as many
 * more bytes of resident size and saves little: 1 MiB gave 0.6 MiB more
 * peak RSS, 2 MiB 1.8 MiB more, for the same CPU time on 256 MiB).
 * Pipes, sockets, terminals, the
 * files of /proc (size 0), compressed input, UTF-16 text, a file smaller
 * than a window, in_read's callers (--follow, live mode) and anything
 * mmap refuses are read as before.
 *
 * A file may change while it is read.  It is never mapped past the size
 * fstat gives before each window, and at the end that size is asked again,
 * so that a file that grew is read on, as read(2) would.  A file that
 * shrinks under a window makes the next access to a page past its new
 * end raise SIGBUS: the handler (in_bus) puts zero pages in place of the
 * rest of the window, so the access goes on, and the next in_next fails
 * with an error that says the file was truncated.  The handler knows the
 * window by in_map_lo and in_map_hi, and so one reader at a time maps (a
 * second one reads); a SIGBUS at any other address goes to the handler
 * that was there before (the old one put back, the access faults again).
 * The handler is put in place (again) at each mapping, since a program
 * may have set its own since.
 *
 * OOMDOC_MAP_WINDOW, for the tests only: the window's size in bytes
 * (rounded up to pages; also the smallest rest of a file that is mapped),
 * 0 for no mapping, so that the tests compare the two ways and cut the
 * input at many window boundaries.
 */
#define IN_MAP_WINDOW (512u * 1024)

static _Atomic uintptr_t in_map_lo, in_map_hi;
static atomic_bool in_map_busy;         /* a reader holds the handler's window */
static volatile sig_atomic_t in_map_bus;        /* the handler was called */
static struct sigaction in_bus_old;
static uintptr_t in_page;

static void
in_bus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	uintptr_t lo = atomic_load(&in_map_lo), hi = atomic_load(&in_map_hi);

	(void)sig;
	(void)uc;
	if (a >= lo && a < hi) {
		uintptr_t pg = a & ~(in_page - 1);

		/* mmap is a system call, safe here as the kernel sees it. */
		if (mmap((void *)pg, hi - pg, PROT_READ, MAP_PRIVATE |
		    MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
			in_map_bus = 1;
			return;
		}
	}
	/* Not ours: the old handler, when the access faults again. */
	sigaction(SIGBUS, &in_bus_old, NULL);
}

/*
 * Puts in_bus in place, unless it is there: asked at each mapping, since
 * a program (a test harness, an interpreter) may have put its own handler
 * in its place since the last one.  False when it cannot be.
 */
static bool
in_bus_install(void)
{
	struct sigaction sa, cur;
	long pg = sysconf(_SC_PAGESIZE);

	if (pg <= 0 || sigaction(SIGBUS, NULL, &cur) != 0)
		return false;
	in_page = (uintptr_t)pg;
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == in_bus)
		return true;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = in_bus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, &in_bus_old) == 0;
}

/* The window's size for the tests (OOMDOC_MAP_WINDOW), or the default. */
static size_t
in_map_window(void)
{
	return od_env_size("OOMDOC_MAP_WINDOW", 0, (size_t)1 << 30,
	    IN_MAP_WINDOW);
}

/* Unmaps the window handed out last, if any. */
static void
in_map_drop(in_reader *r)
{
	if (r->map == NULL)
		return;
	atomic_store(&in_map_lo, 0);
	atomic_store(&in_map_hi, 0);
	munmap(r->map, r->map_len);
	r->map = NULL;
}

/* Ends the reading through the mapping, the handler's window given up. */
static void
in_map_end(in_reader *r)
{
	if (!r->mapped)
		return;
	in_map_drop(r);
	/* Standard input's offset is shared: where read(2) would leave it. */
	if (!r->own_fd)
		(void)lseek(r->fd, r->map_pos, SEEK_SET);
	r->mapped = false;
	atomic_store(&in_map_busy, false);
}

/*
 * Whether r, its format decided, is read through windows of its mapping
 * from here on (see above); false leaves it as it was.
 */
static bool
in_map_start(in_reader *r)
{
	struct stat st;
	size_t w = in_map_window(), left = r->raw_len - r->raw_pos;
	const unsigned char *p = r->raw + r->raw_pos;
	off_t at;
	bool no = false;

	if (w == 0 || r->format != IN_PLAIN || r->done ||
	    fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	/* UTF-16 is decoded by the text layer. */
	if (left >= 2 && ((p[0] == 0xff && p[1] == 0xfe) ||
	    (p[0] == 0xfe && p[1] == 0xff)))
		return false;
	at = lseek(r->fd, 0, SEEK_CUR);
	if (at < 0 || (uint64_t)at < left)
		return false;
	at -= (off_t)left;
	if (st.st_size < at || (uint64_t)(st.st_size - at) < w)
		return false;
	if (!atomic_compare_exchange_strong(&in_map_busy, &no, true))
		return false;
	if (!in_bus_install()) {
		atomic_store(&in_map_busy, false);
		return false;
	}
	in_map_bus = 0;
	w = (w + in_page - 1) & ~(size_t)(in_page - 1);
	r->map_window = w;
	r->map_pos = at;
	r->map_size = st.st_size;
	r->mapped = true;
	r->text = IN_TEXT_BYTES;
	(void)posix_fadvise(r->fd, at, 0, POSIX_FADV_SEQUENTIAL);
	return true;
}

/*
 * Goes on reading the file with read(2) from where the mapping stopped
 * (mmap refused a window): in the caller's thread, the text layer's check
 * done.  Returns what in_next returns.
 */
static ssize_t
in_map_fall_back(in_reader *r, const char **data, od_error *err)
{
	off_t at = r->map_pos;

	in_map_end(r);
	if (lseek(r->fd, at, SEEK_SET) != at) {
		od_error_set(err, r->name, 0, 0, "read error: %s",
		    strerror(errno));
		r->done = true;
		return -1;
	}
	r->raw_pos = r->raw_len = 0;
	r->raw_eof = false;
	r->tx_pos = r->tx_len = 0;
	if (r->view == NULL && (r->view = malloc(IN_SLOT_SIZE)) == NULL) {
		od_error_set(err, r->name, 0, 0, "out of memory");
		r->done = true;
		return -1;
	}
	*data = r->view;
	return in_read_direct(r, r->view, IN_SLOT_SIZE, err);
}

/* in_next for a mapped file: the next window. */
static ssize_t
in_map_next(in_reader *r, const char **data, od_error *err)
{
	struct stat st;
	off_t from, to;
	void *m;

	in_map_drop(r);
	if (r->done)
		return 0;
	/* Asked before each window: a file that shrank is not mapped past
	 * its end, one that grew at the end is read on. */
	if (in_map_bus || fstat(r->fd, &st) != 0 || st.st_size < r->map_pos) {
		od_error_set(err, r->name, 0, 0, "the file was truncated "
		    "while it was being read");
		r->done = true;
		in_map_end(r);
		return -1;
	}
	if (st.st_size < r->map_size || r->map_pos == r->map_size)
		r->map_size = st.st_size;
	if (r->map_pos == r->map_size) {
		r->done = true;
		return 0;
	}
	from = r->map_pos & ~(off_t)(in_page - 1);
	to = from + (off_t)r->map_window;
	if (to > r->map_size)
		to = r->map_size;
	m = mmap(NULL, (size_t)(to - from), PROT_READ, MAP_PRIVATE |
	    MAP_POPULATE, r->fd, from);
	if (m == MAP_FAILED)
		return in_map_fall_back(r, data, err);
	r->map = m;
	r->map_len = (size_t)(to - from);
	atomic_store(&in_map_lo, (uintptr_t)m);
	atomic_store(&in_map_hi, (uintptr_t)m + r->map_len);
	*data = r->map + (r->map_pos - from);
	from = r->map_pos;
	r->map_pos = to;
	return (ssize_t)(to - from);
}

/*
 * Decides the format in the caller's thread (what in_compression reads is
 * then set before the thread starts), and starts the thread.  False when
 * the format is refused.
 */
static bool
in_begin(in_reader *r, bool may_map, od_error *err)
{
	if (r->ring_tried)
		return true;
	if (r->format == IN_UNDECIDED && !r->done && !in_decide(r, err)) {
		r->done = true;
		r->ring_tried = true;
		return false;
	}
	/* The text layer's buffer too: every allocation of ours is the
	 * caller's thread's, in the same order whatever the thread does
	 * (tests/alloc_fail.py fails each in turn). */
	if (r->tx == NULL && !r->done &&
	    (r->tx = malloc(IN_TEXT_SIZE)) == NULL) {
		od_error_set(err, r->name, 0, 0, "out of memory");
		r->done = true;
		r->ring_tried = true;
		return false;
	}
	/* A regular file that in_next reads: through its mapping. */
	if (may_map && in_map_start(r)) {
		r->ring_tried = true;
		return true;
	}
	in_ring_start(r);
	return true;
}

ssize_t
in_next(in_reader *r, const char **data, od_error *err)
{
	struct in_ring *g;
	struct in_slot *s;
	ssize_t n;

	if (!in_begin(r, true, err))
		return -1;
	if (r->mapped)
		return in_map_next(r, data, err);
	g = r->ring;
	if (g == NULL) {
		if (r->done)
			return 0;
		if (r->view == NULL && (r->view = malloc(IN_SLOT_SIZE)) == NULL) {
			od_error_set(err, r->name, 0, 0, "out of memory");
			r->done = true;
			return -1;
		}
		*data = r->view;
		return in_read_direct(r, r->view, IN_SLOT_SIZE, err);
	}
	if (g->holding) {
		g->holding = false;
		(void)in_token_give(g->free[1]);
	}
	if (!in_token_take(g->full[0])) {
		/* Only a broken pipe gets here. */
		od_error_set(err, r->name, 0, 0, "read error: %s",
		    strerror(errno));
		in_ring_end(r);
		r->done = true;
		return -1;
	}
	atomic_thread_fence(memory_order_acquire);
	s = &g->slot[g->take++ % IN_SLOTS];
	n = s->n;
	if (n <= 0) {
		/* The thread has ended: from here on the reader is read in
		 * the caller's thread (it says 0, or in_resume reads on). */
		if (n < 0)
			*err = s->err;
		in_ring_end(r);
		return n;
	}
	g->holding = true;
	*data = s->data;
	return n;
}

ssize_t
in_read(in_reader *r, char *buf, size_t cap, od_error *err)
{
	size_t n;

	if (!in_begin(r, false, err))
		return -1;
	if (r->ring == NULL && !r->mapped && r->part_pos == r->part_len)
		return in_read_direct(r, buf, cap, err);
	if (cap == 0)
		return 0;
	if (r->part_pos == r->part_len) {
		const char *p;
		ssize_t got = in_next(r, &p, err);

		if (got <= 0)
			return got;
		r->part = p;
		r->part_pos = 0;
		r->part_len = (size_t)got;
	}
	n = r->part_len - r->part_pos < cap ? r->part_len - r->part_pos : cap;
	memcpy(buf, r->part + r->part_pos, n);
	r->part_pos += n;
	return (ssize_t)n;
}

int
in_wait_fd(const in_reader *r)
{
	if (r->ring != NULL)
		return r->part_pos < r->part_len ? -1 : r->ring->full[0];
	if (r->mapped)
		return -1;
	if (r->last_full || r->raw_pos < r->raw_len || r->tx_pos < r->tx_len ||
	    r->stash_pos < r->stash_len)
		return -1;
	return r->fd;
}

void
in_set_background(in_reader *r, bool on)
{
	r->background = on;
}

const char *
in_compression(const in_reader *r)
{
	switch (r->format) {
	case IN_GZIP:
		return "gzip";
	case IN_ZSTD:
		return "zstd";
	case IN_BZIP2:
		return "bzip2";
	case IN_XZ:
		return "xz";
	default:
		return "none";
	}
}

void
in_close(in_reader *r)
{
	if (r == NULL)
		return;
	if (r->ring != NULL)
		in_ring_end(r);
	in_map_end(r);
	free(r->view);
	if (r->z_ready)
		inflateEnd(&r->z);
#ifdef OOMDOC_HAVE_ISAL
	free(r->isal);
#endif
	ZSTD_freeDCtx(r->zd);
	if (r->bz_ready)
		BZ2_bzDecompressEnd(&r->bz);
	if (r->xz_ready)
		lzma_end(&r->xz);
	free(r->tx);
	if (r->own_fd)
		close(r->fd);
	free(r->raw);
	free(r);
}

bool
in_resume(in_reader *r, int *fd)
{
	/* Only a plain file's bytes are the text as it was appended; a
	 * decoder's state ends with its stream.  An error left raw_eof
	 * false, and done set: it is not resumed. */
	/* While the thread runs, its fields are its own: asked first. */
	if (r->ring != NULL || r->mapped || !r->own_fd || r->format != IN_PLAIN ||
	    !r->raw_eof || r->raw_pos < r->raw_len)
		return false;
	r->raw_eof = false;
	r->done = false;
	/* The text layer read to the end too: it reads on (a UTF-16 file
	 * that grows goes on being decoded). */
	r->tx_eof = false;
	*fd = r->fd;
	return true;
}

bool
in_have_isal(void)
{
#ifdef OOMDOC_HAVE_ISAL
	return true;
#else
	return false;
#endif
}
