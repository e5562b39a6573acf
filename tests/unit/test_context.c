/*
 * test_context.c: the memory readings of the context stage.  Each format
 * of context.c read from one line, through the scanner as a log gives it
 * (the anchors find the line, cx_line reads it); the series' bound and
 * its thinning over a long log; the series the rules use (one figure of
 * one rank) and its growth, median and spread over ranks; a log of
 * readings alone gives no event.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "context.h"
#include "core.h"
#include "report.h"
#include "ut_recognisers.h"

#define MIB (INT64_C(1) << 20)
#define GIB (INT64_C(1) << 30)

static od_scanner *sc;

/* A PyTorch 2.x message for the readings to come before. */
static const char oom[] =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
    "GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.00 GiB is "
    "free. Including non-PyTorch memory, this process has 78.10 GiB memory "
    "in use. Of the allocated memory 70.00 GiB is allocated by PyTorch, and "
    "6.00 GiB is reserved by PyTorch but unallocated.\n";

static int
setup(void **state)
{
	od_error err;

	(void)state;
	sc = od_scanner_new(true, ut_recognisers(), &err);
	return sc == NULL;
}

static int
teardown(void **state)
{
	(void)state;
	od_scanner_free(sc);
	return 0;
}

/* Scans text and the message after it; returns the set (one event). */
static od_events *
scan(const char *text)
{
	size_t n = strlen(text);
	char *buf = malloc(n + sizeof oom);
	od_events *set = od_events_new();
	od_input info;

	assert_non_null(buf);
	assert_non_null(set);
	memcpy(buf, text, n);
	memcpy(buf + n, oom, sizeof oom);
	memset(&info, 0, sizeof info);
	od_scan_buffer(sc, buf, n + sizeof oom - 1, 0, &info, set);
	free(buf);
	return set;
}

static const struct {
	const char *line;
	int what;
	int64_t bytes, step;
	int rank;
} formats[] = {
	/* DeepSpeed's see_memory_usage: GB is 1024 ** 3. */
	{ "[2024-11-03 18:20:05,115] [INFO] [utils.py:782:see_memory_usage] "
	  "MA 36.5 GB         Max_MA 38.1 GB         CA 39.44 GB         "
	  "Max_CA 39 GB ", OD_READING_ALLOCATED, 73 * GIB / 2, -1, -1 },
	/* Megatron-LM: MB is 1024 * 1024, with the rank and the step. */
	{ "[Rank 3] (after 20 iterations) memory (MB) | allocated: 1024.50 | "
	  "max allocated: 2048.00 | reserved: 3000.0 | max reserved: 3000.0",
	  OD_READING_ALLOCATED, 1024 * MIB + MIB / 2, 20, 3 },
	/* torchtitan: the peak reserved, with torchrun's rank prefix. */
	{ "[rank1]:[titan] 2024-11-30 10:00:01,000 - root - INFO - step:  40  "
	  "loss:  7.1000  memory: 31.25GiB(39.51%)  tps: 6,120",
	  OD_READING_MAX_RESERVED, 125 * GIB / 4, 40, 1 },
	/* detectron2: max_mem in MiB as "M". */
	{ "[11/30 14:02:11 d2.utils.events]:  eta: 3:10:22  iter: 19  "
	  "total_loss: 1.52  time: 0.4521  data_time: 0.0123  lr: 0.0004  "
	  "max_mem: 4250M", OD_READING_MAX_ALLOCATED, 4250 * MIB, 19, -1 },
	/* mmengine: a bare number of MiB after the times. */
	{ "11/30 14:02:11 - mmengine - INFO - Epoch(train)  [1][  50/1000]  "
	  "lr: 1.0000e-02  eta: 0:10:00  time: 0.2000  data_time: 0.0100  "
	  "memory: 4250  loss: 0.5000", OD_READING_MAX_ALLOCATED, 4250 * MIB,
	  50, -1 },
	/* A Kubernetes limit in a dump is no mmengine line. */
	{ "  memory: 16  cpu: 4", -1, 0, -1, -1 },
	/* Hugging Face Trainer's log_metrics. */
	{ "  train_mem_gpu_peaked_delta =     1234MB",
	  OD_READING_PEAK_DELTA, 1234 * MIB, -1, -1 },
	/* accelerate's TorchTracemalloc example. */
	{ "GPU Total Peak Memory consumed during the train (max): 4250",
	  OD_READING_MAX_ALLOCATED, 4250 * MIB, -1, -1 },
	/* A user's print. */
	{ "torch.cuda.memory_allocated 40.00 GiB", OD_READING_ALLOCATED,
	  40 * GIB, -1, -1 },
	{ "step 7: max_memory_reserved(GB): 12.5", OD_READING_MAX_RESERVED,
	  25 * GIB / 2, 7, -1 },
	/* Lightning's DeviceStatsMonitor: memory_stats() keys, in bytes. */
	{ "{'DeviceStatsMonitor.on_train_batch_end/allocated_bytes.all.current"
	  "': 123456789, 'step': 12}", OD_READING_ALLOCATED, 123456789, 12,
	  -1 },
};

static void
test_formats(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof formats / sizeof formats[0]; i++) {
		char text[1024];
		od_events *set;
		const od_logctx *c;

		snprintf(text, sizeof text, "%s\n", formats[i].line);
		set = scan(text);
		assert_int_equal(od_events_count(set), 1);
		c = &od_events_get(set, 0)->ctx;
		if (c->nkept != (formats[i].what >= 0))
			fail_msg("format %zu: %d readings", i, c->nkept);
		if (formats[i].what < 0) {
			od_events_free(set);
			continue;
		}
		if (c->readings[0].what != formats[i].what ||
		    c->readings[0].bytes != formats[i].bytes ||
		    c->readings[0].step != formats[i].step ||
		    c->readings[0].rank != formats[i].rank)
			fail_msg("format %zu: %s %lld bytes, step %lld, rank %d",
			    i, od_reading_name(c->readings[0].what),
			    (long long)c->readings[0].bytes,
			    (long long)c->readings[0].step, c->readings[0].rank);
		assert_int_equal(c->readings[0].line, 1);
		od_events_free(set);
	}
}

/* nvidia-smi's CSV, the memory_summary table and vLLM's profile. */
static void
test_tables(void **state)
{
	od_events *set;
	const od_logctx *c;

	(void)state;
	set = scan("timestamp, index, memory.used [MiB], memory.total [MiB]\n"
	    "2024/11/30 09:12:00.512, 0, 40536 MiB, 81559 MiB\n"
	    "|            CUDA OOMs: 2            |        cudaMalloc retries: "
	    "17        |\n"
	    "| Non-releasable memory | 429317 KiB |   2871 MiB |    310 GiB |"
	    "    310 GiB |\n"
	    "INFO 01-14 12:36:34 model_runner.py:1099] Loading model weights "
	    "took 7.1183 GB\n"
	    "INFO [gpu_worker.py:276] Available KV cache memory: 52.25 GiB\n"
	    "INFO [kv_cache_utils.py:1087] GPU KV cache size: 123,456 tokens\n"
	    "INFO [kv_cache_utils.py:1091] Maximum concurrency for 4,096 "
	    "tokens per request: 30.14x\n");
	assert_int_equal(od_events_count(set), 1);
	c = &od_events_get(set, 0)->ctx;
	assert_int_equal(c->nkept, 1);
	assert_int_equal(c->readings[0].what, OD_READING_DEVICE_USED);
	assert_int_equal(c->readings[0].bytes, 40536 * MIB);
	assert_int_equal(c->sum_ooms, 2);
	assert_int_equal(c->sum_retries, 17);
	assert_int_equal(c->sum_non_releasable, INT64_C(429317) * 1024);
	assert_true(c->vllm_weights > 7 * GIB && c->vllm_weights < 8 * GIB);
	assert_int_equal(c->vllm_kv_cache, 209 * GIB / 4);
	assert_int_equal(c->vllm_kv_tokens, 123456);
	assert_int_equal(c->vllm_max_len, 4096);
	assert_int_equal(c->vllm_concurrency_x100, 3014);
	od_events_free(set);
}

/*
 * A long log: 100000 Megatron lines, one step each, a peak at step 40 (read:
 * every line is until the series fills; an odd place, which the first
 * thinning would drop but for the rule that keeps the largest), then the
 * message.  The series stays within OD_READINGS_MAX, keeps the first
 * reading, the largest and the one just before the event, and its steps
 * are spread evenly.
 */
static void
test_bounded(void **state)
{
	const int n = 100000;
	size_t cap = (size_t)n * 128, at = 0;
	char *text = malloc(cap);
	od_events *set;
	const od_logctx *c;
	int i, largest = -1, max_gap = 0;

	(void)state;
	assert_non_null(text);
	for (i = 1; i <= n; i++)
		at += (size_t)snprintf(text + at, cap - at, "[Rank 0] (after %d "
		    "iterations) memory (MB) | allocated: %d.00 | max allocated: "
		    "1.0\n", i, i == 40 ? 90000 : 20000 + i % 97);
	set = scan(text);
	free(text);
	assert_int_equal(od_events_count(set), 1);
	c = &od_events_get(set, 0)->ctx;
	assert_true(c->nkept <= OD_READINGS_MAX);
	assert_true(c->nkept >= OD_READINGS_MAX / 2);
	assert_int_equal(c->readings[0].step, 1);
	assert_int_equal(c->readings[c->nkept - 1].step, n);
	for (i = 0; i < c->nkept; i++) {
		if (c->readings[i].bytes == 90000 * MIB)
			largest = i;
		if (i > 0 && i < c->nkept - 1 && c->readings[i].step -
		    c->readings[i - 1].step > max_gap)
			max_gap = (int)(c->readings[i].step -
			    c->readings[i - 1].step);
	}
	assert_true(largest >= 0);
	/* An even spread: no gap wider than twice the stride. */
	assert_true(max_gap <= 2 * (int)c->stride);
	assert_true(c->seen == (uint64_t)n);
	od_events_free(set);
}

/* The series is one figure of one rank: the event's rank, whose growth,
 * median and steps the rules use, and the spread over the ranks. */
static void
test_series(void **state)
{
	od_events *set;
	cx_series s;

	(void)state;
	set = scan("[Rank 0] (after 10 iterations) memory (MB) | allocated: "
	    "10240.00 | x\n"
	    "[Rank 2] (after 10 iterations) memory (MB) | allocated: 2048.00 | x\n"
	    "[Rank 0] (after 20 iterations) memory (MB) | allocated: "
	    "12288.00 | x\n"
	    "[Rank 2] (after 20 iterations) memory (MB) | allocated: 2048.00 | x\n"
	    "[Rank 0] (after 30 iterations) memory (MB) | allocated: "
	    "20480.00 | x\n"
	    "[Rank 2] (after 30 iterations) memory (MB) | allocated: 3072.00 | x\n"
	    "step 30: torch.cuda.memory_reserved 60.00 GiB\n");
	assert_int_equal(od_events_count(set), 1);
	/* The last reading is of another figure: rank 0's series is asked. */
	cx_series_of(&od_events_get(set, 0)->ctx, 0, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.what, OD_READING_ALLOCATED);
	assert_int_equal(s.first, 10 * GIB);
	assert_int_equal(s.last, 20 * GIB);
	assert_int_equal(s.median, 12 * GIB);
	assert_int_equal(s.growth, 10 * GIB);
	assert_true(s.have_rate);
	assert_int_equal(s.first_step, 10);
	assert_int_equal(s.last_step, 30);
	assert_true(s.per_step == (double)(10 * GIB) / 20);
	assert_int_equal(s.nranks, 2);
	assert_int_equal(s.rank_low, 3 * GIB);
	assert_int_equal(s.rank_high, 20 * GIB);
	assert_int_equal(s.high_rank, 0);
	/* With no rank asked: the last reading's figure and rank. */
	cx_series_of(&od_events_get(set, 0)->ctx, -1, &s);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.what, OD_READING_RESERVED);
	assert_int_equal(s.last, 60 * GIB);
	assert_false(s.have_rate);
	od_events_free(set);
}

/* The sparkline: eight heights from the least to the largest reading, in
 * block characters or ASCII; a flat series at mid height. */
static void
test_sparkline(void **state)
{
	od_logctx c;
	od_reading room[OD_READINGS_MAX];
	char buf[OD_READINGS_MAX * 3 + 1];
	int i;

	(void)state;
	cx_reset(&c);
	c.readings = room;      /* the room a scanner gives its series */
	assert_int_equal(rp_sparkline(&c, -1, true, buf, sizeof buf), 0);
	assert_string_equal(buf, "");
	for (i = 0; i < 3; i++)
		c.readings[c.nkept++] = (od_reading){ .step = i, .line = 1,
		    .bytes = (10 + 10 * i) * GIB, .rank = -1,
		    .what = OD_READING_ALLOCATED };
	assert_int_equal(rp_sparkline(&c, -1, true, buf, sizeof buf), 3);
	assert_string_equal(buf, "\u2581\u2584\u2588");
	assert_int_equal(rp_sparkline(&c, -1, false, buf, sizeof buf), 3);
	assert_string_equal(buf, "_:#");
	/* Another figure is another series. */
	c.readings[c.nkept++] = (od_reading){ .step = 3, .line = 2,
	    .bytes = GIB, .rank = -1, .what = OD_READING_RESERVED };
	assert_int_equal(rp_sparkline(&c, -1, false, buf, sizeof buf), 1);
	assert_string_equal(buf, ":");
	/* A buffer too small for every cell holds what fits. */
	c.nkept = 3;
	assert_int_equal(rp_sparkline(&c, -1, true, buf, 7), 2);
}

/* Readings alone are no failure. */
static void
test_no_event(void **state)
{
	static const char text[] =
	    "[Rank 0] (after 10 iterations) memory (MB) | allocated: 1.00 | x\n"
	    "MA 73.44 GB         Max_MA 75.27 GB         CA 77.9 GB\n"
	    "torch.cuda.memory_allocated 40.00 GiB\n";
	od_events *set = od_events_new();
	od_input info;

	(void)state;
	memset(&info, 0, sizeof info);
	od_scan_buffer(sc, text, sizeof text - 1, 0, &info, set);
	assert_int_equal(od_events_count(set), 0);
	od_events_free(set);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_sparkline),
		cmocka_unit_test(test_no_event),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
