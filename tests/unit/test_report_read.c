/*
 * test_report_read.c: live mode's report reader (src/live/report_read.c).
 * A report written by od_report_write read back with every figure of its
 * events; what the reader refuses, with where; the null rule; the bounds;
 * and what tells a report from a log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"
#include "report_json.h"
#include "report_read.h"
#include "ut_recognisers.h"

static rr_report *
read_ok(const char *text)
{
	od_error err;
	rr_report *r;

	memset(&err, 0, sizeof err);
	r = rr_read(text, strlen(text), "r.json", &err);
	if (r == NULL)
		fail_msg("%s: %llu:%llu: %s", text,
		    (unsigned long long)err.line, (unsigned long long)err.col,
		    err.msg);
	return r;
}

/* The report oomdoc writes of a log, with a hand-made cause. */
static char *
report_of(const char *log, size_t *len)
{
	od_error err;
	od_scanner *sc = od_scanner_new(true, ut_recognisers(), &err);
	od_events *set = od_events_new();
	od_input in;
	od_report_opts o;
	od_event *ev;
	char *out = NULL, name[] = "job.log";
	FILE *f = open_memstream(&out, len);

	memset(&in, 0, sizeof in);
	memset(&o, 0, sizeof o);
	o.format = OD_FORMAT_JSON;
	od_scan_buffer(sc, log, strlen(log), 0, &in, set);
	assert_int_equal(od_events_count(set), 1);
	ev = od_events_get(set, 0);
	ev->causes = calloc(1, sizeof *ev->causes);
	assert_non_null(ev->causes);
	ev->ncauses = 1;
	ev->causes[0].rule = "foreign_process";
	ev->causes[0].title = "Another process";
	ev->causes[0].probe = "foreign_process";
	ev->causes[0].score = 0.954;
	ev->causes[0].confidence = OD_CONF_MEDIUM;
	ev->causes[0].explanation = strdup("held by pid 48213");
	ev->causes[0].evidence[0].text = strdup("other processes 59.20 GiB");
	ev->causes[0].evidence[0].compare = true;
	ev->causes[0].evidence[0].lhs = 63565000000LL;
	ev->causes[0].evidence[0].rhs = 1;
	snprintf(ev->causes[0].evidence[0].op, 3, ">");
	ev->causes[0].evidence[0].near_pct = -1;
	ev->causes[0].evidence[1].text = strdup("");
	ev->causes[0].evidence[1].near_pct = -1;
	ev->causes[0].cause_bytes = 63565000000LL;
	ev->causes[0].explains_bytes = OD_UNKNOWN;
	ev->causes[0].nevidence = 2;
	ev->causes[0].fixes = calloc(2, sizeof *ev->causes[0].fixes);
	assert_non_null(ev->causes[0].fixes);
	ev->causes[0].fixes[0].id = "stop_it";
	ev->causes[0].fixes[0].text = strdup("Stop pid 48213.");
	ev->causes[0].fixes[0].env_name = strdup("CUDA_VISIBLE_DEVICES");
	ev->causes[0].fixes[0].env_value = strdup("1");
	ev->causes[0].fixes[0].code = strdup("");
	ev->causes[0].fixes[0].config_key = strdup("trainer.devices");
	ev->causes[0].fixes[0].config_value = strdup("[1]");
	ev->causes[0].fixes[1].id = "wait";
	ev->causes[0].fixes[1].text = strdup("Wait.");
	ev->causes[0].fixes[1].changes[0] = (od_change){
		.setting = "batch_size", .from = 8, .to = 4 };
	ev->causes[0].fixes[1].changes[1] = (od_change){
		.setting = "accum_steps", .from = 4, .to = 8 };
	ev->causes[0].fixes[1].nchanges = 2;
	ev->causes[0].nfixes = 2;
	in.name = name;
	od_report_write(f, &o, &in, 1, set);
	fclose(f);
	od_events_free(set);
	od_scanner_free(sc);
	return out;
}

/* What oomdoc writes, the reader reads: every figure of the event. */
static void
test_round_trip(void **state)
{
	static const char log[] =
	    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to "
	    "allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of "
	    "which 1.02 GiB is free. Process 48213 has 59.20 GiB memory in use. "
	    "Including non-PyTorch memory, this process has 18.40 GiB memory "
	    "in use. Of the allocated memory 17.50 GiB is allocated by "
	    "PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n"
	    "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to "
	    "allocate 2.50 GiB. GPU 1 has a total capacity of 79.15 GiB of "
	    "which 1.10 GiB is free. Process 48213 has 59.20 GiB memory in use. "
	    "Including non-PyTorch memory, this process has 18.30 GiB memory "
	    "in use. Of the allocated memory 17.40 GiB is allocated by "
	    "PyTorch, and 110.00 MiB is reserved by PyTorch but unallocated.\n";
	od_error err;
	od_scanner *sc = od_scanner_new(true, ut_recognisers(), &err);
	od_events *set = od_events_new();
	od_input in;
	size_t len = 0;
	char *text = report_of(log, &len);
	rr_report *r;
	const od_event *want, *got;

	(void)state;
	memset(&in, 0, sizeof in);
	od_scan_buffer(sc, log, sizeof log - 1, 0, &in, set);
	want = od_events_get(set, 0);
	r = rr_read(text, len, "r.json", &err);
	assert_non_null(r);
	assert_int_equal(r->n, 1);
	got = &r->events[0];
	assert_string_equal(r->kinds[0], "cuda_caching_allocator");
	assert_string_equal(r->inputs[0], "job.log");
	assert_int_equal(got->kind, OD_KIND_CUDA_CACHING_ALLOCATOR);
	assert_string_equal(got->framework, "pytorch");
	assert_int_equal(got->layout, want->layout);
	assert_int_equal(got->line, 1);
	assert_int_equal(got->rank, 3);
	assert_int_equal(got->nranks, 2);
	assert_int_equal(got->device, 0);
	assert_true(got->fatal);
	assert_int_equal(got->message_len, want->message_len);
	assert_memory_equal(got->message, want->message, want->message_len);
	assert_memory_equal(&got->mem, &want->mem, sizeof got->mem);
	assert_int_equal(got->mem.requested, 2147483648LL);
	assert_int_equal(got->mem.allowed, OD_UNKNOWN);
	assert_int_equal(got->mem.nprocs, 1);
	assert_int_equal(got->mem.procs[0].pid, 48213);
	assert_memory_equal(&got->host, &want->host, sizeof got->host);
	assert_string_equal(got->exception, "torch.OutOfMemoryError");
	assert_int_equal(got->ncauses, 1);
	assert_string_equal(got->causes[0].rule, "foreign_process");
	assert_string_equal(got->causes[0].title, "Another process");
	assert_string_equal(got->causes[0].probe, "foreign_process");
	/* The score as the report shows it, to two decimals. */
	assert_true(got->causes[0].score == 0.95);
	assert_int_equal(got->causes[0].confidence, OD_CONF_MEDIUM);
	assert_string_equal(got->causes[0].explanation, "held by pid 48213");
	assert_int_equal(got->causes[0].nevidence, 2);
	assert_string_equal(got->causes[0].evidence[1].text, "");
	/* A comparison comes back with its operands and operator. */
	assert_true(got->causes[0].evidence[0].compare);
	assert_int_equal(got->causes[0].evidence[0].lhs, 63565000000LL);
	assert_string_equal(got->causes[0].evidence[0].op, ">");
	assert_false(got->causes[0].evidence[1].compare);
	assert_int_equal(got->causes[0].cause_bytes, 63565000000LL);
	assert_int_equal(got->causes[0].explains_bytes, OD_UNKNOWN);
	assert_int_equal(got->causes[0].nfixes, 2);
	assert_string_equal(got->causes[0].fixes[0].env_name,
	    "CUDA_VISIBLE_DEVICES");
	assert_string_equal(got->causes[0].fixes[0].config_value, "[1]");
	assert_string_equal(got->causes[0].fixes[0].code, "");
	assert_null(got->causes[0].fixes[1].code);
	assert_int_equal(got->causes[0].fixes[1].nchanges, 2);
	assert_string_equal(got->causes[0].fixes[1].changes[1].setting,
	    "accum_steps");
	assert_true(got->causes[0].fixes[1].changes[1].from == 4);
	assert_true(got->causes[0].fixes[1].changes[1].to == 8);
	/* rank 5's report joined rank 3's as a row of its own figures. */
	assert_true(got->first_failure);
	assert_int_equal(got->nper_rank, 2);
	assert_int_equal(got->per_rank[1].rank, 5);
	assert_int_equal(got->per_rank[1].device, 1);
	assert_int_equal(got->per_rank[1].line, 2);
	assert_memory_equal(got->per_rank, want->per_rank,
	    2 * sizeof got->per_rank[0]);
	/* Every field of the table comes back: the event written again is
	 * the event of the report. */
	{
		json_t *doc = json_loadb(text, len, 0, NULL), *orig, *again;
		od_input named = { .name = (char *)(uintptr_t)"job.log" };
		od_json_ctx cx = { .inputs = &named };

		assert_non_null(doc);
		orig = json_array_get(json_object_get(doc, "events"), 0);
		again = od_event_to_json(got, &cx);
		assert_non_null(again);
		assert_true(json_equal(orig, again));
		json_decref(again);
		json_decref(doc);
	}
	rr_free(r);
	rr_free(NULL);
	free(text);
	od_events_free(set);
	od_scanner_free(sc);
}

/* null, absent and ill-typed values are "not given"; unknown names kept. */
static void
test_null_rule(void **state)
{
	rr_report *r = read_ok("{\"schema\": \"oomdoc.report/1\", \"events\": ["
	    "{\"kind\": \"tpu_hbm\", \"rank\": null, \"device\": \"1\","
	    " \"line\": -4, \"memory\": {\"requested_bytes\": -5,"
	    " \"total_bytes\": 1.5e10, \"free_bytes\": null,"
	    " \"allocated_bytes\": 12, \"other_processes\": [{\"pid\": 7}]},"
	    " \"host\": {\"exit_code\": 137, \"process\": \"python\"},"
	    " \"context\": {\"grad_checkpointing\": true, \"step\": 9},"
	    " \"causes\": [{\"rule\": null}, {\"rule\": \"capacity\","
	    " \"score\": \"high\"}]},"
	    "{\"kind\": \"xla_resource_exhausted\", \"fatal\": false, \"input\": \"b.log\","
	    " \"memory\": 3, \"causes\": {}}]}");
	const od_event *a = &r->events[0], *b = &r->events[1];

	(void)state;
	assert_int_equal(r->n, 2);
	assert_string_equal(r->kinds[0], "tpu_hbm");
	assert_int_equal(a->kind, OD_KIND_CUDA_RAW);
	assert_string_equal(r->inputs[0], "r.json");
	assert_int_equal(a->rank, -1);
	assert_int_equal(a->device, -1);
	assert_int_equal(a->line, 0);
	assert_true(a->fatal);
	assert_int_equal(a->mem.requested, OD_UNKNOWN);
	assert_int_equal(a->mem.total, OD_UNKNOWN);
	assert_int_equal(a->mem.free, OD_UNKNOWN);
	assert_int_equal(a->mem.allocated, 12);
	assert_int_equal(a->mem.nprocs, 1);
	assert_int_equal(a->mem.procs[0].pid, 7);
	assert_int_equal(a->mem.procs[0].bytes, OD_UNKNOWN);
	assert_true(a->host.has_exit);
	assert_int_equal(a->host.exit_code, 137);
	assert_string_equal(a->host.process, "python");
	assert_int_equal(a->ctx.grad_ckpt, 1);
	assert_int_equal(a->ctx.batch_size, -1);
	assert_int_equal(a->step, 9);
	assert_null(a->message);
	assert_int_equal(a->ncauses, 1);
	assert_string_equal(a->causes[0].rule, "capacity");
	assert_true(a->causes[0].score == 0);
	assert_int_equal(b->kind, OD_KIND_XLA);
	assert_false(b->fatal);
	assert_string_equal(r->inputs[1], "b.log");
	assert_int_equal(b->mem.total, OD_UNKNOWN);
	assert_int_equal(b->ncauses, 0);
	rr_free(r);
}

/* Refused, with where: jansson's line and column, or the report's name. */
static void
test_errors(void **state)
{
	static const struct {
		const char *text;
		unsigned line, col;
		const char *msg;
	} cases[] = {
		{ "{\"schema\": \"oomdoc.report/1\", \"events\": [\n  {\"kind\": 1,}]}",
		  2, 14, "string or '}' expected" },
		{ "{\"schema\": \"oomdoc.report/1\"} {}", 1, 31, "end of file" },
		{ "[1, 2]", 0, 0, "not an oomdoc report" },
		{ "{\"schema\": \"oomdoc.report/9\", \"events\": []}", 0, 0,
		  "not an oomdoc report" },
		{ "{\"schema\": \"oomdoc.report/1\", \"events\": {}}", 0, 0,
		  "no events array" },
		{ "{\"schema\": \"oomdoc.report/1\", \"events\": [{\"kind\": \"xla\"},"
		  " {\"kind\": 2}]}", 0, 0, "event 2 of the report has no kind" },
		{ "{\"schema\": \"oomdoc.report/1\", \"events\": [\"\xc3\x28\"]}", 1,
		  42, "unable to decode byte" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		od_error err;
		rr_report *r;

		memset(&err, 0, sizeof err);
		r = rr_read(cases[i].text, strlen(cases[i].text), "r.json", &err);
		if (r != NULL || err.line != cases[i].line ||
		    err.col != cases[i].col ||
		    strcmp(err.file, "r.json") != 0 ||
		    strstr(err.msg, cases[i].msg) == NULL)
			fail_msg("%s: got %s:%llu:%llu: %s", cases[i].text,
			    err.file, (unsigned long long)err.line,
			    (unsigned long long)err.col, err.msg);
	}
}

/* The bounds of od_event hold whatever the report says. */
static void
test_bounds(void **state)
{
	char *text = malloc(64 * 1024), *p = text;
	od_error err;
	rr_report *r;
	int i;

	(void)state;
	assert_non_null(text);
	p += sprintf(p, "{\"schema\": \"oomdoc.report/1\", \"events\": [{"
	    "\"kind\": \"xla\", \"timestamp\": \"");
	for (i = 0; i < 100; i++)
		p += sprintf(p, "\xc3\xa9");
	p += sprintf(p, "\", \"message\": \"a\\u0000b");
	for (i = 0; i < OD_MESSAGE_MAX; i++)
		*p++ = 'x';
	p += sprintf(p, "\", \"causes\": [");
	for (i = 0; i < OD_CAUSES_MAX + 3; i++)
		p += sprintf(p, "%s{\"rule\": \"r%d\"}", i ? ", " : "", i);
	p += sprintf(p, "], \"memory\": {\"other_processes\": [");
	for (i = 0; i < OD_PROCS_MAX + 3; i++)
		p += sprintf(p, "%s{\"pid\": %d}", i ? ", " : "", i);
	p += sprintf(p, "]}}");
	for (i = 0; i < OD_EVENTS_MAX + 2; i++)
		p += sprintf(p, ", {\"kind\": \"xla\"}");
	p += sprintf(p, "]}");
	r = rr_read(text, (size_t)(p - text), "r.json", &err);
	assert_non_null(r);
	assert_int_equal(r->n, OD_EVENTS_MAX);
	assert_int_equal(r->events[0].ncauses, OD_CAUSES_MAX);
	assert_string_equal(r->events[0].causes[OD_CAUSES_MAX - 1].rule, "r7");
	assert_int_equal(r->events[0].mem.nprocs, OD_PROCS_MAX);
	/* Texts are cut at a character, within their buffers. */
	assert_int_equal(strlen(r->events[0].timestamp) % 2, 0);
	assert_true(strlen(r->events[0].timestamp) < OD_TIMESTAMP_MAX);
	/* The message keeps its NUL, and OD_MESSAGE_MAX bytes. */
	assert_int_equal(r->events[0].message_len, OD_MESSAGE_MAX);
	assert_memory_equal(r->events[0].message, "a\0bx", 4);
	rr_free(r);
	assert_null(rr_read(text, (size_t)RR_INPUT_MAX + 1, "r.json", &err));
	assert_non_null(strstr(err.msg, "more than 64 MiB"));
	free(text);
}

static void
test_is_report(void **state)
{
	static const char yes[] = "\n  {\"schema\": \"oomdoc.report/1\"}";
	static const char log[] = "Traceback: {\"schema\": \"oomdoc.report/1\"}";
	static const char other[] = "{\"schema\": \"other/1\"}";

	(void)state;
	assert_true(rr_is_report(yes, sizeof yes - 1));
	assert_false(rr_is_report(log, sizeof log - 1));
	assert_false(rr_is_report(other, sizeof other - 1));
	assert_false(rr_is_report("", 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_null_rule),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_is_report),
	};

	return cmocka_run_group_tests_name("report_read", tests, NULL, NULL);
}
