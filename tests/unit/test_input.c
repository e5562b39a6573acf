/*
 * test_input.c: the reader's two ways of reading (input.c's reader thread
 * and the caller's thread) and its two gzip decoders (ISA-L's igzip,
 * when the build has it, and zlib) give the same bytes and the same
 * errors: several members, zero bytes after the last one, trailing
 * garbage, a truncated member, a wrong CRC, corrupt deflate data, and
 * text over several of the thread's slots; from a file and from a pipe.
 * A thread waiting on a silent pipe says so through in_wait_fd and stops
 * when the reader is closed.  A regular file read through windows of its
 * mapping gives the same bytes, and one truncated while it is read an
 * error, not a crash (SIGBUS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "input.h"

#define TEXT_SIZE (3u * 1024 * 1024 + 12345)

/* What one way of reading gave: the bytes, and the error or "". */
struct result {
	char *out;
	size_t len;
	char msg[520];          /* file ": " message */
};

/* Gzips n bytes of in as one member into out (cap bytes); its size. */
static size_t
gz(const char *in, size_t n, unsigned char *out, size_t cap)
{
	z_stream z;
	size_t got;

	memset(&z, 0, sizeof z);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	got = cap - z.avail_out;
	deflateEnd(&z);
	return got;
}

static char *
tmpfile_with(const void *data, size_t n)
{
	char *name = strdup("/tmp/oomdoc-test-input.XXXXXX");
	int fd;

	assert_non_null(name);
	fd = mkstemp(name);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	close(fd);
	return name;
}

/* Reads path ("-": standard input) to its end or an error, with or
 * without the thread and with zlib or the build's decoder. */
static void
read_all(const char *path, bool thread, bool zlib, struct result *res)
{
	od_error err;
	in_reader *r = in_open(path, &err);
	size_t cap = TEXT_SIZE * 2 + 65536;
	ssize_t n;

	assert_non_null(r);
	in_set_background(r, thread);
	in_set_zlib(r, zlib);
	res->out = malloc(cap);
	assert_non_null(res->out);
	res->len = 0;
	res->msg[0] = '\0';
	for (;;) {
		const char *p;

		n = in_next(r, &p, &err);
		if (n <= 0)
			break;
		assert_true(res->len + (size_t)n <= cap);
		memcpy(res->out + res->len, p, (size_t)n);
		res->len += (size_t)n;
	}
	if (n < 0)
		snprintf(res->msg, sizeof res->msg, "%s: %s", err.file,
		    err.msg);
	assert_string_equal(in_compression(r), "gzip");
	in_close(r);
}

/* Feeds data to standard input through a pipe from a child process and
 * reads it as read_all does. */
static void
read_piped(const unsigned char *data, size_t n, bool thread, bool zlib,
    struct result *res)
{
	int p[2], saved = dup(STDIN_FILENO), status;
	pid_t pid;

	assert_true(saved >= 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		size_t at = 0;

		close(p[0]);
		while (at < n) {
			ssize_t w = write(p[1], data + at, n - at);

			if (w <= 0)
				_exit(1);
			at += (size_t)w;
		}
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(dup2(p[0], STDIN_FILENO), STDIN_FILENO);
	close(p[0]);
	read_all("-", thread, zlib, res);
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

/*
 * Every way of reading data (from a file, and from a pipe) gives what
 * the first does; want (NULL: none) is the error's start, and text (when
 * not NULL) the bytes before it.  With exact, the errors are the same
 * text (the file's name aside); else only their start is.
 */
static void
same_everywhere(const unsigned char *data, size_t n, const char *text,
    size_t tlen, const char *want, bool exact)
{
	char *path = tmpfile_with(data, n);
	struct result first, res;
	int way;

	read_all(path, false, true, &first);
	if (want == NULL)
		assert_string_equal(first.msg, "");
	else
		assert_non_null(strstr(first.msg, want));
	if (text != NULL && want == NULL) {
		assert_int_equal(first.len, tlen);
		assert_memory_equal(first.out, text, tlen);
	}
	for (way = 1; way < 8; way++) {
		bool thread = way & 1, zlib = (way & 2) != 0, pipe = way & 4;
		const char *a = strchr(first.msg, ':'), *b;

		if (pipe)
			read_piped(data, n, thread, zlib, &res);
		else
			read_all(path, thread, zlib, &res);
		b = strchr(res.msg, ':');
		/* The same bytes before any error (a decoder may stop a
		 * little earlier or later inside corrupt data). */
		if (want == NULL || exact) {
			assert_int_equal(res.len, first.len);
			assert_memory_equal(res.out, first.out, first.len);
		}
		if (want == NULL) {
			assert_string_equal(res.msg, "");
		} else {
			assert_non_null(strstr(res.msg, want));
			assert_non_null(a);
			assert_non_null(b);
			if (exact)
				assert_string_equal(a, b);
			/* The file's name, as today. */
			assert_true(strncmp(res.msg, pipe ? "(standard input)" :
			    path, strlen(pipe ? "(standard input)" : path)) == 0);
		}
		free(res.out);
	}
	free(first.out);
	unlink(path);
	free(path);
}

/* A log-like text over several of the thread's 256 KiB slots. */
static char *
make_text(void)
{
	char *t = malloc(TEXT_SIZE);
	size_t i = 0;
	unsigned x = 12345;

	assert_non_null(t);
	while (i < TEXT_SIZE) {
		char line[96];
		int k;

		x = x * 1103515245u + 12345u;
		k = snprintf(line, sizeof line, "[rank%u] step %u loss %u.%03u\n",
		    x >> 28, x >> 12 & 0xffff, x >> 8 & 7, x & 999);
		if ((size_t)k > TEXT_SIZE - i)
			k = (int)(TEXT_SIZE - i);
		memcpy(t + i, line, (size_t)k);
		i += (size_t)k;
	}
	return t;
}

static void
test_gzip_forms(void **state)
{
	char *text = make_text(), *both;
	size_t cap = TEXT_SIZE + 65536 * 4, n1, n2, n;
	unsigned char *z = malloc(cap * 2 + 8192);
	static const char tail[] = "torch.OutOfMemoryError: CUDA out of memory.\n";

	(void)state;
	assert_non_null(z);
	/* Two members and zero bytes after them: one stream. */
	n1 = gz(text, TEXT_SIZE, z, cap);
	n2 = gz(tail, sizeof tail - 1, z + n1, cap);
	memset(z + n1 + n2, 0, 4096);
	both = malloc(TEXT_SIZE + sizeof tail);
	assert_non_null(both);
	memcpy(both, text, TEXT_SIZE);
	memcpy(both + TEXT_SIZE, tail, sizeof tail - 1);
	same_everywhere(z, n1 + n2 + 4096, both, TEXT_SIZE + sizeof tail - 1,
	    NULL, true);
	/* Garbage after the members. */
	memcpy(z + n1 + n2, "garbage\n", 8);
	same_everywhere(z, n1 + n2 + 8, NULL, 0,
	    "trailing data after the gzip stream was ignored", true);
	/* A member cut in its middle, and after its deflate data. */
	same_everywhere(z, n1 / 2, NULL, 0, "truncated gzip input: it ends "
	    "inside a member after", true);
	same_everywhere(z, n1 - 3, NULL, 0, "truncated gzip input", true);
	/* A wrong CRC-32 in the first member's trailer. */
	n = n1 + n2;
	z[n1 - 8] ^= 0x55;
	same_everywhere(z, n, NULL, 0, "corrupt gzip data: incorrect data "
	    "check", false);
	z[n1 - 8] ^= 0x55;
	/* Corrupt deflate data: an error from each, which may differ in
	 * its words after "corrupt gzip data". */
	memset(z + n1 / 3, 0xff, 64);
	same_everywhere(z, n, NULL, 0, "corrupt gzip data: ", false);
	free(both);
	free(text);
	free(z);
}

/* A writer that pauses: in_wait_fd says there is nothing to read, and
 * in_close stops the thread that waits for more. */
static void
test_silent_pipe(void **state)
{
	int p[2], saved = dup(STDIN_FILENO), status;
	pid_t pid;
	od_error err;
	in_reader *r;
	const char *data;
	struct pollfd pf;
	struct timespec t0, t1;

	(void)state;
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		alarm(10);      /* whatever the test does */
		if (write(p[1], "CUDA out of memory\n", 19) != 19)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(dup2(p[0], STDIN_FILENO), STDIN_FILENO);
	close(p[0]);
	r = in_open("-", &err);
	assert_non_null(r);
	assert_int_equal(in_next(r, &data, &err), 19);
	assert_memory_equal(data, "CUDA out of memory\n", 19);
	pf.fd = in_wait_fd(r);
	pf.events = POLLIN;
	assert_true(pf.fd >= 0);
	assert_true(pf.fd != STDIN_FILENO);     /* the thread's */
	assert_int_equal(poll(&pf, 1, 100), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	in_close(r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
}

/*
 * Reads path with in_next to its end or an error, the mapping's window
 * set to window ("0": no mapping; NULL: the default); the largest piece
 * in_next gave goes to *largest.
 */
static void
read_plain(const char *path, const char *window, struct result *res,
    size_t *largest)
{
	od_error err;
	in_reader *r;
	const char *p;
	ssize_t n;

	if (window != NULL)
		setenv("OOMDOC_MAP_WINDOW", window, 1);
	else
		unsetenv("OOMDOC_MAP_WINDOW");
	r = in_open(path, &err);
	assert_non_null(r);
	res->out = malloc(TEXT_SIZE + 65536);
	assert_non_null(res->out);
	res->len = 0;
	res->msg[0] = '\0';
	*largest = 0;
	while ((n = in_next(r, &p, &err)) > 0) {
		assert_true(res->len + (size_t)n <= TEXT_SIZE + 65536);
		memcpy(res->out + res->len, p, (size_t)n);
		res->len += (size_t)n;
		if ((size_t)n > *largest)
			*largest = (size_t)n;
	}
	if (n < 0)
		snprintf(res->msg, sizeof res->msg, "%s", err.msg);
	assert_string_equal(in_compression(r), "none");
	in_close(r);
	unsetenv("OOMDOC_MAP_WINDOW");
}

/*
 * A regular file read through windows of its mapping gives the bytes
 * read(2) gives, whatever the window's size; with a window of one page,
 * no piece is larger than it (the mapping is what read it).
 */
static void
test_mapped(void **state)
{
	char *text = make_text(), *path = tmpfile_with(text, TEXT_SIZE);
	static const char *const windows[] = { "0", NULL, "4096", "65536",
		"1000" };
	struct result res;
	size_t i, largest;

	(void)state;
	for (i = 0; i < sizeof windows / sizeof windows[0]; i++) {
		read_plain(path, windows[i], &res, &largest);
		assert_string_equal(res.msg, "");
		assert_int_equal(res.len, TEXT_SIZE);
		assert_memory_equal(res.out, text, TEXT_SIZE);
		if (windows[i] != NULL && strcmp(windows[i], "4096") == 0)
			assert_true(largest <= 4096);
		if (windows[i] != NULL && strcmp(windows[i], "0") == 0)
			assert_true(largest > 65536);   /* read(2)'s slots */
		free(res.out);
	}
	unlink(path);
	free(path);
	free(text);
}

/*
 * A mapped file that shrinks under the window (SIGBUS on the pages past
 * its new end: zeros in their place) or between two windows gives an
 * error that says so, not a crash; one that grows is read on.
 */
static void
test_mapped_changes(void **state)
{
	char *text = make_text(), *path = tmpfile_with(text, TEXT_SIZE);
	const char *data;
	od_error err;
	in_reader *r;
	ssize_t n;
	size_t i, sum = 0, total;
	int fd;

	(void)state;
	/* Cut under the window that in_next gave. */
	setenv("OOMDOC_MAP_WINDOW", "65536", 1);
	r = in_open(path, &err);
	assert_non_null(r);
	assert_int_equal(in_next(r, &data, &err), 65536);
	assert_int_equal(truncate(path, 100), 0);
	for (i = 0; i < 65536; i++)
		sum += (unsigned char)data[i];
	assert_memory_equal(data, text, 100);
	assert_int_equal(data[65535], 0);
	assert_true(sum > 0);
	assert_int_equal(in_next(r, &data, &err), -1);
	assert_non_null(strstr(err.msg, "truncated while it was being read"));
	assert_int_equal(in_next(r, &data, &err), 0);
	in_close(r);

	/* Cut between two windows. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, TEXT_SIZE), (ssize_t)TEXT_SIZE);
	close(fd);
	r = in_open(path, &err);
	assert_non_null(r);
	assert_int_equal(in_next(r, &data, &err), 65536);
	assert_int_equal(truncate(path, 1000), 0);
	assert_int_equal(in_next(r, &data, &err), -1);
	assert_non_null(strstr(err.msg, "truncated while it was being read"));
	in_close(r);

	/* Grown after the first window: read to its new end. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, TEXT_SIZE), (ssize_t)TEXT_SIZE);
	r = in_open(path, &err);
	assert_non_null(r);
	assert_int_equal(in_next(r, &data, &err), 65536);
	assert_int_equal(write(fd, text, 5000), 5000);
	close(fd);
	total = 65536;
	while ((n = in_next(r, &data, &err)) > 0)
		total += (size_t)n;
	assert_int_equal(n, 0);
	assert_int_equal(total, TEXT_SIZE + 5000);
	in_close(r);
	unsetenv("OOMDOC_MAP_WINDOW");
	unlink(path);
	free(path);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gzip_forms),
		cmocka_unit_test(test_silent_pipe),
		cmocka_unit_test(test_mapped),
		cmocka_unit_test(test_mapped_changes),
	};

	printf("gzip decoder of this build: %s\n", in_have_isal() ?
	    "ISA-L igzip (zlib compared)" : "zlib only");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
