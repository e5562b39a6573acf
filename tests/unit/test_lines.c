/*
 * test_lines.c: what the extractor reads of a line (issue 16): terminal
 * escape sequences left out, the offsets mapped back to the window
 * (lines.c), a coloured prefix read (prefix.c), a NUL in a copied field
 * (regex.c), and the zstd reader's skippable frames and window limit
 * (input.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "input.h"
#include "lines.h"
#include "prefix.h"
#include "regex.h"

#define ESC "\x1b"

static void
test_escape_lengths(void **state)
{
	static const struct {
		const char *s;
		size_t len;
	} cases[] = {
		{ ESC "[31mx", 5 }, { ESC "[1;35mx", 7 }, { ESC "[0m", 4 },
		{ ESC "[2J", 4 }, { ESC "[?2004h", 8 }, { ESC "[m", 3 },
		/* OSC up to BEL or ST; a hyperlink's two halves. */
		{ ESC "]0;title\x07x", 10 }, { ESC "]8;;http://x" ESC "\\t", 15 },
		{ ESC "(B", 3 }, { ESC "=", 2 }, { ESC "7", 2 },
		/* Not sequences: cut by a control, a line break or the end. */
		{ ESC "[31\x01m", 0 }, { ESC "]0;no end\n" ESC "\\", 0 },
		{ ESC "[31", 0 }, { ESC, 0 }, { "x" ESC "[0m", 0 },
		{ ESC "]0;t" ESC "x", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_int_equal(ln_escape(cases[i].s, strlen(cases[i].s)),
		    cases[i].len);
}

/* The joined text has no escapes; every offset maps back to its byte. */
static void
test_join_and_map(void **state)
{
	static const char log[] = ESC "[31mab" ESC "[0mcd\n"
	    ESC "[1mef" ESC "]0;t\x07gh\n";
	ex_window w = { .buf = log, .len = sizeof log - 1, .line_start = 0,
	    .line_start_known = true, .hit = 0, .from = 0 };
	static ln_text j;
	od_error err;
	px_ctx *px = px_new(false, &err);
	size_t t, b;
	uint64_t nl;

	(void)state;
	assert_non_null(px);
	ln_join(&j, px, &w, 0, 2);
	assert_int_equal(j.len, 9);
	assert_memory_equal(j.text, "abcd\nefgh", 9);
	for (t = 0; t < j.len; t++) {
		ln_map(&j, t, &b, &nl);
		assert_int_equal(log[b], j.text[t]);
		assert_int_equal(nl, t < 5 ? 0 : 1);
		if (t < 4)
			assert_int_equal(ln_unmap(&j, b), t);
	}
	px_free(px);
}

/*
 * Text inside text: the escapes of a quoted string that holds one are
 * decoded, HTML spans left out and entities decoded; every byte of the
 * text maps back to its byte, or to the escape or entity it came from;
 * a backslash outside such a string stays.
 */
static void
test_unescape_and_map(void **state)
{
	static const char log[] = "C:\\new x=\"a\\nb\\\"c\\\\\" "
	    "<span style=\"color: red\">E</span>&gt;F 'g\\u001b[31mh' "
	    "\"D:\\new\\t.py\"\n";
	static const char want[] = "C:\\new x=\"a\nb\"c\\\" E>F 'gh' "
	    "\"D:\\new\\t.py\"";
	ex_window w = { .buf = log, .len = sizeof log - 1, .line_start = 0,
	    .line_start_known = true, .hit = 0, .from = 0 };
	static ln_text j;
	od_error err;
	px_ctx *px = px_new(false, &err);
	size_t t, b;
	uint64_t nl;

	(void)state;
	assert_non_null(px);
	ln_join(&j, px, &w, 0, 1);
	assert_int_equal(j.len, strlen(want));
	assert_memory_equal(j.text, want, j.len);
	for (t = 0; t < j.len; t++) {
		ln_map(&j, t, &b, &nl);
		assert_int_equal(nl, 0);
		if (log[b] == j.text[t])
			assert_int_equal(ln_unmap(&j, b), t);
		else
			assert_true(log[b] == '\\' || log[b] == '&');
	}
	/* The F after the entity: its own byte. */
	ln_map(&j, (size_t)(strchr(want, 'F') - want), &b, &nl);
	assert_int_equal(b, (size_t)(strchr(log, 'F') - log));
	px_free(px);
}

/*
 * A join moved on by a line (ln_join_shift) is the join made afresh: for
 * a hit on each line in turn, with repeated lines, prefixes, a line of a
 * console's width that the next continues, a backslash and an escape
 * (which make a join that cannot be moved), the text, its lines and their
 * places are the same either way, and a join said to be the same as the
 * one before (ln_text.same) is.  Breaking ln_join_shift's offsets, or
 * its test of sameness, fails here.
 */
static void
test_join_shift(void **state)
{
	/* Rows enough for the text's bytes and lines to be moved down
	 * (ln_join_shift: past EX_TEXT_MAX bytes and EX_LINES_MAX lines). */
	enum { ROWS = 2000 };
	static char log[ROWS * 81];
	static ln_text moved, fresh, prev;
	static const char *const lines[] = {
		"out of memory", "out of memory", "[rank1]: out of memory",
		"out of memory", "Killed Killed Killed", "Killed Killed Killed",
		"Killed Killed Killed", "a\\b c", "out of memory", ESC "[31mx",
		"out of memorX", "out of memory", "out of memory",
		"out of memory",
	};
	static const char *const clean[] = {
		"out of memory", "[rank1]: out of memory", "out of memory",
		"Killed Killed Killed", "out of memory out of memory",
	};
	ex_window w = { .buf = log, .line_start_known = true, .gen = 7 };
	od_error err;
	px_ctx *px = px_new(false, &err);
	static size_t starts[ROWS];
	size_t n = 0, k;
	int pass, lines_max, r, nsame = 0;

	(void)state;
	assert_non_null(px);
	for (r = 0; r < ROWS; r++) {
		const char *l = lines[(size_t)r % (sizeof lines / sizeof lines[0])];

		/* After the first rows, none that stops the moves. */
		if (r >= 100)
			l = clean[(size_t)(r / 3) % (sizeof clean / sizeof clean[0])];

		starts[r] = n;
		if (r == 20) {
			/* A line of 80 bytes that ends inside a word. */
			memset(log + n, 'w', 80);
			n += 80;
		} else {
			memcpy(log + n, l, strlen(l));
			n += strlen(l);
		}
		log[n++] = '\n';
	}
	w.len = n;
	for (pass = 0; pass < 2; pass++) {
		lines_max = pass == 0 ? 3 : 32;
		memset(&moved, 0, sizeof moved);
		for (r = 0; r < ROWS; r++) {
			size_t eol = ln_eol(log, starts[r], n);
			size_t s = starts[r] + px_strip(px, log + starts[r],
			    eol - starts[r], NULL, NULL);

			w.line_start = starts[r];
			w.hit = s;
			prev = moved;
			ln_join(&moved, px, &w, s, lines_max);
			memset(&fresh, 0, sizeof fresh);
			ln_join(&fresh, px, &w, s, lines_max);
			assert_int_equal(moved.len, fresh.len);
			assert_memory_equal(moved.text, fresh.text, fresh.len);
			assert_int_equal(moved.nseg, fresh.nseg);
			assert_int_equal(moved.ngap, fresh.ngap);
			for (k = 0; k < (size_t)fresh.nseg; k++) {
				ln_seg a = ln_line(&moved, (int)k);
				ln_seg f = ln_line(&fresh, (int)k);

				assert_int_equal(a.t, f.t);
				assert_int_equal(a.b, f.b);
				assert_int_equal(a.nl, f.nl);
			}
			if (moved.same) {
				nsame++;
				assert_int_equal(moved.len, prev.len);
				assert_memory_equal(moved.text, prev.own + prev.off,
				    prev.len);
			}
		}
	}
	/* Lines 11 to 14 are one line four times: found the same. */
	assert_true(nsame > 0);
	px_free(px);
}

/* A coloured rank prefix gives its rank, and its length in the line's
 * own bytes. */
static void
test_coloured_prefix(void **state)
{
	static const char line[] = ESC "[32m[rank3]:" ESC "[0m " ESC
	    "[31mtorch.OutOfMemoryError";
	od_error err;
	px_ctx *px = px_new(false, &err);
	int rank = -1;
	size_t n;

	(void)state;
	assert_non_null(px);
	n = px_strip(px, line, sizeof line - 1, &rank, NULL);
	assert_int_equal(rank, 3);
	assert_int_equal(n, strlen(ESC "[32m[rank3]:" ESC "[0m " ESC "[31m"));
	px_free(px);
}

static void
test_copy_nul(void **state)
{
	char dst[16];

	(void)state;
	rx_copy_text(dst, sizeof dst, "py\0thon3", 8);
	assert_string_equal(dst, "py\xef\xbf\xbdthon3");
	/* Cut to fit, never in the middle of the replacement. */
	rx_copy_text(dst, 6, "py\0thon3", 8);
	assert_string_equal(dst, "py\xef\xbf\xbd");
	rx_copy_text(dst, 5, "py\0thon3", 8);
	assert_string_equal(dst, "py");
}

/* Writes data[0..n) to a temporary file and returns its name. */
static char *
temp_file(const void *data, size_t n)
{
	static char name[64];
	int fd;

	snprintf(name, sizeof name, "/tmp/oomdoc-test-lines-XXXXXX");
	fd = mkstemp(name);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	close(fd);
	return name;
}

/* Reads a whole input; -1 on an error (its message in err). */
static ssize_t
read_all(const char *path, int window_log, char *out, size_t cap,
    od_error *err)
{
	in_reader *r = in_open(path, err);
	size_t got = 0;
	ssize_t n;

	assert_non_null(r);
	in_set_zstd_window_log(r, window_log);
	while ((n = in_read(r, out + got, cap - got, err)) > 0)
		got += (size_t)n;
	in_close(r);
	return n < 0 ? -1 : (ssize_t)got;
}

static void
test_zstd_frames(void **state)
{
	static const char text[] = "torch.OutOfMemoryError: CUDA out of memory.\n";
	unsigned char z[4096], out[256];
	size_t zn, at = 0;
	char *path;
	od_error err;
	ZSTD_CCtx *cc = ZSTD_createCCtx();

	(void)state;
	/* A skippable frame, a frame, an empty skippable frame, a frame
	 * made with a 16 MiB window, a skippable frame at the end. */
	memcpy(z, "\x50\x2a\x4d\x18\x03\x00\x00\x00" "abc", 11);
	at = 11;
	zn = ZSTD_compress(z + at, sizeof z - at, text, sizeof text - 1, 3);
	assert_false(ZSTD_isError(zn));
	at += zn;
	memcpy(z + at, "\x5f\x2a\x4d\x18\x00\x00\x00\x00", 8);
	at += 8;
	path = temp_file(z, at);
	assert_int_equal(read_all(path, IN_ZSTD_WINDOW_LOG, (char *)out,
	    sizeof out, &err), sizeof text - 1);
	assert_memory_equal(out, text, sizeof text - 1);
	unlink(path);

	/* A frame that asks for more than the limit. */
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cc,
	    ZSTD_c_windowLog, 24)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cc,
	    ZSTD_c_contentSizeFlag, 0)));
	{
		/* Streamed, of a size not known in advance: the window is
		 * not shrunk to the input's size. */
		ZSTD_inBuffer in = { text, sizeof text - 1, 0 };
		ZSTD_outBuffer o = { z, sizeof z, 0 };

		assert_false(ZSTD_isError(ZSTD_compressStream2(cc, &o, &in,
		    ZSTD_e_continue)));
		in.src = "";
		in.size = in.pos = 0;
		assert_int_equal(ZSTD_compressStream2(cc, &o, &in, ZSTD_e_end),
		    0);
		zn = o.pos;
	}
	ZSTD_freeCCtx(cc);
	path = temp_file(z, zn);
	memset(&err, 0, sizeof err);
	assert_int_equal(read_all(path, IN_ZSTD_WINDOW_LOG, (char *)out,
	    sizeof out, &err), -1);
	assert_non_null(strstr(err.msg, "window log 24"));
	assert_non_null(strstr(err.msg, "--zstd-window-log 24"));
	assert_int_equal(read_all(path, 24, (char *)out, sizeof out, &err),
	    sizeof text - 1);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_lengths),
		cmocka_unit_test(test_join_and_map),
		cmocka_unit_test(test_unescape_and_map),
		cmocka_unit_test(test_join_shift),
		cmocka_unit_test(test_coloured_prefix),
		cmocka_unit_test(test_copy_nul),
		cmocka_unit_test(test_zstd_frames),
	};

	return cmocka_run_group_tests_name("lines", tests, NULL, NULL);
}
