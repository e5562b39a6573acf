/*
 * test_scan.c: streaming through the fixed buffer (messages across buffer
 * boundaries, lines longer than the buffer), from a file and fed from
 * memory in chunks, and gzip/zstd input with and without truncation.
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
#include <zlib.h>
#include <zstd.h>

#include "core.h"
#include "ut_recognisers.h"

static od_scanner *sc;
static char tmpdir[] = "/tmp/oomdoc-test-XXXXXX";

static int
setup(void **state)
{
	od_error err;

	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	sc = od_scanner_new(true, ut_recognisers(), &err);
	return sc == NULL;
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	od_scanner_free(sc);
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd) != 0;
}

static const char *
path(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

static void
write_file(const char *p, const void *data, size_t n)
{
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/*
 * A log of filler lines with 40 distinct OOMs spread over 20 MiB, each at a
 * different distance from the 4 MiB buffer's seams.  Returns the text and
 * fills lines[] with each OOM's line number.
 */
static char *
make_log(size_t *len, uint64_t lines[40])
{
	size_t cap = 24u << 20, n = 0;
	char *t = malloc(cap);
	uint64_t line = 1;
	int k = 0;

	assert_non_null(t);
	while (n < (20u << 20)) {
		if (k < 40 && n >= (size_t)k * (509u * 1024) + 7u * (size_t)k * k) {
			n += (size_t)sprintf(t + n, "[rank%d]: RuntimeError: CUDA "
			    "out of memory. Tried to allocate %d.00 MiB (GPU 0; "
			    "4.00 GiB total capacity; 1.00 GiB already allocated;"
			    " 0 bytes free; 1.00 GiB reserved in total by "
			    "PyTorch)\n", k, k + 1);
			lines[k++] = line++;
			continue;
		}
		n += (size_t)sprintf(t + n, "step %zu loss 0.123 lr 1e-4\r 50%%|"
		    "#####     |\n", n);
		line++;
	}
	assert_int_equal(k, 40);
	*len = n;
	return t;
}

static void
check_events(od_events *set, const uint64_t lines[40])
{
	int k;

	assert_int_equal(od_events_count(set), 40);
	for (k = 0; k < 40; k++) {
		od_event *ev = od_events_get(set, (size_t)k);

		assert_int_equal(ev->line, lines[k]);
		assert_int_equal(ev->rank, k);
		assert_int_equal(ev->mem.requested, (int64_t)(k + 1) << 20);
	}
}

static void
test_buffer_seams(void **state)
{
	uint64_t lines[40];
	size_t len;
	char *t = make_log(&len, lines);
	od_events *set = od_events_new();
	od_input info = { 0 };
	od_error err;

	(void)state;
	write_file(path("seams.log"), t, len);
	assert_true(od_scan_path(sc, path("seams.log"), 0, &info, set, &err));
	check_events(set, lines);
	assert_int_equal(info.bytes, len);
	assert_string_equal(info.compression, "none");
	free(info.name);
	od_events_free(set);
	free(t);
}

/* The same log fed in chunks of odd sizes, one of them larger than the
 * buffer: the same events, delivered as they complete. */
static void
count_event(od_event *ev, void *arg)
{
	(void)ev;
	(*(int *)arg)++;
}

static void
test_feed_seams(void **state)
{
	static const size_t sizes[] = { 1, 4093, 65536 + 7, 5u << 20, 333 };
	uint64_t lines[40];
	size_t len, at = 0;
	char *t = make_log(&len, lines);
	od_events *set = od_events_new();
	od_input info = { 0 };
	int k = 0, delivered = 0;

	(void)state;
	od_scanner_on_event(sc, count_event, &delivered);
	od_scan_begin(sc, 0, set);
	while (at < len) {
		size_t n = sizes[k++ % 5];

		if (n > len - at)
			n = len - at;
		od_scan_feed(sc, t + at, n);
		at += n;
	}
	assert_int_equal(delivered, 40);        /* the last is far from the end */
	od_scan_finish(sc, &info);
	od_scanner_on_event(sc, NULL, NULL);
	check_events(set, lines);
	assert_int_equal(info.bytes, len);
	for (at = 0, k = 0; at < len; at++)
		k += t[at] == '\n';
	assert_int_equal(info.lines, k);
	od_events_free(set);
	free(t);
}

/*
 * An anchor on every line (a metric line that context.c reads): far more
 * hits in one piece than the hit list holds, so the scan goes on after
 * the last hit it kept.  In one chunk or in small ones (a few hits a
 * piece), the same events with the same context.
 */
static char *
make_busy_log(size_t *len, uint64_t lines[40])
{
	size_t cap = 8u << 20, n = 0;
	char *t = malloc(cap);
	int i, k = 0;

	assert_non_null(t);
	for (i = 0; i < 200000; i++) {
		if (i % 5000 == 2500 && k < 40) {
			n += (size_t)sprintf(t + n, "RuntimeError: CUDA out of "
			    "memory. Tried to allocate %d.00 MiB (GPU 0; 4.00 GiB "
			    "total capacity; 1.00 GiB already allocated; 0 bytes "
			    "free; 1.00 GiB reserved in total by PyTorch)\n",
			    k + 1);
			lines[k++] = (uint64_t)i + 1;
			continue;
		}
		n += (size_t)sprintf(t + n, "step %d gpu_mem: %d.5 GiB\n", i,
		    i % 70);
	}
	assert_int_equal(k, 40);
	*len = n;
	return t;
}

static void
scan_busy(const char *t, size_t len, size_t chunk, od_events *set)
{
	od_input info = { 0 };
	size_t at;

	od_scan_begin(sc, 0, set);
	for (at = 0; at < len; at += chunk)
		od_scan_feed(sc, t + at, len - at < chunk ? len - at : chunk);
	od_scan_finish(sc, &info);
	assert_int_equal(info.lines, 200000);
}

static void
test_many_hits(void **state)
{
	uint64_t lines[40];
	size_t len;
	char *t = make_busy_log(&len, lines);
	od_events *one = od_events_new(), *small = od_events_new();
	int k;

	(void)state;
	scan_busy(t, len, len, one);
	scan_busy(t, len, 700, small);
	assert_int_equal(od_events_count(one), 40);
	assert_int_equal(od_events_count(small), 40);
	for (k = 0; k < 40; k++) {
		od_event *a = od_events_get(one, (size_t)k);
		od_event *b = od_events_get(small, (size_t)k);

		assert_int_equal(a->line, lines[k]);
		assert_int_equal(b->line, lines[k]);
		assert_int_equal(a->mem.requested, (int64_t)(k + 1) << 20);
		assert_int_equal(b->mem.requested, a->mem.requested);
		/* The metric lines before it were read, the same ones. */
		assert_true(a->ctx.nreadings > 0);
		assert_int_equal(a->ctx.nreadings, b->ctx.nreadings);
		assert_int_equal(a->ctx.mem_last, b->ctx.mem_last);
		assert_int_equal(a->ctx.mem_max, b->ctx.mem_max);
	}
	od_events_free(one);
	od_events_free(small);
	free(t);
}

static void
test_gzip_and_zstd(void **state)
{
	uint64_t lines[40];
	size_t len, zlen;
	char *t = make_log(&len, lines), *z;
	od_events *set;
	od_input info;
	od_error err;
	gzFile gz;

	(void)state;
	gz = gzopen(path("log.gz"), "wb");
	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, t, (unsigned)len), (int)len);
	assert_int_equal(gzclose(gz), Z_OK);
	set = od_events_new();
	memset(&info, 0, sizeof info);
	assert_true(od_scan_path(sc, path("log.gz"), 0, &info, set, &err));
	assert_string_equal(info.compression, "gzip");
	check_events(set, lines);
	free(info.name);
	od_events_free(set);

	zlen = ZSTD_compressBound(len);
	z = malloc(zlen);
	zlen = ZSTD_compress(z, zlen, t, len, 3);
	assert_false(ZSTD_isError(zlen));
	write_file(path("log.zst"), z, zlen);
	set = od_events_new();
	memset(&info, 0, sizeof info);
	assert_true(od_scan_path(sc, path("log.zst"), 0, &info, set, &err));
	assert_string_equal(info.compression, "zstd");
	check_events(set, lines);
	free(info.name);
	od_events_free(set);

	/* Cut in half: the first events are kept, and it says truncated. */
	write_file(path("cut.zst"), z, zlen / 2);
	set = od_events_new();
	memset(&info, 0, sizeof info);
	assert_false(od_scan_path(sc, path("cut.zst"), 0, &info, set, &err));
	assert_non_null(strstr(err.msg, "truncated zstd"));
	assert_true(info.failed);
	assert_true(od_events_count(set) > 5);
	free(info.name);
	od_events_free(set);
	free(z);
	free(t);
}

static void
test_truncated_gzip(void **state)
{
	static const char msg[] = "RuntimeError: CUDA out of memory. Tried to "
	    "allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB "
	    "already allocated; 0 bytes free; 1.00 GiB reserved in total by "
	    "PyTorch)\n";
	char gzbuf[4096];
	z_stream zs;
	od_events *set = od_events_new();
	od_input info = { 0 };
	od_error err;

	(void)state;
	memset(&zs, 0, sizeof zs);
	assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 31, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (unsigned char *)(uintptr_t)msg;
	zs.avail_in = sizeof msg - 1;
	zs.next_out = (unsigned char *)gzbuf;
	zs.avail_out = sizeof gzbuf;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	/* Drop the 8-byte trailer and a little more. */
	write_file(path("cut.gz"), gzbuf, zs.total_out - 10);
	deflateEnd(&zs);
	assert_false(od_scan_path(sc, path("cut.gz"), 0, &info, set, &err));
	assert_non_null(strstr(err.msg, "truncated gzip"));
	free(info.name);
	od_events_free(set);
}

/* A 9 MiB line (longer than the buffer) with an OOM in its middle and one
 * straddling nothing in particular near its end. */
static void
test_long_line(void **state)
{
	size_t n = 9u << 20, at;
	char *t = malloc(n + 1);
	static const char msg[] = "RuntimeError: CUDA out of memory. Tried to "
	    "allocate 2.00 MiB (GPU 3; 4.00 GiB total capacity; 1.00 GiB "
	    "already allocated; 0 bytes free; 1.00 GiB reserved in total by "
	    "PyTorch)";
	od_events *set = od_events_new();
	od_input info = { 0 };
	od_error err;

	(void)state;
	memset(t, 'x', n);
	for (at = 1000; at + 200 < n; at += 997)
		t[at] = ' ';
	memcpy(t + (4u << 20) - 30, msg, sizeof msg - 1);
	memcpy(t + n - 300, msg, sizeof msg - 1);
	/* "4.00 MiB": a distinct message. */
	t[n - 300 + (size_t)(strstr(msg, "2.00 MiB") - msg)] = '4';
	t[n] = '\n';
	write_file(path("long.log"), t, n + 1);
	assert_true(od_scan_path(sc, path("long.log"), 0, &info, set, &err));
	assert_int_equal(od_events_count(set), 2);
	assert_int_equal(od_events_get(set, 0)->device, 3);
	assert_int_equal(od_events_get(set, 1)->mem.requested, 4 << 20);
	assert_int_equal(info.lines, 1);
	free(info.name);
	od_events_free(set);
	free(t);
}

static void
test_errors(void **state)
{
	od_events *set = od_events_new();
	od_input info = { 0 };
	od_error err;

	(void)state;
	assert_false(od_scan_path(sc, path("missing.log"), 0, &info, set, &err));
	assert_string_equal(err.msg, "No such file or directory");
	assert_string_equal(err.file, path("missing.log"));
	free(info.name);
	memset(&info, 0, sizeof info);
	assert_false(od_scan_path(sc, tmpdir, 0, &info, set, &err));
	assert_string_equal(err.msg, "is a directory");
	free(info.name);
	memset(&info, 0, sizeof info);
	write_file(path("empty.log"), "", 0);
	assert_true(od_scan_path(sc, path("empty.log"), 0, &info, set, &err));
	assert_int_equal(info.bytes, 0);
	assert_int_equal(info.lines, 0);
	free(info.name);
	od_events_free(set);
}

/*
 * Events merged across inputs list every input (event.c): an echo word
 * for word in another log, and another rank's report with its own
 * figures in a log of its own.  The filter's limit of events per input
 * counts an event once an input joins it, and --rank's filter keeps one
 * rank's reports.
 */
static void
test_inputs_listed(void **state)
{
	static const char oom[] = "[rank0]: RuntimeError: CUDA out of memory. "
	    "Tried to allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity; "
	    "1.00 GiB already allocated; 10.00 MiB free; 1.00 GiB reserved in "
	    "total by PyTorch)\n";
	static const char rank1[] = "x\n[rank1]: RuntimeError: CUDA out of "
	    "memory. Tried to allocate 6.00 MiB (GPU 1; 4.00 GiB total "
	    "capacity; 1.00 GiB already allocated; 3.00 MiB free; 1.00 GiB "
	    "reserved in total by PyTorch)\n";
	static const char other[] = "[rank0]: RuntimeError: CUDA error: out "
	    "of memory\n";
	od_events *set = od_events_new();
	od_input info;
	od_event *ev;

	(void)state;
	od_scan_buffer(sc, oom, strlen(oom), 0, &info, set);
	od_scan_buffer(sc, oom, strlen(oom), 1, &info, set);
	od_scan_buffer(sc, rank1, strlen(rank1), 2, &info, set);
	assert_int_equal(od_events_count(set), 1);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->nseen, 3);
	assert_int_equal(ev->seen[0].input, 0);
	assert_int_equal(ev->seen[0].line, 1);
	assert_int_equal(ev->seen[1].input, 1);
	assert_int_equal(ev->seen[2].input, 2);
	assert_int_equal(ev->seen[2].line, 2);
	assert_true(od_event_seen_in(ev, 2));
	assert_false(od_event_seen_in(ev, 3));
	od_events_free(set);

	/* One event per input: input 1's echo of input 0's event is its
	 * one, so its own second failure is not kept; input 0 keeps its
	 * first only. */
	set = od_events_new();
	od_scan_buffer(sc, oom, strlen(oom), 0, &info, set);
	od_scan_buffer(sc, other, strlen(other), 0, &info, set);
	assert_int_equal(od_events_count(set), 2);      /* two without it */
	od_events_free(set);
	set = od_events_new();
	od_events_filter(set, -1, -1, 1);
	od_scan_buffer(sc, oom, strlen(oom), 0, &info, set);
	od_scan_buffer(sc, other, strlen(other), 0, &info, set);
	od_scan_buffer(sc, oom, strlen(oom), 1, &info, set);
	od_scan_buffer(sc, other, strlen(other), 1, &info, set);
	assert_int_equal(od_events_count(set), 1);
	assert_int_equal(od_events_get(set, 0)->nseen, 2);
	assert_int_equal(od_events_dropped(set), 0);
	od_events_free(set);

	/* Rank 1 only. */
	set = od_events_new();
	od_events_filter(set, 1, -1, 0);
	od_scan_buffer(sc, oom, strlen(oom), 0, &info, set);
	od_scan_buffer(sc, rank1, strlen(rank1), 1, &info, set);
	assert_int_equal(od_events_count(set), 1);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->rank, 1);
	assert_int_equal(ev->nseen, 1);
	assert_int_equal(ev->seen[0].input, 1);
	od_events_free(set);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffer_seams),
		cmocka_unit_test(test_feed_seams),
		cmocka_unit_test(test_many_hits),
		cmocka_unit_test(test_gzip_and_zstd),
		cmocka_unit_test(test_truncated_gzip),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_inputs_listed),
	};

	return cmocka_run_group_tests_name("scan", tests, setup, teardown);
}
