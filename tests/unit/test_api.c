/*
 * test_api.c: the public interface, through <oomdoc/oomdoc.h> alone.  The
 * same log fed in one chunk, in 1-byte chunks and in chunks of random
 * sizes gives the same events, and each event is delivered once, with the
 * values it ends with (but for what its echoes add); an event is delivered by feed, before finish, once
 * enough text follows it; two scanners used alternately, or at once in
 * two threads, do not mix; the options, the rules' errors and the report;
 * a snapshot joined, and every format as the command writes it.
 *
 * Run from the repository root (ctest does): it reads fixtures/.
 */
#include <glob.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <oomdoc/oomdoc.h>

/* A growing string. */
typedef struct {
	char *s;
	size_t n, cap;
} buf;

static void
buf_add(buf *b, const void *p, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		assert_non_null(b->s);
	}
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void buf_printf(buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
buf_printf(buf *b, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof line);
	buf_add(b, line, (size_t)n);
}

/* Appends the files that pattern matches, in name order. */
static void
add_files(buf *b, const char *pattern)
{
	glob_t g;
	size_t i;

	assert_int_equal(glob(pattern, 0, NULL, &g), 0);
	for (i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "rb");
		char chunk[65536];
		size_t n;

		assert_non_null(f);
		while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
			buf_add(b, chunk, n);
		fclose(f);
	}
	globfree(&g);
}

/* Many events of many stacks, with echoes and reports that join. */
static buf
multi_log(void)
{
	buf b = { 0 };

	add_files(&b, "fixtures/pytorch/*.log");
	add_files(&b, "fixtures/stacks/*.log");
	return b;
}

/*
 * One line describing an event: everything the accessors give, or (full
 * false) what an echo seen later cannot change: it adds occurrences and
 * gives a rank and a timestamp to an event that had none.
 */
static void
describe(buf *b, const oomdoc_event *ev, bool full)
{
	size_t len, i;
	const char *msg = oomdoc_event_message(ev, &len);
	uint64_t h = 1469598103934665603ULL;
	int f;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)msg[i]) * 1099511628211ULL;
	buf_printf(b, "%d:%llu-%llu %s %s %s fatal=%d dev=%d msg=%zu/%016llx",
	    oomdoc_event_input(ev), (unsigned long long)oomdoc_event_line(ev),
	    (unsigned long long)oomdoc_event_end_line(ev),
	    oomdoc_event_kind(ev), oomdoc_event_framework(ev) != NULL ?
	    oomdoc_event_framework(ev) : "-", oomdoc_event_confidence(ev),
	    oomdoc_event_fatal(ev), oomdoc_event_device(ev), len,
	    (unsigned long long)h);
	if (full)
		buf_printf(b, " rank=%d ts=%s x%llu", oomdoc_event_rank(ev),
		    oomdoc_event_timestamp(ev),
		    (unsigned long long)oomdoc_event_occurrences(ev));
	for (f = 0; f < OOMDOC_FIGURE_COUNT; f++)
		buf_printf(b, " %lld",
		    (long long)oomdoc_event_figure(ev, (oomdoc_figure)f));
	buf_add(b, "\n", 1);
}

/* What a scan delivered, and the scanner's events after finish (in
 * part, to compare with what was delivered, and in full). */
typedef struct {
	buf delivered;
	buf final;
	buf full;
	size_t ndelivered;
	oomdoc_scanner *sc;
	bool finished;          /* finish has been called */
	size_t before_finish;   /* events delivered by feed */
} run;

static void
on_event(oomdoc_event *ev, void *arg)
{
	run *r = arg;

	describe(&r->delivered, ev, false);
	r->ndelivered++;
	if (!r->finished)
		r->before_finish++;
}

/* The shipped rules, loaded once: their recognisers read every stack
 * but PyTorch's allocator. */
static oomdoc_rules *shipped;

static void
free_shipped(void)
{
	oomdoc_rules_free(shipped);
}

static const oomdoc_rules *
shipped_rules(void)
{
	if (shipped == NULL) {
		shipped = oomdoc_rules_new();
		assert_non_null(shipped);
		assert_true(oomdoc_rules_load(shipped, "rules"));
		atexit(free_shipped);
	}
	return shipped;
}

static oomdoc_scanner *
new_scanner(run *r)
{
	oomdoc_error err;
	oomdoc_options o;
	oomdoc_scanner *sc;

	oomdoc_options_init(&o);
	o.recognisers = shipped_rules();
	sc = oomdoc_scanner_new(&o, &err);

	assert_non_null(sc);
	memset(r, 0, sizeof *r);
	r->sc = sc;
	oomdoc_scanner_on_event(sc, on_event, r);
	return sc;
}

static void
end_run(run *r)
{
	size_t i;

	r->finished = true;
	assert_true(oomdoc_scanner_finish(r->sc));
	for (i = 0; i < oomdoc_scanner_event_count(r->sc); i++) {
		describe(&r->final, oomdoc_scanner_event(r->sc, i), false);
		describe(&r->full, oomdoc_scanner_event(r->sc, i), true);
	}
}

static void
free_run(run *r)
{
	oomdoc_scanner_free(r->sc);
	free(r->delivered.s);
	free(r->final.s);
	free(r->full.s);
}

/* A pseudo-random chunk size from 1 to max (xorshift, fixed seed). */
static size_t
next_size(uint64_t *state, size_t max)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (size_t)(*state % max) + 1;
}

/*
 * Scans text in chunks of chunk bytes (0: random, at most max).  Each
 * event must be delivered once and, when the log repeats nothing (echo
 * false), with the values it ends with.
 */
static void
scan_chunks(run *r, const buf *text, size_t chunk, size_t max, bool echo)
{
	uint64_t state = 0x9e3779b97f4a7c15ULL;
	size_t at = 0;

	new_scanner(r);
	while (at < text->n) {
		size_t n = chunk > 0 ? chunk : next_size(&state, max);

		if (n > text->n - at)
			n = text->n - at;
		assert_true(oomdoc_scanner_feed(r->sc, text->s + at, n));
		at += n;
	}
	end_run(r);
	assert_int_equal(r->ndelivered, oomdoc_scanner_event_count(r->sc));
	if (!echo)
		assert_string_equal(r->delivered.s != NULL ? r->delivered.s :
		    "", r->final.s != NULL ? r->final.s : "");
}

static void
test_chunk_sizes(void **state)
{
	buf text = multi_log();
	run one, bytes, random, small;

	(void)state;
	scan_chunks(&one, &text, text.n, 0, false);
	assert_true(oomdoc_scanner_event_count(one.sc) >= 40);
	scan_chunks(&bytes, &text, 1, 0, false);
	scan_chunks(&random, &text, 0, 8192, false);
	scan_chunks(&small, &text, 0, 40, false);
	assert_string_equal(one.full.s, bytes.full.s);
	assert_string_equal(one.full.s, random.full.s);
	assert_string_equal(one.full.s, small.full.s);
	/* Fed in small pieces, most events come out before the end. */
	assert_true(bytes.before_finish > oomdoc_scanner_event_count(bytes.sc) / 2);
	/* In one chunk: the events of the last 32 KiB wait for finish. */
	assert_true(one.before_finish < oomdoc_scanner_event_count(one.sc));
	free_run(&one);
	free_run(&bytes);
	free_run(&random);
	free_run(&small);
	free(text.s);
}

/* Past the 2 MiB buffer: moved many times, the seams anywhere.  The log
 * is repeated, so most reports are echoes of delivered events. */
static void
test_chunk_sizes_big(void **state)
{
	buf text = multi_log(), big = { 0 };
	run one, random;
	int i, k;

	(void)state;
	for (k = 0; k < 3; k++) {
		buf_add(&big, text.s, text.n);
		for (i = 0; i < 60000; i++)
			buf_printf(&big, "epoch %d step %d loss 0.2513 lr 1e-4\n",
			    k, i);
	}
	scan_chunks(&one, &big, big.n, 0, true);
	scan_chunks(&random, &big, 0, 300000, true);
	assert_string_equal(one.full.s, random.full.s);
	assert_true(random.before_finish > 0);
	assert_int_equal(oomdoc_scanner_input_bytes(random.sc, 0), big.n);
	assert_int_equal(oomdoc_scanner_input_lines(one.sc, 0),
	    oomdoc_scanner_input_lines(random.sc, 0));
	free_run(&one);
	free_run(&random);
	free(text.s);
	free(big.s);
}

static void
add_filler(buf *b, size_t bytes)
{
	size_t start = b->n;
	int i = 0;

	while (b->n - start < bytes)
		buf_printf(b, "step %d loss 0.123 lr 1e-4\n", i++);
}

/*
 * A message cut by a console's hard wrap inside an anchor ("OOM when
 * allocatin" / "g tensor") among more prefilter hits than one scan call
 * takes: the seams of a stretch whose hit list filled up are scanned too,
 * so the event is found whether the text comes in one piece or in lines.
 */
static void
test_seam_after_full_hit_list(void **state)
{
	static const char wrapped[] =
	    "2018-05-10 09:14:16.534627: W tensorflow/core/framework/op_kernel.cc:1202] OP_RE\n"
	    "QUIRES failed at cwise_ops_common.cc:70 : Resource exhausted: OOM when allocatin\n"
	    "g tensor with shape[123008,500] and type float on /job:localhost/replica:0/task:\n"
	    "0/device:GPU:0 by allocator GPU_0_bfc\n";
	buf text = { 0 };
	run one, lines;
	int i;

	(void)state;
	for (i = 0; i < 3000; i++)
		buf_printf(&text, "step %d batch_size 8 seq_len 512\n", i);
	buf_add(&text, wrapped, sizeof wrapped - 1);
	for (i = 0; i < 3000; i++)
		buf_printf(&text, "step %d batch_size 8 seq_len 512\n", i);
	scan_chunks(&one, &text, text.n, 0, false);
	scan_chunks(&lines, &text, 0, 64, false);
	assert_int_equal(oomdoc_scanner_event_count(one.sc), 1);
	assert_string_equal(oomdoc_event_kind(oomdoc_scanner_event(one.sc, 0)),
	    "tf_resource_exhausted");
	assert_int_equal(oomdoc_event_line(oomdoc_scanner_event(one.sc, 0)),
	    3002);
	assert_string_equal(one.full.s, lines.full.s);
	free_run(&one);
	free_run(&lines);
	free(text.s);
}

/* An event comes out of feed once enough text follows it, not before. */
static void
test_delivered_by_feed(void **state)
{
	static const char pytorch[] = "RuntimeError: CUDA out of memory. Tried "
	    "to allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB "
	    "already allocated; 0 bytes free; 1.00 GiB reserved in total by "
	    "PyTorch)\n";
	/* A bare "Killed" (low confidence), then Slurm's word on it: one
	 * event, Slurm's, which must not be delivered as the first. */
	static const char killed[] = "/var/spool/slurmd/job1/slurm_script: line "
	    "31: 88213 Killed                  python train.py\n"
	    "slurmstepd: error: Detected 1 oom_kill event in StepId=1.batch. "
	    "Some of the step tasks have been OOM Killed.\n";
	buf filler = { 0 };
	run r;

	(void)state;
	add_filler(&filler, 64 * 1024);
	new_scanner(&r);
	assert_true(oomdoc_scanner_feed(r.sc, pytorch, sizeof pytorch - 1));
	assert_int_equal(r.ndelivered, 0);      /* it may go on */
	assert_true(oomdoc_scanner_feed(r.sc, filler.s, filler.n));
	assert_int_equal(r.ndelivered, 1);
	assert_non_null(strstr(r.delivered.s, "cuda_caching_allocator"));
	assert_non_null(strstr(r.delivered.s, " 2097152 "));

	/* Byte by byte: the kill is delivered once, as Slurm's. */
	for (size_t i = 0; i < sizeof killed - 1; i++)
		assert_true(oomdoc_scanner_feed(r.sc, killed + i, 1));
	for (size_t i = 0; i < filler.n; i++)
		assert_true(oomdoc_scanner_feed(r.sc, filler.s + i, 1));
	assert_int_equal(r.ndelivered, 2);
	assert_non_null(strstr(r.delivered.s, "slurm_oom"));
	assert_null(strstr(r.delivered.s, "host_oom_killer"));
	end_run(&r);
	assert_int_equal(r.before_finish, 2);
	assert_string_equal(r.delivered.s, r.final.s);
	free_run(&r);
	free(filler.s);
}

/*
 * oomdoc_scanner_flush: a pause delivers an event that has had no
 * lookahead, once its line has ended, never twice; a kill that the next
 * lines may join waits; what follows the pause is scanned as usual.
 */
static void
test_flush(void **state)
{
	static const char pytorch[] = "RuntimeError: CUDA out of memory. Tried "
	    "to allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB "
	    "already allocated; 0 bytes free; 1.00 GiB reserved in total by "
	    "PyTorch)";
	static const char killed[] = "/var/spool/slurmd/job1/slurm_script: line "
	    "31: 88213 Killed                  python train.py\n";
	static const char slurm[] = "slurmstepd: error: Detected 1 oom_kill "
	    "event in StepId=1.batch. Some of the step tasks have been OOM "
	    "Killed.\n";
	run r;

	(void)state;
	new_scanner(&r);
	assert_false(oomdoc_scanner_flush(r.sc));      /* no input yet */
	assert_true(oomdoc_scanner_feed(r.sc, pytorch, sizeof pytorch - 1));
	/* The line has not ended: it may still be written. */
	assert_true(oomdoc_scanner_flush(r.sc));
	assert_int_equal(r.ndelivered, 0);
	assert_true(oomdoc_scanner_feed(r.sc, "\n", 1));
	assert_int_equal(r.ndelivered, 0);      /* the feed alone waits */
	assert_true(oomdoc_scanner_flush(r.sc));
	assert_int_equal(r.ndelivered, 1);
	assert_non_null(strstr(r.delivered.s, " 2097152 "));
	assert_true(oomdoc_scanner_flush(r.sc));
	assert_int_equal(r.ndelivered, 1);      /* not twice */
	/* A bare kill waits at a pause for Slurm's word, which joins it. */
	assert_true(oomdoc_scanner_feed(r.sc, killed, sizeof killed - 1));
	assert_true(oomdoc_scanner_flush(r.sc));
	assert_int_equal(r.ndelivered, 1);
	assert_true(oomdoc_scanner_feed(r.sc, slurm, sizeof slurm - 1));
	assert_true(oomdoc_scanner_flush(r.sc));
	end_run(&r);
	assert_int_equal(r.ndelivered, 2);
	assert_int_equal(oomdoc_scanner_event_count(r.sc), 2);
	assert_non_null(strstr(r.delivered.s, "slurm_oom"));
	assert_string_equal(r.delivered.s, r.final.s);
	free_run(&r);
}

/* Two scanners fed in turns give what each gives alone. */
static void
test_two_scanners(void **state)
{
	buf a = { 0 }, b = { 0 };
	run ra, rb, alone_a, alone_b;
	size_t at = 0, chunk = 777;

	(void)state;
	add_files(&a, "fixtures/pytorch/*.log");
	add_files(&b, "fixtures/stacks/*.log");
	new_scanner(&ra);
	new_scanner(&rb);
	assert_true(oomdoc_scanner_begin(ra.sc, "a.log", NULL));
	assert_true(oomdoc_scanner_begin(rb.sc, "b.log", NULL));
	while (at < a.n || at < b.n) {
		if (at < a.n)
			oomdoc_scanner_feed(ra.sc, a.s + at,
			    a.n - at < chunk ? a.n - at : chunk);
		if (at < b.n)
			oomdoc_scanner_feed(rb.sc, b.s + at,
			    b.n - at < chunk ? b.n - at : chunk);
		at += chunk;
	}
	end_run(&ra);
	end_run(&rb);
	scan_chunks(&alone_a, &a, a.n, 0, false);
	scan_chunks(&alone_b, &b, b.n, 0, false);
	assert_string_equal(ra.full.s, alone_a.full.s);
	assert_string_equal(rb.full.s, alone_b.full.s);
	assert_string_not_equal(ra.full.s, rb.full.s);
	assert_string_equal(oomdoc_scanner_input_name(ra.sc, 0), "a.log");
	free_run(&ra);
	free_run(&rb);
	free_run(&alone_a);
	free_run(&alone_b);
	free(a.s);
	free(b.s);
}

/*
 * One thread's work, done as a program that embeds the library would: its
 * own scanner and its own rules, made in the thread, the log fed in chunks,
 * the rules applied to every event, and the events with their causes
 * described.  cmocka is not thread-safe, so a failure of the library is a
 * flag the main thread checks (only buf's out-of-memory check asserts).
 */
typedef struct {
	const buf *text;
	buf out;
	bool failed;
} job;

static void
describe_with_causes(buf *b, oomdoc_scanner *sc, const oomdoc_rules *rules)
{
	size_t i;
	int k;

	for (i = 0; i < oomdoc_scanner_event_count(sc); i++) {
		oomdoc_event *ev = oomdoc_scanner_event(sc, i);

		oomdoc_rules_apply(rules, ev);
		describe(b, ev, true);
		for (k = 0; k < oomdoc_event_cause_count(ev); k++) {
			const oomdoc_cause *c = oomdoc_event_cause(ev, k);

			buf_printf(b, "  %s %.3f %s\n", oomdoc_cause_rule(c),
			    oomdoc_cause_score(c), oomdoc_cause_confidence(c));
		}
	}
}

static void
thread_work(job *j)
{
	oomdoc_error err;
	oomdoc_options o;
	oomdoc_scanner *sc = NULL;
	oomdoc_rules *rules = oomdoc_rules_new();
	size_t at;

	/* Each thread its own rules, whose recognisers its scanner reads. */
	oomdoc_options_init(&o);
	o.recognisers = rules;
	if (rules == NULL || !oomdoc_rules_load(rules, "rules") ||
	    (sc = oomdoc_scanner_new(&o, &err)) == NULL ||
	    !oomdoc_scanner_begin(sc, "log", NULL)) {
		j->failed = true;
	} else {
		for (at = 0; at < j->text->n && !j->failed; at += 1000)
			j->failed = !oomdoc_scanner_feed(sc, j->text->s + at,
			    j->text->n - at < 1000 ? j->text->n - at : 1000);
		if (!j->failed && oomdoc_scanner_finish(sc))
			describe_with_causes(&j->out, sc, rules);
		else
			j->failed = true;
	}
	oomdoc_scanner_free(sc);
	oomdoc_rules_free(rules);
}

static void *
thread_scan(void *arg)
{
	thread_work(arg);
	return NULL;
}

/*
 * Two scanners with their rules in two threads at once give what each
 * gives alone: the library has no mutable state shared between handles.
 */
static void
test_two_threads(void **state)
{
	buf a = { 0 }, b = { 0 };
	job ja, jb, alone_a = { 0 }, alone_b = { 0 };
	pthread_t ta, tb;
	int round;

	(void)state;
	add_files(&a, "fixtures/pytorch/*.log");
	add_files(&b, "fixtures/stacks/*.log");
	alone_a.text = &a;
	alone_b.text = &b;
	thread_work(&alone_a);
	thread_work(&alone_b);
	assert_false(alone_a.failed);
	assert_false(alone_b.failed);
	assert_non_null(strstr(alone_a.out.s, "  "));   /* causes were found */
	for (round = 0; round < 4; round++) {
		memset(&ja, 0, sizeof ja);
		memset(&jb, 0, sizeof jb);
		ja.text = &a;
		jb.text = &b;
		assert_int_equal(pthread_create(&ta, NULL, thread_scan, &ja), 0);
		assert_int_equal(pthread_create(&tb, NULL, thread_scan, &jb), 0);
		assert_int_equal(pthread_join(ta, NULL), 0);
		assert_int_equal(pthread_join(tb, NULL), 0);
		assert_false(ja.failed);
		assert_false(jb.failed);
		assert_string_equal(ja.out.s, alone_a.out.s);
		assert_string_equal(jb.out.s, alone_b.out.s);
		free(ja.out.s);
		free(jb.out.s);
	}
	free(alone_a.out.s);
	free(alone_b.out.s);
	free(a.s);
	free(b.s);
}

/* Two inputs in one scanner, a file among them; misuse is refused. */
static void
test_inputs(void **state)
{
	oomdoc_error err;
	run r;

	(void)state;
	new_scanner(&r);
	assert_false(oomdoc_scanner_finish(r.sc));      /* nothing started */
	assert_true(oomdoc_scanner_scan_file(r.sc, "fixtures/sample/job.log",
	    &err));
	assert_int_equal(r.ndelivered, 1);
	assert_true(oomdoc_scanner_begin(r.sc, "second", &err));
	assert_false(oomdoc_scanner_begin(r.sc, "third", &err));
	assert_string_equal(err.message, "an input is already started");
	assert_false(oomdoc_scanner_scan_file(r.sc, "fixtures/sample/job.log",
	    &err));
	assert_false(oomdoc_scanner_reset(r.sc));
	end_run(&r);
	assert_int_equal(oomdoc_scanner_input_count(r.sc), 2);
	assert_false(oomdoc_scanner_scan_file(r.sc, "fixtures/none.log", &err));
	assert_string_equal(err.file, "fixtures/none.log");
	assert_int_equal(oomdoc_scanner_input_count(r.sc), 3);
	assert_true(oomdoc_scanner_reset(r.sc));
	assert_int_equal(oomdoc_scanner_input_count(r.sc), 0);
	assert_int_equal(oomdoc_scanner_event_count(r.sc), 0);
	free_run(&r);
}

/* An old program's smaller options get the defaults for the rest. */
static void
test_options(void **state)
{
	oomdoc_options o;
	oomdoc_error err;
	oomdoc_scanner *sc;
	buf text = multi_log();

	(void)state;
	assert_int_equal(oomdoc_api_version(), OOMDOC_API_VERSION);
	oomdoc_options_init(&o);
	assert_int_equal(o.struct_size, sizeof o);
	assert_true(o.jit);
	o.max_events = 0;
	assert_null(oomdoc_scanner_new(&o, &err));
	assert_non_null(strstr(err.message, "max_events"));
	o.max_events = 2;
	o.jit = false;
	sc = oomdoc_scanner_new(&o, &err);
	assert_non_null(sc);
	oomdoc_scanner_feed(sc, text.s, text.n);
	oomdoc_scanner_finish(sc);
	assert_int_equal(oomdoc_scanner_event_count(sc), 2);
	assert_true(oomdoc_scanner_events_dropped(sc) > 0);
	oomdoc_scanner_free(sc);
	/* A struct that ends before max_events: the default. */
	o.struct_size = offsetof(oomdoc_options, max_events);
	sc = oomdoc_scanner_new(&o, &err);
	assert_non_null(sc);
	oomdoc_scanner_feed(sc, text.s, text.n);
	oomdoc_scanner_finish(sc);
	assert_true(oomdoc_scanner_event_count(sc) > 2);
	oomdoc_scanner_free(sc);
	free(text.s);
}

/* Rules: a broken file's error has its place; causes; the report. */
static void
test_rules_and_report(void **state)
{
	static const char bad[] = "rules:\n  - id: x\n    when: requested >\n";
	oomdoc_rules *rules = oomdoc_rules_new();
	oomdoc_error err;
	const oomdoc_event *ev;
	const oomdoc_cause *c;
	char *out = NULL;
	size_t outlen = 0;
	FILE *f;
	run r;

	(void)state;
	assert_non_null(rules);
	assert_false(oomdoc_rules_load_text(rules, "bad.yaml", bad,
	    sizeof bad - 1));
	assert_true(oomdoc_rules_error_count(rules) >= 1);
	assert_true(oomdoc_rules_error(rules, 0, &err));
	assert_string_equal(err.file, "bad.yaml");
	assert_true(err.line >= 2);
	assert_true(err.message[0] != '\0');
	assert_false(oomdoc_rules_error(rules, 99, &err));
	oomdoc_rules_free(rules);

	rules = oomdoc_rules_new();
	assert_true(oomdoc_rules_load(rules, "rules"));
	assert_int_equal(oomdoc_rules_error_count(rules), 0);
	assert_true(oomdoc_rules_count(rules) > 5);
	assert_false(oomdoc_rules_fact(rules, "no_such_fact=1", &err));
	assert_true(oomdoc_rules_fact(rules, "batch_size=32", &err));

	new_scanner(&r);
	assert_true(oomdoc_scanner_scan_file(r.sc, "fixtures/sample/job.log",
	    &err));
	ev = oomdoc_scanner_event(r.sc, 0);
	assert_non_null(ev);
	assert_int_equal(oomdoc_event_cause_count(ev), 0);
	assert_string_equal(oomdoc_event_fingerprint(ev), "");
	oomdoc_rules_apply(rules, oomdoc_scanner_event(r.sc, 0));
	assert_true(oomdoc_event_cause_count(ev) > 0);
	assert_int_equal(strlen(oomdoc_event_fingerprint(ev)), 16);
	c = oomdoc_event_cause(ev, 0);
	assert_non_null(c);
	assert_non_null(oomdoc_cause_rule(c));
	assert_true(oomdoc_cause_score(c) > 0 && oomdoc_cause_score(c) <= 1);
	assert_non_null(oomdoc_cause_explanation(c));
	assert_null(oomdoc_event_cause(ev, 99));

	f = open_memstream(&out, &outlen);
	assert_non_null(f);
	assert_true(oomdoc_scanner_report(r.sc, rules, f, OOMDOC_REPORT_JSON,
	    false));
	fclose(f);
	assert_non_null(strstr(out, "\"oomdoc.report/2\""));
	assert_non_null(strstr(out, "fixtures/sample/job.log"));
	/* The report applied the rules again: the cause read before is gone,
	 * and the event's new first cause is the same rule. */
	c = oomdoc_event_cause(ev, 0);
	assert_non_null(c);
	assert_non_null(strstr(out, oomdoc_cause_rule(c)));
	assert_string_equal(oomdoc_figure_name(OOMDOC_FIG_REQUESTED),
	    "requested_bytes");
	assert_null(oomdoc_figure_name(OOMDOC_FIGURE_COUNT));
	assert_int_equal(oomdoc_event_figure(ev, OOMDOC_FIGURE_COUNT),
	    OOMDOC_UNKNOWN);

	/* The same report as text the library allocates: byte for byte what
	 * the stream got, its length given; an invalid format gives NULL. */
	{
		size_t slen = 99;
		char *s = oomdoc_scanner_report_string(r.sc, rules,
		    OOMDOC_REPORT_JSON, false, &slen);

		assert_non_null(s);
		assert_int_equal(slen, outlen);
		assert_int_equal(strlen(s), slen);
		assert_memory_equal(s, out, outlen);
		oomdoc_free(s);
		slen = 99;
		assert_null(oomdoc_scanner_report_string(r.sc, rules,
		    (oomdoc_report_format)99, false, &slen));
		assert_int_equal(slen, 0);
		oomdoc_free(NULL);
	}
	free(out);
	free_run(&r);
	oomdoc_rules_free(rules);
}

/* What the command writes on standard output for these arguments. */
static char *
command_output(const char *args, size_t *len)
{
	const char *bin = getenv("OOMDOC_BIN");
	char cmd[1024];
	buf b = { NULL, 0, 0 };
	char chunk[4096];
	size_t n;
	FILE *p;

	assert_non_null(bin);
	assert_true((size_t)snprintf(cmd, sizeof cmd, "'%s' %s", bin, args) <
	    sizeof cmd);
	p = popen(cmd, "r");
	assert_non_null(p);
	buf_add(&b, "", 0);
	while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
		buf_add(&b, chunk, n);
	pclose(p);
	*len = b.n;
	return b.s;
}

static const char *const api_formats[] = {
	[OOMDOC_REPORT_TEXT] = "text", [OOMDOC_REPORT_JSON] = "json",
	[OOMDOC_REPORT_MARKDOWN] = "markdown", [OOMDOC_REPORT_JSONL] = "jsonl",
	[OOMDOC_REPORT_GITHUB] = "github",
	[OOMDOC_REPORT_PROMETHEUS] = "prometheus",
	[OOMDOC_REPORT_HTML] = "html",
};

/* Asserts that sc's report in format f is byte for byte the command's
 * with -v --width 0 and these options (the shipped rules, log). */
static void
same_as_command(oomdoc_scanner *sc, size_t f, const char *options,
    const char *log)
{
	char args[512];
	size_t len = 0, want_len = 0;
	char *got = oomdoc_scanner_report_string(sc, shipped_rules(),
	    (oomdoc_report_format)f, false, &len);
	char *want;

	snprintf(args, sizeof args, "--no-default-rules --rules rules -v "
	    "--width 0 --color never --format %s %s %s 2>/dev/null",
	    api_formats[f], options, log);
	want = command_output(args, &want_len);
	assert_non_null(got);
	assert_true(len > 0);
	if (len != want_len || memcmp(got, want, len) != 0)
		fail_msg("--format %s %s: the library's report (%zu bytes) is "
		    "not the command's (%zu bytes)", api_formats[f], options,
		    len, want_len);
	oomdoc_free(got);
	free(want);
}

/*
 * Every format, byte for byte the report of the command (OOMDOC_BIN,
 * which ctest sets) with -v and --width 0 on the same log with the same
 * rules; then a snapshot joined, as --snapshot joins it (which --format
 * jsonl does not take: its lines are checked for the snapshot's
 * verdict).  A file that is not a snapshot, a scanner reading an input,
 * and a scanner with no event of PyTorch's allocator join nothing.
 */
static void
test_formats_and_snapshot(void **state)
{
	static const char log[] = "fixtures/snapshot/job.log";
	static const char snap[] = "fixtures/snapshot/fragmentation.pickle";
	char options[128], *jsonl, *second;
	oomdoc_error err;
	size_t f;
	run r;

	(void)state;
	new_scanner(&r);
	assert_true(oomdoc_scanner_scan_file(r.sc, log, &err));
	assert_int_equal(oomdoc_scanner_event_count(r.sc), 2);
	for (f = 0; f < sizeof api_formats / sizeof api_formats[0]; f++)
		same_as_command(r.sc, f, "", log);
	assert_null(oomdoc_scanner_report_string(r.sc, shipped_rules(),
	    (oomdoc_report_format)(OOMDOC_REPORT_HTML + 1), false, NULL));

	memset(&err, 0, sizeof err);
	assert_int_equal(oomdoc_scanner_join_snapshot(r.sc, "fixtures/none",
	    &err), -2);
	assert_string_equal(err.file, "fixtures/none");
	assert_non_null(strstr(err.message, "cannot open"));
	assert_int_equal(oomdoc_scanner_join_snapshot(r.sc, log, &err), -2);
	assert_string_equal(err.file, log);
	/* The oom entry asked for 512 MiB: the second event (SNAPSHOTS). */
	assert_int_equal(oomdoc_scanner_join_snapshot(r.sc, snap, &err), 1);
	snprintf(options, sizeof options, "--snapshot %s", snap);
	for (f = 0; f < sizeof api_formats / sizeof api_formats[0]; f++)
		if (f != OOMDOC_REPORT_JSONL)
			same_as_command(r.sc, f, options, log);
	jsonl = oomdoc_scanner_report_string(r.sc, shipped_rules(),
	    OOMDOC_REPORT_JSONL, false, NULL);
	assert_non_null(jsonl);
	second = strchr(jsonl, '\n');
	assert_non_null(second);
	*second++ = '\0';
	assert_non_null(strstr(jsonl, "\"snapshot\":null"));
	assert_non_null(strstr(second, "\"snapshot\":{\"verdict\":"));
	oomdoc_free(jsonl);
	free_run(&r);

	/* Not while an input is read. */
	new_scanner(&r);
	assert_true(oomdoc_scanner_begin(r.sc, "open.log", &err));
	assert_int_equal(oomdoc_scanner_join_snapshot(r.sc, snap, &err), -2);
	assert_non_null(strstr(err.message, "finish it first"));
	assert_true(oomdoc_scanner_finish(r.sc));
	assert_true(oomdoc_scanner_scan_file(r.sc,
	    "fixtures/stacks/kernel-oom-killer-global.log", &err));
	assert_true(oomdoc_scanner_event_count(r.sc) > 0);
	assert_int_equal(oomdoc_scanner_join_snapshot(r.sc, snap, &err), -1);
	free_run(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunk_sizes),
		cmocka_unit_test(test_chunk_sizes_big),
		cmocka_unit_test(test_seam_after_full_hit_list),
		cmocka_unit_test(test_delivered_by_feed),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_two_scanners),
		cmocka_unit_test(test_two_threads),
		cmocka_unit_test(test_inputs),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_rules_and_report),
		cmocka_unit_test(test_formats_and_snapshot),
	};

	return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
