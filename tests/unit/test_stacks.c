/*
 * test_stacks.c: one line (or block) of each other stack, with the kind,
 * confidence and numbers it must give; lines that must give nothing; the
 * cgroup figures a kill takes from the lines before it; and scanners that
 * share nothing (their anchors, two of them in two threads) but the
 * prefilter's databases of the same anchors (scan.c's cache).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"
#include "ut_recognisers.h"

static od_scanner *sc;

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

static od_events *
scan(const char *text)
{
	od_events *set = od_events_new();
	od_input info;

	od_scan_buffer(sc, text, strlen(text), 0, &info, set);
	return set;
}

static const struct {
	const char *text;
	od_kind kind;
	od_confidence conf;
	int64_t requested;
	int64_t pid;
	const char *error;
} cases[] = {
	{ "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might "
	  "be asynchronously reported\n", OD_KIND_CUDA_RAW, OD_CONF_HIGH, -1, -1,
	  "" },
	{ "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/"
	  "aten/src/THC/THCCachingHostAllocator.cpp:296\n", OD_KIND_CUDA_RAW,
	  OD_CONF_HIGH, -1, -1, "" },
	{ "E0101 failed to allocate 4.00G (4294967296 bytes) from device: "
	  "CUDA_ERROR_OUT_OF_MEMORY: out of memory\n", OD_KIND_TF, OD_CONF_HIGH,
	  4294967296LL, -1, "CUDA_ERROR_OUT_OF_MEMORY" },
	{ "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate("
	  "handle)`\n", OD_KIND_CUBLAS, OD_CONF_HIGH, -1, -1,
	  "CUBLAS_STATUS_ALLOC_FAILED" },
	{ "RuntimeError: Unable to find a valid cuDNN algorithm to run "
	  "convolution\n", OD_KIND_CUDNN, OD_CONF_MEDIUM, -1, -1, "" },
	{ "node1:123:456 [3] include/alloc.h:48 NCCL WARN Cuda failure 'out of "
	  "memory'\n", OD_KIND_NCCL, OD_CONF_HIGH, -1, -1, "" },
	{ "RuntimeError: MPS backend out of memory (MPS allocated: 42.28 GiB, "
	  "other allocations: 720.00 KiB, max allowed: 42.43 GiB). Tried to "
	  "allocate 384.00 MiB on shared pool.\n", OD_KIND_MPS, OD_CONF_HIGH,
	  402653184, -1, "" },
	{ "Resource exhausted: Failed to allocate request for 2.99GiB "
	  "(3206250496B) on device ordinal 0\n", OD_KIND_XLA, OD_CONF_HIGH,
	  3206250496LL, -1, "" },
	{ "[ 99.1] Memory cgroup out of memory: Killed process 4242 (python) "
	  "total-vm:1000kB, anon-rss:2000kB, file-rss:0kB, shmem-rss:0kB\n",
	  OD_KIND_HOST_OOM_KILLER, OD_CONF_HIGH, -1, 4242, "" },
	{ "Process finished with exit code 137 (interrupted by signal 9: "
	  "SIGKILL)\n", OD_KIND_HOST_OOM_KILLER, OD_CONF_LOW, -1, -1, "" },
	{ "./run.sh: line 12: 31337 Killed                  python train.py\n",
	  OD_KIND_HOST_OOM_KILLER, OD_CONF_LOW, -1, 31337, "" },
	{ "RuntimeError: DataLoader worker (pid 777) is killed by signal: Bus "
	  "error. It is possible that dataloader's workers are out of shared "
	  "memory. Please try to raise your shared memory limit.\n",
	  OD_KIND_DATALOADER_KILLED, OD_CONF_HIGH, -1, 777, "" },
	{ "slurmstepd: error: Detected 2 oom-kill event(s) in step 3756240.batch "
	  "cgroup. Some of your processes may have been killed by the cgroup "
	  "out-of-memory handler.\n", OD_KIND_SLURM_OOM, OD_CONF_HIGH, -1, -1,
	  "" },
	{ "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating "
	  "1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes).\n",
	  OD_KIND_CUPY, OD_CONF_HIGH, 1073741824, -1, "" },
	{ "DefaultCPUAllocator: can't allocate memory: you tried to allocate "
	  "34359738368 bytes. Error code 12 (Cannot allocate memory)\n",
	  OD_KIND_HOST_ALLOC, OD_CONF_HIGH, 34359738368LL, -1, "" },
	{ "ValueError: No available memory for the cache blocks. Try "
	  "increasing `gpu_memory_utilization` when initializing the engine.\n",
	  OD_KIND_VLLM_KV_CACHE, OD_CONF_HIGH, -1, -1, "" },
	{ "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1234.56 MiB "
	  "on device 0: cudaMalloc failed: out of memory\n", OD_KIND_GGML,
	  OD_CONF_HIGH, 1294529987, -1, "" },
};

static void
test_each_stack(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		od_events *set = scan(cases[i].text);
		od_event *ev = od_events_get(set, 0);

		if (ev == NULL || od_events_count(set) != 1)
			fail_msg("case %zu: %zu events", i, od_events_count(set));
		assert_int_equal(ev->kind, cases[i].kind);
		assert_int_equal(ev->confidence, cases[i].conf);
		assert_int_equal(ev->mem.requested, cases[i].requested);
		assert_int_equal(ev->host.pid, cases[i].pid);
		assert_string_equal(ev->error, cases[i].error);
		if (ev->confidence == OD_CONF_LOW)
			assert_non_null(ev->verify_hint);
		od_events_free(set);
	}
}

/* The BFC warning reads on into its Stats block; the "not a failure"
 * variant gives no event. */
static void
test_tf_bfc(void **state)
{
	od_events *set = scan("W bfc_allocator.cc:441] Allocator (GPU_1_bfc) "
	    "ran out of memory trying to allocate 1.17GiB (rounded to "
	    "1258291200)requested by op Conv2D\nStats:\nLimit:        "
	    "7691630592\nInUse:        7580000000\nMaxInUse:     7600000000\n"
	    "NumAllocs:    1234\nW bfc_allocator.cc:275] Allocator (GPU_0_bfc) "
	    "ran out of memory trying to allocate 2.00GiB with freed_by_count=0."
	    " The caller indicates that this is not a failure, but this may "
	    "mean that there could be performance gains if more memory were "
	    "available.\n");
	od_event *ev = od_events_get(set, 0);

	(void)state;
	/* The second warning says it is no failure: no event (benign). */
	assert_int_equal(od_events_count(set), 1);
	assert_int_equal(ev->device, 1);
	assert_int_equal(ev->mem.requested, 1258291200);
	assert_int_equal(ev->mem.allowed, 7691630592LL);
	assert_int_equal(ev->mem.allocated, 7580000000LL);
	assert_int_equal(ev->mem.peak, 7600000000LL);
	assert_true(ev->fatal);
	od_events_free(set);
}

/* The NCCL wrapper counts only with an out-of-memory CUDA failure. */
static void
test_nccl_wrapper(void **state)
{
	od_events *set = scan("DistBackendError: NCCL error in: x.cpp:1, "
	    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL "
	    "version 2.26.2\nncclUnhandledCudaError: Call to CUDA function "
	    "failed.\nLast error:\nCuda failure 2 'out of memory'\n");

	(void)state;
	assert_int_equal(od_events_count(set), 1);
	assert_int_equal(od_events_get(set, 0)->end_line, 4);
	od_events_free(set);
	set = scan("DistBackendError: NCCL error in: x.cpp:1, unhandled cuda "
	    "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2\n"
	    "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:"
	    "\nCuda failure 999 'unknown error'\n");
	assert_int_equal(od_events_count(set), 0);
	od_events_free(set);
}

/* The kernel's lines about one kill are one event, with the surest
 * figures; a torchrun table about the same pid joins it. */
static void
test_one_kill(void **state)
{
	od_events *set = scan("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask="
	    "(null),cpuset=/,mems_allowed=0,oom_memcg=/job,task_memcg=/job,"
	    "task=python3,pid=4242,uid=0\nMemory cgroup out of memory: Killed "
	    "process 4242 (python3) total-vm:8000kB, anon-rss:4000kB, "
	    "file-rss:100kB, shmem-rss:0kB, UID:0 pgtables:100kB "
	    "oom_score_adj:0\n[0]:\n  exitcode  : -9 (pid: 4242)\n");
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_int_equal(od_events_count(set), 1);
	assert_int_equal(ev->confidence, OD_CONF_HIGH);
	assert_int_equal(ev->host.anon_rss, 4000 * 1024);
	assert_int_equal(ev->occurrences, 2);
	assert_string_equal(ev->host.process, "python3");
	od_events_free(set);
}

static void
test_not_oom(void **state)
{
	static const char *const texts[] = {
		"RuntimeError: CUDA error: an illegal memory access was "
		"encountered\n",
		"CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling "
		"`cublasGemmEx(handle)`\n",
		"DataLoader worker (pid 12) is killed by signal: Segmentation "
		"fault.\n",
		"Killed 3 stale processes\n",
		"torchrun: exitcode  : -15 (pid: 99)\n",
		"Exit Code:    0\n    Reason: Completed\n",
		"we catch torch.cuda.OutOfMemoryError and retry\n",
		"Created TensorFlow device with 14790 MB memory\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		od_events *set = scan(texts[i]);

		if (od_events_count(set) != 0)
			fail_msg("case %zu gave an event", i);
		od_events_free(set);
	}
}

/* A traceback's raise line quotes the message in source: the exception's
 * own line after it is the event; where the input ends with the raise
 * statement (its string's continuation lines), the raise line is; where
 * anything else follows it, nothing is (the raise in vLLM's
 * vllm/v1/core/kv_cache_utils.py, check_enough_kv_cache_memory). */
static void
test_raise_line(void **state)
{
	static const char raise[] = "  File \"kv_cache_utils.py\", line 699, "
	    "in check_enough_kv_cache_memory\n"
	    "    raise ValueError(\"No available memory for the cache blocks. \"\n"
	    "                     \"Try increasing `gpu_memory_utilization` when "
	    "\"\n"
	    "                     \"initializing the engine.\")\n";
	char text[1024];
	od_events *set;

	(void)state;
	snprintf(text, sizeof text, "%sValueError: No available memory for the "
	    "cache blocks. Try increasing `gpu_memory_utilization` when "
	    "initializing the engine.\n", raise);
	set = scan(text);
	assert_int_equal(od_events_count(set), 1);
	assert_int_equal(od_events_get(set, 0)->kind, OD_KIND_VLLM_KV_CACHE);
	assert_int_equal(od_events_get(set, 0)->line, 5);
	od_events_free(set);
	snprintf(text, sizeof text, "%s\n\n", raise);
	set = scan(text);
	assert_int_equal(od_events_count(set), 1);
	assert_int_equal(od_events_get(set, 0)->kind, OD_KIND_VLLM_KV_CACHE);
	assert_int_equal(od_events_get(set, 0)->line, 2);
	od_events_free(set);
	snprintf(text, sizeof text, "%sSee the docs.\n", raise);
	set = scan(text);
	assert_int_equal(od_events_count(set), 0);
	od_events_free(set);
}

/* A kill takes the cgroup's usage and limit from a memcg line at most
 * CX_MEMCG_LINES (60) lines before it, also when two memcg lines print the
 * same figures; a kill further away takes none. */
static void
test_memcg_join(void **state)
{
	static const char memcg[] = "[9.0] memory: usage 2048kB, limit 2048kB, "
	    "failcnt 1\n";
	static const char kill[] = "[9.1] Memory cgroup out of memory: Killed "
	    "process %d (python) total-vm:1000kB, anon-rss:900kB, file-rss:0kB, "
	    "shmem-rss:0kB\n";
	char *text = malloc(64 * 1024), *p = text;
	od_events *set;
	int i;

	(void)state;
	assert_non_null(text);
	p += sprintf(p, "%s", memcg);
	p += sprintf(p, kill, 100);
	for (i = 0; i < 100; i++)
		p += sprintf(p, "epoch %d\n", i);
	p += sprintf(p, "%s", memcg);
	p += sprintf(p, kill, 200);
	for (i = 0; i < 100; i++)
		p += sprintf(p, "epoch %d\n", i);
	p += sprintf(p, kill, 300);
	set = scan(text);
	assert_int_equal(od_events_count(set), 3);
	for (i = 0; i < 3; i++) {
		const od_event *ev = od_events_get(set, (size_t)i);

		assert_int_equal(ev->kind, OD_KIND_HOST_OOM_KILLER);
		assert_int_equal(ev->host.pid, 100 * (i + 1));
		assert_int_equal(ev->host.limit, i < 2 ? 2048 * 1024 : -1);
		assert_int_equal(ev->host.usage, i < 2 ? 2048 * 1024 : -1);
	}
	od_events_free(set);
	free(text);
}

/* Every scanner has its own list of anchors: the same strings, each
 * once, that stay when another scanner is freed. */
static void
test_anchors_per_scanner(void **state)
{
	od_error err;
	od_scanner *other = od_scanner_new(true, ut_recognisers(), &err);
	const char *const *a = od_anchors(sc), *const *b;
	bool tried = false, cuda = false;
	size_t n = 0, i, j;

	(void)state;
	assert_non_null(other);
	b = od_anchors(other);
	assert_ptr_not_equal(a, b);
	for (n = 0; a[n] != NULL; n++) {
		assert_non_null(b[n]);
		assert_string_equal(a[n], b[n]);
		for (j = 0; j < n; j++)
			if (strcmp(a[j], a[n]) == 0)
				fail_msg("anchor '%s' twice", a[n]);
		/* One of the PyTorch grammar's, one of the stacks' table. */
		tried |= strcmp(a[n], "Tried to allocate") == 0;
		cuda |= strcmp(a[n], "CUDA error: out of memory") == 0;
	}
	assert_null(b[n]);
	assert_true(tried && cuda);
	od_scanner_free(other);
	/* sc's anchors are still there, and sc still finds. */
	for (i = 0; i < n; i++)
		assert_true(strlen(a[i]) > 0);
	{
		od_events *set = scan("RuntimeError: CUDA error: out of memory\n");

		assert_int_equal(od_events_count(set), 1);
		od_events_free(set);
	}
}

/* Two scanners in two threads give what one gives alone. */
static const char threads_text[] =
    "batch_size: 32\n"
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
    "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
    "2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.50 GiB is "
    "free. Process 77 has 77.64 GiB memory in use.\n"
    "RuntimeError: MPS backend out of memory (MPS allocated: 42.28 GiB, "
    "other allocations: 720.00 KiB, max allowed: 42.43 GiB). Tried to "
    "allocate 384.00 MiB on shared pool.\n"
    "[ 99.1] Memory cgroup out of memory: Killed process 4242 (python) "
    "total-vm:1000kB, anon-rss:2000kB, file-rss:0kB, shmem-rss:0kB\n";

typedef struct {
	od_scanner *sc;
	size_t events;
	int64_t requested[3];
	int64_t batch;
	bool same;
} thread_run;

static void
thread_scan(thread_run *r)
{
	od_events *set = od_events_new();
	od_input info;
	size_t i;

	od_scan_buffer(r->sc, threads_text, sizeof threads_text - 1, 0, &info,
	    set);
	r->events = od_events_count(set);
	for (i = 0; i < 3 && i < r->events; i++)
		r->requested[i] = od_events_get(set, i)->mem.requested;
	r->batch = r->events > 0 ? od_events_get(set, 0)->ctx.batch_size : -1;
	od_events_free(set);
}

static void *
thread_main(void *arg)
{
	thread_run *r = arg, one;
	int k;

	one = *r;
	r->same = true;
	for (k = 0; k < 200; k++) {
		thread_scan(&one);
		if (one.events != r->events || one.batch != r->batch ||
		    memcmp(one.requested, r->requested, sizeof one.requested) != 0)
			r->same = false;
	}
	return NULL;
}

static void
test_two_threads(void **state)
{
	thread_run alone = { .sc = sc }, runs[2];
	pthread_t t[2];
	od_error err;
	int i;

	(void)state;
	thread_scan(&alone);
	assert_int_equal(alone.events, 3);
	assert_int_equal(alone.requested[0], 2147483648LL);
	assert_int_equal(alone.requested[1], 402653184);
	assert_int_equal(alone.batch, 32);
	for (i = 0; i < 2; i++) {
		runs[i] = alone;
		runs[i].sc = od_scanner_new(true, ut_recognisers(), &err);
		assert_non_null(runs[i].sc);
		assert_int_equal(pthread_create(&t[i], NULL, thread_main,
		    &runs[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_true(runs[i].same);
		od_scanner_free(runs[i].sc);
	}
}

/*
 * The prefilter's databases are shared by scanners of the same anchors
 * and kept for a few scanners after them (scan.c, sc_db_take): scanners
 * of seven recogniser files, each of one anchor of its own, made and
 * freed out of order, more of them than the cache keeps, each find their
 * own message and no other's.  Under ASan a database freed while a
 * scanner still holds it, or never freed, fails the test.
 */
#define DB_TABLES 7

static void
test_shared_databases(void **state)
{
	static const int order[] = { 0, 1, 2, 0, 3, 4, 5, 6, 1, 0, 6, 2 };
	enum { NSC = sizeof order / sizeof order[0] };
	rl_set *rules[DB_TABLES];
	od_scanner *scs[NSC];
	char text[DB_TABLES * 16] = "", yaml[512];
	od_error err;
	int i, k;

	(void)state;
	for (k = 0; k < DB_TABLES; k++) {
		rl_errors errs = { .n = 0 };
		char line[32];

		snprintf(yaml, sizeof yaml, "recognisers:\n"
		    "  - id: zq%d\n    kind: cuda_raw\n    confidence: high\n"
		    "    anchors: ['zq%d~']\n"
		    "    pattern: 'zq%d~ (?<req_b>\\d+)'\n"
		    "    examples:\n      - text: 'zq%d~ 1'\n"
		    "        fields: {req: 1}\n", k, k, k, k);
		rules[k] = rl_new();
		assert_non_null(rules[k]);
		assert_true(rl_load_buffer(rules[k], "zq.yaml", yaml,
		    strlen(yaml), &errs));
		assert_non_null(rules[k]->recognisers);
		snprintf(line, sizeof line, "zq%d~ %d\n", k, 1000 + k);
		strcat(text, line);
	}
	for (i = 0; i < NSC; i++) {
		scs[i] = od_scanner_new(true, rules[order[i]]->recognisers, &err);
		assert_non_null(scs[i]);
		/* Every other one goes at once, the rest at the end. */
		if (i % 2 == 1) {
			od_scanner_free(scs[i]);
			scs[i] = NULL;
		}
	}
	for (i = 0; i < NSC; i++) {
		od_events *set = od_events_new();
		od_input info;

		if (scs[i] == NULL)
			scs[i] = od_scanner_new(true,
			    rules[order[i]]->recognisers, &err);
		assert_non_null(scs[i]);
		od_scan_buffer(scs[i], text, strlen(text), 0, &info, set);
		assert_int_equal(od_events_count(set), 1);
		assert_int_equal(od_events_get(set, 0)->line, order[i] + 1);
		assert_int_equal(od_events_get(set, 0)->mem.requested,
		    1000 + order[i]);
		od_events_free(set);
		/* Out of order again: the even ones now, the odd ones last. */
		if (i % 2 == 0) {
			od_scanner_free(scs[i]);
			scs[i] = NULL;
		}
	}
	for (i = 0; i < NSC; i++)
		od_scanner_free(scs[i]);
	for (k = 0; k < DB_TABLES; k++)
		rl_free(rules[k]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_stack),
		cmocka_unit_test(test_tf_bfc),
		cmocka_unit_test(test_nccl_wrapper),
		cmocka_unit_test(test_one_kill),
		cmocka_unit_test(test_not_oom),
		cmocka_unit_test(test_raise_line),
		cmocka_unit_test(test_memcg_join),
		cmocka_unit_test(test_anchors_per_scanner),
		cmocka_unit_test(test_two_threads),
		cmocka_unit_test(test_shared_databases),
	};

	return cmocka_run_group_tests_name("stacks", tests, setup, teardown);
}
