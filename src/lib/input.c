/*
 * input.c: reading plain, gzip and zstd input as one decompressed stream.
 *
 * The raw bytes go through a fixed buffer of IN_RAW_SIZE; nothing here grows
 * with the size of the input.  The format is decided on the first bytes:
 * 1f 8b is gzip (several concatenated members are read as one stream, as
 * gzip -d does), 28 b5 2f fd is zstd (several frames likewise), anything
 * else is read as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "input.h"

#define IN_RAW_SIZE (128 * 1024)

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
	size_t zd_hint;         /* last ZSTD_decompressStream result */
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
	snprintf(r->name, sizeof r->name, "%s", shown);
	return r;
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

/* Reads the first bytes and decides the format from their magic. */
static bool
in_decide(in_reader *r, od_error *err)
{
	ssize_t n;

	/* A short read from a pipe may give fewer than 4 bytes: read on. */
	while (r->raw_len < 4 && !r->raw_eof) {
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
	if (r->raw_len >= 2 && r->raw[0] == 0x1f && r->raw[1] == 0x8b) {
		r->format = IN_GZIP;
		if (inflateInit2(&r->z, 15 + 16) != Z_OK) {
			od_error_set(err, r->name, 0, 0,
			    "cannot start the gzip decoder");
			return false;
		}
		r->z_ready = true;
	} else if (r->raw_len >= 4 && r->raw[0] == 0x28 && r->raw[1] == 0xb5 &&
	    r->raw[2] == 0x2f && r->raw[3] == 0xfd) {
		r->format = IN_ZSTD;
		r->zd = ZSTD_createDCtx();
		if (r->zd == NULL) {
			od_error_set(err, r->name, 0, 0,
			    "cannot start the zstd decoder");
			return false;
		}
		r->zd_hint = 1;
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
			/* Another member follows, or trailing garbage. */
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

static ssize_t
in_read_zstd(in_reader *r, char *buf, size_t cap, od_error *err)
{
	ZSTD_outBuffer out = { buf, cap, 0 };

	while (out.pos == 0) {
		ZSTD_inBuffer in;
		size_t zr;

		if (!in_fill(r, err))
			return -1;
		if (r->raw_pos == r->raw_len) {
			if (r->zd_hint == 0)
				return 0;
			od_error_set(err, r->name, 0, 0,
			    "truncated zstd input: it ends inside a frame "
			    "after %llu compressed bytes",
			    (unsigned long long)r->raw_total);
			return -1;
		}
		in.src = r->raw + r->raw_pos;
		in.size = r->raw_len - r->raw_pos;
		in.pos = 0;
		zr = ZSTD_decompressStream(r->zd, &out, &in);
		r->raw_pos += in.pos;
		if (ZSTD_isError(zr)) {
			od_error_set(err, r->name, 0, 0, "corrupt zstd data: %s",
			    ZSTD_getErrorName(zr));
			return -1;
		}
		r->zd_hint = zr;
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
