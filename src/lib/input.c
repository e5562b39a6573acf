/*
 * input.c: reading plain, gzip and zstd input as one decompressed stream.
 *
 * The raw bytes go through a fixed buffer of IN_RAW_SIZE; nothing here grows
 * with the size of the input but the zstd decoder's window, which is bounded
 * (in_set_zstd_window_log).  The format is decided on the first bytes:
 * 1f 8b is gzip (several concatenated members are read as one stream, and
 * zero bytes after the last member are ignored, as gzip -d does),
 * 28 b5 2f fd is zstd and 5? 2a 4d 18 a zstd skippable frame, which pzstd
 * writes first (several frames, skippable ones anywhere, likewise).  The
 * formats that are not read (bzip2, xz, lzip, lz4, zip, 7-Zip, compress)
 * are an error that names them, not text; anything else is read as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
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

typedef enum { IN_UNDECIDED, IN_PLAIN, IN_GZIP, IN_ZSTD } in_format;

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
	ZSTD_DCtx *zd;
	int zd_window_log;      /* the largest window allowed, log2 bytes */
	bool zd_boundary;       /* between two zstd frames */
	uint64_t zd_skip;       /* bytes of a skippable frame left to skip */
};

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
	do {
		n = read(r->fd, r->raw, IN_RAW_SIZE);
	} while (n < 0 && errno == EINTR);
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
		do {
			n = read(r->fd, r->raw + r->raw_len,
			    IN_RAW_SIZE - r->raw_len);
		} while (n < 0 && errno == EINTR);
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
 * The compressed formats that are not read, by their magic (each format's
 * specification: bzip2's "BZh" and block magic, xz's file format 1.1.0,
 * lzip's "LZIP", the LZ4 frame format 1.6, PKZIP's local file header and
 * empty archive, 7-Zip's signature header, compress(1)'s 1f 9d).
 */
static const struct {
	const char *magic;
	size_t len;
	const char *name;
	const char *tool;
} in_unsupported[] = {
	{ .magic = "\xfd" "7zXZ\0", .len = 6, .name = "xz", .tool = "xz -dc" },
	{ .magic = "LZIP", .len = 4, .name = "lzip", .tool = "lzip -dc" },
	{ .magic = "\x04\x22\x4d\x18", .len = 4, .name = "lz4",
	  .tool = "lz4 -dc" },
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

	/* bzip2: "BZh", the block size '1'-'9', then a block's magic (the
	 * digits of pi) or the end of the stream's (those of sqrt(pi)). */
	if (n >= 10 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9' &&
	    (memcmp(p + 4, "\x31\x41\x59\x26\x53\x59", 6) == 0 ||
	    memcmp(p + 4, "\x17\x72\x45\x38\x50\x90", 6) == 0)) {
		*tool = "bzip2 -dc";
		return "bzip2";
	}
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
		do {
			got = read(r->fd, buf, cap);
		} while (got < 0 && errno == EINTR);
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
			od_error_set(err, r->name, 0, 0,
			    "truncated gzip input: it ends inside a member "
			    "after %llu compressed bytes",
			    (unsigned long long)r->raw_total);
			return -1;
		}
		if (r->z_member_done) {
			/* Another member follows, or trailing garbage.  Zero
			 * bytes (a tape's or a block device's padding) are
			 * skipped without a word, as gzip -d does (gzip 1.12,
			 * gzip.c: "trailing zero bytes ignored" only with
			 * --verbose); anything else is an error, where
			 * gzip -d warns and exits with 2 too. */
			while (r->raw_pos < r->raw_len &&
			    r->raw[r->raw_pos] == 0)
				r->raw_pos++;
			if (r->raw_pos == r->raw_len)
				continue;
			if (r->raw[r->raw_pos] != 0x1f) {
				od_error_set(err, r->name, 0, 0,
				    "trailing data after the gzip stream was "
				    "ignored");
				return -1;
			}
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

ssize_t
in_read(in_reader *r, char *buf, size_t cap, od_error *err)
{
	ssize_t n = -1;

	if (r->done || cap == 0)
		return 0;
	if (r->format == IN_UNDECIDED && !in_decide(r, err)) {
		r->done = true;
		return -1;
	}
	switch (r->format) {
	case IN_GZIP:
		n = in_read_gzip(r, buf, cap, err);
		break;
	case IN_ZSTD:
		n = in_read_zstd(r, buf, cap, err);
		break;
	default:
		n = in_read_plain(r, buf, cap, err);
		break;
	}
	if (n <= 0)
		r->done = true;
	return n;
}

const char *
in_compression(const in_reader *r)
{
	switch (r->format) {
	case IN_GZIP:
		return "gzip";
	case IN_ZSTD:
		return "zstd";
	default:
		return "none";
	}
}

void
in_close(in_reader *r)
{
	if (r == NULL)
		return;
	if (r->z_ready)
		inflateEnd(&r->z);
	ZSTD_freeDCtx(r->zd);
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
	if (!r->own_fd || r->format != IN_PLAIN || !r->raw_eof ||
	    r->raw_pos < r->raw_len)
		return false;
	r->raw_eof = false;
	r->done = false;
	*fd = r->fd;
	return true;
}
